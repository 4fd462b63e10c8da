#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Per-sender summary of the RoCEv2 frames in a classic pcap (interop suite).

  roce_flows.py FILE.pcap MAC_A=NAME MAC_B=NAME ...

For each sender (by source MAC): frames, ICRCs that verify and that do not
(IPv4; the CRC as DESIGN.md states it), RC request packets, request packets
sent again with a PSN already used to the same QP (retransmissions), ACKs and
NAKs, and the opcodes seen. One line per sender:

  NAME frames=N icrc_ok=N icrc_bad=N requests=N retrans=N acks=N naks=N ops=OP:N,...
"""
import collections
import struct
import sys
import zlib

REQ = set(range(0x00, 0x0c)) | {0x0c, 0x13, 0x14, 0x16, 0x17}
NAMES = {0x00: 'SEND_FIRST', 0x01: 'SEND_MIDDLE', 0x02: 'SEND_LAST', 0x03: 'SEND_LAST_IMM',
         0x04: 'SEND_ONLY', 0x05: 'SEND_ONLY_IMM', 0x06: 'WRITE_FIRST', 0x07: 'WRITE_MIDDLE',
         0x08: 'WRITE_LAST', 0x09: 'WRITE_LAST_IMM', 0x0a: 'WRITE_ONLY', 0x0b: 'WRITE_ONLY_IMM',
         0x0c: 'READ_REQ', 0x0d: 'READ_RESP_FIRST', 0x0e: 'READ_RESP_MIDDLE',
         0x0f: 'READ_RESP_LAST', 0x10: 'READ_RESP_ONLY', 0x11: 'ACK', 0x12: 'ATOMIC_ACK',
         0x13: 'CMP_SWAP', 0x14: 'FETCH_ADD'}


def icrc_ok(fr, ip, ihl, udp, end):
    """The ICRC (last 4 bytes, LSB first) over the masked IPv4/UDP/BTH headers and the rest."""
    iph = bytearray(fr[ip:ip + ihl])
    iph[1] = 0xff                      # TOS
    iph[8] = 0xff                      # TTL
    iph[10:12] = b'\xff\xff'           # header checksum
    udph = bytearray(fr[udp:udp + 8])
    udph[6:8] = b'\xff\xff'            # UDP checksum
    ib = bytearray(fr[udp + 8:end - 4])
    ib[4] = 0xff                       # BTH reserved byte
    crc = zlib.crc32(b'\xff' * 8 + bytes(iph) + bytes(udph) + bytes(ib)) & 0xffffffff
    return struct.pack('<I', crc) == bytes(fr[end - 4:end])


def frames(path):
    with open(path, 'rb') as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            return
        endian = '<' if hdr[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            _, _, incl, _ = struct.unpack(endian + 'IIII', rec)
            yield f.read(incl)


def main():
    names = dict(a.split('=', 1) for a in sys.argv[2:])
    names = {k.lower(): v for k, v in names.items()}
    st = collections.defaultdict(lambda: collections.Counter())
    ops = collections.defaultdict(collections.Counter)
    seen = collections.defaultdict(set)
    for fr in frames(sys.argv[1]):
        if len(fr) < 14 + 20 + 8 + 12:
            continue
        src = ':'.join('%02x' % b for b in fr[6:12])
        who = names.get(src, src)
        off, etype = 12, struct.unpack('!H', fr[12:14])[0]
        if etype == 0x8100:
            off, etype = 16, struct.unpack('!H', fr[16:18])[0]
        if etype != 0x0800:
            continue
        ip = off + 2
        ihl = (fr[ip] & 0xf) * 4
        if fr[ip + 9] != 17:
            continue
        udp = ip + ihl
        if struct.unpack('!H', fr[udp + 2:udp + 4])[0] != 4791:
            continue
        sport = struct.unpack('!H', fr[udp:udp + 2])[0]
        end = ip + struct.unpack('!H', fr[ip + 2:ip + 4])[0]
        if end > len(fr):
            continue
        bth = udp + 8
        op = fr[bth]
        dqp = struct.unpack('!I', fr[bth + 4:bth + 8])[0] & 0xffffff
        psn = struct.unpack('!I', fr[bth + 8:bth + 12])[0] & 0xffffff
        st[who]['frames'] += 1
        st[who]['icrc_ok' if icrc_ok(fr, ip, ihl, udp, end) else 'icrc_bad'] += 1
        ops[who][NAMES.get(op & 0x1f, hex(op))] += 1
        if op in REQ:
            st[who]['requests'] += 1
            key = (sport, dqp, psn)
            if key in seen[who]:
                st[who]['retrans'] += 1
            seen[who].add(key)
        elif op in (0x11, 0x12):
            syn = fr[bth + 12]
            if (syn >> 5) == 3:
                st[who]['naks'] += 1
            else:
                st[who]['acks'] += 1
    for who in sorted(st):
        c = st[who]
        print('%s frames=%d icrc_ok=%d icrc_bad=%d requests=%d retrans=%d acks=%d naks=%d ops=%s' % (
            who, c['frames'], c['icrc_ok'], c['icrc_bad'], c['requests'], c['retrans'],
            c['acks'], c['naks'],
            ','.join('%s:%d' % kv for kv in sorted(ops[who].items()))))


if __name__ == '__main__':
    main()
