/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DRNIC_WIRE_H
#define DRNIC_WIRE_H

/**
 * @file
 * RoCEv2 frame codec.
 *
 * A RoCEv2 frame is
 *
 *     Ethernet [802.1Q] | IPv4 or IPv6 | UDP (dst 4791) | BTH | extension
 *     headers | payload | pad (PadCnt bytes) | ICRC | [Ethernet padding]
 *
 * This library knows the header layouts, the opcode table (as data), how to
 * build a frame into an mbuf and how to parse one strictly, the invariant CRC
 * (ICRC), 24-bit PSN arithmetic and the AETH syndrome codes. It is pure: no
 * state, no logging, no allocation other than mbufs taken from the pool of the
 * mbuf being built. Everything here is safe to call from any thread.
 *
 * Facts come from the InfiniBand Architecture Specification, volume 1, and its
 * RoCEv2 annex A17.
 *
 * Byte order: the header structs (struct drnic_wire_bth, ...) are the wire
 * layout, in network byte order, byte aligned; read and write them only through
 * the inline accessors below. struct drnic_wire_pkt holds host-order values.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rte_mbuf;

/* ------------------------------------------------------------------------ */
/* Constants                                                                 */
/* ------------------------------------------------------------------------ */

#define DRNIC_ROCEV2_UDP_PORT     4791   /**< IANA port of RoCEv2 */
#define DRNIC_WIRE_UDP_SPORT_MIN  0xC000 /**< lowest UDP source port we send */

/** Ethertypes and IP protocol numbers the codec knows. */
#define DRNIC_WIRE_ETHERTYPE_IPV4 0x0800
#define DRNIC_WIRE_ETHERTYPE_IPV6 0x86DD
#define DRNIC_WIRE_ETHERTYPE_VLAN 0x8100
#define DRNIC_WIRE_IPPROTO_UDP    17

/* Header lengths in bytes. */
#define DRNIC_WIRE_ETH_LEN        14  /**< Ethernet header without tag */
#define DRNIC_WIRE_VLAN_LEN       4   /**< one 802.1Q tag */
#define DRNIC_WIRE_IPV4_LEN       20  /**< IPv4 header without options */
#define DRNIC_WIRE_IPV6_LEN       40
#define DRNIC_WIRE_UDP_LEN        8
#define DRNIC_WIRE_BTH_LEN        12
#define DRNIC_WIRE_RETH_LEN       16
#define DRNIC_WIRE_AETH_LEN       4
#define DRNIC_WIRE_ATOMICETH_LEN  28
#define DRNIC_WIRE_ATOMICACKETH_LEN 8
#define DRNIC_WIRE_IMMDT_LEN      4
#define DRNIC_WIRE_IETH_LEN       4
#define DRNIC_WIRE_DETH_LEN       8
/** The GRH area at the start of a UD receive buffer (IBA 11.4.1.1). */
#define DRNIC_WIRE_GRH_LEN        40
#define DRNIC_WIRE_XRCETH_LEN     4
#define DRNIC_WIRE_CNP_RSVD_LEN   16  /**< reserved bytes after a CNP's BTH */
#define DRNIC_WIRE_ICRC_LEN       4
/** Shortest Ethernet frame without FCS; shorter frames are padded after the ICRC. */
#define DRNIC_WIRE_ETH_MIN_FRAME  60
/** Longest header stack: Ethernet + tag + IPv6 + UDP + BTH + XRCETH + AtomicETH. */
#define DRNIC_WIRE_MAX_HDR_LEN \
	(DRNIC_WIRE_ETH_LEN + DRNIC_WIRE_VLAN_LEN + DRNIC_WIRE_IPV6_LEN + \
	 DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN + DRNIC_WIRE_XRCETH_LEN + \
	 DRNIC_WIRE_ATOMICETH_LEN)

#define DRNIC_PSN_BITS  24
#define DRNIC_PSN_MASK  0xFFFFFFu    /**< PSNs, QPNs and MSNs are 24 bits */
#define DRNIC_QPN_MASK  0xFFFFFFu
#define DRNIC_MSN_MASK  0xFFFFFFu

/** IP ECN codepoints (low two bits of IPv4 TOS / IPv6 traffic class). */
#define DRNIC_WIRE_ECN_MASK    0x03
#define DRNIC_WIRE_ECN_NOT_ECT 0x00
#define DRNIC_WIRE_ECN_ECT1    0x01
#define DRNIC_WIRE_ECN_ECT0    0x02
#define DRNIC_WIRE_ECN_CE      0x03

/* ------------------------------------------------------------------------ */
/* Opcodes                                                                   */
/* ------------------------------------------------------------------------ */

/** BTH opcodes drnic knows: transport in bits 7:5, operation in bits 4:0. */
enum drnic_wire_opcode {
	DRNIC_WIRE_OP_RC_SEND_FIRST                = 0x00,
	DRNIC_WIRE_OP_RC_SEND_MIDDLE               = 0x01,
	DRNIC_WIRE_OP_RC_SEND_LAST                 = 0x02,
	DRNIC_WIRE_OP_RC_SEND_LAST_WITH_IMMEDIATE  = 0x03,
	DRNIC_WIRE_OP_RC_SEND_ONLY                 = 0x04,
	DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_IMMEDIATE  = 0x05,
	DRNIC_WIRE_OP_RC_RDMA_WRITE_FIRST          = 0x06,
	DRNIC_WIRE_OP_RC_RDMA_WRITE_MIDDLE         = 0x07,
	DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST           = 0x08,
	DRNIC_WIRE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09,
	DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY           = 0x0A,
	DRNIC_WIRE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B,
	DRNIC_WIRE_OP_RC_RDMA_READ_REQUEST         = 0x0C,
	DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST  = 0x0D,
	DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE = 0x0E,
	DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_LAST   = 0x0F,
	DRNIC_WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY   = 0x10,
	DRNIC_WIRE_OP_RC_ACKNOWLEDGE               = 0x11,
	DRNIC_WIRE_OP_RC_ATOMIC_ACKNOWLEDGE        = 0x12,
	DRNIC_WIRE_OP_RC_COMPARE_SWAP              = 0x13,
	DRNIC_WIRE_OP_RC_FETCH_ADD                 = 0x14,
	/* 0x15 reserved */
	DRNIC_WIRE_OP_RC_SEND_LAST_WITH_INVALIDATE = 0x16,
	DRNIC_WIRE_OP_RC_SEND_ONLY_WITH_INVALIDATE = 0x17,
	/** IBA 1.5: 8 bytes written atomically (RETH and an 8-byte payload). */
	DRNIC_WIRE_OP_RC_ATOMIC_WRITE              = 0x1D,

