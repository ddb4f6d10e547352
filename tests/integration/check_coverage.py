#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Assertions on the API coverage of `gpuctx report --json` (tests/integration/api_coverage.sh).

Usage: check_coverage.py SCENARIO REPORT.json --lib PATH [--predicted | --held | --gap REASON]
                         [--pid PID] [--calls N]
--lib: the library the workload loads; it must have been probed without error.
--predicted: probed before the process mapped it (no hold, no gap).
--held: the process was held at the mapping and resumed once the probes were live (no gap).
--gap REASON: a gap of that reason, with its api-calls-unseen finding, and the processes
  involved are marked incomplete.
--pid: the workload's pid (attach); --calls: at least N API calls by the workload's processes.
--tree PID: a system-wide trace (-a): the checks (the forked child's too) look only at the
  tree of PID, the workload.
Without --gap, the CUDA scenarios also need the forked child's inherited-context-call, which
only exists when the parent's first calls (cuInit, the context) were seen.
"""
import argparse
import os
import re
import sys

from check import Report, check, no_drops, one


def workload(r, a):
    """The process that loaded the library (the one the holds/gaps/probes are about)."""
    if a.pid:
        return one(r.by_pid.get(a.pid, []), "process %d" % a.pid)
    loaders = {h["pid"] for h in r.doc["api_coverage"]["holds"]} | \
        {g["pid"] for g in r.doc["api_coverage"]["gaps"]}
    if loaders:
        return one([p for p in r.procs if p["pid"] in loaders], "process that loaded it")
    roots = [p for p in r.procs if p["comm"] != "gpuctx" and
             all(q["pid"] != p["ppid"] or q["comm"] == "gpuctx" for q in r.procs)]
    return one(roots, "workload process")


def same_lib(path, lib):
    """path names lib: through /proc/PID/root, or with ".." in it (a DT_RUNPATH with $ORIGIN)."""
    return os.path.normpath(re.sub(r"^/proc/\d+/root(?=/)", "", path)) == lib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("report")
    ap.add_argument("--lib", required=True)
    ap.add_argument("--predicted", action="store_true")
    ap.add_argument("--held", action="store_true")
    ap.add_argument("--gap")
    ap.add_argument("--pid", type=int)
    ap.add_argument("--tree", type=int)
    ap.add_argument("--held-child", metavar="LIB",
                    help="a child of the workload was held at its mapping of LIB")
    ap.add_argument("--calls", type=int, default=0)
    ap.add_argument("--icc", type=int, default=1,
                    help="inherited-context-call findings expected in the children")
    a = ap.parse_args()
    if a.tree:
        a.pid = a.tree
    r = Report(a.report)
    no_drops(r)
    cov = r.doc["api_coverage"]
    wl = workload(r, a)
    procs = r.procs
    if a.tree:  # everyone else on the machine is in the trace too
        tree = {wl["pid"]}
        while True:
            more = {p["pid"] for p in r.procs if p["ppid"] in tree} - tree
            if not more:
                break
            tree |= more
        procs = [p for p in r.procs if p["pid"] in tree]
    mine = {p["pid"] for p in procs}
    probes = [p for p in r.doc["probes"] if same_lib(p["lib"], a.lib)]
    if not a.gap:  # unheld, the process may be gone before the library could be probed
        check(probes and not any(p["error"] for p in probes), "%s probed" % a.lib,
              r.doc["probes"][:4])
    calls = sum(p["api_calls"] for p in r.procs)
    check(calls >= a.calls, "at least %d API calls seen" % a.calls, calls)
    holds = [h for h in cov["holds"] if h["pid"] in mine]
    gaps = [g for g in cov["gaps"] if g["pid"] in mine]
    if a.predicted:
        check(not holds, "probed before the mapping: nothing to hold", holds)
    if a.held:
        h = one([h for h in holds if same_lib(h["lib"], a.lib)], "hold of " + a.lib)
        check(h["pid"] == wl["pid"], "the loading process was held", h)
        check(h["released_by"] == "collector", "resumed once probed, not by the timeout", h)
    if a.held_child:
        kids = {p["pid"] for p in r.procs if p["ppid"] == wl["pid"]}
        h = one([h for h in holds if h["pid"] in kids], "hold of a child")
        check(same_lib(h["lib"], a.held_child) and h["released_by"] == "collector",
              "the child was held at its library until probed", h)
    if a.gap:
        gaps = [g for g in gaps if g["pid"] == wl["pid"]]
        g = one(gaps, "gap")
        check(g["reason"] == a.gap and g["pid"] == wl["pid"] and
              (same_lib(g["lib"], a.lib) or g["lib"] == os.path.basename(a.lib)),
              "the gap names the process, library and reason", g)
        check(g["to_ns"] is None or g["to_ns"] > g["from_ns"], "the gap says until when", g)
        f = one(r.find("api-calls-unseen", pid=wl["pid"]), "api-calls-unseen finding")
        check(f["severity"] == "warning" and os.path.basename(a.lib) in f["detail"],
              "names the library", f)
        check(not cov["complete"], "coverage is not complete", cov)
        check(not wl["api_trace_complete"], "the process's API trace is incomplete", wl)
        return 0
    check(not gaps and (a.tree or cov["complete"]), "no gap: the API trace is complete", cov)
    check(not [f for f in r.find("api-calls-unseen") if f["pid"] in mine],
          "no api-calls-unseen finding", r.findings)
    check(all(p["api_trace_complete"] for p in procs), "every process complete", procs)
    if "cuda" in a.lib and (a.tree or not a.pid):
        kids = [p for p in procs if p["ppid"] == wl["pid"] or
                any(q["pid"] == p["ppid"] and q["ppid"] == wl["pid"] for q in procs)]
        iccs = [f for f in r.find("inherited-context-call") if f["pid"] in {k["pid"] for k in kids}]
        check(len(iccs) == a.icc, "%d inherited-context-call in the forked children" % a.icc,
              r.findings)
        for icc in iccs:
            check(icc["call"] == "cuCtxSetCurrent", "names the child's first call", icc)
            check(icc["opener_pid"] == wl["pid"], "names the initialising parent", icc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
