#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""drnic-perf's machine-readable output, read the way a user's script reads it.

Runs drnic-perf (loopback, small runs) with --json and --out DIR, then checks:
- stdout is one JSON document and nothing else (the tables, the "wrote"
  lines and gnuplot's messages go to stderr);
- results.json, latency.csv, bandwidth.csv, floors.csv and compare.csv parse
  with Python's json and csv modules, every row has the header's columns;
- the CSV rows carry the same figures as the JSON (and as stdout's JSON);
- the figures agree with each other: t_min <= t_typical <= p99 <= p99.9 <=
  t_max, the iterations asked for, BW average = rate x size (MB = 2^20
  bytes, as perftest), the QP counts of a scale run;
- with gnuplot installed (the README's set-up installs it), the two PNGs
  exist and are PNG files;
- -c UC and -c UD (and --srq) runs: the transport in the table's title, the
  figure in the JSON, a UC/UD SEND receiver's count; what UD cannot do is
  refused; qp_scale --srq's rows, memory per QP and comparisons.

Usage: check_report.py PATH/TO/drnic-perf
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


def run(perf, args, out_dir):
    cmd = [perf] + args + ["--json", "--out", out_dir]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300, text=True)
    if p.returncode != 0:
        print(p.stderr[-2000:])
        sys.exit("FAIL: %s exited %d" % (" ".join(cmd), p.returncode))
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        sys.exit("FAIL: %s: stdout is not one JSON document (%s): %r"
                 % (" ".join(args), e, p.stdout[:200]))
    return doc, p.stderr


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    check(len(rows) >= 1, "%s: no header" % path)
    hdr = rows[0]
    for i, r in enumerate(rows[1:], 2):
        check(len(r) == len(hdr), "%s line %d: %d fields, header has %d: %r"
              % (path, i, len(r), len(hdr), r))
    return [dict(zip(hdr, r)) for r in rows[1:]]


def close(a, b, rel=1e-3, abs_=1e-3):
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def check_files(d, doc, what):
    with open(os.path.join(d, "results.json")) as f:
        file_doc = json.load(f)
    check(file_doc == doc, "%s: results.json differs from stdout's JSON" % what)
    lat = read_csv(os.path.join(d, "latency.csv"))
    bw = read_csv(os.path.join(d, "bandwidth.csv"))
    read_csv(os.path.join(d, "floors.csv"))
    read_csv(os.path.join(d, "compare.csv"))
    check(len(lat) == len(doc["latency"]), "%s: latency.csv has %d rows, JSON %d"
          % (what, len(lat), len(doc["latency"])))
    for c, j in zip(lat, doc["latency"]):
        check(c["test"] == j["test"] and int(c["bytes"]) == j["bytes"],
              "%s: latency row %r against %r" % (what, c, j))
        for k in ("t_min_us", "t_typical_us", "p99_us", "t_max_us"):
            check(close(float(c[k]), j[k]), "%s: latency %s %s in CSV, %s in JSON"
                  % (what, k, c[k], j[k]))
    check(len(bw) == len(doc["bandwidth"]), "%s: bandwidth.csv has %d rows, JSON %d"
          % (what, len(bw), len(doc["bandwidth"])))
    for c, j in zip(bw, doc["bandwidth"]):
        check(c["test"] == j["test"] and c["variant"] == j["variant"] and
              int(c["qps"]) == j["qps"], "%s: bandwidth row %r against %r" % (what, c, j))
        check(close(float(c["msg_rate_Mpps"]), j["msg_rate_Mpps"], abs_=1e-6),
              "%s: msg rate %s in CSV, %s in JSON" % (what, c["msg_rate_Mpps"],
                                                      j["msg_rate_Mpps"]))
    if shutil.which("gnuplot"):
        # A plot for what was measured, none for what was not (scale rows
        # are not a size sweep and are not plotted).
        sweep = [b for b in doc["bandwidth"] if not b["variant"].startswith("scale")]
        for png, want in (("latency.png", bool(doc["latency"])),
                          ("bandwidth.png", bool(sweep or doc["memcpy"]))):
            p = os.path.join(d, png)
            ok = os.path.exists(p)
            if ok:
                with open(p, "rb") as f:
                    ok = f.read(8) == b"\x89PNG\r\n\x1a\n"
            check(ok == want, "%s: %s %s" % (what, png, "missing or not a PNG" if want
                                              else "written with nothing to plot"))
    return lat, bw


def main():
    perf = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="drnic-perf-report.")
    try:
        # Latency: perftest's columns, in order.
        d = os.path.join(tmp, "lat")
        doc, err = run(perf, ["write_lat", "-n", "2000"], d)
        check(doc["info"]["command"] == "write_lat", "write_lat: info.command %r"
              % doc["info"]["command"])
        check(len(doc["latency"]) == 1, "write_lat: %d latency entries"
              % len(doc["latency"]))
        check_files(d, doc, "write_lat")
        for e in doc["latency"]:
            check(e["test"] == "write_lat" and e["bytes"] == 2 and e["iterations"] == 2000,
                  "write_lat entry %r" % e)
            seq = [e["t_min_us"], e["t_typical_us"], e["p99_us"], e["p99_9_us"],
                   e["t_max_us"]]
            check(all(seq[i] <= seq[i + 1] for i in range(len(seq) - 1)) and seq[0] > 0,
                  "write_lat: min <= typical <= p99 <= p99.9 <= max: %r" % seq)
            check(e["t_min_us"] <= e["t_avg_us"] <= e["t_max_us"],
                  "write_lat: average %r outside min..max" % e["t_avg_us"])
        check("#bytes #iterations" in err and "99.9% percentile[usec]" in err,
              "write_lat: perftest's table header not on stderr")

        # Bandwidth: BW average is the rate times the size, in MB of 2^20.
        d = os.path.join(tmp, "bw")
        doc, err = run(perf, ["write_bw", "-s", "4096", "-n", "20000"], d)
        check(len(doc["bandwidth"]) == 1, "write_bw: %d entries" % len(doc["bandwidth"]))
        check_files(d, doc, "write_bw")
        for e in doc["bandwidth"]:
            check(e["bytes"] == 4096 and e["iterations"] == 20000 and e["qps"] == 1,
                  "write_bw entry %r" % e)
            check(e["msg_rate_Mpps"] > 0 and
                  close(e["bw_avg_MBps"], e["msg_rate_Mpps"] * 1e6 * 4096 / 1048576, rel=2e-3),
                  "write_bw: BW average %r MB/s is not %r Mpps x 4096 B"
                  % (e["bw_avg_MBps"], e["msg_rate_Mpps"]))
            check(e["bw_peak_MBps"] >= e["bw_avg_MBps"] * 0.999,
                  "write_bw: peak %r below average %r" % (e["bw_peak_MBps"], e["bw_avg_MBps"]))
        check("BW average[MB/sec]" in err and "MsgRate[Mpps]" in err,
              "write_bw: perftest's table header not on stderr")

        # A scale run: variants with commas in them, QP counts, memory per QP.
        d = os.path.join(tmp, "scale")
        doc, err = run(perf, ["scale", "-q", "8", "--msgs", "40000"], d)
        check_files(d, doc, "scale")
        variants = sorted(e["variant"] for e in doc["bandwidth"])
        check(variants == ["scale, one CQ", "scale, window, one CQ"],
              "scale: variants %r" % variants)
        for e in doc["bandwidth"]:
            check(e["qps"] == 8 and e["bytes"] == 64 and e["msg_rate_Mpps"] > 0 and
                  e["bytes_per_qp"] > 0, "scale entry %r" % e)

        # UC and UD (-c): the transport named in the table's title, the
        # figure in the JSON, UC/UD SEND receivers' counts; WRITE on UD and
        # a datagram above the MTU refused with a message.
        for args, test, kind, title in (
                (["send_lat", "-c", "UD", "-n", "1000"], "send_lat", "latency",
                 "Send Latency Test (UD, loopback"),
                (["send_lat", "-c", "UC", "-n", "1000"], "send_lat", "latency",
                 "Send Latency Test (UC, loopback"),
                (["write_lat", "-c", "UC", "-n", "1000"], "write_lat", "latency",
                 "RDMA_Write Latency Test (UC, loopback"),
                (["send_bw", "-c", "UD", "-n", "2000", "-s", "1024"], "send_bw", "bandwidth",
                 "Send BW Test (UD, loopback"),
                (["send_bw", "-c", "UC", "-n", "2000", "-s", "8192", "-q", "2"], "send_bw",
                 "bandwidth", "Send BW Test (UC, loopback"),
                (["send_bw", "-c", "UD", "-n", "2000", "-s", "64", "--srq"], "send_bw",
                 "bandwidth", "Send BW Test (UD with SRQ, loopback")):
            what = " ".join(args)
            d = os.path.join(tmp, "t%d" % len(os.listdir(tmp)))
            doc, err = run(perf, args, d)
            check(title in err, "%s: no '%s' title on stderr" % (what, title))
            rows = doc[kind]
            check(len(rows) == 1 and rows[0]["test"] == test and
                  rows[0]["iterations"] == int(args[args.index("-n") + 1]),
                  "%s: %s entries %r" % (what, kind, rows))
            if rows and kind == "latency":
                check(0 < rows[0]["t_min_us"] <= rows[0]["t_typical_us"] <= rows[0]["t_max_us"],
                      "%s: latency %r" % (what, rows[0]))
            if rows and kind == "bandwidth":
                check(rows[0]["msg_rate_Mpps"] > 0, "%s: no message rate" % what)
            if test == "send_bw":
                n = int(args[args.index("-n") + 1]) * (int(args[args.index("-q") + 1])
                                                       if "-q" in args else 1)
                check(": the receiver took %d of the %d messages sent" % (n, n) in err,
                      "%s: the receiver's count is not all %d messages: %r"
                      % (what, n, [l for l in err.splitlines() if "receiver took" in l]))
        for args, msg in ((["write_bw", "-c", "UD", "-n", "10"], "UD has SEND only"),
                          (["send_lat", "-c", "UD", "-s", "8192", "-n", "10"],
                           "above the port's MTU 4096")):
            p = subprocess.run([perf] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=120, text=True)
            check(p.returncode != 0 and msg in p.stdout, "%s: exit %d, no '%s': %r"
                  % (" ".join(args), p.returncode, msg, p.stdout[-300:]))

        # SRQ against one receive queue per QP (qp_scale --srq): three rows,
        # the receiving end's memory per QP smaller with the SRQ, the ratios.
        d = os.path.join(tmp, "srq")
        doc, err = run(perf, ["qp_scale", "--srq", "-q", "8", "--msgs", "8000"], d)
        check_files(d, doc, "qp_scale --srq")
        rows = [(e["variant"], e["qps"]) for e in doc["bandwidth"]]
        check(rows == [("scale, RQ per QP", 1), ("scale, RQ per QP", 8), ("scale, SRQ", 8)],
              "qp_scale --srq: rows %r" % rows)
        for e in doc["bandwidth"]:
            check(e["test"] == "send_bw" and e["bytes"] == 64 and e["msg_rate_Mpps"] > 0 and
                  e["bytes_per_qp"] > 0, "qp_scale --srq entry %r" % e)
        if len(doc["bandwidth"]) == 3:
            check(doc["bandwidth"][2]["bytes_per_qp"] < doc["bandwidth"][1]["bytes_per_qp"],
                  "qp_scale --srq: an SRQ of 512 WRs takes no less memory per QP than 8 RQs"
                  " of 512: %r" % doc["bandwidth"])
        figs = sorted((c["figure"], c["floor"]) for c in doc["compare"])
        check(figs == [("SRQ: 64 B taken at 8 QPs", "one RQ per QP, same run"),
                       ("SRQ: 64 B taken at 8 QPs", "taken at 1 QP"),
                       ("SRQ: memory per QP at 8 QPs", "one RQ per QP")],
              "qp_scale --srq: comparisons %r" % figs)
        check("RNR NAKs" in err and "taken/sent" in err,
              "qp_scale --srq: table header missing on stderr")
    finally:
        if FAILS:
            print("outputs kept in " + tmp)
        else:
            shutil.rmtree(tmp)
    if FAILS:
        sys.exit("%d check(s) failed" % len(FAILS))
    print("drnic-perf --json/--out: all checks passed")


if __name__ == "__main__":
    main()
