/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the RDMA CM (rdma-core's librdmacm, the Linux kernel's rdma_cm) adds
 * on top of the IB CM for its IP port spaces: service IDs that name a port
 * space and a port, and a header at the start of the REQ's (or SIDR_REQ's)
 * private data with the IP addresses of both ends and the source port.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "drnic_mad.h"
#include "mad_field.h"

#define RDMA_CM_SID_PS_MASK 0xFFFFFFFFFFFF0000ull

#define HDR struct drnic_rdma_cm_hdr
static const struct mad_field rdma_cm_hdr_fields[] = {
	MAD_UINT(HDR, cma_version, 0, 0, 8),
	MAD_UINT(HDR, ip_version,  1, 0, 4),
	MAD_UINT(HDR, rsvd_ip,     1, 4, 4),
	MAD_UINT(HDR, port,        2, 0, 16),
	MAD_BYTES(HDR, src_addr,   4),
	MAD_BYTES(HDR, dst_addr,   20),
};
#undef HDR

static const struct mad_layout rdma_cm_hdr_layout = {
	rdma_cm_hdr_fields, RTE_DIM(rdma_cm_hdr_fields), DRNIC_RDMA_CM_HDR_LEN,
};

int
drnic_rdma_cm_service_id_split(uint64_t sid, uint16_t *ps, uint16_t *port)
{
	uint16_t space = (uint16_t)(sid >> 16);

	if ((sid & RDMA_CM_SID_PS_MASK) != (uint64_t)space << 16)
		return -EINVAL;
	switch (space) {
	case DRNIC_RDMA_PS_IPOIB:
	case DRNIC_RDMA_PS_IB:
	case DRNIC_RDMA_PS_TCP:
	case DRNIC_RDMA_PS_UDP:
		break;
	default:
		return -EINVAL;
	}
	if (ps != NULL)
		*ps = space;
	if (port != NULL)
		*port = (uint16_t)sid;
	return 0;
}

bool
drnic_rdma_cm_sid_has_ip_hdr(uint64_t sid)
{
	uint16_t ps;

	return drnic_rdma_cm_service_id_split(sid, &ps, NULL) == 0 && ps != DRNIC_RDMA_PS_IPOIB;
}

int
drnic_rdma_cm_hdr_parse(const void *pdata, size_t len, struct drnic_rdma_cm_hdr *hdr)
{
	if (pdata == NULL || hdr == NULL || len < DRNIC_RDMA_CM_HDR_LEN)
		return -EINVAL;
	mad_layout_parse(&rdma_cm_hdr_layout, pdata, hdr);
	if (hdr->cma_version != DRNIC_RDMA_CM_HDR_VERSION ||
	    (hdr->ip_version != 4 && hdr->ip_version != 6))
		return -EPROTO;
	return 0;
}

int
drnic_rdma_cm_hdr_build(const struct drnic_rdma_cm_hdr *hdr, void *pdata, size_t len)
{
	if (pdata == NULL || hdr == NULL || len < DRNIC_RDMA_CM_HDR_LEN)
		return -EINVAL;
	if (hdr->ip_version > 0xF || hdr->rsvd_ip > 0xF)
		return -ERANGE;
	return mad_layout_build(&rdma_cm_hdr_layout, hdr, pdata);
}

int
drnic_rdma_cm_addr_ipv4(const uint8_t addr[16], uint8_t ipv4[4])
{
	static const uint8_t zero[12];
	static const uint8_t mapped[12] = { [10] = 0xFF, [11] = 0xFF };

	if (addr == NULL || ipv4 == NULL)
		return -EINVAL;
	if (memcmp(addr, zero, 12) != 0 && memcmp(addr, mapped, 12) != 0)
		return -EINVAL;
	memcpy(ipv4, addr + 12, 4);
	return 0;
}