	DRNIC_WIRE_OP_UC_SEND_FIRST                = 0x20,
	DRNIC_WIRE_OP_UC_SEND_MIDDLE               = 0x21,
	DRNIC_WIRE_OP_UC_SEND_LAST                 = 0x22,
	DRNIC_WIRE_OP_UC_SEND_LAST_WITH_IMMEDIATE  = 0x23,
	DRNIC_WIRE_OP_UC_SEND_ONLY                 = 0x24,
	DRNIC_WIRE_OP_UC_SEND_ONLY_WITH_IMMEDIATE  = 0x25,
	DRNIC_WIRE_OP_UC_RDMA_WRITE_FIRST          = 0x26,
	DRNIC_WIRE_OP_UC_RDMA_WRITE_MIDDLE         = 0x27,
	DRNIC_WIRE_OP_UC_RDMA_WRITE_LAST           = 0x28,
	DRNIC_WIRE_OP_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x29,
	DRNIC_WIRE_OP_UC_RDMA_WRITE_ONLY           = 0x2A,
	DRNIC_WIRE_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x2B,

	DRNIC_WIRE_OP_UD_SEND_ONLY                 = 0x64,
	DRNIC_WIRE_OP_UD_SEND_ONLY_WITH_IMMEDIATE  = 0x65,

	/** RoCEv2 Congestion Notification Packet (annex A17). */
	DRNIC_WIRE_OP_CNP                          = 0x81,

	/* Extended Reliable Connection: RC's operations at 0xA0 + RC's code;
	 * requests carry an XRCETH after the BTH, responses do not. */
	DRNIC_WIRE_OP_XRC_SEND_FIRST               = 0xA0,
	DRNIC_WIRE_OP_XRC_SEND_MIDDLE              = 0xA1,
	DRNIC_WIRE_OP_XRC_SEND_LAST                = 0xA2,
	DRNIC_WIRE_OP_XRC_SEND_LAST_WITH_IMMEDIATE = 0xA3,
	DRNIC_WIRE_OP_XRC_SEND_ONLY                = 0xA4,
	DRNIC_WIRE_OP_XRC_SEND_ONLY_WITH_IMMEDIATE = 0xA5,
	DRNIC_WIRE_OP_XRC_RDMA_WRITE_FIRST         = 0xA6,
	DRNIC_WIRE_OP_XRC_RDMA_WRITE_MIDDLE        = 0xA7,
	DRNIC_WIRE_OP_XRC_RDMA_WRITE_LAST          = 0xA8,
	DRNIC_WIRE_OP_XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0xA9,
	DRNIC_WIRE_OP_XRC_RDMA_WRITE_ONLY          = 0xAA,
	DRNIC_WIRE_OP_XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0xAB,
	DRNIC_WIRE_OP_XRC_RDMA_READ_REQUEST        = 0xAC,
	DRNIC_WIRE_OP_XRC_RDMA_READ_RESPONSE_FIRST = 0xAD,
	DRNIC_WIRE_OP_XRC_RDMA_READ_RESPONSE_MIDDLE = 0xAE,
	DRNIC_WIRE_OP_XRC_RDMA_READ_RESPONSE_LAST  = 0xAF,
	DRNIC_WIRE_OP_XRC_RDMA_READ_RESPONSE_ONLY  = 0xB0,
	DRNIC_WIRE_OP_XRC_ACKNOWLEDGE              = 0xB1,
	DRNIC_WIRE_OP_XRC_ATOMIC_ACKNOWLEDGE       = 0xB2,
	DRNIC_WIRE_OP_XRC_COMPARE_SWAP             = 0xB3,
	DRNIC_WIRE_OP_XRC_FETCH_ADD                = 0xB4,
	DRNIC_WIRE_OP_XRC_SEND_LAST_WITH_INVALIDATE = 0xB6,
	DRNIC_WIRE_OP_XRC_SEND_ONLY_WITH_INVALIDATE = 0xB7,
};

/** XRC's opcode for RC opcode @p rc_op (0x00..0x17): the same operation. */
#define DRNIC_WIRE_OP_XRC_OF(rc_op) ((uint8_t)(0xA0u | ((rc_op) & 0x1Fu)))

/** Transport of an opcode. */
enum drnic_wire_transport {
	DRNIC_WIRE_TR_NONE = 0, /**< undefined opcode */
	DRNIC_WIRE_TR_RC,
	DRNIC_WIRE_TR_UC,
	DRNIC_WIRE_TR_RD,       /**< defined by IBA, not supported by drnic */
	DRNIC_WIRE_TR_UD,
	DRNIC_WIRE_TR_XRC,      /**< Extended Reliable Connection */
	DRNIC_WIRE_TR_CNP,
};

/** Extension headers following the BTH; wire order is the bit order. */
enum drnic_wire_ext_idx {
	DRNIC_WIRE_EXT_IDX_DETH = 0,
	DRNIC_WIRE_EXT_IDX_XRCETH,  /**< XRC requests: the target XRC SRQ */
	DRNIC_WIRE_EXT_IDX_RETH,
	DRNIC_WIRE_EXT_IDX_ATOMICETH,
	DRNIC_WIRE_EXT_IDX_AETH,
	DRNIC_WIRE_EXT_IDX_ATOMICACKETH,
	DRNIC_WIRE_EXT_IDX_IMMDT,
	DRNIC_WIRE_EXT_IDX_IETH,
	DRNIC_WIRE_EXT_IDX_CNP,   /**< 16 reserved bytes of a CNP */
	DRNIC_WIRE_EXT_IDX_NUM,
};

#define DRNIC_WIRE_EXT_DETH         (1u << DRNIC_WIRE_EXT_IDX_DETH)
#define DRNIC_WIRE_EXT_XRCETH       (1u << DRNIC_WIRE_EXT_IDX_XRCETH)
#define DRNIC_WIRE_EXT_RETH         (1u << DRNIC_WIRE_EXT_IDX_RETH)
#define DRNIC_WIRE_EXT_ATOMICETH    (1u << DRNIC_WIRE_EXT_IDX_ATOMICETH)
#define DRNIC_WIRE_EXT_AETH         (1u << DRNIC_WIRE_EXT_IDX_AETH)
#define DRNIC_WIRE_EXT_ATOMICACKETH (1u << DRNIC_WIRE_EXT_IDX_ATOMICACKETH)
#define DRNIC_WIRE_EXT_IMMDT        (1u << DRNIC_WIRE_EXT_IDX_IMMDT)
#define DRNIC_WIRE_EXT_IETH         (1u << DRNIC_WIRE_EXT_IDX_IETH)
#define DRNIC_WIRE_EXT_CNP          (1u << DRNIC_WIRE_EXT_IDX_CNP)

/** Position of a packet in its message; ONLY is FIRST and LAST at once. */
#define DRNIC_WIRE_POS_FIRST  0x1
#define DRNIC_WIRE_POS_MIDDLE 0x2
#define DRNIC_WIRE_POS_LAST   0x4
#define DRNIC_WIRE_POS_ONLY   (DRNIC_WIRE_POS_FIRST | DRNIC_WIRE_POS_LAST)

