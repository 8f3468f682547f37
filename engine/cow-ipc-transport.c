/* cow-ipc-transport.c — choosing a transport by kind. */
#include "cow-ipc-private.h"

/* Immortal singletons. */
const CowIpcTransport *
cow_ipc_transport (CowIpcTransportKind kind)
{
  switch (kind)
    {
    case COW_IPC_TRANSPORT_CPU:
      return &cow_ipc_cpu_transport;
    case COW_IPC_TRANSPORT_CUDA:
      return &cow_ipc_cuda_transport;
    default:
      return NULL;
    }
}
