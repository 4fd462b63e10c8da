/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_CAPTURE_H
#define DRNIC_CAPTURE_H

/**
 * @file
 * pcapng capture files for drnic frames.
 *
 * A capture is one pcapng file with one Ethernet interface of its own (plus
 * one interface per DPDK port that existed when it was opened, which
 * rte_pcapng_fdopen() describes on its own). Frames are copied with
 * rte_pcapng_copy() into a private mempool and written with one writev() per
 * burst, so a reader sees whole blocks. The caller keeps its mbufs.
 *
 * The EAL must be running (the copy needs a mempool and the TSC rate).
 *
 * Threading: a capture has one writer at a time. Two threads that share a
 * capture must serialize their calls; usually each link owns its capture.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rte_mbuf;
struct drnic_capture;

/** Default snapshot length: bytes kept of each frame. */
#define DRNIC_CAPTURE_SNAPLEN_DEFAULT 16384u
/** Largest snapshot length (a copy must fit one mbuf of the copy pool). */
#define DRNIC_CAPTURE_SNAPLEN_MAX 65000u

/** Direction recorded in each packet block's flags. */
enum drnic_capture_dir {
	DRNIC_CAPTURE_DIR_UNKNOWN = 0,
	DRNIC_CAPTURE_DIR_RX = 1,   /**< inbound */
	DRNIC_CAPTURE_DIR_TX = 2,   /**< outbound */
};

/** Options for drnic_capture_open(); zero means "default" for every field. */
struct drnic_capture_opts {
	/** Interface name written in the file; default "drnic". */
	const char *ifname;
	/** Interface description; default none. */
	const char *ifdescr;
	/** Comment in the section header; default none. */
	const char *comment;
	/** Bytes kept of each frame; default DRNIC_CAPTURE_SNAPLEN_DEFAULT. */
	uint32_t snaplen;
	/** NUMA socket of the copy pool; default (0) means SOCKET_ID_ANY. */
	int socket_id;
};

/** Counters of a capture; see drnic_capture_stats(). */
struct drnic_capture_stats {
	uint64_t packets;      /**< frames written to the file */
	uint64_t bytes;        /**< frame bytes written (captured length) */
	uint64_t truncated;    /**< frames longer than the snapshot length */
	uint64_t dropped;      /**< frames not written: copy or write failure */
};

/**
 * Create (or truncate) a pcapng file and describe its interface.
 *
 * @param path   file to write; created with mode 0644, truncated if it exists.
 * @param opts   options, or NULL for all defaults.
 * @return the capture, or NULL with rte_errno set:
 *         EINVAL  @p path is NULL or empty, or the snapshot length exceeds
 *                 DRNIC_CAPTURE_SNAPLEN_MAX, or a name is too long;
 *         ENOMEM  no memory for the handle or its copy pool;
 *         EIO     the file headers could not be written;
 *         any errno from open(2).
 */
struct drnic_capture *drnic_capture_open(const char *path, const struct drnic_capture_opts *opts);

/**
 * Append a burst of frames to the capture.
 *
 * Each frame (single- or multi-segment) is copied up to the snapshot length;
 * the caller keeps ownership of @p pkts. Frames whose mbuf asks for VLAN
 * insertion (RTE_MBUF_F_TX_VLAN / RX_VLAN_STRIPPED) are written with the tag.
 *
 * @param cap   the capture.
 * @param pkts  frames to record.
 * @param n     number of frames.
 * @param dir   direction recorded with each frame.
 * @return the number of frames written (0..n). Frames not written are
 *         counted as dropped in drnic_capture_stats(): the copy pool was
 *         exhausted (cannot happen with one writer) or the file write failed.
 *         0 when @p cap or @p pkts is NULL.
 */
uint16_t drnic_capture_write(struct drnic_capture *cap, struct rte_mbuf *const *pkts,
			     uint16_t n, enum drnic_capture_dir dir);

/** Most frames drnic_capture_copy() copies at once. */
#define DRNIC_CAPTURE_BURST 32

/**
 * Two-phase writing, for frames that change hands in between (a link's
 * transmit: once the driver took a frame, the peer may free it at once, and
 * only the driver knows how many it takes): copy first, then write those
 * that count.
 *
 * Copy up to DRNIC_CAPTURE_BURST frames of @p pkts into @p copies (timestamped
 * now); copies[i] is NULL where a copy failed. The copies hold buffers of the
 * capture: pass them to drnic_capture_write_copies() before the next
 * drnic_capture_copy() or drnic_capture_write() on this capture (same single
 * writer).
 *
 * @return how many entries of @p copies were set (min(n, DRNIC_CAPTURE_BURST));
 *         0 when an argument is NULL.
 */
uint16_t drnic_capture_copy(struct drnic_capture *cap, struct rte_mbuf *const *pkts,
			    uint16_t n, enum drnic_capture_dir dir, struct rte_mbuf **copies);

/**
 * Write the first @p nb_write of the @p n copies made by drnic_capture_copy()
 * (failed copies among them count as dropped), then free all @p n.
 *
 * @return the number of frames written.
 */
uint16_t drnic_capture_write_copies(struct drnic_capture *cap, struct rte_mbuf **copies,
				    uint16_t n, uint16_t nb_write);

/**
 * Read the counters of a capture.
 *
 * @param cap    the capture.
 * @param stats  filled with the counters.
 * @return 0, or -EINVAL when an argument is NULL.
 */
int drnic_capture_stats(const struct drnic_capture *cap, struct drnic_capture_stats *stats);

/**
 * Close the file and free the capture. NULL is accepted and ignored.
 *
 * @param cap  the capture.
 * @return 0, or -EIO when a write failed earlier (the file lacks those
 *         frames; see drnic_capture_stats()).
 */
int drnic_capture_close(struct drnic_capture *cap);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_CAPTURE_H */