/* Opcode flags (struct drnic_wire_opinfo::flags). */
#define DRNIC_WIRE_OPF_SUPPORTED   (1u << 0)  /**< drnic builds and parses it */
#define DRNIC_WIRE_OPF_REQUEST     (1u << 1)  /**< sent by a requester */
#define DRNIC_WIRE_OPF_RESPONSE    (1u << 2)  /**< sent by a responder */
#define DRNIC_WIRE_OPF_SEND        (1u << 3)
#define DRNIC_WIRE_OPF_WRITE       (1u << 4)
#define DRNIC_WIRE_OPF_READ        (1u << 5)  /**< read request or response */
#define DRNIC_WIRE_OPF_ATOMIC      (1u << 6)  /**< atomic request or atomic ack */
#define DRNIC_WIRE_OPF_ACK         (1u << 7)  /**< carries an AETH */
#define DRNIC_WIRE_OPF_IMM         (1u << 8)  /**< carries immediate data */
#define DRNIC_WIRE_OPF_INV         (1u << 9)  /**< carries an IETH */
#define DRNIC_WIRE_OPF_PAYLOAD     (1u << 10) /**< may carry payload */
#define DRNIC_WIRE_OPF_PAYLOAD_REQ (1u << 11) /**< must carry >= 1 byte */
#define DRNIC_WIRE_OPF_FULL_MTU    (1u << 12) /**< FIRST/MIDDLE: exactly path MTU */
#define DRNIC_WIRE_OPF_CNP         (1u << 13)
/** ATOMIC WRITE: an RDMA WRITE of exactly 8 bytes, stored atomically. */
#define DRNIC_WIRE_OPF_ATOMIC_WRITE (1u << 14)

/** What the opcode table says about one opcode. */
struct drnic_wire_opinfo {
	/** e.g. "RC_SEND_FIRST"; NULL when IBA does not define the opcode. */
	const char *name;
	uint32_t flags;       /**< DRNIC_WIRE_OPF_* */
	uint16_t ext;         /**< DRNIC_WIRE_EXT_* present after the BTH */
	uint8_t transport;    /**< enum drnic_wire_transport */
	uint8_t pos;          /**< DRNIC_WIRE_POS_*, 0 for undefined opcodes */
	uint8_t ext_len;      /**< bytes of extension headers after the BTH */
	uint8_t hdr_len;      /**< BTH + extension headers */
	/** Offset of each extension header from the BTH start; 0 when absent. */
	uint8_t ext_off[DRNIC_WIRE_EXT_IDX_NUM];
};

/**
 * The opcode table, indexed by the BTH opcode. Entries with name == NULL are
 * undefined opcodes; entries without DRNIC_WIRE_OPF_SUPPORTED are defined by
 * IBA but not implemented here (RD, FLUSH).
 */
extern const struct drnic_wire_opinfo drnic_wire_opcodes[256];

/** The table entry of @p opcode; never NULL. */
static inline const struct drnic_wire_opinfo *
drnic_wire_opcode_info(uint8_t opcode)
{
	return &drnic_wire_opcodes[opcode];
}

/**
 * Name of an opcode for logs and counters.
 * @return the table name, or "UNKNOWN" for undefined opcodes; never NULL.
 */
const char *drnic_wire_opcode_name(uint8_t opcode);

/* ------------------------------------------------------------------------ */
/* Wire headers (network byte order, byte aligned)                           */
/* ------------------------------------------------------------------------ */

/** Ethernet header without FCS. */
struct drnic_wire_eth {
	uint8_t dst[6];
	uint8_t src[6];
	rte_be16_t type;
} __rte_packed;

/** 802.1Q tag: follows the MACs, before the inner ethertype. */
struct drnic_wire_vlan {
	rte_be16_t tci;   /**< PCP(3) DEI(1) VID(12) */
	rte_be16_t type;  /**< inner ethertype */
} __rte_packed;

/** IPv4 header without options. */
struct drnic_wire_ipv4 {
	uint8_t ver_ihl;
	uint8_t tos;      /**< DSCP(6) ECN(2) */
	rte_be16_t total_len;
	rte_be16_t id;
	rte_be16_t frag_off;  /**< flags(3) offset(13) */
	uint8_t ttl;
	uint8_t proto;
	rte_be16_t csum;
	uint8_t src[4];
	uint8_t dst[4];
} __rte_packed;

/** IPv4 frag_off bits (host order). */
#define DRNIC_WIRE_IPV4_DF      0x4000
#define DRNIC_WIRE_IPV4_MF      0x2000
#define DRNIC_WIRE_IPV4_OFFMASK 0x1FFF

/** IPv6 fixed header (RoCEv2 uses no extension headers). */
struct drnic_wire_ipv6 {
	rte_be32_t vtc_flow;  /**< version(4) traffic class(8) flow label(20) */
	rte_be16_t payload_len;
	uint8_t next_hdr;
	uint8_t hop_limit;
	uint8_t src[16];
	uint8_t dst[16];
} __rte_packed;

/** UDP header; RoCEv2 sends checksum 0. */
struct drnic_wire_udp {
	rte_be16_t sport;
	rte_be16_t dport;
	rte_be16_t len;
	rte_be16_t csum;
} __rte_packed;

/** Base Transport Header. */
struct drnic_wire_bth {
	uint8_t opcode;
	uint8_t flags;        /**< SE(7) M(6) PadCnt(5:4) TVer(3:0) */
	rte_be16_t pkey;
	rte_be32_t fb_dqpn;   /**< FECN(31) BECN(30) reserved(29:24) DestQP(23:0) */
	rte_be32_t ack_psn;   /**< AckReq(31) reserved(30:24) PSN(23:0) */
} __rte_packed;

/** RDMA Extended Transport Header. */
struct drnic_wire_reth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be32_t dmalen;
} __rte_packed;

/** ACK Extended Transport Header. */
struct drnic_wire_aeth {
	rte_be32_t syn_msn;   /**< syndrome(31:24) MSN(23:0) */
} __rte_packed;

/** Atomic Extended Transport Header. */
struct drnic_wire_atomiceth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be64_t swap_add;
	rte_be64_t cmp;
} __rte_packed;

/** Atomic Acknowledge Extended Transport Header. */
struct drnic_wire_atomicacketh {
	rte_be64_t orig;
} __rte_packed;

/** Immediate data: opaque 4 bytes. */
struct drnic_wire_immdt {
	rte_be32_t imm;
} __rte_packed;

/** Invalidate Extended Transport Header. */
struct drnic_wire_ieth {
	rte_be32_t rkey;
} __rte_packed;

/** Datagram Extended Transport Header. */
struct drnic_wire_deth {
	rte_be32_t qkey;
	rte_be32_t sqpn;      /**< reserved(31:24) SrcQP(23:0) */
} __rte_packed;

/** XRC Extended Transport Header: the XRC SRQ a request is for. */
struct drnic_wire_xrceth {
	rte_be32_t srqn;      /**< reserved(31:24) XRCSRQ(23:0) */
} __rte_packed;

/**
 * @name BTH field accessors
 * Read one field of a wire BTH in host order. They cannot fail.
 * @{
 */
