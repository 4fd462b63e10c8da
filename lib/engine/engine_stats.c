/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine and QP counters for users: drop reasons by name, the counters of
 * an engine and of a QP (read without the engine: a snapshot may be torn),
 * their one-line prints and a QP's transport state dump for debugging.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "engine_priv.h"

static const char *const engine_drop_names[DRNIC_ENGINE_DROP_MAX] = {
	[DRNIC_ENGINE_DROP_NO_QP] = "no_qp",
	[DRNIC_ENGINE_DROP_QP_STATE] = "qp_state",
	[DRNIC_ENGINE_DROP_WRONG_ENGINE] = "wrong_engine",
	[DRNIC_ENGINE_DROP_PSN_DUP] = "psn_dup",
	[DRNIC_ENGINE_DROP_PSN_OOS] = "psn_oos",
	[DRNIC_ENGINE_DROP_GHOST_RESP] = "ghost_resp",
	[DRNIC_ENGINE_DROP_STALE_NAK] = "stale_nak",
	[DRNIC_ENGINE_DROP_BAD_RESP] = "bad_resp",
	[DRNIC_ENGINE_DROP_RNR] = "rnr",
	[DRNIC_ENGINE_DROP_NOT_REQUEST] = "not_rc",
	[DRNIC_ENGINE_DROP_BAD_ADDR] = "bad_addr",
	[DRNIC_ENGINE_DROP_BAD_DMAC] = "bad_dmac",
	[DRNIC_ENGINE_DROP_BAD_PKEY] = "bad_pkey",
	[DRNIC_ENGINE_DROP_BAD_VLAN] = "bad_vlan",
	[DRNIC_ENGINE_DROP_DUP_RESP] = "dup_resp",
	[DRNIC_ENGINE_DROP_UC_MSG] = "uc_msg",
	[DRNIC_ENGINE_DROP_BAD_QKEY] = "bad_qkey",
	[DRNIC_ENGINE_DROP_UD_NO_WQE] = "ud_no_wqe",
	[DRNIC_ENGINE_DROP_UD_LEN] = "ud_len",
	[DRNIC_ENGINE_DROP_NO_MCAST] = "no_mcast",
};

const char *
drnic_engine_drop_name(enum drnic_engine_drop reason)
{
	if ((unsigned int)reason >= DRNIC_ENGINE_DROP_MAX)
		return "invalid";
	return engine_drop_names[reason];
}

int
drnic_engine_stats_get(struct drnic_device *dev, unsigned int index,
		       struct drnic_engine_stats *stats)
{
	struct engine *eng;

	if (dev == NULL || stats == NULL || index >= dev->nb_engines)
		return -EINVAL;
	eng = dev->eng[index].engine;
	*stats = eng->stats;
	return 0;
}

void
drnic_device_stats_print(struct drnic_device *dev, const char *prefix, FILE *f)
{
	struct drnic_engine_stats es;
	struct drnic_link_stats ls;
	unsigned int e, i;

	if (dev == NULL || f == NULL)
		return;
	for (e = 0; drnic_engine_stats_get(dev, e, &es) == 0; e++) {
		fprintf(f, "%sstats %s engine %u: loops %" PRIu64 " (busy %" PRIu64 "), rx %" PRIu64
			", tx %" PRIu64 ", doorbells %" PRIu64 ", wqes %" PRIu64 ", cqes %" PRIu64
			", nomem %" PRIu64, prefix ? prefix : "", drnic_device_name(dev), e,
			es.loops, es.busy_loops, es.rx_packets, es.tx_packets, es.doorbells, es.wqes,
			es.cqes, es.nomem);
		if (es.busy_cycles + es.idle_cycles > 0)
			fprintf(f, ", busy %.1f%% of %.1f ms (%.1f ns a WQE)",
				100.0 * (double)es.busy_cycles /
					(double)(es.busy_cycles + es.idle_cycles),
				1e3 * (double)(es.busy_cycles + es.idle_cycles) /
					(double)rte_get_tsc_hz(),
				es.wqes == 0 ? 0.0 : 1e9 * (double)es.busy_cycles /
					(double)rte_get_tsc_hz() / (double)es.wqes);
		for (i = 0; i < DRNIC_ENGINE_DROP_MAX; i++)
			if (es.drops[i])
				fprintf(f, ", %s %" PRIu64, drnic_engine_drop_name(i), es.drops[i]);
		if (es.replays | es.replays_limited | es.naks_limited)
			fprintf(f, ", replays %" PRIu64 " (limited %" PRIu64 "), naks limited %"
				PRIu64, es.replays, es.replays_limited, es.naks_limited);
		for (i = 0; i < DRNIC_WIRE_DROP_MAX; i++)
			if (es.wire_drops[i])
				fprintf(f, ", wire %s %" PRIu64, drnic_wire_drop_name(i),
					es.wire_drops[i]);
		fprintf(f, "\n");
	}
	if (drnic_link_stats_get(drnic_device_link(dev), &ls) == 0) {
		fprintf(f, "%sstats %s link: tx %" PRIu64 " rx %" PRIu64 " busy %" PRIu64,
			prefix ? prefix : "", drnic_device_name(dev), ls.tx_packets, ls.rx_packets,
			ls.tx_busy);
		for (i = 0; i < DRNIC_LINK_DROP_MAX; i++)
			if (ls.drops[i])
				fprintf(f, ", %s %" PRIu64, drnic_link_drop_name(i), ls.drops[i]);
		fprintf(f, "\n");
	}
	/* The process's registered memory with a mapping of its own. */
	{
		struct mr_pin_stats ps;

		mr_pin_stats_get(&ps);
		fprintf(f, "%sstats mr pin: windows %" PRIu64 ", ranges moved %" PRIu64 " (%" PRIu64
			" bytes), not pinned %" PRIu64 "\n", prefix ? prefix : "", ps.windows,
			ps.moves, ps.bytes_moved, ps.unpinned);
	}
}

