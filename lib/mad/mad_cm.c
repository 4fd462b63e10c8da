/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Communication Management class (0x07): one field table per attribute,
 * written from the message layouts of IBA volume 1 chapter 12 (offsets are
 * bytes into the attribute data, after the 24-byte MAD header), and the
 * codec of whole CM MADs on top of them.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "drnic_mad.h"
#include "mad_field.h"

#define CPI struct drnic_mad_class_port_info
static const struct mad_field cm_cpi_fields[] = {
	MAD_UINT(CPI, base_version,      0, 0, 8),
	MAD_UINT(CPI, class_version,     1, 0, 8),
	MAD_UINT(CPI, capability_mask,   2, 0, 16),
	MAD_UINT(CPI, capability_mask2,  4, 0, 27),
	MAD_UINT(CPI, resp_time_value,   7, 3, 5),
	MAD_BYTES(CPI, redirect_gid,     8),
	MAD_UINT(CPI, redirect_tc,       24, 0, 8),
	MAD_UINT(CPI, redirect_sl,       25, 0, 4),
	MAD_UINT(CPI, redirect_fl,       25, 4, 20),
	MAD_UINT(CPI, redirect_lid,      28, 0, 16),
	MAD_UINT(CPI, redirect_pkey,     30, 0, 16),
	MAD_UINT(CPI, rsvd_redirect_qp,  32, 0, 8),
	MAD_UINT(CPI, redirect_qp,       33, 0, 24),
	MAD_UINT(CPI, redirect_qkey,     36, 0, 32),
	MAD_BYTES(CPI, trap_gid,         40),
	MAD_UINT(CPI, trap_tc,           56, 0, 8),
	MAD_UINT(CPI, trap_sl,           57, 0, 4),
	MAD_UINT(CPI, trap_fl,           57, 4, 20),
	MAD_UINT(CPI, trap_lid,          60, 0, 16),
	MAD_UINT(CPI, trap_pkey,         62, 0, 16),
	MAD_UINT(CPI, trap_hl,           64, 0, 8),
	MAD_UINT(CPI, trap_qp,           65, 0, 24),
	MAD_UINT(CPI, trap_qkey,         68, 0, 32),
};
#undef CPI

/* The 44 bytes of a REQ's path @p (primary or alternate) from byte @o. */
#define CM_PATH_FIELDS(p, o) \
	MAD_UINT(REQ, p.local_lid,         (o) + 0, 0, 16), \
	MAD_UINT(REQ, p.remote_lid,        (o) + 2, 0, 16), \
	MAD_BYTES(REQ, p.local_gid,        (o) + 4), \
	MAD_BYTES(REQ, p.remote_gid,       (o) + 20), \
	MAD_UINT(REQ, p.flow_label,        (o) + 36, 0, 20), \
	MAD_UINT(REQ, p.rsvd_flow,         (o) + 38, 4, 6), \
	MAD_UINT(REQ, p.packet_rate,       (o) + 39, 2, 6), \
	MAD_UINT(REQ, p.traffic_class,     (o) + 40, 0, 8), \
	MAD_UINT(REQ, p.hop_limit,         (o) + 41, 0, 8), \
	MAD_UINT(REQ, p.sl,                (o) + 42, 0, 4), \
	MAD_UINT(REQ, p.subnet_local,      (o) + 42, 4, 1), \
	MAD_UINT(REQ, p.rsvd_sl,           (o) + 42, 5, 3), \
	MAD_UINT(REQ, p.local_ack_timeout, (o) + 43, 0, 5), \
	MAD_UINT(REQ, p.rsvd_ack,          (o) + 43, 5, 3)

