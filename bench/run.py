#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Overhead benchmark driver: gpuctx against an untraced run, empty BPF programs, bpftrace and
strace, measured side by side in one run on this machine. Writes bench/RESULTS.md.

Every configuration of a row runs in every round, between two untraced runs of the same loop;
a round's ratio is the configuration divided by the mean of that round's two untraced runs, and
the tables give medians over rounds with the min-max spread. The timed loops are in
bench/loops.c; the reference BPF programs in bench/empty.bpf.c and bench/diag.bpf.c.
The measurements are in bench/measure.py, the RESULTS.md writer in bench/results.py and
shared helpers in bench/common.py.

Usage: python3 bench/run.py [--rounds N] [--secs S] [--only ROW,...] [--quick] [--out FILE]
       python3 bench/run.py --render bench/out/raw.json   (rewrite RESULTS.md only)
Rows: ioctl, progcost, churn, api, throughput, collector, startstop, startup (bench/startup.py:
a traced `import torch`, a DataLoader job, the collector per 1,000 library mappings). Needs root, build/gpuctx, build/fakegpu,
build/bench/{loops,empty_loader}, bpftrace and strace (make bench builds and installs them).
"""
import argparse
import json
import os
import shutil
import time

from common import Env, FAKEGPU, G, LOADER, LOOPS, QUIET, TOP, die, log
from measure import (CHURN_ROUNDS, CHURN_SECS_PER_LOOP_SECS, bench_api, bench_churn,
                     bench_collector, bench_ioctl, bench_progcost, bench_startstop,
                     bench_throughput, machine)
from results import write_results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--secs", type=float, default=0.25, help="seconds per timed loop")
    ap.add_argument("--only",
                    default="ioctl,progcost,churn,api,throughput,collector,startstop,startup")
    ap.add_argument("--quick", action="store_true", help="2 rounds, smaller workloads")
    ap.add_argument("--out", default=os.path.join(TOP, "bench/RESULTS.md"))
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--quiet-wait", type=float, default=45,
                    help="seconds in all to wait for other tracers and load to go away")
    ap.add_argument("--render", metavar="RAW_JSON",
                    help="only rewrite the results file from a previous run's bench/out/raw.json")
    args = ap.parse_args()
    if args.render:
        with open(args.render) as f:
            r = json.load(f)
        args.rounds, args.secs = r["args"]["rounds"], r["args"]["secs"]
        QUIET.rounds = r["quiet"]
        targets = write_results(args.out, r["machine"], args, r["ioctl"], r["churn"], r["api"],
                                r["throughput"], r["collector"], r["elapsed"],
                                r.get("startstop"), r.get("progcost"), r.get("startup"))
        log(f"results written to {os.path.relpath(args.out)}")
        return
    if args.quick:
        args.rounds = min(args.rounds, 2)
    rows = set(args.only.split(","))
    if os.geteuid() != 0:
        die("run as root: the benchmark loads BPF programs")
    for p in (G, FAKEGPU, LOOPS, LOADER):
        if not os.access(p, os.X_OK):
            die(f"{p} is missing: run make bench")
    for t in ("bpftrace", "strace"):
        if not shutil.which(t):
            die(f"{t} is missing: run tools/install-deps.sh bench")
    QUIET.budget = args.quiet_wait
    t0 = time.time()
    m = machine()
    env = Env(args)
    ioc = churn = api = thr = col = ss = pc = su = None
    try:
        if "ioctl" in rows:
            ioc = bench_ioctl(env, args.rounds, args.secs, extra_until=t0 + 200)
        if "progcost" in rows:
            pc = bench_progcost(env, 2 if args.quick else 3, args.secs)
        if "churn" in rows:
            # a process costs ~0.6 ms: a loop of 1 s holds enough of them to rise above this
            # machine's noise (at 0.5 s, empty programs scattered 0.9-1.2x of untraced)
            # a round's ratio scatters by ±10% here: more rounds than the other rows
            churn = bench_churn(env, args.rounds if args.quick else max(args.rounds,
                                                                      CHURN_ROUNDS),
                                CHURN_SECS_PER_LOOP_SECS * args.secs, extra_until=t0 + 600)
        if "api" in rows:
            api = bench_api(env, args.rounds, args.secs)
        if "throughput" in rows:
            thr = bench_throughput(env, 1.0 if args.quick else 2.0, 1 if args.quick else 2)
        if "collector" in rows:
            col = bench_collector(env, 1000 if args.quick else 10000,
                                  1000 if args.quick else 12500, 1 if args.quick else 3)
        if "startstop" in rows:
            ss = bench_startstop(env, 3 if args.quick else 9)
        if "startup" in rows:
            import startup
            # an untraced import alone moves by -28%..+35% between rounds here: 31 rounds
            # put the median ratio's 95% interval within about +-4%
            su = startup.measure(2 if args.quick else max(args.rounds, 31), log)
    finally:
        env.close()
    elapsed = time.time() - t0
    os.makedirs(os.path.join(TOP, "bench/out"), exist_ok=True)
    with open(os.path.join(TOP, "bench/out/raw.json"), "w") as f:
        json.dump({"machine": m, "args": {"rounds": args.rounds, "secs": args.secs},
                   "quiet": QUIET.rounds, "elapsed": elapsed, "ioctl": ioc, "churn": churn,
                   "api": api, "throughput": thr, "collector": col, "startstop": ss, "progcost": pc, "startup": su}, f,
                  indent=1, default=str)
    targets = write_results(args.out, m, args, ioc, churn, api, thr, col, elapsed, ss, pc, su)
    log(f"results written to {os.path.relpath(args.out)} in {(time.time() - t0) / 60:.1f} min")
    for t, meas, v, _ in targets:
        log(f"  {v.strip('*')}: {t}: {meas}")


if __name__ == "__main__":
    main()
