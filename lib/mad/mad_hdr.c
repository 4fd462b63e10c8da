/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The common MAD header (IBA 13.4.2): 24 bytes in front of every MAD's
 * attribute data.
 */
#include <errno.h>

#include <rte_common.h>

#include "drnic_mad.h"
#include "mad_field.h"

#define H struct drnic_mad_hdr
static const struct mad_field mad_hdr_fields[] = {
	MAD_UINT(H, base_version,   0, 0, 8),
	MAD_UINT(H, mgmt_class,     1, 0, 8),
	MAD_UINT(H, class_version,  2, 0, 8),
	MAD_UINT(H, r,              3, 0, 1),
	MAD_UINT(H, method,         3, 1, 7),
	MAD_UINT(H, status,         4, 0, 16),
	MAD_UINT(H, class_specific, 6, 0, 16),
	MAD_UINT(H, tid,            8, 0, 64),
	MAD_UINT(H, attr_id,        16, 0, 16),
	MAD_UINT(H, rsvd_attr,      18, 0, 16),
	MAD_UINT(H, attr_mod,       20, 0, 32),
};
#undef H

static const struct mad_layout mad_hdr_layout = {
	mad_hdr_fields, RTE_DIM(mad_hdr_fields), DRNIC_MAD_HDR_LEN,
};

int
drnic_mad_hdr_parse(const void *mad, size_t len, struct drnic_mad_hdr *hdr)
{
	if (mad == NULL || hdr == NULL || len < DRNIC_MAD_HDR_LEN)
		return -EINVAL;
	mad_layout_parse(&mad_hdr_layout, mad, hdr);
	return 0;
}

int
drnic_mad_hdr_build(void *mad, size_t len, const struct drnic_mad_hdr *hdr)
{
	if (mad == NULL || hdr == NULL || len < DRNIC_MAD_HDR_LEN)
		return -EINVAL;
	if (hdr->r > 1 || hdr->method > 0x7F)
		return -ERANGE;
	return mad_layout_build(&mad_hdr_layout, hdr, mad);
}