#define REQ struct drnic_mad_cm_req
static const struct mad_field cm_req_fields[] = {
	MAD_UINT(REQ, local_comm_id,          0, 0, 32),
	MAD_UINT(REQ, rsvd_4,                 4, 0, 32),
	MAD_UINT(REQ, service_id,             8, 0, 64),
	MAD_UINT(REQ, local_ca_guid,          16, 0, 64),
	MAD_UINT(REQ, rsvd_24,                24, 0, 32),
	MAD_UINT(REQ, local_qkey,             28, 0, 32),
	MAD_UINT(REQ, local_qpn,              32, 0, 24),
	MAD_UINT(REQ, responder_resources,    35, 0, 8),
	MAD_UINT(REQ, local_eecn,             36, 0, 24),
	MAD_UINT(REQ, initiator_depth,        39, 0, 8),
	MAD_UINT(REQ, remote_eecn,            40, 0, 24),
	MAD_UINT(REQ, remote_cm_resp_timeout, 43, 0, 5),
	MAD_UINT(REQ, transport_service,      43, 5, 2),
	MAD_UINT(REQ, e2e_flow_control,       43, 7, 1),
	MAD_UINT(REQ, starting_psn,           44, 0, 24),
	MAD_UINT(REQ, local_cm_resp_timeout,  47, 0, 5),
	MAD_UINT(REQ, retry_count,            47, 5, 3),
	MAD_UINT(REQ, pkey,                   48, 0, 16),
	MAD_UINT(REQ, path_mtu,               50, 0, 4),
	MAD_UINT(REQ, rdc_exists,             50, 4, 1),
	MAD_UINT(REQ, rnr_retry_count,        50, 5, 3),
	MAD_UINT(REQ, max_cm_retries,         51, 0, 4),
	MAD_UINT(REQ, srq,                    51, 4, 1),
	MAD_UINT(REQ, ext_transport,          51, 5, 3),
	CM_PATH_FIELDS(primary, 52),
	CM_PATH_FIELDS(alternate, 96),
	MAD_BYTES(REQ, private_data,          140),
};
#undef REQ

/* The two communication IDs that open MRA, REJ, REP, RTU, DREQ and DREP. */
#define CM_COMM_IDS(t) \
	MAD_UINT(t, local_comm_id,  0, 0, 32), \
	MAD_UINT(t, remote_comm_id, 4, 0, 32)

#define MRA struct drnic_mad_cm_mra
static const struct mad_field cm_mra_fields[] = {
	CM_COMM_IDS(MRA),
	MAD_UINT(MRA, msg_mraed,       8, 0, 2),
	MAD_UINT(MRA, rsvd_8,          8, 2, 6),
	MAD_UINT(MRA, service_timeout, 9, 0, 5),
	MAD_UINT(MRA, rsvd_9,          9, 5, 3),
	MAD_BYTES(MRA, private_data,   10),
};
#undef MRA

#define REJ struct drnic_mad_cm_rej
static const struct mad_field cm_rej_fields[] = {
	CM_COMM_IDS(REJ),
	MAD_UINT(REJ, msg_rejected,    8, 0, 2),
	MAD_UINT(REJ, rsvd_8,          8, 2, 6),
	MAD_UINT(REJ, reject_info_len, 9, 0, 7),
	MAD_UINT(REJ, rsvd_9,          9, 7, 1),
	MAD_UINT(REJ, reason,          10, 0, 16),
	MAD_BYTES(REJ, ari,            12),
	MAD_BYTES(REJ, private_data,   84),
};
#undef REJ

#define REP struct drnic_mad_cm_rep
static const struct mad_field cm_rep_fields[] = {
	CM_COMM_IDS(REP),
	MAD_UINT(REP, local_qkey,          8, 0, 32),
	MAD_UINT(REP, local_qpn,           12, 0, 24),
	MAD_UINT(REP, rsvd_15,             15, 0, 8),
	MAD_UINT(REP, local_eecn,          16, 0, 24),
	MAD_UINT(REP, rsvd_19,             19, 0, 8),
	MAD_UINT(REP, starting_psn,        20, 0, 24),
	MAD_UINT(REP, rsvd_23,             23, 0, 8),
	MAD_UINT(REP, responder_resources, 24, 0, 8),
	MAD_UINT(REP, initiator_depth,     25, 0, 8),
	MAD_UINT(REP, target_ack_delay,    26, 0, 5),
	MAD_UINT(REP, failover_accepted,   26, 5, 2),
	MAD_UINT(REP, e2e_flow_control,    26, 7, 1),
	MAD_UINT(REP, rnr_retry_count,     27, 0, 3),
	MAD_UINT(REP, srq,                 27, 3, 1),
	MAD_UINT(REP, rsvd_27,             27, 4, 4),
	MAD_UINT(REP, local_ca_guid,       28, 0, 64),
	MAD_BYTES(REP, private_data,       36),
};
#undef REP

