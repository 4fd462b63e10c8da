/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LINK_CAPTURE_H
#define LINK_CAPTURE_H

/* pcapng mirroring of links (private to lib/link; see drnic_link_capture.h). */

#include <stddef.h>
#include <stdint.h>

/* Split "k=v,..." into the capture_ keys and the rest (a malloc'd string in
 * @p rest, possibly ""). @p path: a malloc'd file name or NULL; @p snaplen:
 * 0 unless given. Returns 0, -EINVAL (message in @p err) or -ENOMEM. */
int link_capture_args_split(const char *args, char **path, uint32_t *snaplen, char **rest,
			    char *err, size_t err_len);

#endif /* LINK_CAPTURE_H */
