/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/mad/mad_cm.c: every attribute table covers its bytes
 * bit for bit, each attribute's fields land at the offsets of IBA chapter
 * 12, length / class / range errors, raw attributes, and every CM MAD of the
 * captures (rxe's services capture and the ConnectX ones): parsed, checked
 * for sense across each exchange, and rebuilt byte for byte.
 */
#include "lib/mad/mad_cm.c"

#include <stdlib.h>

#include "ut_common.h"
#include "../../wire/wire_ut.h"

/* A byte of the MAD at data-area offset @o. */
#define UT_D(o) (DRNIC_MAD_HDR_LEN + (o))

/* Every bit of every layout is one field's, exactly once. */
static void
test_tables_cover(void)
{
	unsigned int i, j, b;

	for (i = 0; i < RTE_DIM(cm_attrs); i++) {
		const struct mad_layout *lay = &cm_attrs[i].layout;
		uint8_t seen[DRNIC_MAD_DATA_LEN * 8] = { 0 };

		if (lay->n == 0)
			continue;
		for (j = 0; j < lay->n; j++) {
			const struct mad_field *f = &lay->fields[j];

			CU_ASSERT(f->bit + f->width <= lay->len * 8u);
			CU_ASSERT(f->bytes ? f->width == f->size * 8u : f->width <= f->size * 8u);
			for (b = f->bit; b < f->bit + f->width && b < lay->len * 8u; b++)
				seen[b]++;
		}
		for (b = 0; b < lay->len * 8u; b++) {
			if (seen[b] != 1)
				printf("\n  %s: bit %u (byte %u) covered %u times\n",
				       cm_attrs[i].name, b, b / 8, seen[b]);
			CU_ASSERT_EQUAL(seen[b], 1);
		}
	}
}

static uint8_t *
ut_mad_alloc(const struct drnic_mad_cm *m)
{
	uint8_t *b = malloc(DRNIC_MAD_LEN);

	CU_ASSERT_FATAL(b != NULL);
	memset(b, 0xEE, DRNIC_MAD_LEN);
	CU_ASSERT_EQUAL_FATAL(drnic_mad_cm_build(m, b, DRNIC_MAD_LEN), 0);
	return b;
}

static void
ut_mad_init(struct drnic_mad_cm *m, uint16_t attr)
{
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = DRNIC_MAD_BASE_VERSION;
	m->hdr.mgmt_class = DRNIC_MAD_CLASS_CM;
	m->hdr.class_version = DRNIC_MAD_CM_CLASS_VERSION;
	m->hdr.method = DRNIC_MAD_METHOD_SEND;
	m->hdr.tid = 0x1122334455667788ull;
	m->hdr.attr_id = attr;
	m->known = true;
}

/* Parse @b back and compare with @m. */
static void
ut_mad_back(const uint8_t *b, const struct drnic_mad_cm *m)
{
	struct drnic_mad_cm q;

	CU_ASSERT_EQUAL(drnic_mad_cm_parse(b, DRNIC_MAD_LEN, &q), 0);
	CU_ASSERT(memcmp(&q, m, sizeof(q)) == 0);
	CU_ASSERT_EQUAL(b[1], DRNIC_MAD_CLASS_CM);
	CU_ASSERT_EQUAL(b[16] << 8 | b[17], m->hdr.attr_id);
}

static void
test_req_placement(void)
{
	struct drnic_mad_cm m;
	struct drnic_mad_cm_req *r = &m.req;
	uint8_t *b;

	ut_mad_init(&m, DRNIC_MAD_CM_REQ);
	r->local_comm_id = 0xA1A2A3A4;
	r->service_id = 0x0000000001061C06ull;
	r->local_ca_guid = 0x0102030405060708ull;
	r->local_qkey = 0xC1C2C3C4;
	r->local_qpn = 0x123456;
	r->responder_resources = 0x78;
	r->local_eecn = 0x9ABCDE;
	r->initiator_depth = 0xF0;
	r->remote_cm_resp_timeout = 0x14;
	r->transport_service = 1;
	r->e2e_flow_control = 1;
	r->starting_psn = 0xABCDEF;
	r->local_cm_resp_timeout = 0x15;
	r->retry_count = 7;
	r->pkey = 0xFFFF;
	r->path_mtu = 3;
	r->rnr_retry_count = 7;
	r->max_cm_retries = 15;
	r->srq = 1;
	r->primary.local_lid = 0xFFFF;
	r->primary.local_gid[15] = 0x0A;
	r->primary.remote_gid[0] = 0xFE;
	r->primary.flow_label = 0xABCDE;
	r->primary.packet_rate = 0x3F;
	r->primary.traffic_class = 0x22;
	r->primary.hop_limit = 0x40;
	r->primary.sl = 0xA;
	r->primary.subnet_local = 1;
	r->primary.local_ack_timeout = 0x1F;
	r->alternate.remote_lid = 0x4321;
	r->alternate.local_ack_timeout = 0x01;
	r->private_data[0] = 0x5A;
	r->private_data[DRNIC_MAD_CM_REQ_PDATA_LEN - 1] = 0xA5;
	b = ut_mad_alloc(&m);
	CU_ASSERT(b[UT_D(0)] == 0xA1 && b[UT_D(3)] == 0xA4);
	CU_ASSERT(b[UT_D(8 + 5)] == 0x06 && b[UT_D(8 + 6)] == 0x1C && b[UT_D(15)] == 0x06);
	CU_ASSERT(b[UT_D(16)] == 0x01 && b[UT_D(23)] == 0x08);
	CU_ASSERT(b[UT_D(28)] == 0xC1 && b[UT_D(31)] == 0xC4);
	CU_ASSERT(b[UT_D(32)] == 0x12 && b[UT_D(33)] == 0x34 && b[UT_D(34)] == 0x56);
	CU_ASSERT_EQUAL(b[UT_D(35)], 0x78);
	CU_ASSERT(b[UT_D(36)] == 0x9A && b[UT_D(38)] == 0xDE && b[UT_D(39)] == 0xF0);
	CU_ASSERT_EQUAL(b[UT_D(43)], 0x14 << 3 | 1 << 1 | 1);
	CU_ASSERT(b[UT_D(44)] == 0xAB && b[UT_D(46)] == 0xEF);
	CU_ASSERT_EQUAL(b[UT_D(47)], 0x15 << 3 | 7);
	CU_ASSERT(b[UT_D(48)] == 0xFF && b[UT_D(49)] == 0xFF);
	CU_ASSERT_EQUAL(b[UT_D(50)], 0x37);
	CU_ASSERT_EQUAL(b[UT_D(51)], 0xF8);
	CU_ASSERT(b[UT_D(52)] == 0xFF && b[UT_D(53)] == 0xFF);
	CU_ASSERT_EQUAL(b[UT_D(56 + 15)], 0x0A);
	CU_ASSERT_EQUAL(b[UT_D(72)], 0xFE);
	CU_ASSERT(b[UT_D(88)] == 0xAB && b[UT_D(89)] == 0xCD && b[UT_D(90)] == 0xE0);
	CU_ASSERT_EQUAL(b[UT_D(91)], 0x3F);
	CU_ASSERT(b[UT_D(92)] == 0x22 && b[UT_D(93)] == 0x40);
	CU_ASSERT_EQUAL(b[UT_D(94)], 0xA8);
	CU_ASSERT_EQUAL(b[UT_D(95)], 0xF8);
	CU_ASSERT(b[UT_D(98)] == 0x43 && b[UT_D(99)] == 0x21);
	CU_ASSERT_EQUAL(b[UT_D(139)], 0x08);
	CU_ASSERT(b[UT_D(140)] == 0x5A && b[DRNIC_MAD_LEN - 1] == 0xA5);
	ut_mad_back(b, &m);
	free(b);
}

static void
test_rep_placement(void)
{
	struct drnic_mad_cm m;
	struct drnic_mad_cm_rep *r = &m.rep;
	uint8_t *b;

	ut_mad_init(&m, DRNIC_MAD_CM_REP);
	r->local_comm_id = 0x01020304;
	r->remote_comm_id = 0x05060708;
	r->local_qkey = 0x090A0B0C;
	r->local_qpn = 0x0D0E0F;
	r->local_eecn = 0x111213;
	r->starting_psn = 0x141516;
	r->responder_resources = 0x17;
	r->initiator_depth = 0x18;
	r->target_ack_delay = 0x1F;
	r->failover_accepted = 2;
	r->e2e_flow_control = 1;
	r->rnr_retry_count = 5;
	r->srq = 1;
	r->local_ca_guid = 0x2122232425262728ull;
	r->private_data[0] = 0x31;
	r->private_data[DRNIC_MAD_CM_REP_PDATA_LEN - 1] = 0x32;
	b = ut_mad_alloc(&m);
	CU_ASSERT(b[UT_D(3)] == 0x04 && b[UT_D(7)] == 0x08 && b[UT_D(11)] == 0x0C);
	CU_ASSERT(b[UT_D(12)] == 0x0D && b[UT_D(14)] == 0x0F && b[UT_D(15)] == 0);
	CU_ASSERT(b[UT_D(16)] == 0x11 && b[UT_D(18)] == 0x13 && b[UT_D(19)] == 0);
	CU_ASSERT(b[UT_D(20)] == 0x14 && b[UT_D(22)] == 0x16 && b[UT_D(23)] == 0);
	CU_ASSERT(b[UT_D(24)] == 0x17 && b[UT_D(25)] == 0x18);
	CU_ASSERT_EQUAL(b[UT_D(26)], 0xFD);
	CU_ASSERT_EQUAL(b[UT_D(27)], 0xB0);
	CU_ASSERT(b[UT_D(28)] == 0x21 && b[UT_D(35)] == 0x28);
	CU_ASSERT(b[UT_D(36)] == 0x31 && b[DRNIC_MAD_LEN - 1] == 0x32);
	ut_mad_back(b, &m);
	free(b);
}

/* The messages of two communication IDs and private data (RTU, DREP) and DREQ. */
static void
test_short_messages(void)
{
	static const uint16_t ids[] = { DRNIC_MAD_CM_RTU, DRNIC_MAD_CM_DREP };
	struct drnic_mad_cm m;
	unsigned int i;
	uint8_t *b;

	for (i = 0; i < RTE_DIM(ids); i++) {
		ut_mad_init(&m, ids[i]);
		m.rtu.local_comm_id = 0x11223344;
		m.rtu.remote_comm_id = 0x55667788;
		m.rtu.private_data[0] = 0x99;
		b = ut_mad_alloc(&m);
		CU_ASSERT(b[UT_D(0)] == 0x11 && b[UT_D(7)] == 0x88 && b[UT_D(8)] == 0x99);
		ut_mad_back(b, &m);
		free(b);
	}
	ut_mad_init(&m, DRNIC_MAD_CM_DREQ);
	m.dreq.local_comm_id = 1;
	m.dreq.remote_comm_id = 2;
	m.dreq.remote_qpn = 0xABCDEF;
	m.dreq.private_data[0] = 0x77;
	b = ut_mad_alloc(&m);
	CU_ASSERT(b[UT_D(8)] == 0xAB && b[UT_D(10)] == 0xEF && b[UT_D(11)] == 0);
	CU_ASSERT_EQUAL(b[UT_D(12)], 0x77);
	ut_mad_back(b, &m);
	free(b);
}

static void
test_rej_mra_placement(void)
{
	struct drnic_mad_cm m;
	uint8_t *b;

	ut_mad_init(&m, DRNIC_MAD_CM_REJ);
	m.rej.local_comm_id = 0x0A0B0C0D;
	m.rej.msg_rejected = DRNIC_MAD_CM_MSG_OTHER;
	m.rej.reject_info_len = 0x7F;
	m.rej.reason = DRNIC_MAD_CM_REJ_INVALID_SERVICE_ID;
	m.rej.ari[0] = 0xA0;
	m.rej.private_data[0] = 0xB0;
	b = ut_mad_alloc(&m);
	CU_ASSERT_EQUAL(b[UT_D(8)], 0x80);
	CU_ASSERT_EQUAL(b[UT_D(9)], 0xFE);
	CU_ASSERT(b[UT_D(10)] == 0x00 && b[UT_D(11)] == 0x08);
	CU_ASSERT(b[UT_D(12)] == 0xA0 && b[UT_D(84)] == 0xB0);
	ut_mad_back(b, &m);
	free(b);

	ut_mad_init(&m, DRNIC_MAD_CM_MRA);
	m.mra.msg_mraed = DRNIC_MAD_CM_MSG_REP;
	m.mra.service_timeout = 0x11;
	m.mra.private_data[DRNIC_MAD_CM_MRA_PDATA_LEN - 1] = 0xC0;
	b = ut_mad_alloc(&m);
	CU_ASSERT_EQUAL(b[UT_D(8)], 0x40);
	CU_ASSERT_EQUAL(b[UT_D(9)], 0x88);
	CU_ASSERT_EQUAL(b[UT_D(10 + DRNIC_MAD_CM_MRA_PDATA_LEN - 1)], 0xC0);
	ut_mad_back(b, &m);
	free(b);
}

static void
test_sidr_placement(void)
{
	struct drnic_mad_cm m;
	struct drnic_mad_class_port_info cpi;
	uint8_t *b;

	ut_mad_init(&m, DRNIC_MAD_CM_SIDR_REQ);
	m.sidr_req.request_id = 0xDEADBEEF;
	m.sidr_req.pkey = 0x8001;
	m.sidr_req.service_id = 0x0000000001110457ull;
	m.sidr_req.private_data[0] = 0x42;
	b = ut_mad_alloc(&m);
	CU_ASSERT(b[UT_D(0)] == 0xDE && b[UT_D(4)] == 0x80 && b[UT_D(5)] == 0x01);
	CU_ASSERT(b[UT_D(13)] == 0x11 && b[UT_D(14)] == 0x04 && b[UT_D(15)] == 0x57);
	CU_ASSERT_EQUAL(b[UT_D(16)], 0x42);
	ut_mad_back(b, &m);
	free(b);

	ut_mad_init(&m, DRNIC_MAD_CM_SIDR_REP);
	m.sidr_rep.request_id = 0xDEADBEEF;
	m.sidr_rep.status = 2;
	m.sidr_rep.add_info_len = 3;
	m.sidr_rep.qpn = 0x000123;
	m.sidr_rep.service_id = 0x0000000001110457ull;
	m.sidr_rep.qkey = 0x01234567;
	m.sidr_rep.class_port_info[35] = 0x11;        /* redirect QP, low byte */
	m.sidr_rep.private_data[0] = 0x24;
	b = ut_mad_alloc(&m);
	CU_ASSERT(b[UT_D(4)] == 2 && b[UT_D(5)] == 3);
	CU_ASSERT(b[UT_D(9)] == 0x01 && b[UT_D(10)] == 0x23 && b[UT_D(11)] == 0);
	CU_ASSERT(b[UT_D(12 + 5)] == 0x11 && b[UT_D(19)] == 0x57);
	CU_ASSERT(b[UT_D(20)] == 0x01 && b[UT_D(23)] == 0x67);
	CU_ASSERT_EQUAL(b[UT_D(24 + 35)], 0x11);
	CU_ASSERT_EQUAL(b[UT_D(96)], 0x24);
	ut_mad_back(b, &m);
	CU_ASSERT_EQUAL(drnic_mad_cm_attr_parse(DRNIC_MAD_CM_CLASS_PORT_INFO,
				m.sidr_rep.class_port_info, DRNIC_MAD_CLASS_PORT_INFO_LEN, &cpi), 0);
	CU_ASSERT_EQUAL(cpi.redirect_qp, 0x11);
	free(b);
}

static void
test_class_port_info(void)
{
	struct drnic_mad_cm m;
	uint8_t *b;

	ut_mad_init(&m, DRNIC_MAD_CM_CLASS_PORT_INFO);
	m.hdr.method = DRNIC_MAD_METHOD_GET_RESP & 0x7F;
	m.hdr.r = 1;
	m.class_port_info.base_version = 1;
	m.class_port_info.class_version = 2;
	m.class_port_info.capability_mask = 0x0102;
	m.class_port_info.capability_mask2 = 0x7FFFFFF;
	m.class_port_info.resp_time_value = 0x12;
	m.class_port_info.redirect_sl = 0xF;
	m.class_port_info.redirect_fl = 0x12345;
	m.class_port_info.trap_hl = 0xFF;
	m.class_port_info.trap_qp = 0xABCDEF;
	m.class_port_info.trap_qkey = 0x80010000;
	b = ut_mad_alloc(&m);
	CU_ASSERT_EQUAL(b[3], 0x81);
	CU_ASSERT(b[UT_D(0)] == 1 && b[UT_D(1)] == 2 && b[UT_D(2)] == 1 && b[UT_D(3)] == 2);
	CU_ASSERT(b[UT_D(4)] == 0xFF && b[UT_D(6)] == 0xFF && b[UT_D(7)] == 0xF2);
	CU_ASSERT(b[UT_D(25)] == 0xF1 && b[UT_D(26)] == 0x23 && b[UT_D(27)] == 0x45);
	CU_ASSERT(b[UT_D(64)] == 0xFF && b[UT_D(65)] == 0xAB && b[UT_D(67)] == 0xEF);
	CU_ASSERT(b[UT_D(68)] == 0x80 && b[UT_D(71)] == 0x00);
	CU_ASSERT_EQUAL(b[UT_D(72)], 0);        /* reserved rest written as zero */
	CU_ASSERT_EQUAL(b[DRNIC_MAD_LEN - 1], 0);
	ut_mad_back(b, &m);
	b[DRNIC_MAD_LEN - 1] = 1;
	CU_ASSERT_EQUAL(drnic_mad_cm_parse(b, DRNIC_MAD_LEN, &m), -EBADMSG);
	free(b);
}

/* LAP, APR and an ID the class does not define: kept raw, rebuilt as they were. */
static void
test_raw_attributes(void)
{
	static const uint16_t ids[] = { DRNIC_MAD_CM_LAP, DRNIC_MAD_CM_APR, 0x0099 };
	struct drnic_mad_cm q;
	uint8_t in[DRNIC_MAD_LEN], out[DRNIC_MAD_LEN], attr[DRNIC_MAD_DATA_LEN];
	unsigned int i;

	for (i = 0; i < RTE_DIM(ids); i++) {
		ut_fill(in, sizeof(in));
		in[0] = 1;
		in[1] = DRNIC_MAD_CLASS_CM;
		in[16] = (uint8_t)(ids[i] >> 8);
		in[17] = (uint8_t)ids[i];
		CU_ASSERT_EQUAL(drnic_mad_cm_parse(in, sizeof(in), &q), 0);
		CU_ASSERT_FALSE(q.known);
		CU_ASSERT_EQUAL(q.hdr.attr_id, ids[i]);
		CU_ASSERT(memcmp(q.raw, in + DRNIC_MAD_HDR_LEN, DRNIC_MAD_DATA_LEN) == 0);
		CU_ASSERT_EQUAL(drnic_mad_cm_build(&q, out, sizeof(out)), 0);
		CU_ASSERT(memcmp(in, out, sizeof(in)) == 0);
		CU_ASSERT_EQUAL(drnic_mad_cm_attr_parse(ids[i], in, sizeof(in), attr), -ENOTSUP);
		CU_ASSERT_EQUAL(drnic_mad_cm_attr_build(ids[i], attr, out, sizeof(out)), -ENOTSUP);
		/* Claiming a struct for it is an error. */
		q.known = true;
		CU_ASSERT_EQUAL(drnic_mad_cm_build(&q, out, sizeof(out)), -EINVAL);
	}
	CU_ASSERT_STRING_EQUAL(drnic_mad_cm_attr_name(DRNIC_MAD_CM_LAP), "LAP");
	CU_ASSERT_STRING_EQUAL(drnic_mad_cm_attr_name(DRNIC_MAD_CM_SIDR_REP), "SIDR_REP");
	CU_ASSERT_PTR_NULL(drnic_mad_cm_attr_name(0x0099));
}

static void
test_errors(void)
{
	struct drnic_mad_cm m, q;
	uint8_t *b, *s;

	ut_mad_init(&m, DRNIC_MAD_CM_REQ);
	b = ut_mad_alloc(&m);
	/* Lengths: a MAD is 256 bytes, an attribute at least its own. */
	CU_ASSERT_EQUAL(drnic_mad_cm_parse(b, DRNIC_MAD_LEN - 1, &q), -EINVAL);
	CU_ASSERT_EQUAL(drnic_mad_cm_parse(b, DRNIC_MAD_LEN + 1, &q), -EINVAL);
	CU_ASSERT_EQUAL(drnic_mad_cm_parse(NULL, DRNIC_MAD_LEN, &q), -EINVAL);
	CU_ASSERT_EQUAL(drnic_mad_cm_build(&m, b, DRNIC_MAD_LEN - 1), -EINVAL);
	CU_ASSERT_EQUAL(drnic_mad_cm_attr_parse(DRNIC_MAD_CM_REQ, b + DRNIC_MAD_HDR_LEN,
						DRNIC_MAD_DATA_LEN - 1, &q.req), -EINVAL);
	CU_ASSERT_EQUAL(drnic_mad_cm_attr_build(DRNIC_MAD_CM_REQ, &m.req, b + DRNIC_MAD_HDR_LEN,
						DRNIC_MAD_DATA_LEN - 1), -EINVAL);
	/* An exact-size attribute buffer is enough (ASan sees any overrun). */
	s = malloc(DRNIC_MAD_DATA_LEN);
	CU_ASSERT_FATAL(s != NULL);
	CU_ASSERT_EQUAL(drnic_mad_cm_attr_build(DRNIC_MAD_CM_REQ, &m.req, s, DRNIC_MAD_DATA_LEN), 0);
	CU_ASSERT_EQUAL(drnic_mad_cm_attr_parse(DRNIC_MAD_CM_REQ, s, DRNIC_MAD_DATA_LEN, &q.req), 0);
	free(s);
	/* Another class, another base version. */
	b[1] = 0x04;
	CU_ASSERT_EQUAL(drnic_mad_cm_parse(b, DRNIC_MAD_LEN, &q), -EPROTO);
	b[1] = DRNIC_MAD_CLASS_CM;
	b[0] = 2;
	CU_ASSERT_EQUAL(drnic_mad_cm_parse(b, DRNIC_MAD_LEN, &q), -EPROTO);
	/* A value wider than its field. */
	m.req.local_qpn = 0x1000000;
	CU_ASSERT_EQUAL(drnic_mad_cm_build(&m, b, DRNIC_MAD_LEN), -ERANGE);
	m.req.local_qpn = 0;
	m.req.primary.sl = 16;
	CU_ASSERT_EQUAL(drnic_mad_cm_build(&m, b, DRNIC_MAD_LEN), -ERANGE);
	free(b);
}

/* ------------------------------------------------------------------------ */
/* Captures                                                                  */
/* ------------------------------------------------------------------------ */

#define UT_MAX_MSGS 64

/* What one capture's exchanges carried, to check them against each other. */
struct ut_cm_seen {
	struct drnic_mad_cm_req req[UT_MAX_MSGS];
	struct drnic_mad_cm_rep rep[UT_MAX_MSGS];
	struct drnic_mad_cm_sidr_req sreq[UT_MAX_MSGS];
	unsigned int n_req, n_rep, n_sreq;
};

struct ut_cm_counts {
	unsigned int attr[0x20];
	unsigned int rebuilt;
	unsigned int ip_hdrs;        /* RDMA CM headers checked against the frame */
	unsigned int rej_reason8;
};

static const struct drnic_mad_cm_req *
ut_find_req(const struct ut_cm_seen *s, uint32_t comm_id)
{
	unsigned int i;

	for (i = s->n_req; i-- > 0;)
		if (s->req[i].local_comm_id == comm_id)
			return &s->req[i];
	return NULL;
}

static const struct drnic_mad_cm_rep *
ut_find_rep(const struct ut_cm_seen *s, uint32_t comm_id)
{
	unsigned int i;

	for (i = s->n_rep; i-- > 0;)
		if (s->rep[i].local_comm_id == comm_id)
			return &s->rep[i];
	return NULL;
}

/*
 * A REQ or SIDR_REQ to a service ID of the RDMA CM's IP spaces: its
 * private data starts with the RDMA CM header, whose addresses are the
 * frame's; the REQ's primary path GIDs are those addresses, IPv4-mapped.
 */
static void
ut_check_ip_hdr(const struct drnic_wire_pkt *p, uint64_t sid, const uint8_t *pdata,
		const struct drnic_mad_cm_path *path, struct ut_cm_counts *c)
{
	static const uint8_t mapped[12] = { [10] = 0xFF, [11] = 0xFF };
	struct drnic_rdma_cm_hdr h;
	uint16_t ps, port;
	uint8_t v4[4];

	if (!drnic_rdma_cm_sid_has_ip_hdr(sid))
		return;
	CU_ASSERT_EQUAL(drnic_rdma_cm_service_id_split(sid, &ps, &port), 0);
	CU_ASSERT_EQUAL_FATAL(drnic_rdma_cm_hdr_parse(pdata, DRNIC_RDMA_CM_HDR_LEN, &h), 0);
	CU_ASSERT_EQUAL_FATAL(p->ip.version, 4);
	CU_ASSERT_EQUAL(h.ip_version, 4);
	CU_ASSERT(h.port != 0);
	CU_ASSERT_EQUAL(drnic_rdma_cm_addr_ipv4(h.src_addr, v4), 0);
	CU_ASSERT(memcmp(v4, p->ip.src, 4) == 0);
	CU_ASSERT_EQUAL(drnic_rdma_cm_addr_ipv4(h.dst_addr, v4), 0);
	CU_ASSERT(memcmp(v4, p->ip.dst, 4) == 0);
	if (path != NULL) {
		CU_ASSERT(memcmp(path->local_gid, mapped, 12) == 0);
		CU_ASSERT(memcmp(path->local_gid + 12, p->ip.src, 4) == 0);
		CU_ASSERT(memcmp(path->remote_gid, mapped, 12) == 0);
		CU_ASSERT(memcmp(path->remote_gid + 12, p->ip.dst, 4) == 0);
	}
	c->ip_hdrs++;
}

/* One CM MAD of a capture: sense across the exchange so far. */
static void
ut_check_cm(const struct drnic_wire_pkt *p, const struct drnic_mad_cm *m,
	    struct ut_cm_seen *s, struct ut_cm_counts *c)
{
	const struct drnic_mad_cm_req *req;
	const struct drnic_mad_cm_rep *rep;
	unsigned int i;

	switch (m->hdr.attr_id) {
	case DRNIC_MAD_CM_REQ:
		CU_ASSERT(m->req.local_qpn != 0 && m->req.local_comm_id != 0);
		CU_ASSERT(m->req.path_mtu >= 1 && m->req.path_mtu <= 5);
		CU_ASSERT_EQUAL(m->req.transport_service, 0);        /* RC */
		ut_check_ip_hdr(p, m->req.service_id, m->req.private_data, &m->req.primary, c);
		if (s->n_req < UT_MAX_MSGS)
			s->req[s->n_req++] = m->req;
		break;
	case DRNIC_MAD_CM_REP:
		req = ut_find_req(s, m->rep.remote_comm_id);
		CU_ASSERT_PTR_NOT_NULL(req);
		CU_ASSERT(m->rep.local_qpn != 0 && m->rep.local_comm_id != 0);
		if (req != NULL)       /* the target's resources: what the REQ offered */
			CU_ASSERT(m->rep.initiator_depth <= req->responder_resources ||
				  req->responder_resources == 0);
		if (s->n_rep < UT_MAX_MSGS)
			s->rep[s->n_rep++] = m->rep;
		break;
	case DRNIC_MAD_CM_RTU:
		req = ut_find_req(s, m->rtu.local_comm_id);
		rep = ut_find_rep(s, m->rtu.remote_comm_id);
		CU_ASSERT(req != NULL && rep != NULL && rep->remote_comm_id == req->local_comm_id);
		break;
	case DRNIC_MAD_CM_REJ:
		CU_ASSERT_PTR_NOT_NULL(ut_find_req(s, m->rej.remote_comm_id));
		CU_ASSERT_EQUAL(m->rej.msg_rejected, DRNIC_MAD_CM_MSG_REQ);
		if (m->rej.reason == DRNIC_MAD_CM_REJ_INVALID_SERVICE_ID)
			c->rej_reason8++;
		break;
	case DRNIC_MAD_CM_DREQ:
	case DRNIC_MAD_CM_DREP:
		/* Either side disconnects: its local ID is the REQ's or the REP's. */
		req = ut_find_req(s, m->dreq.local_comm_id);
		rep = ut_find_rep(s, m->dreq.local_comm_id);
		if (req != NULL)
			rep = ut_find_rep(s, m->dreq.remote_comm_id);
		else if (rep != NULL)
			req = ut_find_req(s, m->dreq.remote_comm_id);
		CU_ASSERT_FATAL(req != NULL && rep != NULL);
		CU_ASSERT_EQUAL(rep->remote_comm_id, req->local_comm_id);
		/* A DREQ names the QP of its receiver: the REP's QP or the REQ's. */
		if (m->hdr.attr_id == DRNIC_MAD_CM_DREQ)
			CU_ASSERT_EQUAL(m->dreq.remote_qpn, m->dreq.local_comm_id ==
					req->local_comm_id ? rep->local_qpn : req->local_qpn);
		break;
	case DRNIC_MAD_CM_SIDR_REQ:
		ut_check_ip_hdr(p, m->sidr_req.service_id, m->sidr_req.private_data, NULL, c);
		if (s->n_sreq < UT_MAX_MSGS)
			s->sreq[s->n_sreq++] = m->sidr_req;
		break;
	case DRNIC_MAD_CM_SIDR_REP:
		for (i = s->n_sreq; i-- > 0;)
			if (s->sreq[i].request_id == m->sidr_rep.request_id)
				break;
		CU_ASSERT_FATAL(i < s->n_sreq);
		CU_ASSERT_EQUAL(m->sidr_rep.service_id, s->sreq[i].service_id);
		CU_ASSERT_EQUAL(m->sidr_rep.status, 0);
		CU_ASSERT(m->sidr_rep.qpn > 1);
		break;
	default:
		break;
	}
}

/* The CM MADs of one capture: UD SEND_ONLY to QP 1 with class 0x07. */
static void
ut_capture(const char *name, struct ut_cm_counts *c)
{
	static struct ut_cm_seen seen;
	static uint8_t mad[DRNIC_MAD_LEN], out[DRNIC_MAD_LEN];
	struct ut_pcap pc;
	const uint8_t *f;
	uint32_t caplen, origlen;
	char path[512];

	if (!ut_testdata(path, sizeof(path), name))
		return;
	memset(&seen, 0, sizeof(seen));
	CU_ASSERT_EQUAL_FATAL(ut_pcap_open(&pc, path), 0);
	while (ut_pcap_next(&pc, &f, &caplen, &origlen)) {
		struct drnic_wire_pkt p;
		struct drnic_mad_cm m;
		struct rte_mbuf *mb = ut_mbuf_from(f, caplen, 0);

		CU_ASSERT_FATAL(mb != NULL);
		if (drnic_wire_parse(mb, &p) != DRNIC_WIRE_OK ||
		    p.bth.opcode != DRNIC_WIRE_OP_UD_SEND_ONLY || p.bth.dqpn != DRNIC_MAD_GSI_QPN) {
			rte_pktmbuf_free(mb);
			continue;
		}
		CU_ASSERT_EQUAL(p.payload_len, DRNIC_MAD_LEN);
		CU_ASSERT_EQUAL(p.deth.qkey, DRNIC_MAD_GSI_QKEY);
		CU_ASSERT_EQUAL(p.deth.sqpn, DRNIC_MAD_GSI_QPN);
		CU_ASSERT_EQUAL_FATAL(drnic_wire_copy_out(mb, p.payload_off, DRNIC_MAD_LEN, mad), 0);
		rte_pktmbuf_free(mb);
		if (mad[1] != DRNIC_MAD_CLASS_CM)
			continue;
		CU_ASSERT_EQUAL_FATAL(drnic_mad_cm_parse(mad, p.payload_len, &m), 0);
		CU_ASSERT(m.known);
		CU_ASSERT_PTR_NOT_NULL(drnic_mad_cm_attr_name(m.hdr.attr_id));
		CU_ASSERT_EQUAL(m.hdr.class_version, DRNIC_MAD_CM_CLASS_VERSION);
		CU_ASSERT_EQUAL(m.hdr.method, DRNIC_MAD_METHOD_SEND);
		c->attr[m.hdr.attr_id & 0x1F]++;
		ut_check_cm(&p, &m, &seen, c);
		memset(out, 0xEE, sizeof(out));
		CU_ASSERT_EQUAL(drnic_mad_cm_build(&m, out, sizeof(out)), 0);
		if (memcmp(out, mad, sizeof(mad)) == 0)
			c->rebuilt++;
		else
			CU_FAIL("rebuilt MAD differs");
	}
	ut_pcap_close(&pc);
}

static unsigned int
ut_counts_print(const char *what, const struct ut_cm_counts *c)
{
	unsigned int id, n = 0;

	printf("\n  %s:", what);
	for (id = 0; id < RTE_DIM(c->attr); id++) {
		const char *nm = drnic_mad_cm_attr_name((uint16_t)id);

		if (c->attr[id] == 0)
			continue;
		printf(" %s %u", nm != NULL ? nm : "?", c->attr[id]);
		n += c->attr[id];
	}
	printf("; %u rebuilt identical, %u RDMA CM IP headers match the frame\n",
	       c->rebuilt, c->ip_hdrs);
	return n;
}

static void
test_captures(void)
{
	struct ut_cm_counts cxc = { 0 }, rxe = { 0 };
	char path[512];
	unsigned int i, n;

	if (!ut_testdata(path, sizeof(path), ""))
		return;
	for (i = 0; i < RTE_DIM(ut_cx_captures); i++)
		ut_capture(ut_cx_captures[i], &cxc);
	ut_capture("rxe_linux61_services.pcap", &rxe);

	n = ut_counts_print("ConnectX captures", &cxc);
	CU_ASSERT_EQUAL(n, 25);
	CU_ASSERT_EQUAL(cxc.rebuilt, n);
	for (i = DRNIC_MAD_CM_REQ; i <= DRNIC_MAD_CM_DREP; i++)
		CU_ASSERT_EQUAL(cxc.attr[i], i == DRNIC_MAD_CM_MRA || i == DRNIC_MAD_CM_REJ ? 0 : 5);

	n = ut_counts_print("rxe_linux61_services", &rxe);
	CU_ASSERT_EQUAL(n, 43);
	CU_ASSERT_EQUAL(rxe.rebuilt, n);
	CU_ASSERT_EQUAL(rxe.attr[DRNIC_MAD_CM_REQ], 8);
	CU_ASSERT_EQUAL(rxe.attr[DRNIC_MAD_CM_REP], 7);
	CU_ASSERT_EQUAL(rxe.attr[DRNIC_MAD_CM_RTU], 7);
	CU_ASSERT_EQUAL(rxe.attr[DRNIC_MAD_CM_REJ], 1);
	CU_ASSERT_EQUAL(rxe.attr[DRNIC_MAD_CM_DREQ], 8);
	CU_ASSERT_EQUAL(rxe.attr[DRNIC_MAD_CM_DREP], 8);
	CU_ASSERT_EQUAL(rxe.attr[DRNIC_MAD_CM_SIDR_REQ], 2);
	CU_ASSERT_EQUAL(rxe.attr[DRNIC_MAD_CM_SIDR_REP], 2);
	CU_ASSERT_EQUAL(rxe.rej_reason8, 1);
	CU_ASSERT_EQUAL(rxe.ip_hdrs, 10);
}

int
main(void)
{
	CU_pSuite s;

	if (ut_eal_init() != 0)
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("mad_cm", NULL, NULL);
	CU_add_test(s, "tables_cover", test_tables_cover);
	CU_add_test(s, "req_placement", test_req_placement);
	CU_add_test(s, "rep_placement", test_rep_placement);
	CU_add_test(s, "short_messages", test_short_messages);
	CU_add_test(s, "rej_mra_placement", test_rej_mra_placement);
	CU_add_test(s, "sidr_placement", test_sidr_placement);
	CU_add_test(s, "class_port_info", test_class_port_info);
	CU_add_test(s, "raw_attributes", test_raw_attributes);
	CU_add_test(s, "errors", test_errors);
	CU_add_test(s, "captures", test_captures);
	return ut_run_all();
}