static inline uint8_t drnic_wire_bth_opcode(const struct drnic_wire_bth *b) { return b->opcode; }
static inline bool drnic_wire_bth_se(const struct drnic_wire_bth *b) { return (b->flags >> 7) & 1; }
static inline bool drnic_wire_bth_m(const struct drnic_wire_bth *b) { return (b->flags >> 6) & 1; }
static inline uint8_t drnic_wire_bth_padcnt(const struct drnic_wire_bth *b) { return (b->flags >> 4) & 3; }
static inline uint8_t drnic_wire_bth_tver(const struct drnic_wire_bth *b) { return b->flags & 0xF; }
static inline uint16_t drnic_wire_bth_pkey(const struct drnic_wire_bth *b) { return rte_be_to_cpu_16(b->pkey); }
static inline bool drnic_wire_bth_fecn(const struct drnic_wire_bth *b) { return (rte_be_to_cpu_32(b->fb_dqpn) >> 31) & 1; }
static inline bool drnic_wire_bth_becn(const struct drnic_wire_bth *b) { return (rte_be_to_cpu_32(b->fb_dqpn) >> 30) & 1; }
static inline uint32_t drnic_wire_bth_dqpn(const struct drnic_wire_bth *b) { return rte_be_to_cpu_32(b->fb_dqpn) & DRNIC_QPN_MASK; }
static inline bool drnic_wire_bth_ackreq(const struct drnic_wire_bth *b) { return (rte_be_to_cpu_32(b->ack_psn) >> 31) & 1; }
static inline uint32_t drnic_wire_bth_psn(const struct drnic_wire_bth *b) { return rte_be_to_cpu_32(b->ack_psn) & DRNIC_PSN_MASK; }
/** @} */

/**
 * Write a whole BTH. Reserved bits are written as zero; values are masked to
 * their field width (padcnt 2 bits, tver 4, dqpn and psn 24).
 */
static inline void
drnic_wire_bth_set(struct drnic_wire_bth *b, uint8_t opcode, bool se, bool m,
		   uint8_t padcnt, uint8_t tver, uint16_t pkey, bool fecn, bool becn,
		   uint32_t dqpn, bool ackreq, uint32_t psn)
{
	b->opcode = opcode;
	b->flags = (uint8_t)((se ? 0x80 : 0) | (m ? 0x40 : 0) | ((padcnt & 3) << 4) | (tver & 0xF));
	b->pkey = rte_cpu_to_be_16(pkey);
	b->fb_dqpn = rte_cpu_to_be_32((fecn ? 1u << 31 : 0) | (becn ? 1u << 30 : 0) |
				      (dqpn & DRNIC_QPN_MASK));
	b->ack_psn = rte_cpu_to_be_32((ackreq ? 1u << 31 : 0) | (psn & DRNIC_PSN_MASK));
}

/** Replace the PSN of a wire BTH (masked to 24 bits), keeping AckReq. */
static inline void
drnic_wire_bth_set_psn(struct drnic_wire_bth *b, uint32_t psn)
{
	uint32_t v = rte_be_to_cpu_32(b->ack_psn);

	b->ack_psn = rte_cpu_to_be_32((v & ~DRNIC_PSN_MASK) | (psn & DRNIC_PSN_MASK));
}

/** Set or clear AckReq of a wire BTH, keeping the PSN. */
static inline void
drnic_wire_bth_set_ackreq(struct drnic_wire_bth *b, bool ackreq)
{
	uint32_t v = rte_be_to_cpu_32(b->ack_psn);

	b->ack_psn = rte_cpu_to_be_32((v & ~(1u << 31)) | (ackreq ? 1u << 31 : 0));
}

/** Set or clear BECN of a wire BTH, keeping FECN and DestQP. */
static inline void
drnic_wire_bth_set_becn(struct drnic_wire_bth *b, bool becn)
{
	uint32_t v = rte_be_to_cpu_32(b->fb_dqpn);

	b->fb_dqpn = rte_cpu_to_be_32((v & ~(1u << 30)) | (becn ? 1u << 30 : 0));
}

/**
 * @name Extension header accessors
 * Read or write AETH, DETH and RETH fields in host order; 24-bit fields are
 * masked. They cannot fail.
 * @{
 */
static inline uint32_t drnic_wire_aeth_syndrome(const struct drnic_wire_aeth *a) { return rte_be_to_cpu_32(a->syn_msn) >> 24; }
static inline uint32_t drnic_wire_aeth_msn(const struct drnic_wire_aeth *a) { return rte_be_to_cpu_32(a->syn_msn) & DRNIC_MSN_MASK; }
static inline void
drnic_wire_aeth_set(struct drnic_wire_aeth *a, uint8_t syndrome, uint32_t msn)
{
	a->syn_msn = rte_cpu_to_be_32(((uint32_t)syndrome << 24) | (msn & DRNIC_MSN_MASK));
}
static inline uint32_t drnic_wire_deth_sqpn(const struct drnic_wire_deth *d) { return rte_be_to_cpu_32(d->sqpn) & DRNIC_QPN_MASK; }
static inline uint32_t drnic_wire_deth_qkey(const struct drnic_wire_deth *d) { return rte_be_to_cpu_32(d->qkey); }
static inline void
drnic_wire_deth_set(struct drnic_wire_deth *d, uint32_t qkey, uint32_t sqpn)
{
	d->qkey = rte_cpu_to_be_32(qkey);
	d->sqpn = rte_cpu_to_be_32(sqpn & DRNIC_QPN_MASK);
}
static inline uint64_t drnic_wire_reth_va(const struct drnic_wire_reth *r) { return rte_be_to_cpu_64(r->va); }
static inline uint32_t drnic_wire_reth_rkey(const struct drnic_wire_reth *r) { return rte_be_to_cpu_32(r->rkey); }
static inline uint32_t drnic_wire_reth_dmalen(const struct drnic_wire_reth *r) { return rte_be_to_cpu_32(r->dmalen); }
static inline void
drnic_wire_reth_set(struct drnic_wire_reth *r, uint64_t va, uint32_t rkey, uint32_t dmalen)
{
	r->va = rte_cpu_to_be_64(va);
	r->rkey = rte_cpu_to_be_32(rkey);
	r->dmalen = rte_cpu_to_be_32(dmalen);
}
/** @} */

/* ------------------------------------------------------------------------ */
/* Packet descriptor                                                         */
/* ------------------------------------------------------------------------ */

/** One piece of payload to gather when building. */
struct drnic_wire_sge {
	const void *addr;
	uint32_t len;
};

/**
 * A RoCEv2 frame in host-order fields: the input of drnic_wire_build() and the
 * output of drnic_wire_parse(). Fields an opcode does not carry are ignored by
 * the builder and zeroed by the parser.
 */
