/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive: frames from each port's link queue to the QP's responder
 * (requests) or completer (responses), UD datagrams to the QP or to every
 * QP of the engine attached to the multicast group. Owns the receive
 * backlog (engine::rx_backlog, rx_backlog_loops) and the drops before a
 * machine sees a frame: not RC, UC or UD, no such QP, another engine's QP,
 * another service's QP, not from the QP's peer (address, MAC, P_Key, VLAN),
 * a datagram not to the port's MAC or its group's.
 */
#include <string.h>

#include "engine_priv.h"

/* IBA 10.9.3: the same 15-bit key, and at least one of the two a full member. */
static inline bool
engine_pkey_match(uint16_t mine, uint16_t theirs)
{
	return (mine & 0x7FFF) != 0 && (mine & 0x7FFF) == (theirs & 0x7FFF) &&
	       ((mine | theirs) & 0x8000) != 0;
}

/* The first @p n bytes of @p a and @p b differ (n: 4, 6 or 16; fixed-size
 * loads the compiler keeps inline, instead of a call to memcmp). */
static inline bool
engine_bytes_differ(const uint8_t *a, const uint8_t *b, unsigned int n)
{
	uint64_t x, y, u, v;
	uint32_t p, q;
	uint16_t h, k;

	if (n == 4) {
		memcpy(&p, a, 4);
		memcpy(&q, b, 4);
		return p != q;
	}
	if (n == 6) {
		memcpy(&p, a, 4);
		memcpy(&q, b, 4);
		memcpy(&h, a + 4, 2);
		memcpy(&k, b + 4, 2);
		return (p ^ q) | (uint32_t)(h ^ k);
	}
	memcpy(&x, a, 8);
	memcpy(&y, b, 8);
	memcpy(&u, a + 8, 8);
	memcpy(&v, b + 8, 8);
	return ((x ^ y) | (u ^ v)) != 0;
}

/*
 * Is @p pkt from the QP's peer and for this QP (IBA 9.6: the packet's
 * addresses against the QP's address vector, its P_Key against the QP's
 * entry of the port's table)? The QP's frame template holds both ends:
 * the packet must come from the template's destination IP and go to its
 * source IP, in the same IP version, to the port's MAC, untagged (drnic
 * configures no VLAN; a priority tag, VID 0, is untagged). The UDP source
 * port is entropy and is not looked at. Returns the drop reason, or
 * DRNIC_ENGINE_DROP_MAX when the packet may be acted on.
 */
static inline enum drnic_engine_drop
engine_pkt_from_peer(const struct engine_qp *eq, const struct drnic_wire_pkt *pkt)
{
	const struct drnic_wire_tmpl *t = &eq->wtmpl;
	uint8_t ver = drnic_wire_tmpl_ip_version(t);
	unsigned int alen = ver == 4 ? 4 : 16;

	if (unlikely(pkt->ip.version != ver ||
		     engine_bytes_differ(pkt->ip.src, drnic_wire_tmpl_ip_dst(t), alen) ||
		     engine_bytes_differ(pkt->ip.dst, drnic_wire_tmpl_ip_src(t), alen)))
		return DRNIC_ENGINE_DROP_BAD_ADDR;
	if (unlikely(engine_bytes_differ(pkt->eth.dst, drnic_wire_tmpl_smac(t), 6)))
		return DRNIC_ENGINE_DROP_BAD_DMAC;
	if (unlikely(!engine_pkey_match(drnic_wire_tmpl_pkey(t), pkt->bth.pkey)))
		return DRNIC_ENGINE_DROP_BAD_PKEY;
	if (unlikely(pkt->eth.has_vlan && (pkt->eth.vlan_tci & 0xFFF) != 0))
		return DRNIC_ENGINE_DROP_BAD_VLAN;
	return DRNIC_ENGINE_DROP_MAX;
}

/*
 * UD: anyone may send a datagram, so only what the frame names of this
 * end is checked: to the port's MAC (a group's datagram: the group's
 * multicast MAC, checked by the caller), the QP's P_Key, untagged.
 */
