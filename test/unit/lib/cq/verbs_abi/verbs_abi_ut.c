/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The public CQ and event headers against libibverbs: every enum value, the
 * layout of struct drnic_wc, and the status/event strings, so that a verbs
 * layer can convert by copy. The headers come first: each compiles on its own.
 */
#include "drnic_cq.h"
#include "drnic_event.h"

#include <dlfcn.h>
#include <stddef.h>
#include <infiniband/verbs.h>

#include "ut_common.h"

#define SAME(d, i) _Static_assert((long)(d) == (long)(i), #d " != " #i)

SAME(DRNIC_WC_SUCCESS, IBV_WC_SUCCESS);
SAME(DRNIC_WC_LOC_LEN_ERR, IBV_WC_LOC_LEN_ERR);
SAME(DRNIC_WC_LOC_QP_OP_ERR, IBV_WC_LOC_QP_OP_ERR);
SAME(DRNIC_WC_LOC_EEC_OP_ERR, IBV_WC_LOC_EEC_OP_ERR);
SAME(DRNIC_WC_LOC_PROT_ERR, IBV_WC_LOC_PROT_ERR);
SAME(DRNIC_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR);
SAME(DRNIC_WC_MW_BIND_ERR, IBV_WC_MW_BIND_ERR);
SAME(DRNIC_WC_BAD_RESP_ERR, IBV_WC_BAD_RESP_ERR);
SAME(DRNIC_WC_LOC_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR);
SAME(DRNIC_WC_REM_INV_REQ_ERR, IBV_WC_REM_INV_REQ_ERR);
SAME(DRNIC_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR);
SAME(DRNIC_WC_REM_OP_ERR, IBV_WC_REM_OP_ERR);
SAME(DRNIC_WC_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR);
SAME(DRNIC_WC_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR);
SAME(DRNIC_WC_LOC_RDD_VIOL_ERR, IBV_WC_LOC_RDD_VIOL_ERR);
SAME(DRNIC_WC_REM_INV_RD_REQ_ERR, IBV_WC_REM_INV_RD_REQ_ERR);
SAME(DRNIC_WC_REM_ABORT_ERR, IBV_WC_REM_ABORT_ERR);
SAME(DRNIC_WC_INV_EECN_ERR, IBV_WC_INV_EECN_ERR);
SAME(DRNIC_WC_INV_EEC_STATE_ERR, IBV_WC_INV_EEC_STATE_ERR);
SAME(DRNIC_WC_FATAL_ERR, IBV_WC_FATAL_ERR);
SAME(DRNIC_WC_RESP_TIMEOUT_ERR, IBV_WC_RESP_TIMEOUT_ERR);
SAME(DRNIC_WC_GENERAL_ERR, IBV_WC_GENERAL_ERR);
SAME(DRNIC_WC_TM_ERR, IBV_WC_TM_ERR);
SAME(DRNIC_WC_TM_RNDV_INCOMPLETE, IBV_WC_TM_RNDV_INCOMPLETE);

SAME(DRNIC_WC_SEND, IBV_WC_SEND);
SAME(DRNIC_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE);
SAME(DRNIC_WC_RDMA_READ, IBV_WC_RDMA_READ);
SAME(DRNIC_WC_COMP_SWAP, IBV_WC_COMP_SWAP);
SAME(DRNIC_WC_FETCH_ADD, IBV_WC_FETCH_ADD);
SAME(DRNIC_WC_BIND_MW, IBV_WC_BIND_MW);
SAME(DRNIC_WC_LOCAL_INV, IBV_WC_LOCAL_INV);
SAME(DRNIC_WC_TSO, IBV_WC_TSO);
SAME(DRNIC_WC_ATOMIC_WRITE, IBV_WC_ATOMIC_WRITE);
SAME(DRNIC_WC_RECV, IBV_WC_RECV);
SAME(DRNIC_WC_RECV_RDMA_WITH_IMM, IBV_WC_RECV_RDMA_WITH_IMM);

SAME(DRNIC_WC_GRH, IBV_WC_GRH);
SAME(DRNIC_WC_WITH_IMM, IBV_WC_WITH_IMM);
SAME(DRNIC_WC_IP_CSUM_OK, IBV_WC_IP_CSUM_OK);
SAME(DRNIC_WC_WITH_INV, IBV_WC_WITH_INV);