struct drnic_wire_pkt {
	struct {
		uint8_t dst[6];
		uint8_t src[6];
		bool has_vlan;        /**< an 802.1Q tag follows the MACs */
		uint16_t vlan_tci;    /**< PCP(3) DEI(1) VID(12) */
	} eth;
	struct {
		uint8_t version;      /**< 4 or 6 */
		uint8_t tos;          /**< IPv4 TOS / IPv6 traffic class, ECN in bits 1:0 */
		uint8_t ttl;          /**< TTL / hop limit */
		bool df;              /**< IPv4 don't-fragment (drnic sends it set) */
		uint16_t id;          /**< IPv4 identification */
		uint32_t flow_label;  /**< IPv6, 20 bits */
		uint8_t src[16];      /**< IPv4: first 4 bytes; network order */
		uint8_t dst[16];
	} ip;
	struct {
		uint16_t sport;       /**< use drnic_wire_udp_sport() */
		uint16_t dport;       /**< parse: as seen (4791); build: always 4791 */
	} udp;
	struct {
		uint8_t opcode;
		bool se;              /**< solicited event */
		bool m;               /**< MigReq */
		uint8_t padcnt;       /**< parse: as seen; build: computed */
		uint8_t tver;         /**< 0 */
		uint16_t pkey;
		bool fecn;
		bool becn;
		uint32_t dqpn;        /**< 24 bits */
		bool ackreq;
		uint32_t psn;         /**< 24 bits */
	} bth;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint32_t dmalen;
	} reth;
	struct {
		uint8_t syndrome;     /**< see drnic_aeth_syndrome() */
		uint32_t msn;         /**< 24 bits */
	} aeth;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint64_t swap_add;    /**< swap value (CMP_SWAP) or add value (FETCH_ADD) */
		uint64_t cmp;
	} atomic;
	uint64_t atomic_orig;     /**< AtomicAckETH: original remote data */
	/** ImmDt as it is on the wire (network order, like verbs' imm_data). */
	rte_be32_t imm;
	uint32_t ieth_rkey;       /**< IETH: rkey to invalidate */
	struct {
		uint32_t qkey;
		uint32_t sqpn;        /**< 24 bits */
	} deth;
	struct {
		uint32_t srqn;        /**< XRC SRQ number, 24 bits */
	} xrceth;

	/* Build input: the payload, gathered in order. */
	const struct drnic_wire_sge *sg;
	uint32_t sg_cnt;

	/* Parse output: where things are in the mbuf (offsets from frame start). */
	uint32_t payload_off;     /**< first payload byte */
	uint32_t payload_len;     /**< payload bytes, without the PadCnt pad */
	uint32_t l3_off;          /**< IP header */
	uint32_t l4_off;          /**< UDP header */
	uint32_t bth_off;         /**< BTH */
	uint32_t frame_len;       /**< through the ICRC, without Ethernet padding */
	uint32_t icrc;            /**< as stored (the CRC value; LSB first on wire) */
	bool icrc_deferred;       /**< not verified yet (DRNIC_WIRE_PARSE_DEFER_ICRC) */
	bool icrc_batch;          /**< not verified yet (DRNIC_WIRE_PARSE_BATCH_ICRC) */
};

/**
 * Fill @p p with drnic's defaults: IPv4, TTL 64, DF set, P_Key 0xFFFF, UDP
 * destination 4791, everything else zero.
 */
void drnic_wire_pkt_init(struct drnic_wire_pkt *p);

/* ------------------------------------------------------------------------ */
/* Build                                                                     */
/* ------------------------------------------------------------------------ */

/**
 * Write a complete RoCEv2 frame into an empty mbuf.
 *
 * Writes Ethernet (with the tag when p->eth.has_vlan), IPv4 (checksum
 * computed, fields from p->ip) or IPv6, UDP (destination 4791, checksum 0),
 * BTH with PadCnt computed so payload + pad is a multiple of 4, the extension
 * headers the opcode carries, the payload gathered from p->sg, the zero pad
 * bytes and the ICRC; frames shorter than 60 bytes get zero Ethernet padding
 * after the ICRC. Headers are contiguous in the first segment; payload that
 * does not fit is continued in segments allocated from m->pool. A frame with
 * more than 512 bytes of payload that fits the first segment may start up to
 * 63 bytes into the headroom (m->data_off lowered), so that its payload is
 * 64-byte aligned. Sets m->l2_len, m->l3_len and m->l4_len. Does not log and
 * allocates nothing but mbufs.
 *
 * @param m   an mbuf with pkt_len 0 and one segment.
 * @param p   the frame; p->bth.padcnt and p->udp.dport are ignored.
 * @return 0 on success;
 *         -EINVAL when m is not empty, the opcode is not supported, the IP
 *                 version is neither 4 nor 6, payload is given for an opcode
 *                 without payload, or sg is NULL with sg_cnt > 0;
 *         -ENOSPC when the headers do not fit in the first segment or the
 *                 frame would exceed the IP length limit (65535);
 *         -ENOMEM when m->pool ran out of mbufs for further segments.
 *         On error m is back to empty (chained segments freed).
 */
int drnic_wire_build(struct rte_mbuf *m, const struct drnic_wire_pkt *p);

/**
 * drnic_wire_build_flags() flag: a short frame (one segment, 72 to 256
 * bytes of IP packet before its ICRC) is written with its ICRC bytes zero,
 * for drnic_wire_icrc_fill_burst() to fill. The CRC of a frame just
 * written waited for its header stores to drain (a load that overlaps
 * several recent stores is not forwarded from them); a burst's CRCs filled
 * later, together, do not.
 */
#define DRNIC_WIRE_BUILD_DEFER_ICRC (1u << 0)

/**
 * drnic_wire_build() with DRNIC_WIRE_BUILD_* @p flags.
 * @return as drnic_wire_build(), or 1: built, with its ICRC left to
 *         drnic_wire_icrc_fill_burst() (DRNIC_WIRE_BUILD_DEFER_ICRC). Such a
 *         frame must not leave, nor its bytes be read, before it is filled.
 */
int drnic_wire_build_flags(struct rte_mbuf *m, const struct drnic_wire_pkt *p, uint32_t flags);

/**
 * Fill the ICRCs of @p n frames drnic_wire_build_flags() left (it returned 1
 * for each), one short CRC after another, four sharing a reduction. The
 * frames must be as the build left them.
 */
void drnic_wire_icrc_fill_burst(struct rte_mbuf *const m[], uint16_t n);

/** The most header bytes a template holds: Ethernet with a tag, IPv6, UDP, BTH. */
#define DRNIC_WIRE_TMPL_HDR_MAX (DRNIC_WIRE_ETH_LEN + DRNIC_WIRE_VLAN_LEN + \
				 DRNIC_WIRE_IPV6_LEN + DRNIC_WIRE_UDP_LEN + DRNIC_WIRE_BTH_LEN)

/**
 * The header bytes one path's frames share, serialized once: Ethernet (and
 * tag), IP, UDP and BTH as drnic_wire_build() writes them, with the fields
 * that change from frame to frame (lengths, IPv4 checksum, opcode, SE,
 * PadCnt, AckReq, PSN) zero. drnic_wire_build_tmpl() copies it and writes
 * those fields, instead of serializing every field of a drnic_wire_pkt.
 */