static inline enum drnic_engine_drop
engine_pkt_ud_ok(const struct engine_qp *eq, const struct drnic_wire_pkt *pkt, bool mcast)
{
	if (!mcast &&
	    unlikely(engine_bytes_differ(pkt->eth.dst, drnic_wire_tmpl_smac(&eq->wtmpl), 6)))
		return DRNIC_ENGINE_DROP_BAD_DMAC;
	if (unlikely(!engine_pkey_match(drnic_wire_tmpl_pkey(&eq->wtmpl), pkt->bth.pkey)))
		return DRNIC_ENGINE_DROP_BAD_PKEY;
	if (unlikely(pkt->eth.has_vlan && (pkt->eth.vlan_tci & 0xFFF) != 0))
		return DRNIC_ENGINE_DROP_BAD_VLAN;
	return DRNIC_ENGINE_DROP_MAX;
}

/* The destination GID of a frame (IPv4: IPv4-mapped). */
static inline void
engine_pkt_dgid(const struct drnic_wire_pkt *pkt, uint8_t gid[16])
{
	if (pkt->ip.version == 4) {
		memset(gid, 0, 10);
		gid[10] = gid[11] = 0xFF;
		memcpy(&gid[12], pkt->ip.dst, 4);
	} else {
		memcpy(gid, pkt->ip.dst, 16);
	}
}

/*
 * A datagram to a multicast group (destination QPN 0xFFFFFF, IBA
 * 10.5.2.4): to every QP of this engine attached to the group of its
 * destination IP on this port's device, each into a receive WQE of its
 * own, sent to the group's multicast MAC.
 */
static void
engine_rx_mcast(struct engine *eng, struct engine_port *p, struct rte_mbuf *m,
		const struct drnic_wire_pkt *pkt)
{
	union drnic_gid gid;
	uint8_t mac[6];
	unsigned int i, n = 0;

	if (!engine_pkt_verify(eng, m, pkt))
		return;
	engine_pkt_dgid(pkt, gid.raw);
	verbs_mcast_mac(&gid, mac);
	for (i = 0; i < eng->nb_mcast; i++) {
		const struct engine_mcast *g = &eng->mcast[i];
		struct engine_qp *e;
		enum drnic_engine_drop why;

		if (g->dev != p->dev || memcmp(g->gid, gid.raw, 16) != 0)
			continue;
		e = g->qp->eng_priv;
		if (e == NULL || e->eng != eng)
			continue;
		n++;
		e->stats.rx_packets++;
		engine_qp_sync(e);
		why = engine_bytes_differ(pkt->eth.dst, mac, 6) ? DRNIC_ENGINE_DROP_BAD_DMAC :
		      !e->resp_init ? DRNIC_ENGINE_DROP_MAX : engine_pkt_ud_ok(e, pkt, true);
		if (unlikely(why != DRNIC_ENGINE_DROP_MAX)) {
			engine_qp_drop(e, why);
			continue;
		}
		resp_ud_rx(e, m, pkt);
	}
	if (n == 0)
		eng->stats.drops[DRNIC_ENGINE_DROP_NO_MCAST]++;
}

/*
 * An XRC frame for XRC QP @p eq: an initiator (XRC_SEND) takes responses
 * only, a target (XRC_RECV) requests only. The machines work with RC's
 * opcodes: the frame's becomes RC's for the same operation (its headers,
 * the XRCETH included, were located by the parser).
 */
static inline bool
engine_rx_xrc(const struct engine_qp *eq, bool is_req, struct drnic_wire_pkt *pkt)
{
	if (is_req != (eq->qp->type == DRNIC_QPT_XRC_RECV))
		return false;
	pkt->bth.opcode &= 0x1F;
	return true;
}

/*
 * One received burst, in passes so the burst's cache misses overlap
 * instead of queueing one after another (with thousands of QPs each
 * frame's QP table slot, QP and engine state are cold): parse every frame;
 * check their ICRCs together (one short CRC after another, four sharing a
 * reduction, instead of each in the middle of its frame's parse); fetch
 * their QP table slots; look the QPs up and fetch them; fetch their engine
 * state; then run the requests and responses in arrival order.
 */
