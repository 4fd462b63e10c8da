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

/* ------------------------------------------------------------------------ */
/* RDMA CM over the IB CM: service IDs and the IP private-data header        */
/* ------------------------------------------------------------------------ */

/** RDMA CM port spaces (rdma-core enum rdma_port_space). */
#define DRNIC_RDMA_PS_IPOIB 0x0002
#define DRNIC_RDMA_PS_IB    0x013F
#define DRNIC_RDMA_PS_TCP   0x0106
#define DRNIC_RDMA_PS_UDP   0x0111

/**
 * Service ID of RDMA CM port @p port in port space @p ps: ps << 16 | port
 * (e.g. 0x0000000001060000 | port for TCP).
 */
static inline uint64_t
drnic_rdma_cm_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}

/**
 * Split an RDMA CM service ID into port space and port.
 * @param sid   the service ID.
 * @param ps    set to DRNIC_RDMA_PS_* on success (may be NULL).
 * @param port  set on success (may be NULL).
 * @return 0; -EINVAL when @p sid is not ps << 16 | port for one of the four
 *         port spaces.
 */
int drnic_rdma_cm_service_id_split(uint64_t sid, uint16_t *ps, uint16_t *port);

/**
 * Whether a REQ or SIDR_REQ to @p sid carries the RDMA CM IP header in its
 * private data: the IB, TCP and UDP port spaces (rdma-core's
 * RDMA_IB_IP_PS_* service IDs).
 */
bool drnic_rdma_cm_sid_has_ip_hdr(uint64_t sid);

#define DRNIC_RDMA_CM_HDR_LEN     36  /**< the header at the start of the private data */
#define DRNIC_RDMA_CM_HDR_VERSION 0x00

/**
 * The RDMA CM header of a REQ's or SIDR_REQ's private data (Linux and
 * rdma-core "cma_hdr"): version, IP version, the active side's source port
 * and both addresses, IPv4 in the last 4 bytes of the 16.
 */
struct drnic_rdma_cm_hdr {
	uint8_t cma_version;    /**< DRNIC_RDMA_CM_HDR_VERSION */
	uint8_t ip_version;     /**< 4 bits: 4 or 6 */
	uint8_t rsvd_ip;        /**< the byte's low 4 bits, reserved */
	uint16_t port;          /**< source port of the active side */
	uint8_t src_addr[16];   /**< network order */
	uint8_t dst_addr[16];
};

/**
 * Read the RDMA CM header at the start of @p pdata.
 * @param pdata  private data of a REQ or SIDR_REQ.
 * @param len    bytes readable at @p pdata.
 * @param hdr    filled on success.
 * @return 0; -EINVAL when a pointer is NULL or @p len < 36; -EPROTO when the
 *         version is not 0 or the IP version neither 4 nor 6 (@p hdr is
 *         filled then as well).
 */
int drnic_rdma_cm_hdr_parse(const void *pdata, size_t len, struct drnic_rdma_cm_hdr *hdr);

/**
 * Write the RDMA CM header at the start of @p pdata (36 bytes).
 * @return 0; -EINVAL when a pointer is NULL or @p len < 36; -ERANGE when
 *         ip_version or rsvd_ip exceed 4 bits.
 */
int drnic_rdma_cm_hdr_build(const struct drnic_rdma_cm_hdr *hdr, void *pdata, size_t len);

/**
 * The IPv4 address in a 16-byte header address: its last 4 bytes, when the
 * first 12 are zero (Linux's layout) or ::ffff: (IPv4-mapped).
 * @return 0; -EINVAL when a pointer is NULL or @p addr holds an IPv6
 *         address.
 */
int drnic_rdma_cm_addr_ipv4(const uint8_t addr[16], uint8_t ipv4[4]);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_MAD_H */
