#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What issue 42's per-child probes cost: build/bench/forkprobe (cuInit on the libcuda test
double over the emulated driver, then cuDeviceGetCount calls and forked children) untraced and
under `gpuctx record`, interleaved rounds. A healthy process's calls of a function probed only
for forked children, with and without such a child alive; the child's own calls; fork() to
the child's first instruction (held until its probes are attached). The holds gpuctx recorded
come from the trace. Writes bench/RESULTS-forkprobe.md.

Usage: python3 bench/forkprobe.py [--rounds R] [--calls N] [--children K] [--out FILE] (root)
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

PROG = os.path.join(TOP, "build/bench/forkprobe")


def run(cfg, tmp, mnt, calls, kids, extra=()):
    trace = os.path.join(tmp, "t.gctx")
    cmd = [PROG, str(calls), str(kids)]
    if cfg != "untraced":
        cmd = [G, "record", "-q", "-o", trace, "--libcuda", LIBCUDA] + list(extra) + \
            ["--device", f"{mnt}/nvidiactl:nvidiactl", "--device", f"{mnt}/nvidia0:nvidia",
             "--device", f"{mnt}/nvidia-uvm:nvidia-uvm", "--"] + cmd
    env = dict(os.environ, GPUCTX_FAKEGPU_DIR=mnt,
               LD_LIBRARY_PATH=os.path.dirname(LIBCUDA))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode:
        sys.exit(f"bench: {cfg} failed: {p.stderr[-500:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r["holds"] = []
    if cfg != "untraced":
        rep = json.loads(subprocess.run([G, "report", "--json", trace], capture_output=True,
                                        text=True).stdout)
        r["holds"] = [h["held_ns"] for h in rep["api_coverage"]["fork_holds"]]
        r["gaps"] = len(rep["api_coverage"]["gaps"])
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=200000)
    ap.add_argument("--children", type=int, default=20)
    ap.add_argument("--out", default=os.path.join(TOP, "bench/RESULTS-forkprobe.md"))
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("bench: needs root")
    for f in (G, FAKEGPU, LIBCUDA, PROG):
        if not os.path.exists(f):
            sys.exit(f"bench: {f} missing (make bench-build)")
    tmp = tempfile.mkdtemp(prefix="gpuctx-forkprobe.")
    mnt = os.path.join(tmp, "gpu")
    os.mkdir(mnt)
    cfgs = {"untraced": (), "record": (), "record --no-stacks": ("--no-stacks",)}
    res = {c: [] for c in cfgs}
    with fakegpu(mnt):
        for _ in range(a.rounds):
            for cfg, extra in cfgs.items():
                res[cfg].append(run(cfg, tmp, mnt, a.calls, a.children, extra))

    def med(cfg, key):
        return statistics.median(r[key] for r in res[cfg])

    def starts(cfg):
        # the first child (its probes held while the parent measures) and the rest
        return [s for r in res[cfg] for s in r["start_ns"]]

    lines = [
        "# Per-child API probes (issue 42): cost",
        "",
        f"`python3 bench/forkprobe.py --rounds {a.rounds} --calls {a.calls} --children "
        f"{a.children}` on {os.uname().release}, {time.strftime('%Y-%m-%d')}: "
        "build/bench/forkprobe on the libcuda test double over the emulated driver; medians "
        f"over {a.rounds} interleaved rounds (fork latency: over every child of every round).",
        "",
        "| configuration | healthy cuDeviceGetCount | same, a probed child alive | in the "
        "probed child | fork to the child's first instruction: median / max | gpuctx fork "
        "holds: median / max |",
        "|---|---|---|---|---|---|",
    ]
    for cfg in cfgs:
        s = starts(cfg)
        h = [x for r in res[cfg] for x in r["holds"]]
        hold = f"{statistics.median(h) / 1e6:.2f} ms / {max(h) / 1e6:.2f} ms" if h else "—"
        lines.append(f"| {cfg} | {med(cfg, 'healthy_ns'):.0f} ns | "
                     f"{med(cfg, 'healthy_kid_ns'):.0f} ns | {med(cfg, 'child_ns'):.0f} ns | "
                     f"{statistics.median(s) / 1e6:.2f} ms / {max(s) / 1e6:.2f} ms | {hold} |")
    lines += ["", "cuDeviceGetCount is probed only for forked children: a healthy process's "
              "call never reaches a probe, with or without such a child (the probes are in "
              "the child's address space only). The child pays a uprobe and a uretprobe per "
              "call. The fork latency is the hold: the collector reaching the record, the "
              "per-child attach, the resume.", ""]
    with open(a.out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