struct drnic_wire_tmpl {
	uint8_t l2_len;           /**< Ethernet header, with the tag if any */
	uint8_t ip_hlen;          /**< 20 (IPv4) or 40 (IPv6) */
	uint8_t len;              /**< bytes in hdr[]: through the BTH */
	uint8_t rsvd;
	uint32_t ip_sum;          /**< IPv4: one's-complement sum of the header
				   *   without total length and checksum */
	uint8_t hdr[DRNIC_WIRE_TMPL_HDR_MAX + 2];   /**< 78 used at most; 80 to copy */
};

/** The template's source MAC (what its frames' peer sends to). */
static inline const uint8_t *
drnic_wire_tmpl_smac(const struct drnic_wire_tmpl *t)
{
	return t->hdr + 6;
}

/** The template's IP version, 4 or 6. */
static inline uint8_t
drnic_wire_tmpl_ip_version(const struct drnic_wire_tmpl *t)
{
	return t->ip_hlen == DRNIC_WIRE_IPV4_LEN ? 4 : 6;
}

/** The template's source IP address (4 or 16 bytes, network order). */
static inline const uint8_t *
drnic_wire_tmpl_ip_src(const struct drnic_wire_tmpl *t)
{
	return t->hdr + t->l2_len + (t->ip_hlen == DRNIC_WIRE_IPV4_LEN ? 12 : 8);
}

/** The template's destination IP address (4 or 16 bytes, network order). */
static inline const uint8_t *
drnic_wire_tmpl_ip_dst(const struct drnic_wire_tmpl *t)
{
	return t->hdr + t->l2_len + (t->ip_hlen == DRNIC_WIRE_IPV4_LEN ? 16 : 24);
}

/** The template's P_Key. */
static inline uint16_t
drnic_wire_tmpl_pkey(const struct drnic_wire_tmpl *t)
{
	const uint8_t *bth = t->hdr + t->len - DRNIC_WIRE_BTH_LEN;

	return (uint16_t)(bth[2] << 8 | bth[3]);
}

/**
 * Serialize the path fields of @p p into @p t: p->eth, p->ip (version,
 * TOS, TTL, DF, ID, flow label, addresses), p->udp.sport and the BTH's
 * P_Key, MigReq, TVer, FECN, BECN and destination QPN.
 * @return 0, or -EINVAL when p->ip.version is neither 4 nor 6.
 */
int drnic_wire_tmpl_make(struct drnic_wire_tmpl *t, const struct drnic_wire_pkt *p);

/**
 * drnic_wire_build_flags() for a frame whose path fields are those @p t was
 * made from: it writes the same bytes as drnic_wire_build_flags(m, p, flags)
 * when p's path fields (see drnic_wire_tmpl_make()) equal the ones @p t was
 * made from, and reads only the rest of @p p (opcode, SE, AckReq, PSN,
 * extension headers, payload). Same return values.
 */
int drnic_wire_build_tmpl(struct rte_mbuf *m, const struct drnic_wire_tmpl *t,
			  const struct drnic_wire_pkt *p, uint32_t flags);

/**
 * Length of the headers, Ethernet through the last extension header.
 * @return the length in bytes, or 0 for an undefined opcode or bad version.
 */
uint32_t drnic_wire_hdr_len(uint8_t opcode, uint8_t ip_version, bool has_vlan);

/**
 * Length of the frame drnic_wire_build() writes (with pad, ICRC and Ethernet
 * minimum padding).
 * @return the length in bytes, or 0 for an undefined opcode or bad version.
 */
uint32_t drnic_wire_frame_len(uint8_t opcode, uint8_t ip_version, bool has_vlan,
			      uint32_t payload_len);

/**
 * UDP source port for a flow: @p entropy (e.g. a hash of the QP numbers)
 * folded into 0xC000..0xFFFF, so ECMP can spread QPs while each QP keeps one
 * path.
 */
static inline uint16_t
drnic_wire_udp_sport(uint32_t entropy)
{
	uint32_t h = entropy ^ (entropy >> 14) ^ (entropy >> 28);

	return (uint16_t)(DRNIC_WIRE_UDP_SPORT_MIN | (h & 0x3FFF));
}

/** IB path MTU codes (as in verbs' enum ibv_mtu). */
enum drnic_wire_mtu {
	DRNIC_WIRE_MTU_256 = 1,
	DRNIC_WIRE_MTU_512 = 2,
	DRNIC_WIRE_MTU_1024 = 3,
	DRNIC_WIRE_MTU_2048 = 4,
	DRNIC_WIRE_MTU_4096 = 5,
};

/**
 * Largest payload of one packet for a path MTU code: 256 << (mtu - 1).
 * @return bytes, or 0 for a code outside 1..5.
 */
static inline uint32_t
drnic_wire_mtu_bytes(enum drnic_wire_mtu mtu)
{
	if (mtu < DRNIC_WIRE_MTU_256 || mtu > DRNIC_WIRE_MTU_4096)
		return 0;
	return 256u << (mtu - 1);
}

/**
 * Largest path MTU whose biggest packet (IP + UDP + BTH + RETH + ImmDt +
 * payload + ICRC) fits in an IP MTU of @p ip_mtu bytes (e.g. 1500 -> 1024).
 * @return the MTU code, or 0 when not even 256 fits.
 */
enum drnic_wire_mtu drnic_wire_mtu_for_ip_mtu(uint32_t ip_mtu, uint8_t ip_version);

/* ------------------------------------------------------------------------ */
/* Parse                                                                     */
/* ------------------------------------------------------------------------ */

/** Why a frame was dropped; each has a counter name, drnic_wire_drop_name(). */
enum drnic_wire_drop {
	DRNIC_WIRE_OK = 0,                  /**< "ok": not dropped */
	DRNIC_WIRE_DROP_TRUNCATED_ETH,      /**< shorter than the Ethernet (+tag) header */
	DRNIC_WIRE_DROP_NOT_IP,             /**< ethertype neither IPv4 nor IPv6 (after one tag) */
	DRNIC_WIRE_DROP_TRUNCATED_IP,       /**< frame ends inside the IP header or before the IP length */
	DRNIC_WIRE_DROP_BAD_IP_VERSION,     /**< IP version does not match the ethertype */
	DRNIC_WIRE_DROP_BAD_IHL,            /**< IPv4 header length < 20 */
	DRNIC_WIRE_DROP_BAD_IP_LENGTH,      /**< IP length smaller than its header */
	DRNIC_WIRE_DROP_BAD_IP_CHECKSUM,    /**< IPv4 header checksum wrong */
	DRNIC_WIRE_DROP_IP_FRAGMENT,        /**< IPv4 MF set or fragment offset != 0 */
	DRNIC_WIRE_DROP_NOT_UDP,            /**< protocol / next header not UDP */
	DRNIC_WIRE_DROP_TRUNCATED_UDP,      /**< IP payload shorter than a UDP header */
	DRNIC_WIRE_DROP_NOT_ROCEV2_PORT,    /**< UDP destination port not 4791 */
	DRNIC_WIRE_DROP_UDP_LENGTH_MISMATCH,/**< UDP length != IP payload length */
	DRNIC_WIRE_DROP_TRUNCATED_BTH,      /**< UDP payload shorter than BTH + ICRC */
	DRNIC_WIRE_DROP_UNKNOWN_OPCODE,     /**< opcode undefined by IBA */
	DRNIC_WIRE_DROP_UNSUPPORTED_OPCODE, /**< defined (RD, ...) but not supported */
	DRNIC_WIRE_DROP_BAD_TVER,           /**< BTH TVer != 0 */
	DRNIC_WIRE_DROP_TRUNCATED_EXT_HEADER, /**< extension headers + ICRC do not fit */
	DRNIC_WIRE_DROP_BAD_PADCNT,         /**< PadCnt with no room for it, or on a no-payload / full-MTU opcode */
	DRNIC_WIRE_DROP_BAD_PAYLOAD_LENGTH, /**< payload+pad not a multiple of 4, or payload where none / none where required */
	DRNIC_WIRE_DROP_BAD_ICRC,           /**< ICRC does not match */
	DRNIC_WIRE_DROP_MAX,                /**< number of reasons */
};

