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
/* Communication Management attributes (IBA chapter 12)                      */
/* ------------------------------------------------------------------------ */

/** Attribute IDs of the CM class. */
enum drnic_mad_cm_attr {
	DRNIC_MAD_CM_CLASS_PORT_INFO = 0x0001,
	DRNIC_MAD_CM_REQ      = 0x0010,
	DRNIC_MAD_CM_MRA      = 0x0011,
	DRNIC_MAD_CM_REJ      = 0x0012,
	DRNIC_MAD_CM_REP      = 0x0013,
	DRNIC_MAD_CM_RTU      = 0x0014,
	DRNIC_MAD_CM_DREQ     = 0x0015,
	DRNIC_MAD_CM_DREP     = 0x0016,
	DRNIC_MAD_CM_SIDR_REQ = 0x0017,
	DRNIC_MAD_CM_SIDR_REP = 0x0018,
	DRNIC_MAD_CM_LAP      = 0x0019,  /**< kept raw */
	DRNIC_MAD_CM_APR      = 0x001A,  /**< kept raw */
};

/** Private data bytes each CM message carries (IBA 12.6). */
#define DRNIC_MAD_CM_REQ_PDATA_LEN      92
#define DRNIC_MAD_CM_MRA_PDATA_LEN      222
#define DRNIC_MAD_CM_REJ_PDATA_LEN      148
#define DRNIC_MAD_CM_REP_PDATA_LEN      196
#define DRNIC_MAD_CM_RTU_PDATA_LEN      224
#define DRNIC_MAD_CM_DREQ_PDATA_LEN     220
#define DRNIC_MAD_CM_DREP_PDATA_LEN     224
#define DRNIC_MAD_CM_SIDR_REQ_PDATA_LEN 216
#define DRNIC_MAD_CM_SIDR_REP_PDATA_LEN 136
#define DRNIC_MAD_CM_ARI_LEN            72  /**< REJ additional reject information */
#define DRNIC_MAD_CLASS_PORT_INFO_LEN   72

/** REJ reason codes the RDMA CM meets most (IBA table 112). */
#define DRNIC_MAD_CM_REJ_NO_QP             1
#define DRNIC_MAD_CM_REJ_TIMEOUT           3
#define DRNIC_MAD_CM_REJ_INVALID_SERVICE_ID 8
#define DRNIC_MAD_CM_REJ_STALE_CONN        10
#define DRNIC_MAD_CM_REJ_CONSUMER_REJECT   28

/** Which message an MRA or REJ is about (2 bits). */
#define DRNIC_MAD_CM_MSG_REQ   0
#define DRNIC_MAD_CM_MSG_REP   1
#define DRNIC_MAD_CM_MSG_OTHER 2  /**< LAP (MRA), or another message (REJ) */

/** ClassPortInfo (IBA 13.4.8.1): 72 bytes; the rest of the data area is reserved. */
struct drnic_mad_class_port_info {
	uint8_t base_version;
	uint8_t class_version;
	uint16_t capability_mask;
	uint32_t capability_mask2;    /**< 27 bits */
	uint8_t resp_time_value;      /**< 5 bits */
	uint8_t redirect_gid[16];
	uint8_t redirect_tc;
	uint8_t redirect_sl;          /**< 4 bits */
	uint32_t redirect_fl;         /**< 20 bits */
	uint16_t redirect_lid;
	uint16_t redirect_pkey;
	uint8_t rsvd_redirect_qp;     /**< 8 reserved bits */
	uint32_t redirect_qp;         /**< 24 bits */
	uint32_t redirect_qkey;
	uint8_t trap_gid[16];
	uint8_t trap_tc;
	uint8_t trap_sl;              /**< 4 bits */
	uint32_t trap_fl;             /**< 20 bits */
	uint16_t trap_lid;
	uint16_t trap_pkey;
	uint8_t trap_hl;
	uint32_t trap_qp;             /**< 24 bits */
	uint32_t trap_qkey;
};

/** A path of a REQ (primary at data byte 52, alternate at 96): 44 bytes. */
struct drnic_mad_cm_path {
	uint16_t local_lid;           /**< 0xFFFF (permissive) on RoCE */
	uint16_t remote_lid;
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	uint32_t flow_label;          /**< 20 bits */
	uint8_t rsvd_flow;            /**< 6 reserved bits */
	uint8_t packet_rate;          /**< 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;                   /**< 4 bits */
	uint8_t subnet_local;         /**< 1 bit */
	uint8_t rsvd_sl;              /**< 3 reserved bits */
	uint8_t local_ack_timeout;    /**< 5 bits */
	uint8_t rsvd_ack;             /**< 3 reserved bits */
};