void
drnic_qp_stats_print(const struct drnic_qp *qp, const char *prefix, FILE *f)
{
	struct drnic_qp_stats st;
	unsigned int i;

	if (qp == NULL || f == NULL || drnic_qp_stats_get(qp, &st) != 0)
		return;
	fprintf(f, "%sqp %u: tx %" PRIu64 " rx %" PRIu64 " wqes %" PRIu64 " acks %" PRIu64
		" naks rx %" PRIu64 " tx %" PRIu64 " retransmits %" PRIu64 " (early %" PRIu64
		") timeouts %" PRIu64 " rnr naks %" PRIu64 " cwnd %u srtt %" PRIu64 " ns",
		prefix ? prefix : "", qp->qp_num, st.tx_packets, st.rx_packets, st.wqes,
		st.acks_rx, st.naks_rx, st.naks_tx, st.retransmits, st.early_retransmits,
		st.timeouts, st.rnr_naks_rx, st.cwnd, st.srtt_ns);
	if (st.replays | st.replays_limited | st.naks_limited)
		fprintf(f, " replays %" PRIu64 " (limited %" PRIu64 ") naks limited %" PRIu64,
			st.replays, st.replays_limited, st.naks_limited);
	for (i = 0; i < DRNIC_ENGINE_DROP_MAX; i++)
		if (st.drops[i])
			fprintf(f, ", %s %" PRIu64, drnic_engine_drop_name(i), st.drops[i]);
	fprintf(f, "\n");
}

void
drnic_qp_dump(const struct drnic_qp *qp, FILE *f)
{
	const struct engine_qp *eq;

	if (qp == NULL || f == NULL)
		return;
	eq = qp->eng_priv;
	fprintf(f, "qp#%u %s sq prod %u cons %u, rq prod %u cons %u, db %u\n", qp->qp_num,
		drnic_qp_state_str(verbs_qp_state(qp)), atomic_load(&qp->sq.prod),
		atomic_load(&qp->sq.cons), atomic_load(&qp->rq.prod), atomic_load(&qp->rq.cons),
		atomic_load(&qp->sq.db));
	if (eq == NULL)
		return;
	fprintf(f, "  req %s idx %u off %u npsn %u rd_out %u retry_left %u rnr_left %u"
		" retry_deadline %" PRIu64 " rnr_deadline %" PRIu64 " (now %" PRIu64 ")"
		" on_active %d timer %d@%" PRIu64 "\n",
		req_state_names[eq->req.state], eq->req.idx, eq->req.off, eq->req.npsn,
		eq->req.rd_outstanding, eq->rec.retry_left, eq->rec.rnr_retry_left,
		eq->rec.retry_deadline_ns, eq->rec.rnr_deadline_ns, engine_now_ns(eq->eng),
		eq->on_active, eq->tmr.armed, eq->tmr.deadline_ns);
	fprintf(f, "  comp %s idx %u acked %u (%d) cwnd %u ssthresh %u inflight %u"
		" srtt %" PRIu64 " probe_deadline %" PRIu64 "\n", comp_state_names[eq->comp.state],
		eq->comp.idx, eq->comp.acked_psn, eq->comp.any_acked, eq->rec.cwnd,
		eq->rec.ssthresh, engine_inflight(eq), eq->rec.srtt_ns, eq->rec.probe_deadline_ns);
	if (eq->comp.idx != eq->req.idx || eq->req.off > 0) {
		const struct verbs_send_wqe *w = engine_sq_wqe(eq, eq->comp.idx);

		fprintf(f, "  oldest WQE op %u len %u psn %u..%u state %u rd_next %u\n", w->opcode,
			w->length, w->first_psn, w->last_psn, w->state, w->rd_next);
	}
	fprintf(f, "  resp %s epsn %u msn %u rq_idx %u ack_pending %d syn 0x%x psn %u"
		" nak_seq_sent %d rtx %u..%u\n", resp_state_names[eq->resp.state], eq->resp.epsn,
		eq->resp.msn, eq->resp.rq_idx, eq->resp.ack_pending, eq->resp.ack_syn,
		eq->resp.ack_psn, eq->resp.nak_seq_sent, eq->resp.rtx_head, eq->resp.rtx_tail);
}

int
drnic_qp_stats_get(const struct drnic_qp *qp, struct drnic_qp_stats *stats)
{
	const struct engine_qp *eq;

	if (qp == NULL || stats == NULL)
		return -EINVAL;
	eq = qp->eng_priv;
	if (eq == NULL) {
		memset(stats, 0, sizeof(*stats));
		return 0;
	}
	*stats = eq->stats;
	/* The live transport state (read without the engine: may be torn). */
	stats->next_psn = eq->req.npsn;
	stats->expected_psn = eq->resp.epsn;
	stats->acked_psn = eq->comp.any_acked ? eq->comp.acked_psn : drnic_psn_sub(eq->req.npsn, 1);
	stats->cwnd = eq->rec.cwnd;
	stats->srtt_ns = eq->rec.srtt_ns;
	return 0;
}
