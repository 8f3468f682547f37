/* cuda-target.c — an unmodified CUDA program (no libcowtensor) for
 * `cowscope-cli record --cuda-only`: it allocates device memory, copies
 * 1 MiB to the device and back, and frees it.  Exits 77 with "no CUDA
 * device: <reason>" where CUDA cannot run, so the test can skip. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES ((size_t) 1 << 20)

static int
fail (const char *what, cudaError_t error)
{
  fprintf (stderr, "cuda-target: %s: %s\n", what, cudaGetErrorString (error));
  return 1;
}

int
main (void)
{
  int devices = 0;
  cudaError_t error = cudaGetDeviceCount (&devices);
  if (error != cudaSuccess || devices == 0)
    {
      printf ("no CUDA device: %s\n",
              error != cudaSuccess ? cudaGetErrorString (error) : "no device found");
      return 77;
    }
  unsigned char *host = malloc (BYTES);
  void *device = NULL;
  if (host == NULL)
    return 1;
  memset (host, 7, BYTES);
  if ((error = cudaMalloc (&device, BYTES)) != cudaSuccess)
    return fail ("cudaMalloc", error);
  if ((error = cudaMemcpy (device, host, BYTES, cudaMemcpyHostToDevice)) != cudaSuccess)
    return fail ("cudaMemcpy to the device", error);
  if ((error = cudaMemcpy (host, device, BYTES, cudaMemcpyDeviceToHost)) != cudaSuccess)
    return fail ("cudaMemcpy to the host", error);
  if ((error = cudaFree (device)) != cudaSuccess)
    return fail ("cudaFree", error);
  cudaDeviceSynchronize ();
  free (host);
  printf ("cuda-target: copied %zu bytes each way\n", BYTES);
  return 0;
}