/** ConnectRequest (REQ, IBA 12.6.5). */
struct drnic_mad_cm_req {
	uint32_t local_comm_id;
	uint32_t rsvd_4;
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t rsvd_24;
	uint32_t local_qkey;
	uint32_t local_qpn;           /**< 24 bits */
	uint8_t responder_resources;
	uint32_t local_eecn;          /**< 24 bits */
	uint8_t initiator_depth;
	uint32_t remote_eecn;         /**< 24 bits */
	uint8_t remote_cm_resp_timeout; /**< 5 bits */
	uint8_t transport_service;    /**< 2 bits: 0 RC, 1 UC, 3 XRC */
	uint8_t e2e_flow_control;     /**< 1 bit */
	uint32_t starting_psn;        /**< 24 bits */
	uint8_t local_cm_resp_timeout; /**< 5 bits */
	uint8_t retry_count;          /**< 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;             /**< 4 bits, as enum drnic_wire_mtu */
	uint8_t rdc_exists;           /**< 1 bit */
	uint8_t rnr_retry_count;      /**< 3 bits */
	uint8_t max_cm_retries;       /**< 4 bits */
	uint8_t srq;                  /**< 1 bit */
	uint8_t ext_transport;        /**< 3 bits: extended transport type */
	struct drnic_mad_cm_path primary;
	struct drnic_mad_cm_path alternate;
	uint8_t private_data[DRNIC_MAD_CM_REQ_PDATA_LEN];
};

/** MessageReceiptAcknowledgement (MRA, IBA 12.6.6). */
struct drnic_mad_cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_mraed;            /**< 2 bits: DRNIC_MAD_CM_MSG_* */
	uint8_t rsvd_8;               /**< 6 reserved bits */
	uint8_t service_timeout;      /**< 5 bits */
	uint8_t rsvd_9;               /**< 3 reserved bits */
	uint8_t private_data[DRNIC_MAD_CM_MRA_PDATA_LEN];
};

/** ConnectReject (REJ, IBA 12.6.7). */
struct drnic_mad_cm_rej {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_rejected;         /**< 2 bits: DRNIC_MAD_CM_MSG_* */
	uint8_t rsvd_8;               /**< 6 reserved bits */
	uint8_t reject_info_len;      /**< 7 bits: bytes of ari used */
	uint8_t rsvd_9;               /**< 1 reserved bit */
	uint16_t reason;              /**< DRNIC_MAD_CM_REJ_* */
	uint8_t ari[DRNIC_MAD_CM_ARI_LEN];
	uint8_t private_data[DRNIC_MAD_CM_REJ_PDATA_LEN];
};

/** ConnectReply (REP, IBA 12.6.8). */
struct drnic_mad_cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;           /**< 24 bits */
	uint8_t rsvd_15;
	uint32_t local_eecn;          /**< 24 bits */
	uint8_t rsvd_19;
	uint32_t starting_psn;        /**< 24 bits */
	uint8_t rsvd_23;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;     /**< 5 bits */
	uint8_t failover_accepted;    /**< 2 bits */
	uint8_t e2e_flow_control;     /**< 1 bit */
	uint8_t rnr_retry_count;      /**< 3 bits */
	uint8_t srq;                  /**< 1 bit */
	uint8_t rsvd_27;              /**< 4 reserved bits */
	uint64_t local_ca_guid;
	uint8_t private_data[DRNIC_MAD_CM_REP_PDATA_LEN];
};

/** ReadyToUse (RTU, IBA 12.6.9). */
struct drnic_mad_cm_rtu {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[DRNIC_MAD_CM_RTU_PDATA_LEN];
};

/** DisconnectRequest (DREQ, IBA 12.6.10). */
struct drnic_mad_cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;          /**< 24 bits: the receiver's QPN / EECN */
	uint8_t rsvd_11;
	uint8_t private_data[DRNIC_MAD_CM_DREQ_PDATA_LEN];
};

/** DisconnectReply (DREP, IBA 12.6.11). */
struct drnic_mad_cm_drep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[DRNIC_MAD_CM_DREP_PDATA_LEN];
};

/** ServiceIDResolutionRequest (SIDR_REQ, IBA 12.11.1). */
struct drnic_mad_cm_sidr_req {
	uint32_t request_id;
	uint16_t pkey;
	uint16_t rsvd_6;
	uint64_t service_id;
	uint8_t private_data[DRNIC_MAD_CM_SIDR_REQ_PDATA_LEN];
};