/* RTU and DREP: the two communication IDs and private data. */
#define RTU struct drnic_mad_cm_rtu
static const struct mad_field cm_rtu_fields[] = {
	CM_COMM_IDS(RTU),
	MAD_BYTES(RTU, private_data,  8),
};
#undef RTU

#define DREQ struct drnic_mad_cm_dreq
static const struct mad_field cm_dreq_fields[] = {
	CM_COMM_IDS(DREQ),
	MAD_UINT(DREQ, remote_qpn,     8, 0, 24),
	MAD_UINT(DREQ, rsvd_11,        11, 0, 8),
	MAD_BYTES(DREQ, private_data,  12),
};
#undef DREQ

#define SREQ struct drnic_mad_cm_sidr_req
static const struct mad_field cm_sidr_req_fields[] = {
	MAD_UINT(SREQ, request_id,  0, 0, 32),
	MAD_UINT(SREQ, pkey,        4, 0, 16),
	MAD_UINT(SREQ, rsvd_6,      6, 0, 16),
	MAD_UINT(SREQ, service_id,  8, 0, 64),
	MAD_BYTES(SREQ, private_data, 16),
};
#undef SREQ

#define SREP struct drnic_mad_cm_sidr_rep
static const struct mad_field cm_sidr_rep_fields[] = {
	MAD_UINT(SREP, request_id,      0, 0, 32),
	MAD_UINT(SREP, status,          4, 0, 8),
	MAD_UINT(SREP, add_info_len,    5, 0, 8),
	MAD_UINT(SREP, rsvd_6,          6, 0, 16),
	MAD_UINT(SREP, qpn,             8, 0, 24),
	MAD_UINT(SREP, rsvd_11,         11, 0, 8),
	MAD_UINT(SREP, service_id,      12, 0, 64),
	MAD_UINT(SREP, qkey,            20, 0, 32),
	MAD_BYTES(SREP, class_port_info, 24),
	MAD_BYTES(SREP, private_data,   96),
};
#undef SREP

/* One CM attribute: its name and, when it has a struct, its layout. */
struct cm_attr {
	uint16_t id;
	const char *name;
	struct mad_layout layout;    /* n == 0: kept raw */
};

#define CM_ATTR(id, name, f, len) { (id), (name), { (f), RTE_DIM(f), (len) } }
static const struct cm_attr cm_attrs[] = {
	CM_ATTR(DRNIC_MAD_CM_CLASS_PORT_INFO, "ClassPortInfo", cm_cpi_fields,
		DRNIC_MAD_CLASS_PORT_INFO_LEN),
	CM_ATTR(DRNIC_MAD_CM_REQ, "REQ", cm_req_fields, DRNIC_MAD_DATA_LEN),
	CM_ATTR(DRNIC_MAD_CM_MRA, "MRA", cm_mra_fields, DRNIC_MAD_DATA_LEN),
	CM_ATTR(DRNIC_MAD_CM_REJ, "REJ", cm_rej_fields, DRNIC_MAD_DATA_LEN),
	CM_ATTR(DRNIC_MAD_CM_REP, "REP", cm_rep_fields, DRNIC_MAD_DATA_LEN),
	CM_ATTR(DRNIC_MAD_CM_RTU, "RTU", cm_rtu_fields, DRNIC_MAD_DATA_LEN),
	CM_ATTR(DRNIC_MAD_CM_DREQ, "DREQ", cm_dreq_fields, DRNIC_MAD_DATA_LEN),
	/* DREP has RTU's layout. */
	CM_ATTR(DRNIC_MAD_CM_DREP, "DREP", cm_rtu_fields, DRNIC_MAD_DATA_LEN),
	CM_ATTR(DRNIC_MAD_CM_SIDR_REQ, "SIDR_REQ", cm_sidr_req_fields, DRNIC_MAD_DATA_LEN),
	CM_ATTR(DRNIC_MAD_CM_SIDR_REP, "SIDR_REP", cm_sidr_rep_fields, DRNIC_MAD_DATA_LEN),
	{ DRNIC_MAD_CM_LAP, "LAP", { NULL, 0, DRNIC_MAD_DATA_LEN } },
	{ DRNIC_MAD_CM_APR, "APR", { NULL, 0, DRNIC_MAD_DATA_LEN } },
};
#undef CM_ATTR

