/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transmit staging: the frames an engine builds and where they wait before
 * they leave. Owns engine::mcache (transmit mbufs taken from the pool a
 * burst at a time), each port's staging (engine_port::tx, tx_n, tx_data,
 * hold_until_ns, and the ICRCs its builds left: tx_icrc, tx_icrc_n) and
 * the QP's frame templates (engine_qp::tmpl and its header bytes wtmpl,
 * mtu).
 *
 * The machines stage frames with engine_qp_tx() while engine_port_room()
 * says there is room; the loop flushes each port once per step
 * (engine_port_flush()). A flush of ACKs alone on a link where each burst
 * is a system call is held up to ENGINE_ACK_HOLD_NS, for data to go with.
 */
#include <string.h>

#include "engine_priv.h"

/* ------------------------------------------------------------------------ */
/* Packets                                                                  */
/* ------------------------------------------------------------------------ */

struct rte_mbuf *
engine_pkt_alloc(struct engine *eng)
{
	struct rte_mbuf *m;

	if (likely(eng->mcache_n > 0))
		return eng->mcache[--eng->mcache_n];
	if (likely(rte_pktmbuf_alloc_bulk(eng->pool, eng->mcache, ENGINE_BURST) == 0)) {
		eng->mcache_n = ENGINE_BURST - 1;
		return eng->mcache[ENGINE_BURST - 1];
	}
	/* Fewer than a burst left in the pool: one at a time, as before. */
	m = rte_pktmbuf_alloc(eng->pool);
	if (unlikely(m == NULL))
		eng->stats.nomem++;
	return m;
}

/* Stage a frame, @p icrc_left when its build left its ICRC; the caller
 * checked engine_port_room(). */
void
engine_port_tx(struct engine_port *p, struct rte_mbuf *m, bool icrc_left)
{
	p->tx_icrc[p->tx_n] = icrc_left;
	p->tx_icrc_n = (uint16_t)(p->tx_icrc_n + icrc_left);
	p->tx[p->tx_n++] = m;
}

/* Fill the ICRCs the builds of @p p's staged frames left. */
static void
engine_port_fill_icrc(struct engine_port *p)
{
	struct rte_mbuf *f[ENGINE_BURST * 4];
	uint16_t i, k = 0;

	for (i = 0; i < p->tx_n; i++) {
		if (p->tx_icrc[i]) {
			f[k++] = p->tx[i];
			p->tx_icrc[i] = false;
		}
	}
	drnic_wire_icrc_fill_burst(f, k);
	p->tx_icrc_n = 0;
}

/*
 * Send what port @p p has staged (engine thread). Frames of ACKs alone wait
 * (see engine_port::hold_until_ns): the first flush that finds them arms
 * the hold and sends nothing; the first one at or past hold_until_ns, or
 * after a data frame was staged, sends them all. What the link refuses
 * stays staged, first in line. Returns the frames sent.
 */
int
engine_port_flush(struct engine *eng, struct engine_port *p)
{
	uint16_t sent;

	if (p->tx_n == 0)
		return 0;
	if (p->tx_icrc_n > 0)
		engine_port_fill_icrc(p);
	if (!p->tx_data && p->tx_n < ENGINE_BURST && p->link->tx_hold_acks) {
		/* Only ACKs, and a burst costs a system call: they wait a
		 * while for data to go with. */
		uint64_t now = engine_step_ns(eng);

		if (p->hold_until_ns == 0) {
			p->hold_until_ns = now + ENGINE_ACK_HOLD_NS;
			return 0;
		}
		if (now < p->hold_until_ns)
			return 0;
	}
	sent = link_tx_burst(p->link, p->queue, p->tx, p->tx_n);
	eng->stats.tx_packets += sent;
	if (sent < p->tx_n)
		memmove(p->tx, p->tx + sent, (p->tx_n - sent) * sizeof(p->tx[0]));
	p->tx_n = (uint16_t)(p->tx_n - sent);
	p->hold_until_ns = 0;
	p->tx_data = p->tx_n > 0;        /* what the link refused goes first */
	return sent;
}

