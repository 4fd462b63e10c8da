/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rsocket calls (rsocket(7)) librdmacm.so.1 exports: there, so that
 * programs linked to them load; none is implemented on drnic yet, each fails
 * with ENOSYS (rstream, rcopy, riostream and udpong say so and exit).
 */
#include <errno.h>

#include <rdma/rsocket.h>

#include "rdmacm_priv.h"

#define RCM_NOSYS(ret) do { errno = ENOSYS; return (ret); } while (0)

RCM_EXPORT int
rsocket(int domain, int type, int protocol)
{
	(void)domain, (void)type, (void)protocol;
	RCM_NOSYS(-1);
}

RCM_EXPORT int
rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	RCM_NOSYS(-1);
}

RCM_EXPORT int
rlisten(int socket, int backlog)
{
	(void)socket, (void)backlog;
	RCM_NOSYS(-1);
}

RCM_EXPORT int
raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	RCM_NOSYS(-1);
}

RCM_EXPORT int
rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	RCM_NOSYS(-1);
}

RCM_EXPORT int
rshutdown(int socket, int how)
{
	(void)socket, (void)how;
	RCM_NOSYS(-1);
}

RCM_EXPORT int
rclose(int socket)
{
	(void)socket;
	RCM_NOSYS(-1);
}

RCM_EXPORT ssize_t
rrecv(int socket, void *buf, size_t len, int flags)
{
	(void)socket, (void)buf, (void)len, (void)flags;
	RCM_NOSYS(-1);
}

RCM_EXPORT ssize_t
rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
	  socklen_t *addrlen)
{
	(void)socket, (void)buf, (void)len, (void)flags, (void)src_addr, (void)addrlen;
	RCM_NOSYS(-1);
}

RCM_EXPORT ssize_t
rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	(void)socket, (void)msg, (void)flags;
	RCM_NOSYS(-1);
}

RCM_EXPORT ssize_t
rsend(int socket, const void *buf, size_t len, int flags)
{
	(void)socket, (void)buf, (void)len, (void)flags;
	RCM_NOSYS(-1);
}

RCM_EXPORT ssize_t
rsendto(int socket, const void *buf, size_t len, int flags, const struct sockaddr *dest_addr,
	socklen_t addrlen)
{
	(void)socket, (void)buf, (void)len, (void)flags, (void)dest_addr, (void)addrlen;
	RCM_NOSYS(-1);
}

RCM_EXPORT ssize_t
rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	(void)socket, (void)msg, (void)flags;
	RCM_NOSYS(-1);
}

RCM_EXPORT ssize_t
rread(int socket, void *buf, size_t count)
{
	(void)socket, (void)buf, (void)count;
	RCM_NOSYS(-1);
}

RCM_EXPORT ssize_t
rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket, (void)iov, (void)iovcnt;
	RCM_NOSYS(-1);
}

RCM_EXPORT ssize_t
rwrite(int socket, const void *buf, size_t count)
{
	(void)socket, (void)buf, (void)count;
	RCM_NOSYS(-1);
}

RCM_EXPORT ssize_t
rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket, (void)iov, (void)iovcnt;
	RCM_NOSYS(-1);
}

RCM_EXPORT int
rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	(void)fds, (void)nfds, (void)timeout;
	RCM_NOSYS(-1);
}

RCM_EXPORT int
rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout)
{
	(void)nfds, (void)readfds, (void)writefds, (void)exceptfds, (void)timeout;
	RCM_NOSYS(-1);
}

RCM_EXPORT int
rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	RCM_NOSYS(-1);
}

RCM_EXPORT int
rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	RCM_NOSYS(-1);
}

RCM_EXPORT int
rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	(void)socket, (void)level, (void)optname, (void)optval, (void)optlen;
	RCM_NOSYS(-1);
}

RCM_EXPORT int
rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	(void)socket, (void)level, (void)optname, (void)optval, (void)optlen;
	RCM_NOSYS(-1);
}

RCM_EXPORT int
rfcntl(int socket, int cmd, ...)
{
	(void)socket, (void)cmd;
	RCM_NOSYS(-1);
}

RCM_EXPORT off_t
riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	(void)socket, (void)buf, (void)len, (void)prot, (void)flags, (void)offset;
	RCM_NOSYS((off_t)-1);
}

RCM_EXPORT int
riounmap(int socket, void *buf, size_t len)
{
	(void)socket, (void)buf, (void)len;
	RCM_NOSYS(-1);
}

RCM_EXPORT size_t
riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	(void)socket, (void)buf, (void)count, (void)offset, (void)flags;
	RCM_NOSYS(0);   /* a count: 0 written, errno says why */
}