static const struct cm_attr *
cm_attr_find(uint16_t id)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(cm_attrs); i++)
		if (cm_attrs[i].id == id)
			return &cm_attrs[i];
	return NULL;
}

/* The layout of a struct-backed attribute; NULL for raw or unknown ones. */
static const struct mad_layout *
cm_layout_of(uint16_t id)
{
	const struct cm_attr *a = cm_attr_find(id);

	return a != NULL && a->layout.n > 0 ? &a->layout : NULL;
}

const char *
drnic_mad_cm_attr_name(uint16_t attr_id)
{
	const struct cm_attr *a = cm_attr_find(attr_id);

	return a != NULL ? a->name : NULL;
}

int
drnic_mad_cm_attr_parse(uint16_t attr_id, const void *data, size_t len, void *attr)
{
	const struct mad_layout *lay = cm_layout_of(attr_id);

	if (data == NULL || attr == NULL)
		return -EINVAL;
	if (lay == NULL)
		return -ENOTSUP;
	if (len < lay->len)
		return -EINVAL;
	mad_layout_parse(lay, data, attr);
	return 0;
}

int
drnic_mad_cm_attr_build(uint16_t attr_id, const void *attr, void *data, size_t len)
{
	const struct mad_layout *lay = cm_layout_of(attr_id);

	if (data == NULL || attr == NULL)
		return -EINVAL;
	if (lay == NULL)
		return -ENOTSUP;
	if (len < lay->len)
		return -EINVAL;
	return mad_layout_build(lay, attr, data);
}

int
drnic_mad_cm_parse(const void *mad, size_t len, struct drnic_mad_cm *out)
{
	const struct mad_layout *lay;
	const uint8_t *data;
	size_t i;

	if (mad == NULL || out == NULL || len != DRNIC_MAD_LEN)
		return -EINVAL;
	data = (const uint8_t *)mad + DRNIC_MAD_HDR_LEN;
	memset(out, 0, sizeof(*out));
	drnic_mad_hdr_parse(mad, len, &out->hdr);
	if (out->hdr.base_version != DRNIC_MAD_BASE_VERSION ||
	    out->hdr.mgmt_class != DRNIC_MAD_CLASS_CM)
		return -EPROTO;
	lay = cm_layout_of(out->hdr.attr_id);
	if (lay == NULL) {
		memcpy(out->raw, data, DRNIC_MAD_DATA_LEN);
		return 0;
	}
	for (i = lay->len; i < DRNIC_MAD_DATA_LEN; i++)
		if (data[i] != 0)
			return -EBADMSG;
	mad_layout_parse(lay, data, out->raw);
	out->known = true;
	return 0;
}

int
drnic_mad_cm_build(const struct drnic_mad_cm *in, void *mad, size_t len)
{
	uint8_t *data = (uint8_t *)mad + DRNIC_MAD_HDR_LEN;
	const struct mad_layout *lay;
	int rc;

	if (in == NULL || mad == NULL || len < DRNIC_MAD_LEN)
		return -EINVAL;
	lay = cm_layout_of(in->hdr.attr_id);
	if (in->known && lay == NULL)
		return -EINVAL;
	rc = drnic_mad_hdr_build(mad, len, &in->hdr);
	if (rc != 0)
		return rc;
	if (!in->known) {
		memcpy(data, in->raw, DRNIC_MAD_DATA_LEN);
		return 0;
	}
	memset(data + lay->len, 0, DRNIC_MAD_DATA_LEN - lay->len);
	return mad_layout_build(lay, in->raw, data);
}
