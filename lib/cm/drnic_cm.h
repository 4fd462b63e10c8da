/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_CM_H
#define DRNIC_CM_H

/**
 * @file
 * Connection exchange: two processes (or hosts) swap what each needs to
 * connect an RC QP to the other — LID, QPN, PSN, GID, and for RDMA an rkey,
 * buffer address and size — over a TCP connection, as perftest and
 * ibv_rc_pingpong do (default port 18515).
 *
 * Two record formats:
 *  - DRNIC_CM_FMT_DRNIC: drnic's own, a versioned text line
 *    "DRNIC1 lid=LLLL qpn=QQQQQQ psn=PPPPPP gid=<32 hex> rkey=KKKKKKKK
 *    addr=<16 hex> size=<8 hex>\n" (fields in hex, in this order);
 *  - DRNIC_CM_FMT_RC_PINGPONG: ibv_rc_pingpong's exactly: 52 bytes,
 *    "%04x:%06x:%06x:" LID, QPN, PSN then the GID as 32 hex digits, its 16
 *    bytes in memory order, then a NUL. It carries no rkey, address or size
 *    (those come back as 0).
 *
 * Sequence (both formats): the client sends its record, the server reads it,
 * may connect its QP (a callback), sends its own record, and the client
 * acknowledges with the 5 bytes "done\0". drnic_cm_sync() then lets both
 * sides meet again on the same connection (drnic format only: rc_pingpong
 * closes the connection after "done").
 *
 * Waiting: every blocking step waits at most opts.timeout_ms. When an idle
 * callback is given, it is called about every millisecond while waiting, so a
 * process with inline progress keeps answering ARP and RoCE frames while it
 * waits for its peer.
 *
 * Errors: 0 / negative errno; constructors return NULL and set rte_errno.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct drnic_cm;

/** perftest's and ibv_rc_pingpong's default TCP port. */
#define DRNIC_CM_DEFAULT_PORT 18515
/** Size of an ibv_rc_pingpong record, its NUL included. */
#define DRNIC_CM_RC_PINGPONG_LEN 52
/** Longest drnic record, its newline included. */
#define DRNIC_CM_DRNIC_MAX_LEN 160

/** Record formats. */
enum drnic_cm_fmt {
	DRNIC_CM_FMT_DRNIC = 0,       /**< drnic's versioned text line */
	DRNIC_CM_FMT_RC_PINGPONG = 1, /**< ibv_rc_pingpong's 52-byte record */
};

/** What one side tells the other. */
struct drnic_cm_dest {
	uint16_t lid;       /**< 0 on RoCE */
	uint32_t qpn;       /**< 24 bits */
	uint32_t psn;       /**< 24 bits */
	uint8_t gid[16];    /**< raw GID bytes (RoCEv2 IPv4: ::ffff:a.b.c.d) */
	uint32_t rkey;      /**< drnic format only */
	uint64_t addr;      /**< drnic format only */
	uint32_t size;      /**< drnic format only */
};

/** Options; zero means default for every field. */
struct drnic_cm_opts {
	enum drnic_cm_fmt fmt;
	/** TCP port; default DRNIC_CM_DEFAULT_PORT. A server given
	 * DRNIC_CM_PORT_ANY takes an ephemeral port (drnic_cm_local_port()). */
	int port;
	/** Server: address to bind; default every address. */
	const char *bind_addr;
	/** Longest wait of each step in ms; default 30000. */
	unsigned int timeout_ms;
	/** Client: keep retrying a refused connection for this long (ms). */
	unsigned int retry_ms;
	/** Called about every millisecond while waiting; may be NULL. A
	 * negative return stops the wait with that error. */
	int (*idle)(void *arg);
	void *idle_arg;
};

/** drnic_cm_opts::port value asking for an ephemeral port. */
#define DRNIC_CM_PORT_ANY (-1)

/**
 * Write a record.
 * @param buf  receives the record: DRNIC_CM_RC_PINGPONG_LEN bytes (NUL
 *             included) or a drnic line (newline, then a NUL not counted).
 * @return the record's length in bytes to send; -EINVAL (NULL argument,
 *         unknown format, a QPN or PSN above 24 bits); -ENOSPC (@p len too
 *         small).
 */
int drnic_cm_record_write(enum drnic_cm_fmt fmt, const struct drnic_cm_dest *d, char *buf,
			  size_t len);

/**
 * Parse a record strictly (every field present, hex digits only, the exact
 * length and terminator).
 * @return 0; -EPROTO (malformed, or another version of drnic's format);
 *         -EINVAL (NULL argument, unknown format).
 */
int drnic_cm_record_parse(enum drnic_cm_fmt fmt, const char *buf, size_t len,
			  struct drnic_cm_dest *d);

/**
 * Server: listen on opts->port.
 * @return the listener, or NULL with rte_errno: EINVAL (bad options),
 *         EADDRINUSE, EACCES, or another socket error.
 */
struct drnic_cm *drnic_cm_listen(const struct drnic_cm_opts *opts);

/** @return the local TCP port of a listener or connection; 0 for NULL. */
uint16_t drnic_cm_local_port(const struct drnic_cm *cm);

/**
 * Server: wait for one client on a listener (the listener stays open).
 * @return a connection, or NULL with rte_errno ETIMEDOUT, EINVAL, or the
 *         idle callback's error.
 */
struct drnic_cm *drnic_cm_accept(struct drnic_cm *listener);

/**
 * Client: connect to @p host (name or address) on opts->port.
 * @return a connection, or NULL with rte_errno: ECONNREFUSED (nobody
 *         listens; after opts->retry_ms of retries), ETIMEDOUT,
 *         EHOSTUNREACH / ENETUNREACH, ENOENT (unknown host), EINVAL.
 */
struct drnic_cm *drnic_cm_connect(const char *host, const struct drnic_cm_opts *opts);

/**
 * Client side of the exchange: send @p local, read @p remote, send "done".
 * @return 0; -ETIMEDOUT; -ECONNRESET (the peer closed early); -EPROTO
 *         (malformed record); -EINVAL; another socket error.
 */
int drnic_cm_client_exchange(struct drnic_cm *cm, const struct drnic_cm_dest *local,
			     struct drnic_cm_dest *remote);

/**
 * Server side of the exchange: read @p remote, call @p connect_cb (may be
 * NULL; e.g. move the QP to RTR/RTS, as ibv_rc_pingpong does before it
 * answers), send @p local, read "done".
 * @return 0; the callback's negative return; errors as
 *         drnic_cm_client_exchange().
 */
int drnic_cm_server_exchange(struct drnic_cm *cm, const struct drnic_cm_dest *local,
			     struct drnic_cm_dest *remote,
			     int (*connect_cb)(void *arg, const struct drnic_cm_dest *remote),
			     void *arg);

/**
 * Meet the peer again on the same connection (both sides call it): each
 * sends a one-line token @p tag (up to 15 characters) and reads the peer's.
 * @return 0; -EPROTO (the peer sent another token); -ETIMEDOUT;
 *         -ECONNRESET; -EINVAL (NULL argument, tag too long).
 */
int drnic_cm_sync(struct drnic_cm *cm, const char *tag);

/**
 * Wait until the peer closes the connection (reading and dropping anything
 * it still sends), e.g. so a server tears down after its client.
 * @return 0; -ETIMEDOUT; -EINVAL; another socket error.
 */
int drnic_cm_wait_close(struct drnic_cm *cm);

/** Close a listener or a connection (NULL ignored). */
void drnic_cm_close(struct drnic_cm *cm);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_CM_H */