SAME(DRNIC_EVENT_CQ_ERR, IBV_EVENT_CQ_ERR);
SAME(DRNIC_EVENT_QP_FATAL, IBV_EVENT_QP_FATAL);
SAME(DRNIC_EVENT_QP_REQ_ERR, IBV_EVENT_QP_REQ_ERR);
SAME(DRNIC_EVENT_QP_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
SAME(DRNIC_EVENT_COMM_EST, IBV_EVENT_COMM_EST);
SAME(DRNIC_EVENT_SQ_DRAINED, IBV_EVENT_SQ_DRAINED);
SAME(DRNIC_EVENT_PATH_MIG, IBV_EVENT_PATH_MIG);
SAME(DRNIC_EVENT_PATH_MIG_ERR, IBV_EVENT_PATH_MIG_ERR);
SAME(DRNIC_EVENT_DEVICE_FATAL, IBV_EVENT_DEVICE_FATAL);
SAME(DRNIC_EVENT_PORT_ACTIVE, IBV_EVENT_PORT_ACTIVE);
SAME(DRNIC_EVENT_PORT_ERR, IBV_EVENT_PORT_ERR);
SAME(DRNIC_EVENT_LID_CHANGE, IBV_EVENT_LID_CHANGE);
SAME(DRNIC_EVENT_PKEY_CHANGE, IBV_EVENT_PKEY_CHANGE);
SAME(DRNIC_EVENT_SM_CHANGE, IBV_EVENT_SM_CHANGE);
SAME(DRNIC_EVENT_SRQ_ERR, IBV_EVENT_SRQ_ERR);
SAME(DRNIC_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_SRQ_LIMIT_REACHED);
SAME(DRNIC_EVENT_QP_LAST_WQE_REACHED, IBV_EVENT_QP_LAST_WQE_REACHED);
SAME(DRNIC_EVENT_CLIENT_REREGISTER, IBV_EVENT_CLIENT_REREGISTER);
SAME(DRNIC_EVENT_GID_CHANGE, IBV_EVENT_GID_CHANGE);
SAME(DRNIC_EVENT_WQ_FATAL, IBV_EVENT_WQ_FATAL);

/* struct drnic_wc converts to struct ibv_wc by memcpy. */
#define SAME_FIELD(f) \
	_Static_assert(offsetof(struct drnic_wc, f) == offsetof(struct ibv_wc, f) && \
		sizeof(((struct drnic_wc *)0)->f) == sizeof(((struct ibv_wc *)0)->f), \
		"drnic_wc." #f " differs from ibv_wc")
_Static_assert(sizeof(struct drnic_wc) == sizeof(struct ibv_wc), "sizeof drnic_wc");
_Static_assert(_Alignof(struct drnic_wc) == _Alignof(struct ibv_wc), "alignof drnic_wc");
SAME_FIELD(wr_id);
SAME_FIELD(status);
SAME_FIELD(opcode);
SAME_FIELD(vendor_err);
SAME_FIELD(byte_len);
SAME_FIELD(imm_data);
SAME_FIELD(invalidated_rkey);
SAME_FIELD(qp_num);
SAME_FIELD(src_qp);
SAME_FIELD(wc_flags);
SAME_FIELD(pkey_index);
SAME_FIELD(slid);
SAME_FIELD(sl);
SAME_FIELD(dlid_path_bits);

static void
test_wc_copy(void)
{
	struct drnic_wc d = {
		.wr_id = 0x1122334455667788ull, .status = DRNIC_WC_REM_ACCESS_ERR,
		.opcode = DRNIC_WC_RECV_RDMA_WITH_IMM, .vendor_err = 7, .byte_len = 4096,
		.imm_data = 0xdeadbeef, .qp_num = 0x11, .src_qp = 0x22,
		.wc_flags = DRNIC_WC_WITH_IMM | DRNIC_WC_GRH, .pkey_index = 3,
		.slid = 4, .sl = 5, .dlid_path_bits = 6,
	};
	struct ibv_wc i;

	memcpy(&i, &d, sizeof(i));
	CU_ASSERT_EQUAL(i.wr_id, d.wr_id);
	CU_ASSERT_EQUAL(i.status, IBV_WC_REM_ACCESS_ERR);
	CU_ASSERT_EQUAL(i.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	CU_ASSERT_EQUAL(i.vendor_err, 7);
	CU_ASSERT_EQUAL(i.byte_len, 4096);
	CU_ASSERT_EQUAL(i.imm_data, 0xdeadbeef);
	CU_ASSERT_EQUAL(i.qp_num, 0x11);
	CU_ASSERT_EQUAL(i.src_qp, 0x22);
	CU_ASSERT_EQUAL(i.wc_flags, IBV_WC_WITH_IMM | IBV_WC_GRH);
	CU_ASSERT_EQUAL(i.pkey_index, 3);
	CU_ASSERT_EQUAL(i.slid, 4);
	CU_ASSERT_EQUAL(i.sl, 5);
	CU_ASSERT_EQUAL(i.dlid_path_bits, 6);
}

/* Same strings as libibverbs, checked against the installed library itself. */
static void
test_strings_match_libibverbs(void)
{
	const char *(*wc_str)(enum ibv_wc_status);
	const char *(*ev_str)(enum ibv_event_type);
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	int v;

	if (h == NULL) {
		printf("libibverbs.so.1 not found (%s): skipped ", dlerror());
		return;
	}
	*(void **)&wc_str = dlsym(h, "ibv_wc_status_str");
	*(void **)&ev_str = dlsym(h, "ibv_event_type_str");
	CU_ASSERT_PTR_NOT_NULL_FATAL(wc_str);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ev_str);
	for (v = 0; v <= 30; v++)
		CU_ASSERT_STRING_EQUAL(drnic_wc_status_str((enum drnic_wc_status)v),
				wc_str((enum ibv_wc_status)v));
	for (v = 0; v <= 30; v++)
		CU_ASSERT_STRING_EQUAL(drnic_event_type_str((enum drnic_event_type)v),
				ev_str((enum ibv_event_type)v));
	dlclose(h);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("verbs_abi", NULL, NULL);
	CU_ADD_TEST(s, test_wc_copy);
	CU_ADD_TEST(s, test_strings_match_libibverbs);
	return ut_run_all();
}
