/* cow-ipc-fds.c — passing a handle and descriptors over a Unix socket. */
#include "cow-ipc-private.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FDS 16

/* One sendmsg: the bytes and the descriptors arrive together. */
CowStatus
cow_ipc_send_fds (int sock, const void *data, size_t len, const int *fds,
                  int n_fds, CowError *error)
{
  if (n_fds < 0 || n_fds > MAX_FDS || (n_fds > 0 && fds == NULL) || len == 0)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "ipc_send_fds: %d descriptors (0 to %d) and %zu bytes (> 0)",
                          n_fds, MAX_FDS, len);
  union {
    char buf[CMSG_SPACE (sizeof (int) * MAX_FDS)];
    struct cmsghdr align;
  } control;
  memset (&control, 0, sizeof control);
  struct iovec iov = { .iov_base = (void *) data, .iov_len = len };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (n_fds > 0)
    {
      msg.msg_control = control.buf;
      msg.msg_controllen = CMSG_SPACE (sizeof (int) * (size_t) n_fds);
      struct cmsghdr *cmsg = CMSG_FIRSTHDR (&msg);
      cmsg->cmsg_level = SOL_SOCKET;
      cmsg->cmsg_type = SCM_RIGHTS;
      cmsg->cmsg_len = CMSG_LEN (sizeof (int) * (size_t) n_fds);
      memcpy (CMSG_DATA (cmsg), fds, sizeof (int) * (size_t) n_fds);
    }
  ssize_t sent;
  do
    sent = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  if (sent < 0)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "ipc_send_fds: sendmsg: %s",
                          strerror (errno));
  if ((size_t) sent != len)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "ipc_send_fds: short send (%zd of %zu bytes)", sent, len);
  return COW_OK;
}

/* One recvmsg; a short message (use a SOCK_SEQPACKET or SOCK_STREAM pair
 * with one writer) or a closed peer is an error. */
CowStatus
cow_ipc_recv_fds (int sock, void *data, size_t len, int *fds, int max_fds,
                  int *n_fds_out, CowError *error)
{
  if (n_fds_out != NULL)
    *n_fds_out = 0;
  if (max_fds < 0 || (max_fds > 0 && fds == NULL) || len == 0)
    return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                          "ipc_recv_fds: bad arguments");
  union {
    char buf[CMSG_SPACE (sizeof (int) * MAX_FDS)];
    struct cmsghdr align;
  } control;
  struct iovec iov = { .iov_base = data, .iov_len = len };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
                        .msg_control = control.buf, .msg_controllen = sizeof control.buf };
  ssize_t got;
  do
    got = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  while (got < 0 && errno == EINTR);
  int n = 0;
  for (struct cmsghdr *cmsg = CMSG_FIRSTHDR (&msg); cmsg != NULL;
       cmsg = CMSG_NXTHDR (&msg, cmsg))
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS)
      {
        int count = (int) ((cmsg->cmsg_len - CMSG_LEN (0)) / sizeof (int));
        for (int i = 0; i < count; i++)
          {
            int fd;
            memcpy (&fd, CMSG_DATA (cmsg) + sizeof (int) * (size_t) i, sizeof fd);
            if (n < max_fds)
              fds[n++] = fd;
            else
              close (fd);
          }
      }
  if (got < 0 || (size_t) got != len)
    {
      int saved = errno;
      for (int i = 0; i < n; i++)
        close (fds[i]);
      if (got < 0)
        return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT, "ipc_recv_fds: recvmsg: %s",
                              strerror (saved));
      if (got == 0)
        return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                              "ipc_recv_fds: the peer closed the socket");
      return cow_set_error (error, COW_ERROR_INVALID_ARGUMENT,
                            "ipc_recv_fds: short message (%zd of %zu bytes)", got, len);
    }
  if (n_fds_out != NULL)
    *n_fds_out = n;
  return COW_OK;
}