static void
engine_rx_burst(struct engine *eng, struct engine_port *p, struct rte_mbuf **m, uint16_t n)
{
	struct drnic_wire_pkt pkt[ENGINE_BURST];
	struct drnic_qp *qp[ENGINE_BURST];
	struct engine_qp *eq[ENGINE_BURST];
	bool parsed[ENGINE_BURST];
	bool is_req[ENGINE_BURST];   /* a request (responder), else a response */
	uint8_t tr[ENGINE_BURST];    /* its transport (DRNIC_WIRE_TR_*) */
	uint8_t why[ENGINE_BURST];   /* enum drnic_wire_drop */
	struct drnic_device *dev = p->dev;
	uint64_t bad_icrc;
	uint16_t j;

	RTE_BUILD_BUG_ON(ENGINE_BURST > 64);
	RTE_BUILD_BUG_ON(DRNIC_WIRE_DROP_MAX > UINT8_MAX);
	for (j = 0; j < n; j++) {
		if (j + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(m[j + 1], void *));
		why[j] = (uint8_t)drnic_wire_parse_flags(m[j], DRNIC_WIRE_PARSE_DEFER_ICRC |
							     DRNIC_WIRE_PARSE_BATCH_ICRC, &pkt[j]);
	}
	/* Every ICRC the parse left, before anything acts on a frame. */
	bad_icrc = drnic_wire_icrc_burst(m, pkt, n);
	for (j = 0; j < n; j++) {
		const struct drnic_wire_opinfo *oi;

		eq[j] = NULL;
		qp[j] = NULL;
		parsed[j] = false;
		if (unlikely(bad_icrc >> j & 1))
			why[j] = DRNIC_WIRE_DROP_BAD_ICRC;
		if (unlikely(why[j] != DRNIC_WIRE_OK)) {
			eng->stats.wire_drops[why[j]]++;
			continue;
		}
		oi = drnic_wire_opcode_info(pkt[j].bth.opcode);
		if (unlikely(oi->transport != DRNIC_WIRE_TR_RC && oi->transport != DRNIC_WIRE_TR_UC &&
			     oi->transport != DRNIC_WIRE_TR_UD && oi->transport != DRNIC_WIRE_TR_XRC)) {
			eng->stats.drops[DRNIC_ENGINE_DROP_NOT_REQUEST]++;
			continue;
		}
		tr[j] = oi->transport;
		if (unlikely(tr[j] == DRNIC_WIRE_TR_UD && pkt[j].bth.dqpn == VERBS_MCAST_QPN)) {
			engine_rx_mcast(eng, p, m[j], &pkt[j]);
			continue;
		}
		is_req[j] = (oi->flags & DRNIC_WIRE_OPF_REQUEST) != 0;
		rte_prefetch0(&dev->qp_tab[pkt[j].bth.dqpn & dev->qp_mask]);
		parsed[j] = true;
	}
	for (j = 0; j < n; j++) {
		if (!parsed[j])
			continue;
		qp[j] = verbs_qp_lookup(dev, pkt[j].bth.dqpn);
		if (unlikely(qp[j] == NULL)) {
			if (engine_pkt_verify(eng, m[j], &pkt[j]))
				eng->stats.drops[DRNIC_ENGINE_DROP_NO_QP]++;
			continue;
		}
		rte_prefetch0(&qp[j]->eng_priv);
		rte_prefetch0(&qp[j]->state);
	}
	for (j = 0; j < n; j++) {
		if (qp[j] == NULL)
			continue;
		eq[j] = qp[j]->eng_priv;
		if (eq[j] != NULL) {
			const uint8_t *e = (const uint8_t *)eq[j];

			/* Its first lines: pointers, list entries, set-up
			 * flags and the frame header bytes the peer check reads.
			 * (Fetching the responder's or completer's lines
			 * instead measured slower at 64 B.) */
			rte_prefetch0(e);
			rte_prefetch0(e + RTE_CACHE_LINE_SIZE);
			rte_prefetch0(e + RTE_CACHE_LINE_SIZE * 2);
			rte_prefetch0(e + RTE_CACHE_LINE_SIZE * 3);
		}
	}
	for (j = 0; j < n; j++) {
		struct engine_qp *e = eq[j];

		if (qp[j] == NULL)
			continue;
		if (unlikely(e == NULL || e->eng != eng)) {
			if (engine_pkt_verify(eng, m[j], &pkt[j]))
				eng->stats.drops[DRNIC_ENGINE_DROP_WRONG_ENGINE]++;
			continue;
		}
		/* A UC QP takes UC requests, a UD QP datagrams, an XRC QP XRC's
		 * (engine_rx_xrc()), an RC QP RC requests and responses. */
		if (unlikely(tr[j] != (e->ud ? DRNIC_WIRE_TR_UD : e->uc ? DRNIC_WIRE_TR_UC :
				       e->xrc ? DRNIC_WIRE_TR_XRC : DRNIC_WIRE_TR_RC) ||
			     (tr[j] == DRNIC_WIRE_TR_XRC &&
			      !engine_rx_xrc(e, is_req[j], &pkt[j])))) {
			if (engine_pkt_verify(eng, m[j], &pkt[j]))
				eng->stats.drops[DRNIC_ENGINE_DROP_NOT_REQUEST]++;
			continue;
		}
		e->stats.rx_packets++;
		engine_qp_sync(e);
		if (e->ud) {
			/* (Before RTR resp_ud_rx() drops it for the state.) */
			enum drnic_engine_drop why = e->resp_init ? engine_pkt_ud_ok(e, &pkt[j], false) :
								    DRNIC_ENGINE_DROP_MAX;

			if (unlikely(why != DRNIC_ENGINE_DROP_MAX)) {
				if (engine_pkt_verify(eng, m[j], &pkt[j]))
					engine_qp_drop(e, why);
				continue;
			}
			resp_ud_rx(e, m[j], &pkt[j]);
			continue;
		}
		/* Before the QP is set up (RTR) both machines drop it for its
		 * state; from then on only its peer reaches it. */
		if (likely(e->resp_init)) {
			enum drnic_engine_drop why = engine_pkt_from_peer(e, &pkt[j]);

			if (unlikely(why != DRNIC_ENGINE_DROP_MAX)) {
				if (engine_pkt_verify(eng, m[j], &pkt[j]))
					engine_qp_drop(e, why);
				continue;
			}
		}
		if (is_req[j])
			resp_rx(e, m[j], &pkt[j]);
		else
			comp_rx(e, m[j], &pkt[j]);
	}
}