/** ServiceIDResolutionResponse (SIDR_REP, IBA 12.11.2). */
struct drnic_mad_cm_sidr_rep {
	uint32_t request_id;
	uint8_t status;               /**< 0: QP valid */
	uint8_t add_info_len;         /**< additional information length */
	uint16_t rsvd_6;
	uint32_t qpn;                 /**< 24 bits */
	uint8_t rsvd_11;
	uint64_t service_id;
	uint32_t qkey;
	/** A ClassPortInfo (redirection): drnic_mad_cm_attr_parse() reads it. */
	uint8_t class_port_info[DRNIC_MAD_CLASS_PORT_INFO_LEN];
	uint8_t private_data[DRNIC_MAD_CM_SIDR_REP_PDATA_LEN];
};

/** A whole CM MAD: the header and its attribute, host order. */
struct drnic_mad_cm {
	struct drnic_mad_hdr hdr;
	/** Which member of the union holds the attribute (false: raw). */
	bool known;
	union {
		struct drnic_mad_class_port_info class_port_info;
		struct drnic_mad_cm_req req;
		struct drnic_mad_cm_mra mra;
		struct drnic_mad_cm_rej rej;
		struct drnic_mad_cm_rep rep;
		struct drnic_mad_cm_rtu rtu;
		struct drnic_mad_cm_dreq dreq;
		struct drnic_mad_cm_drep drep;
		struct drnic_mad_cm_sidr_req sidr_req;
		struct drnic_mad_cm_sidr_rep sidr_rep;
		/** LAP, APR and unknown attributes: the data area as is. */
		uint8_t raw[DRNIC_MAD_DATA_LEN];
	};
};

/**
 * Name of a CM attribute, e.g. "REQ", for logs and counters.
 * @return a static string; NULL for an ID the CM class does not define.
 */
const char *drnic_mad_cm_attr_name(uint16_t attr_id);

/**
 * Parse one CM attribute from its bytes: the 232-byte data area of a CM MAD,
 * or the 72 bytes of a ClassPortInfo (also inside a SIDR_REP).
 *
 * @param attr_id  DRNIC_MAD_CM_CLASS_PORT_INFO, _REQ ... _SIDR_REP.
 * @param data     the attribute's bytes.
 * @param len      bytes readable at @p data.
 * @param attr     the struct of that attribute (struct drnic_mad_cm_req
 *                 for a REQ ...), filled on success.
 * @return 0; -EINVAL when a pointer is NULL or @p len is shorter than the
 *         attribute (232, or 72 for ClassPortInfo); -ENOTSUP for LAP, APR
 *         and IDs without a struct.
 */
int drnic_mad_cm_attr_parse(uint16_t attr_id, const void *data, size_t len, void *attr);

/**
 * Build one CM attribute into its bytes (232, or 72 for ClassPortInfo).
 * @return 0; -EINVAL when a pointer is NULL or @p len is too short;
 *         -ENOTSUP as drnic_mad_cm_attr_parse(); -ERANGE when a member holds
 *         a value wider than its field (@p data is partly written then).
 */
int drnic_mad_cm_attr_build(uint16_t attr_id, const void *attr, void *data, size_t len);

/**
 * Parse a CM MAD (mgmt class 0x07): the header, then the attribute its ID
 * names into the union (out->known true), or the data area into out->raw
 * (LAP, APR, unknown IDs: out->known false).
 *
 * @param mad  the MAD, the UD payload after the DETH.
 * @param len  its length: must be DRNIC_MAD_LEN (256).
 * @param out  filled on success.
 * @return 0; -EINVAL when a pointer is NULL or @p len is not 256;
 *         -EPROTO when the class is not 0x07 or the base version not 1;
 *         -EBADMSG when a ClassPortInfo has non-zero bytes after its 72.
 */
int drnic_mad_cm_parse(const void *mad, size_t len, struct drnic_mad_cm *out);

/**
 * Build a 256-byte CM MAD from @p in: the header, then the attribute of
 * in->hdr.attr_id from the union when in->known, else in->raw. A
 * ClassPortInfo is followed by zeros.
 *
 * @return 0; -EINVAL when a pointer is NULL or @p len < 256, or in->known is
 *         set for an ID without a struct; -ERANGE when a member holds a value
 *         wider than its field.
 */
int drnic_mad_cm_build(const struct drnic_mad_cm *in, void *mad, size_t len);

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