/** Parse flags for drnic_wire_parse_flags(). */
#define DRNIC_WIRE_PARSE_SKIP_ICRC     (1u << 0) /**< do not verify the ICRC (still read) */
#define DRNIC_WIRE_PARSE_SKIP_IP_CSUM  (1u << 1) /**< do not verify the IPv4 checksum */
/**
 * Defer the ICRC check of RDMA WRITE MIDDLE and LAST frames (with or without
 * immediate) carrying at least DRNIC_WIRE_DEFER_MIN_PAYLOAD bytes: their
 * payload lands where the responder's state says, not where the frame says,
 * so it can be copied and verified in one pass
 * (drnic_wire_copy_out_verify()). The parser then sets
 * drnic_wire_pkt::icrc_deferred and checks the rest; the caller must verify
 * the ICRC before it acts on the frame in any other way (drops it for a
 * reason, answers it, or moves any state): drnic_wire_icrc_check().
 * Other frames are verified as without the flag. A deferred frame with
 * several faults may then be reported for a header fault instead of the
 * ICRC (the checks after the ICRC run first).
 */
#define DRNIC_WIRE_PARSE_DEFER_ICRC    (1u << 2)
/** Smallest payload whose ICRC DRNIC_WIRE_PARSE_DEFER_ICRC defers. */
#define DRNIC_WIRE_DEFER_MIN_PAYLOAD   256u
/**
 * Leave the ICRC check of a frame (other than one DRNIC_WIRE_PARSE_DEFER_ICRC
 * defers) to drnic_wire_icrc_burst(), which checks a burst's frames one
 * after another: the parser sets drnic_wire_pkt::icrc_batch. The caller
 * must call it before it acts on the frame in any way. A frame that fails
 * a check after the ICRC has its ICRC verified first, so each frame still
 * gives the reason drnic_wire_parse() would.
 */
#define DRNIC_WIRE_PARSE_BATCH_ICRC    (1u << 3)

/**
 * Parse and validate a received frame, strictly.
 *
 * Works on multi-segment mbufs and never reads outside the frame
 * (m->pkt_len bytes), whatever the input. The ICRC is located from the IP
 * length, so Ethernet padding after it is ignored. Checks run in wire order
 * and the first failure is returned, so one frame gives exactly one reason.
 *
 * @param m    the received frame, starting with the Ethernet header.
 * @param out  filled on success; on failure contents are unspecified,
 *             except that icrc_batch and icrc_deferred are false.
 * @return DRNIC_WIRE_OK (0), or the drop reason.
 */
enum drnic_wire_drop drnic_wire_parse(const struct rte_mbuf *m, struct drnic_wire_pkt *out);

/** drnic_wire_parse() with DRNIC_WIRE_PARSE_* @p flags. */
enum drnic_wire_drop drnic_wire_parse_flags(const struct rte_mbuf *m, uint32_t flags,
					    struct drnic_wire_pkt *out);

/**
 * Destination QPN of a received frame, without parsing it: for steering a
 * frame to the engine that serves its QP (drnic_link_qpn_queue()), which
 * then parses it. Reads the BTH behind Ethernet (one optional 802.1Q tag),
 * IPv4 (its header length) or IPv6 and UDP, in the first segment only and
 * never past its data. Nothing else is checked: not the UDP port, the
 * lengths or the ICRC.
 *
 * @param m      the frame, starting with the Ethernet header.
 * @param dqpn   set on success.
 * @return 0; -EINVAL when the frame is neither IPv4 nor IPv6, or its first
 *         segment ends before the destination QPN.
 */
int drnic_wire_peek_dqpn(const struct rte_mbuf *m, uint32_t *dqpn);

/**
 * Counter name of a drop reason, e.g. "bad_icrc".
 * @return a static string; "invalid" for values out of range. Never NULL.
 */
const char *drnic_wire_drop_name(enum drnic_wire_drop reason);

/**
 * Copy @p len bytes at @p off of a (multi-segment) mbuf to @p dst, e.g. a
 * parsed payload into registered memory.
 * @return 0, or -EINVAL when [off, off + len) is not inside the frame.
 */
int drnic_wire_copy_out(const struct rte_mbuf *m, uint32_t off, uint32_t len, void *dst);

/**
 * Verify the ICRC of a frame parsed with its check skipped or deferred
 * (DRNIC_WIRE_PARSE_SKIP_ICRC, DRNIC_WIRE_PARSE_DEFER_ICRC): the check
 * drnic_wire_parse() makes, on the offsets it returned.
 *
 * @param m    the frame.
 * @param pkt  what drnic_wire_parse_flags() returned for @p m.
 * @return 0 when the stored ICRC is right; -EBADMSG when it is not;
 *         -EINVAL when @p pkt's offsets do not fit @p m.
 */
int drnic_wire_icrc_check(const struct rte_mbuf *m, const struct drnic_wire_pkt *pkt);

/**
 * Verify the ICRCs drnic_wire_parse_flags() left to the burst
 * (DRNIC_WIRE_PARSE_BATCH_ICRC) of the @p n frames @p m, parsed into @p pkt.
 * Frames without drnic_wire_pkt::icrc_batch (not parsed, or not left) are
 * not looked at. Each CRC is independent of the one before, so they overlap
 * on the CPU, where each in the middle of a frame's parse waited for its
 * result.
 *
 * @param n  at most 64.
 * @return the frames whose ICRC is wrong, bit j for @p m[j]; icrc_batch is
 *         cleared on every frame checked.
 */
uint64_t drnic_wire_icrc_burst(struct rte_mbuf *const m[], struct drnic_wire_pkt pkt[],
			       uint16_t n);