/*
 * Free a received burst: rte_pktmbuf_free_bulk()'s work, inline (it is a
 * call into librte_mbuf, and its pool cache a TLS lookup from there).
 * One-segment frames go back to their pool in runs; a chain goes by
 * rte_pktmbuf_free().
 */
static inline void
engine_rx_free(struct rte_mbuf **m, uint16_t n)
{
	struct rte_mempool *mp = NULL;
	void *run[ENGINE_BURST];
	unsigned int k = 0;
	uint16_t j;

	for (j = 0; j < n; j++) {
		struct rte_mbuf *x = m[j];

		if (unlikely(x->nb_segs != 1)) {
			rte_pktmbuf_free(x);
			continue;
		}
		x = rte_pktmbuf_prefree_seg(x);
		if (x == NULL)
			continue;       /* still referenced */
		if (x->pool != mp && k > 0) {
			rte_mempool_put_bulk(mp, run, k);
			k = 0;
		}
		mp = x->pool;
		run[k++] = x;
	}
	if (k > 0)
		rte_mempool_put_bulk(mp, run, k);
}

/* Receive from every port (up to ENGINE_RX_BURSTS bursts each while they
 * come full) and run what came. Returns the frames received. */
int
engine_rx(struct engine *eng)
{
	struct rte_mbuf *m[ENGINE_BURST];
	unsigned int i, b, total = 0;
	bool backlog = false;
	uint16_t n;

	for (i = 0; i < eng->nb_ports; i++) {
		struct engine_port *p = &eng->port[i];

		for (b = 0; b < ENGINE_RX_BURSTS; b++) {
			n = link_rx_burst(p->link, p->queue, m, ENGINE_BURST);
			if (n > 0) {
				engine_rx_burst(eng, p, m, n);
				engine_rx_free(m, n);
			}
			total += n;
			if (n < ENGINE_BURST)
				break;
		}
		if (b == ENGINE_RX_BURSTS)
			backlog = true;
	}
	eng->stats.rx_packets += total;
	eng->rx_backlog_loops = backlog ? eng->rx_backlog_loops + 1 : 0;
	eng->rx_backlog = backlog && eng->rx_backlog_loops < ENGINE_BACKLOG_LOOPS;
	return (int)total;
}
