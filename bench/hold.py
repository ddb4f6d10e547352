#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Added latency of a held mapping: a process loads the libcuda double from a fresh path (a
library gpuctx could not know before it was mapped) and calls cuInit, N times; the time of
each dlopen + cuInit is compared untraced, under `gpuctx record` (held until probed) and under
`gpuctx record --no-hold`. The hold durations gpuctx itself recorded come from the trace.
Writes bench/RESULTS-hold.md.

Usage: python3 bench/hold.py [--loads N] [--rounds R] [--out FILE]   (root; make bench runs it)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from common import FAKEGPU, G, LIBCUDA, TOP, fakegpu

WORKLOAD = r"""
import ctypes, json, os, shutil, sys, time
d, n, lib = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out = []
for i in range(n):
    p = os.path.join(d, str(i))
    os.mkdir(p)
    shutil.copy(lib, p)
    t0 = time.perf_counter_ns()
    l = ctypes.CDLL(os.path.join(p, "libcuda.so.1"))
    l.cuInit(0)
    out.append(time.perf_counter_ns() - t0)
print(json.dumps(out))
"""


def run(cfg, tmp, n, mnt):
    d = tempfile.mkdtemp(dir=tmp)
    wl = os.path.join(tmp, "wl.py")
    with open(wl, "w") as f:
        f.write(WORKLOAD)
    cmd = ["/usr/bin/python3", wl, d, str(n), LIBCUDA]
    trace = os.path.join(d, "t.gctx")
    if cfg != "untraced":
        cmd = [G, "record", "-q", "-o", trace] + (["--no-hold"] if cfg == "no-hold" else []) + \
            ["--"] + cmd
    env = dict(os.environ, GPUCTX_FAKEGPU_DIR=mnt)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode:
        sys.exit(f"bench: {cfg} failed: {p.stderr[-500:]}")
    times = json.loads(p.stdout.strip().splitlines()[-1])
    holds, gaps = [], []
    if cfg != "untraced":
        rep = json.loads(subprocess.run([G, "report", "--json", trace], capture_output=True,
                                        text=True).stdout)
        holds = [h["held_ns"] for h in rep["api_coverage"]["holds"]]
        gaps = [g["reason"] for g in rep["api_coverage"]["gaps"]]
        if cfg == "held":
            # which load, and the report's whole entry: for the next person to find out why
            for g in rep["api_coverage"]["gaps"]:
                print(f"bench: held run, gap: {json.dumps(g)}; load times (ms): "
                      f"{[round(t / 1e6, 1) for t in times]}", file=sys.stderr)
    return times, holds, gaps


def ms(ns):
    return f"{ns / 1e6:.2f} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loads", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(TOP, "bench/RESULTS-hold.md"))
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("bench: needs root")
    for f in (G, FAKEGPU, LIBCUDA):
        if not os.path.exists(f):
            sys.exit(f"bench: {f} missing (make all)")
    tmp = tempfile.mkdtemp(prefix="gpuctx-hold.")
    mnt = os.path.join(tmp, "gpu")
    os.mkdir(mnt)
    with fakegpu(mnt):
        res = {c: ([], [], []) for c in ("untraced", "held", "no-hold")}
        for _ in range(a.rounds):
            for cfg in res:
                t, h, g = run(cfg, tmp, a.loads, mnt)
                res[cfg][0].extend(t)
                res[cfg][1].extend(h)
                res[cfg][2].extend(g)
    base = statistics.median(res["untraced"][0])
    lines = [
        "# Held mappings: added latency",
        "",
        f"`python3 bench/hold.py --loads {a.loads} --rounds {a.rounds}` on "
        f"{os.uname().release}, {time.strftime('%Y-%m-%d')}: {a.loads * a.rounds} loads per "
        "configuration of the libcuda double from a fresh path (dlopen + cuInit, timed in the "
        "process), over the emulated driver.",
        "",
        "| configuration | median load + cuInit | added | gpuctx holds: median / max | gaps |",
        "|---|---|---|---|---|",
    ]
    for cfg, (t, h, g) in res.items():
        med = statistics.median(t)
        hold = f"{ms(statistics.median(h))} / {ms(max(h))}" if h else "—"
        # a gap where none is expected says why (the report's reason)
        why = "" if not g or cfg == "no-hold" else \
            " (" + ", ".join(f"{r}: {g.count(r)}" for r in sorted(set(g))) + ")"
        lines.append(f"| {cfg} | {ms(med)} | {ms(med - base) if cfg != 'untraced' else '—'} "
                     f"| {hold} | {len(g)}{why} |")
    lines += ["", "Held: the first call is always seen (gaps 0); no-hold: each load is a gap "
              "the report names. Most of a hold is probing the library (ELF symbols, the "
              "cuGetProcAddress pre-resolution in a child), once per library file.", ""]
    with open(a.out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
