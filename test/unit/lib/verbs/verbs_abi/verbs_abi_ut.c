/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drnic_verbs.h against libibverbs' verbs.h: every enum value the same
 * number, and the work-request and address structures with the same field
 * offsets, so a libibverbs provider on top converts by copy or by cast.
 * Checked at compile time; the test binary only reports it ran.
 */
#include <assert.h>
#include <stddef.h>

#include <infiniband/verbs.h>

#include "drnic_verbs.h"
#include "ut_common.h"

#define SAME(a, b) static_assert((long)(a) == (long)(b), #a " != " #b)
#define SAME_OFF(ta, fa, tb, fb) \
	static_assert(offsetof(ta, fa) == offsetof(tb, fb), #ta "." #fa " offset")
#define SAME_SIZE(ta, tb) static_assert(sizeof(ta) == sizeof(tb), "sizeof " #ta)

/* Work request opcodes and flags. */
SAME(DRNIC_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE);
SAME(DRNIC_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM);
SAME(DRNIC_WR_SEND, IBV_WR_SEND);
SAME(DRNIC_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM);
SAME(DRNIC_WR_RDMA_READ, IBV_WR_RDMA_READ);
SAME(DRNIC_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP);
SAME(DRNIC_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD);
SAME(DRNIC_SEND_FENCE, IBV_SEND_FENCE);
SAME(DRNIC_SEND_SIGNALED, IBV_SEND_SIGNALED);
SAME(DRNIC_SEND_SOLICITED, IBV_SEND_SOLICITED);
SAME(DRNIC_SEND_INLINE, IBV_SEND_INLINE);

/* Access flags. */
SAME(DRNIC_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE);
SAME(DRNIC_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_WRITE);
SAME(DRNIC_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_READ);
SAME(DRNIC_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_REMOTE_ATOMIC);
SAME(DRNIC_ACCESS_MW_BIND, IBV_ACCESS_MW_BIND);

/* QP types, states, attribute mask. */
SAME(DRNIC_QPT_RC, IBV_QPT_RC);
SAME(DRNIC_QPT_UC, IBV_QPT_UC);
SAME(DRNIC_QPT_UD, IBV_QPT_UD);
SAME(DRNIC_QPS_RESET, IBV_QPS_RESET);
SAME(DRNIC_QPS_INIT, IBV_QPS_INIT);
SAME(DRNIC_QPS_RTR, IBV_QPS_RTR);
SAME(DRNIC_QPS_RTS, IBV_QPS_RTS);
SAME(DRNIC_QPS_SQD, IBV_QPS_SQD);
SAME(DRNIC_QPS_SQE, IBV_QPS_SQE);
SAME(DRNIC_QPS_ERR, IBV_QPS_ERR);
SAME(DRNIC_QPS_UNKNOWN, IBV_QPS_UNKNOWN);
SAME(DRNIC_MIG_MIGRATED, IBV_MIG_MIGRATED);
SAME(DRNIC_MIG_REARM, IBV_MIG_REARM);
SAME(DRNIC_MIG_ARMED, IBV_MIG_ARMED);
SAME(DRNIC_QP_STATE, IBV_QP_STATE);
SAME(DRNIC_QP_CUR_STATE, IBV_QP_CUR_STATE);
SAME(DRNIC_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_EN_SQD_ASYNC_NOTIFY);
SAME(DRNIC_QP_ACCESS_FLAGS, IBV_QP_ACCESS_FLAGS);
SAME(DRNIC_QP_PKEY_INDEX, IBV_QP_PKEY_INDEX);
SAME(DRNIC_QP_PORT, IBV_QP_PORT);
SAME(DRNIC_QP_QKEY, IBV_QP_QKEY);
SAME(DRNIC_QP_AV, IBV_QP_AV);
SAME(DRNIC_QP_PATH_MTU, IBV_QP_PATH_MTU);
SAME(DRNIC_QP_TIMEOUT, IBV_QP_TIMEOUT);
SAME(DRNIC_QP_RETRY_CNT, IBV_QP_RETRY_CNT);
SAME(DRNIC_QP_RNR_RETRY, IBV_QP_RNR_RETRY);
SAME(DRNIC_QP_RQ_PSN, IBV_QP_RQ_PSN);
SAME(DRNIC_QP_MAX_QP_RD_ATOMIC, IBV_QP_MAX_QP_RD_ATOMIC);
SAME(DRNIC_QP_ALT_PATH, IBV_QP_ALT_PATH);
SAME(DRNIC_QP_MIN_RNR_TIMER, IBV_QP_MIN_RNR_TIMER);
SAME(DRNIC_QP_SQ_PSN, IBV_QP_SQ_PSN);
SAME(DRNIC_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC);
SAME(DRNIC_QP_PATH_MIG_STATE, IBV_QP_PATH_MIG_STATE);
SAME(DRNIC_QP_CAP, IBV_QP_CAP);
SAME(DRNIC_QP_DEST_QPN, IBV_QP_DEST_QPN);
SAME(DRNIC_QP_RATE_LIMIT, IBV_QP_RATE_LIMIT);

/* Ports. */
SAME(DRNIC_MTU_256, IBV_MTU_256);
SAME(DRNIC_MTU_1024, IBV_MTU_1024);
SAME(DRNIC_MTU_4096, IBV_MTU_4096);
SAME(DRNIC_PORT_DOWN, IBV_PORT_DOWN);
SAME(DRNIC_PORT_ACTIVE, IBV_PORT_ACTIVE);
SAME(DRNIC_PORT_ACTIVE_DEFER, IBV_PORT_ACTIVE_DEFER);
SAME(DRNIC_LINK_LAYER_ETHERNET, IBV_LINK_LAYER_ETHERNET);
SAME(DRNIC_LINK_LAYER_INFINIBAND, IBV_LINK_LAYER_INFINIBAND);
SAME(DRNIC_ATOMIC_HCA, IBV_ATOMIC_HCA);
SAME(DRNIC_ATOMIC_GLOB, IBV_ATOMIC_GLOB);

/* Structures: same offsets for every field they share. */
SAME_SIZE(struct drnic_sge, struct ibv_sge);
SAME_OFF(struct drnic_sge, addr, struct ibv_sge, addr);
SAME_OFF(struct drnic_sge, length, struct ibv_sge, length);
SAME_OFF(struct drnic_sge, lkey, struct ibv_sge, lkey);
SAME_SIZE(struct drnic_recv_wr, struct ibv_recv_wr);
SAME_OFF(struct drnic_recv_wr, wr_id, struct ibv_recv_wr, wr_id);
SAME_OFF(struct drnic_recv_wr, next, struct ibv_recv_wr, next);
SAME_OFF(struct drnic_recv_wr, sg_list, struct ibv_recv_wr, sg_list);
SAME_OFF(struct drnic_recv_wr, num_sge, struct ibv_recv_wr, num_sge);
SAME_OFF(struct drnic_send_wr, wr_id, struct ibv_send_wr, wr_id);
SAME_OFF(struct drnic_send_wr, next, struct ibv_send_wr, next);
SAME_OFF(struct drnic_send_wr, sg_list, struct ibv_send_wr, sg_list);
SAME_OFF(struct drnic_send_wr, num_sge, struct ibv_send_wr, num_sge);
SAME_OFF(struct drnic_send_wr, opcode, struct ibv_send_wr, opcode);
SAME_OFF(struct drnic_send_wr, send_flags, struct ibv_send_wr, send_flags);
SAME_OFF(struct drnic_send_wr, imm_data, struct ibv_send_wr, imm_data);
SAME_OFF(struct drnic_send_wr, wr.rdma.remote_addr, struct ibv_send_wr, wr.rdma.remote_addr);
SAME_OFF(struct drnic_send_wr, wr.rdma.rkey, struct ibv_send_wr, wr.rdma.rkey);
SAME_OFF(struct drnic_send_wr, wr.atomic.remote_addr, struct ibv_send_wr, wr.atomic.remote_addr);
SAME_OFF(struct drnic_send_wr, wr.atomic.compare_add, struct ibv_send_wr, wr.atomic.compare_add);
SAME_OFF(struct drnic_send_wr, wr.atomic.swap, struct ibv_send_wr, wr.atomic.swap);
SAME_OFF(struct drnic_send_wr, wr.atomic.rkey, struct ibv_send_wr, wr.atomic.rkey);
SAME_OFF(struct drnic_send_wr, invalidate_rkey, struct ibv_send_wr, invalidate_rkey);
SAME_OFF(struct drnic_send_wr, wr.ud.ah, struct ibv_send_wr, wr.ud.ah);
SAME_OFF(struct drnic_send_wr, wr.ud.remote_qpn, struct ibv_send_wr, wr.ud.remote_qpn);
SAME_OFF(struct drnic_send_wr, wr.ud.remote_qkey, struct ibv_send_wr, wr.ud.remote_qkey);
SAME_OFF(struct drnic_send_wr, qp_type.xrc.remote_srqn, struct ibv_send_wr, qp_type.xrc.remote_srqn);
SAME_OFF(struct drnic_send_wr, bind_mw.mw, struct ibv_send_wr, bind_mw.mw);
SAME_OFF(struct drnic_send_wr, bind_mw.rkey, struct ibv_send_wr, bind_mw.rkey);
SAME_OFF(struct drnic_send_wr, bind_mw.bind_info.mr, struct ibv_send_wr, bind_mw.bind_info.mr);
SAME_OFF(struct drnic_send_wr, bind_mw.bind_info.addr, struct ibv_send_wr, bind_mw.bind_info.addr);
SAME_OFF(struct drnic_send_wr, bind_mw.bind_info.length, struct ibv_send_wr, bind_mw.bind_info.length);
SAME_OFF(struct drnic_send_wr, bind_mw.bind_info.mw_access_flags, struct ibv_send_wr,
	 bind_mw.bind_info.mw_access_flags);
SAME_SIZE(struct drnic_send_wr, struct ibv_send_wr);
SAME_SIZE(struct drnic_mw_bind_info, struct ibv_mw_bind_info);
SAME(DRNIC_WR_LOCAL_INV, IBV_WR_LOCAL_INV);
SAME(DRNIC_WR_BIND_MW, IBV_WR_BIND_MW);
SAME(DRNIC_WR_SEND_WITH_INV, IBV_WR_SEND_WITH_INV);
SAME(DRNIC_WR_ATOMIC_WRITE, IBV_WR_ATOMIC_WRITE);
SAME(DRNIC_QPT_XRC_SEND, IBV_QPT_XRC_SEND);
SAME(DRNIC_QPT_XRC_RECV, IBV_QPT_XRC_RECV);
SAME_SIZE(struct drnic_qp_cap, struct ibv_qp_cap);
SAME_OFF(struct drnic_qp_cap, max_send_wr, struct ibv_qp_cap, max_send_wr);
SAME_OFF(struct drnic_qp_cap, max_recv_wr, struct ibv_qp_cap, max_recv_wr);
SAME_OFF(struct drnic_qp_cap, max_send_sge, struct ibv_qp_cap, max_send_sge);
SAME_OFF(struct drnic_qp_cap, max_recv_sge, struct ibv_qp_cap, max_recv_sge);
SAME_OFF(struct drnic_qp_cap, max_inline_data, struct ibv_qp_cap, max_inline_data);
SAME_SIZE(union drnic_gid, union ibv_gid);
SAME_SIZE(struct drnic_global_route, struct ibv_global_route);
SAME_OFF(struct drnic_global_route, flow_label, struct ibv_global_route, flow_label);
SAME_OFF(struct drnic_global_route, sgid_index, struct ibv_global_route, sgid_index);
SAME_OFF(struct drnic_global_route, hop_limit, struct ibv_global_route, hop_limit);
SAME_OFF(struct drnic_global_route, traffic_class, struct ibv_global_route, traffic_class);
SAME_OFF(struct drnic_ah_attr, dlid, struct ibv_ah_attr, dlid);
SAME_OFF(struct drnic_ah_attr, sl, struct ibv_ah_attr, sl);
SAME_OFF(struct drnic_ah_attr, is_global, struct ibv_ah_attr, is_global);
SAME_OFF(struct drnic_ah_attr, port_num, struct ibv_ah_attr, port_num);
SAME_OFF(struct drnic_qp_init_attr, qp_context, struct ibv_qp_init_attr, qp_context);
SAME_OFF(struct drnic_qp_init_attr, send_cq, struct ibv_qp_init_attr, send_cq);
SAME_OFF(struct drnic_qp_init_attr, recv_cq, struct ibv_qp_init_attr, recv_cq);
SAME_OFF(struct drnic_qp_init_attr, srq, struct ibv_qp_init_attr, srq);
SAME_OFF(struct drnic_qp_init_attr, cap, struct ibv_qp_init_attr, cap);
SAME_OFF(struct drnic_qp_init_attr, qp_type, struct ibv_qp_init_attr, qp_type);
SAME_OFF(struct drnic_qp_init_attr, sq_sig_all, struct ibv_qp_init_attr, sq_sig_all);

static void
test_abi(void)
{
	/* The checks above are static; this records that they compiled. */
	CU_ASSERT_EQUAL(sizeof(struct drnic_sge), 16);
	CU_ASSERT_EQUAL(offsetof(struct drnic_send_wr, wr), offsetof(struct ibv_send_wr, wr));
}

int
main(void)
{
	CU_pSuite s;

	CU_initialize_registry();
	s = CU_add_suite("verbs_abi", NULL, NULL);
	CU_ADD_TEST(s, test_abi);
	return ut_run_all();
}
