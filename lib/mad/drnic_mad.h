/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_MAD_H
#define DRNIC_MAD_H

/**
 * @file
 * MAD and Communication Manager codec.
 *
 * A management datagram (MAD) is the 256-byte payload of a UD SEND to QP 1
 * (the GSI), after the DETH: a 24-byte common header and 232 bytes of
 * attribute data. This library parses and builds the common header, the
 * attributes of the Communication Management class (0x07, IBA volume 1
 * chapter 12), and the private-data header and service IDs that the RDMA CM
 * of rdma-core and Linux puts on top of them for its IP port spaces.
 *
 * Every attribute is a host struct with one member per field the IBA
 * defines, in host order and at its full width (24-bit QPNs and PSNs in a
 * uint32_t, 4- and 5-bit fields in a uint8_t ...). Reserved bits are members
 * too (named rsvd_*): parsing keeps them and building writes them back, so a
 * parsed MAD rebuilds byte for byte; a sender sets them to zero. A member
 * that holds more bits than its field makes build fail with -ERANGE.
 * LAP (0x0019), APR (0x001A) and attributes this library does not know are
 * kept as raw bytes.
 *
 * Pure functions: no state, no logging, no allocation; safe from any
 * thread. Every function checks lengths before it reads or writes and never
 * touches a byte outside the buffer it is given.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Common MAD header                                                         */
/* ------------------------------------------------------------------------ */

#define DRNIC_MAD_LEN          256  /**< a GSI MAD, the UD payload after the DETH */
#define DRNIC_MAD_HDR_LEN      24   /**< common MAD header */
#define DRNIC_MAD_DATA_LEN     232  /**< attribute data after the header */
#define DRNIC_MAD_GSI_QPN      1    /**< QP 1 receives the GSI's MADs */
#define DRNIC_MAD_GSI_QKEY     0x80010000u  /**< Q_Key of QP 1 */

#define DRNIC_MAD_BASE_VERSION 1    /**< base version of IBA MADs */
#define DRNIC_MAD_CLASS_CM     0x07 /**< Communication Management class */
#define DRNIC_MAD_CM_CLASS_VERSION 2

/** Common methods (IBA 13.4.5). */
#define DRNIC_MAD_METHOD_GET      0x01
#define DRNIC_MAD_METHOD_SET      0x02
#define DRNIC_MAD_METHOD_SEND     0x03  /**< the CM sends its messages with it */
#define DRNIC_MAD_METHOD_GET_RESP 0x81  /**< R bit set: a response */

/** The 24-byte common MAD header (IBA 13.4.2), host order. */
struct drnic_mad_hdr {
	uint8_t base_version;    /**< 1 */
	uint8_t mgmt_class;      /**< e.g. DRNIC_MAD_CLASS_CM */
	uint8_t class_version;
	uint8_t r;               /**< 1 bit: response */
	uint8_t method;          /**< 7 bits */
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;            /**< transaction ID */
	uint16_t attr_id;
	uint16_t rsvd_attr;      /**< 16 reserved bits after the attribute ID */
	uint32_t attr_mod;       /**< attribute modifier */
};

/**
 * Read the common header at the start of a MAD.
 * @param mad  the MAD (or its first @p len bytes).
 * @param len  bytes readable at @p mad.
 * @param hdr  filled on success.
 * @return 0; -EINVAL when @p mad or @p hdr is NULL or @p len < 24.
 */
int drnic_mad_hdr_parse(const void *mad, size_t len, struct drnic_mad_hdr *hdr);

/**
 * Write the common header at the start of a MAD (the first 24 bytes only).
 * @param mad  the MAD buffer.
 * @param len  bytes writable at @p mad.
 * @param hdr  the header.
 * @return 0; -EINVAL when a pointer is NULL or @p len < 24; -ERANGE when
 *         hdr->r > 1 or hdr->method > 0x7F (nothing is written then).
 */
int drnic_mad_hdr_build(void *mad, size_t len, const struct drnic_mad_hdr *hdr);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_MAD_H */
