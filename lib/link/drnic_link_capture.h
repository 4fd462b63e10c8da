/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_LINK_CAPTURE_H
#define DRNIC_LINK_CAPTURE_H

/**
 * @file
 * Mirroring a link's frames into a pcapng file (lib/capture), readable by
 * tshark / Wireshark.
 *
 * Both directions are recorded, each frame with its direction flag
 * (inbound / outbound) in the Enhanced Packet Block:
 *  - outbound: every frame the driver took, as it went on the wire, i.e.
 *    after fault injection (dropped frames are absent, duplicates appear
 *    twice, corrupted frames with their flipped bits, reordered frames in
 *    their new order); frames the driver refused (back-pressure) are written
 *    once, when it takes them;
 *  - inbound: every frame the link delivers to an engine.
 * The ethdev driver also mirrors the ARP / neighbour discovery frames it
 * answers and sends itself. Frames the driver drops before an engine sees
 * them (not RoCE, full dispatch ring) are not recorded.
 *
 * From the configuration, next to the driver's own keys in link_args (the
 * driver never sees them):
 *
 * | key                 | meaning                                         |
 * |---------------------|-------------------------------------------------|
 * | capture=PATH        | mirror into PATH (created or truncated) from open to close |
 * | capture_snaplen=N   | bytes kept of each frame (default 16384, at most 65000) |
 *
 * PATH cannot contain a comma.
 *
 * Threading: one capture file per link. The link's queues (engines) share
 * it under a per-link spinlock (the single writer rule of drnic_capture.h:
 * one writer at a time), taken only while a capture is running; without a
 * capture the data path pays one relaxed load per burst. Start and stop may
 * be called from any control thread while the engines run.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct drnic_link;
struct drnic_capture_stats;

/**
 * Start mirroring @p link's frames into the pcapng file @p path.
 * @param snaplen bytes kept of each frame; 0 for the default.
 * @return 0; -EINVAL (NULL argument, bad snaplen), -EBUSY (a capture is
 *         already running on this link), or the error of drnic_capture_open()
 *         (negative errno).
 */
int drnic_link_capture_start(struct drnic_link *link, const char *path, uint32_t snaplen);

/**
 * Stop mirroring and close the file.
 * @return 0; -ENOENT when no capture was running; -EIO when frames could not
 *         be written (see the counters); -EINVAL for NULL.
 */
int drnic_link_capture_stop(struct drnic_link *link);

/**
 * Counters of the running capture (struct drnic_capture_stats of
 * drnic_capture.h).
 * @return 0; -ENOENT when no capture is running; -EINVAL for NULL.
 */
int drnic_link_capture_stats(struct drnic_link *link, struct drnic_capture_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_LINK_CAPTURE_H */