/* The addresses of a frame to address vector @p ah at MAC @p dmac. */
static void
engine_addr_fill(const struct drnic_device *dev, const struct drnic_ah_attr *ah,
		 const uint8_t dmac[6], struct drnic_wire_pkt *p)
{
	unsigned int sgid = ah->grh.sgid_index;

	memcpy(p->eth.dst, dmac, 6);
	if (sgid < dev->nb_gids && dev->gid_is_v4[sgid]) {
		p->ip.version = 4;
		memcpy(p->ip.src, &dev->gid[sgid].raw[12], 4);
		memcpy(p->ip.dst, &ah->grh.dgid.raw[12], 4);
	} else {
		p->ip.version = 6;
		memcpy(p->ip.src, dev->gid[sgid < dev->nb_gids ? sgid : 0].raw, 16);
		memcpy(p->ip.dst, ah->grh.dgid.raw, 16);
		p->ip.flow_label = ah->grh.flow_label;
	}
	p->ip.tos = ah->grh.traffic_class;
	p->ip.ttl = ah->grh.hop_limit != 0 ? ah->grh.hop_limit : 64;
}

/* The QP's frame template (addresses, ports, P_Key, dest QPN) from its
 * path (engine thread: when the QP is set up and on each modify). A UD
 * QP's has no destination: each send takes it from its AH. */
void
engine_qp_build_template(struct engine_qp *eq)
{
	const struct drnic_device *dev = eq->qp->dev;
	struct drnic_wire_pkt *p = &eq->tmpl;

	drnic_wire_pkt_init(p);
	memcpy(p->eth.src, dev->link->mac, 6);   /* ethdev links use the port's MAC */
	engine_addr_fill(dev, &eq->path.ah, eq->path.dmac, p);
	p->udp.sport = eq->path.udp_sport;
	p->bth.pkey = verbs_pkey_entry(eq->path.pkey_index);
	p->bth.dqpn = eq->path.dest_qp_num;
	/* engine_addr_fill() chose IP version 4 or 6: this cannot fail. */
	RTE_VERIFY(drnic_wire_tmpl_make(&eq->wtmpl, p) == 0);
}

/* UD: the frame template of a datagram from @p eq to address handle @p ah
 * (destination QPN and Q_Key are the WQE's). */
void
engine_ah_template(const struct engine_qp *eq, const struct drnic_ah *ah, struct drnic_wire_pkt *p)
{
	*p = eq->tmpl;
	engine_addr_fill(eq->qp->dev, &ah->attr, ah->attr.dmac, p);
	p->udp.sport = ah->udp_sport;
}

/* Build a frame from @p pkt and stage it on the QP's port. The machines
 * build RC's opcodes; an XRC QP sends XRC's (the same operation), with the
 * XRCETH the requester filled in. */
int
engine_qp_tx(struct engine_qp *eq, const struct drnic_wire_pkt *pkt)
{
	struct rte_mbuf *m = engine_pkt_alloc(eq->eng);
	const struct drnic_wire_pkt *b = pkt;
	struct drnic_wire_pkt xp;
	int rc;

	if (unlikely(m == NULL))
		return -ENOMEM;
	if (unlikely(eq->xrc)) {
		xp = *pkt;
		xp.bth.opcode = DRNIC_WIRE_OP_XRC_OF(pkt->bth.opcode);
		b = &xp;
	}
	/* A connected QP's frames all have its path: its header bytes are
	 * copied rather than serialized field by field again (once the
	 * template is made: a QP sends only after set-up made it). */
	if (likely(!eq->ud && eq->wtmpl.len != 0))
		rc = drnic_wire_build_tmpl(m, &eq->wtmpl, b, DRNIC_WIRE_BUILD_DEFER_ICRC);
	else
		rc = drnic_wire_build_flags(m, b, DRNIC_WIRE_BUILD_DEFER_ICRC);
	if (unlikely(rc < 0)) {
		rte_pktmbuf_free(m);
		if (rc == -ENOMEM)
			eq->eng->stats.nomem++;
		return rc;
	}
	engine_port_tx(eq->port, m, rc == 1);
	if (pkt->bth.opcode != DRNIC_WIRE_OP_RC_ACKNOWLEDGE)
		eq->port->tx_data = true;
	eq->stats.tx_packets++;
	return 0;
}