/**
 * Copy the payload of a frame parsed with DRNIC_WIRE_PARSE_SKIP_ICRC to @p dst
 * and verify its ICRC in the same pass over the payload (each byte is read
 * once, while it is copied, instead of once to verify and once to copy).
 *
 * The payload is written before the ICRC is known: on -EBADMSG @p dst holds
 * whatever the frame carried. Use it only where that is harmless, e.g. the
 * target range of an RDMA WRITE already checked and in progress (its
 * contents are undefined until the WRITE completes, and the retransmission
 * rewrites them).
 *
 * @param m    the frame.
 * @param pkt  what drnic_wire_parse_flags() returned for @p m (offsets,
 *             lengths and the stored ICRC are used).
 * @param dst  pkt->payload_len bytes.
 * @return 0 when the ICRC matches; -EBADMSG when it does not;
 *         -EINVAL when @p pkt does not describe a frame inside @p m.
 */
int drnic_wire_copy_out_verify(const struct rte_mbuf *m, const struct drnic_wire_pkt *pkt,
			       void *dst);

/* ------------------------------------------------------------------------ */
/* ICRC                                                                      */
/* ------------------------------------------------------------------------ */

/**
 * Compute the ICRC of the IP packet at @p l3_off in a (multi-segment) mbuf.
 *
 * CRC-32 (reflected, polynomial 0xEDB88320, as zlib's crc32) over 8 bytes of
 * 0xFF, the IP header with the variant fields set to ones (IPv4: TOS, TTL,
 * header checksum; IPv6: traffic class, flow label, hop limit), the UDP header
 * with the checksum set to ones, the BTH with byte 4 set to ones, and the rest
 * of the packet up to the ICRC. On the wire the value is stored least
 * significant byte first.
 *
 * @param m       the frame.
 * @param l3_off  offset of the IP header.
 * @param l3_len  IP packet length including the 4-byte ICRC trailer (IPv4:
 *                total length; IPv6: 40 + payload length).
 * @param icrc    receives the CRC value.
 * @return 0; -EINVAL when the range is not inside the mbuf, the IP version is
 *         not 4 or 6, or l3_len cannot hold IP + UDP + BTH + ICRC.
 */
int drnic_wire_icrc(const struct rte_mbuf *m, uint32_t l3_off, uint32_t l3_len,
		    uint32_t *icrc);

/**
 * drnic_wire_icrc() over a contiguous IP packet at @p l3 of @p l3_len bytes
 * (including the ICRC trailer).
 * @return 0, or -EINVAL as drnic_wire_icrc().
 */
int drnic_wire_icrc_buf(const void *l3, uint32_t l3_len, uint32_t *icrc);

/* ------------------------------------------------------------------------ */
/* PSN arithmetic (24 bits, wrap-around)                                     */
/* ------------------------------------------------------------------------ */

/** @p psn reduced to 24 bits. */
static inline uint32_t drnic_psn_mask(uint32_t psn) { return psn & DRNIC_PSN_MASK; }

/** @p psn + @p n modulo 2^24. */
static inline uint32_t drnic_psn_add(uint32_t psn, uint32_t n) { return (psn + n) & DRNIC_PSN_MASK; }

/** @p a - @p b modulo 2^24 (0..2^24-1). */
static inline uint32_t drnic_psn_sub(uint32_t a, uint32_t b) { return (a - b) & DRNIC_PSN_MASK; }

/**
 * Signed distance from @p b to @p a in -2^23..2^23-1: positive when @p a is
 * after @p b in the 24-bit circle.
 */
static inline int32_t
drnic_psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & DRNIC_PSN_MASK;

	return d & 0x800000u ? (int32_t)d - 0x1000000 : (int32_t)d;
}

/** @name PSN comparisons on the 24-bit circle (a before / not after / after / not before b) @{ */
static inline bool drnic_psn_lt(uint32_t a, uint32_t b) { return drnic_psn_diff(a, b) < 0; }
static inline bool drnic_psn_le(uint32_t a, uint32_t b) { return drnic_psn_diff(a, b) <= 0; }
static inline bool drnic_psn_gt(uint32_t a, uint32_t b) { return drnic_psn_diff(a, b) > 0; }
static inline bool drnic_psn_ge(uint32_t a, uint32_t b) { return drnic_psn_diff(a, b) >= 0; }
/** @} */

/* ------------------------------------------------------------------------ */
/* AETH syndromes                                                            */
/* ------------------------------------------------------------------------ */

/** AETH syndrome type, bits 6:5 of the syndrome (bit 7 is reserved, 0). */
enum drnic_aeth_type {
	DRNIC_AETH_ACK = 0,       /**< value: credit count code */
	DRNIC_AETH_RNR_NAK = 1,   /**< value: RNR timer code */
	DRNIC_AETH_RESERVED = 2,
	DRNIC_AETH_NAK = 3,       /**< value: enum drnic_nak_code */
};

/** NAK codes (syndrome value when the type is DRNIC_AETH_NAK). */
enum drnic_nak_code {
	DRNIC_NAK_PSN_SEQ_ERR = 0,
	DRNIC_NAK_INVALID_REQ = 1,
	DRNIC_NAK_REMOTE_ACCESS = 2,
	DRNIC_NAK_REMOTE_OP = 3,
	DRNIC_NAK_INVALID_RD_REQ = 4,
};

/** Credit count code meaning "no end-to-end flow control credits advertised". */
#define DRNIC_AETH_CREDIT_INVALID 0x1F

/** Syndrome byte of @p type with 5-bit @p value. */
static inline uint8_t
drnic_aeth_syndrome(enum drnic_aeth_type type, uint8_t value)
{
	return (uint8_t)(((unsigned int)type & 3) << 5 | (value & 0x1F));
}

/** Type of a syndrome byte. */
static inline enum drnic_aeth_type
drnic_aeth_type(uint8_t syndrome)
{
	return (enum drnic_aeth_type)((syndrome >> 5) & 3);
}

/** 5-bit value of a syndrome byte (credit code, timer code or NAK code). */
static inline uint8_t drnic_aeth_value(uint8_t syndrome) { return syndrome & 0x1F; }

/**
 * RNR NAK timer: code to microseconds (0 = 655360 us, 1 = 10 us ...
 * 31 = 491520 us).
 * @return microseconds; codes are taken modulo 32.
 */
uint32_t drnic_aeth_rnr_timer_us(uint8_t code);

/**
 * Smallest RNR timer code whose wait is at least @p us microseconds.
 * @return 1..31, or 0 (655.36 ms, the longest) when @p us exceeds 491520.
 */
uint8_t drnic_aeth_rnr_code(uint32_t us);

/**
 * Credits (receive WQEs) advertised by an ACK's credit count code.
 * @return 0..32768, or -1 for DRNIC_AETH_CREDIT_INVALID (31).
 */
int32_t drnic_aeth_credits(uint8_t code);

/**
 * Largest credit count code advertising at most @p credits (0..30).
 * @return the code; 30 for 32768 or more.
 */
uint8_t drnic_aeth_credit_code(uint32_t credits);

/**
 * Name of an AETH syndrome for logs, e.g. "ACK", "RNR_NAK", "NAK_PSN_SEQ_ERR".
 * @return a static string, never NULL.
 */
const char *drnic_aeth_name(uint8_t syndrome);

#ifdef __cplusplus
}
#endif

#endif /* DRNIC_WIRE_H */
