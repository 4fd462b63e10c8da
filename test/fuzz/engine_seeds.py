#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seed corpus for fuzz_engine: one input per record kind and field fault.

Each seed is a short sequence of records in fuzz_engine.c's layout: real
traffic (kind 0: WRITE, READ, SEND, atomic, receives), forged requests to
B (kind 1) and forged responses to A (kind 3) with each 'wrong field' code,
then a mix. Deterministic: the same files on every build.

usage: engine_seeds.py OUT_DIR STAMP
"""
import os
import struct
import sys


def real(what, size=2, extra=7):
    return bytes([0, what, size, extra])


def forge(kind, op, wrong, plen=4, psn_d=0, val=0x01020304, off=0):
    return bytes([kind, op, wrong, plen, psn_d]) + struct.pack('<II', val, off)


def main():
    out, stamp = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    seeds = []
    for w in range(5):
        seeds.append(real(4) + real(w) + real(w, 8))
    for op in range(14):
        for wrong in range(13):
            seeds.append(real(4) + forge(1, op, wrong, psn_d=0x21 if op % 2 else 0))
    for op in range(6):
        for wrong in (0, 1, 6):
            seeds.append(real(0) + forge(3, 0x80 | op, wrong, psn_d=op * 9))
    seeds.append(b''.join(real(i % 5) + forge(1, i % 14, i % 13) for i in range(20)))
    seeds.append(real(1, 8) + forge(1, 11, 0) * 20 + forge(1, 9, 0, psn_d=0x40) * 12)
    seeds.append(real(4) + forge(1, 6, 0, plen=16) + forge(1, 7, 0, psn_d=0x20, plen=16)
                 + forge(1, 8, 0, psn_d=0x40, plen=16))
    for i, s in enumerate(seeds):
        with open(os.path.join(out, 'seed%03d' % i), 'wb') as f:
            f.write(s)
    with open(stamp, 'w') as f:
        f.write('%d seeds\n' % len(seeds))


if __name__ == '__main__':
    main()
