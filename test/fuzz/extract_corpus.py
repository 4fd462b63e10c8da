#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seed corpus for fuzz_wire_parse from RoCEv2 captures.

Reads every classic pcap (Ethernet link type) under the capture directories,
keeps the frames that are UDP to port 4791 over IPv4 or IPv6 (after at most
one 802.1Q tag), and writes each as a corpus file: one shape byte (see
fuzz_wire_parse.c: 0 = one segment; 1 and 2 = two and three segments cut in
the middle) followed by the frame. Identical inputs are written once. The
captures are only read; nothing is copied into the source tree.

usage: extract_corpus.py OUT_DIR CAPTURE_DIR... [--stamp FILE]
"""
import hashlib
import os
import struct
import sys

ROCE_PORT = 4791
# shape bytes: one segment; two and three segments with cuts at 3/6 and 3/6 of the rest
SHAPES = (0, 1 + 3 * (2 * (3 + 7 * 3)), 2 + 3 * (2 * (3 + 7 * 3)))


def pcap_frames(path):
    """Yield the Ethernet frames of a classic pcap file."""
    with open(path, 'rb') as f:
        head = f.read(24)
        if len(head) < 24:
            return
        magic = head[:4]
        if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
            endian = '<'
        elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
            endian = '>'
        else:
            return  # pcapng or not a capture: not needed for the seeds
        linktype = struct.unpack(endian + 'I', head[20:24])[0] & 0x0FFFFFFF
        if linktype != 1:
            return
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            _, _, incl, _ = struct.unpack(endian + 'IIII', rec)
            data = f.read(incl)
            if len(data) < incl:
                return
            yield data


def is_rocev2(frame):
    off = 12
    if len(frame) < off + 2:
        return False
    etype = struct.unpack('>H', frame[off:off + 2])[0]
    off += 2
    if etype == 0x8100:
        if len(frame) < off + 4:
            return False
        etype = struct.unpack('>H', frame[off + 2:off + 4])[0]
        off += 4
    if etype == 0x0800:
        if len(frame) < off + 20 or frame[off + 9] != 17:
            return False
        off += (frame[off] & 0x0F) * 4
    elif etype == 0x86DD:
        if len(frame) < off + 40 or frame[off + 6] != 17:
            return False
        off += 40
    else:
        return False
    if len(frame) < off + 8:
        return False
    return struct.unpack('>H', frame[off + 2:off + 4])[0] == ROCE_PORT


def main(argv):
    stamp = None
    if '--stamp' in argv:
        i = argv.index('--stamp')
        stamp = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    out, dirs = argv[0], argv[1:]
    os.makedirs(out, exist_ok=True)
    files = []
    for d in dirs:
        for root, _, names in os.walk(d):
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith('.pcap')]
    written = frames = 0
    for path in sorted(files):
        for frame in pcap_frames(path):
            if not is_rocev2(frame):
                continue
            frames += 1
            for shape in SHAPES:
                data = bytes([shape]) + frame
                name = os.path.join(out, hashlib.sha1(data).hexdigest())
                if not os.path.exists(name):
                    with open(name, 'wb') as f:
                        f.write(data)
                    written += 1
    if frames == 0:
        # No captures here: one synthetic seed keeps the fuzzer runnable.
        with open(os.path.join(out, 'empty-eth'), 'wb') as f:
            f.write(bytes([0]) + bytes(12) + b'\x08\x00')
        print('extract_corpus: no RoCEv2 frames found under %s; fuzzing from one '
              'synthetic seed' % ', '.join(dirs))
    else:
        print('extract_corpus: %d RoCEv2 frames from %d captures, %d new corpus files in %s'
              % (frames, len(files), written, out))
    if stamp:
        with open(stamp, 'w') as f:
            f.write('%d\n' % frames)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
