#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""check_fork.py OUT REPORT: nv_cuda's forked child (its pid and its cuInit result, from OUT)
is diagnosed by gpuctx (REPORT: report --json) as a poison fork: an error incident of kind
poison-fork that names the child, and a finding on the child that carries the child's real
result code.

check_fork.py --query OUT REPORT LIVE: nv_cuda --fork-query's child, whose only call is
cuDeviceGetCount (refused in user space): the incident and the finding name that call and its
result, and `gpuctx check`'s output (LIVE) says so."""
import json
import re
import sys


def child_call(out_path, call):
    """(child pid, result code, result name) of the child's call (a regex) in nv_cuda's OUT."""
    out = open(out_path).read()
    m = re.search(r"^child (\d+) exited (\d+)$", out, re.M)
    r = re.search(r"^child: " + call + r" = (-?\d+) \((\w+)\)$", out, re.M)
    if not m or not r:
        print(f"     | nv_cuda did not report its child (no 'child N exited' / {call} line)")
        return None
    return int(m.group(1)), int(r.group(1)), r.group(2)


def query(out_path, rep_path, live_path):
    """--query: the child called cuDeviceGetCount only; its result (from OUT) must be the
    incident's first use, on the child's inherited-context-call, and in check's verdict."""
    live = open(live_path).read()
    rep = json.load(open(rep_path))
    got = child_call(out_path, "cuDeviceGetCount")
    if not got:
        return 1
    child, code, name = got
    want = f"cuDeviceGetCount -> {name}"
    incs = [i for i in rep.get("incidents", []) if i["kind"] == "poison-fork"
            and i["severity"] == "error" and child in i["pids"]
            and (i.get("first_use") or "").startswith(want)]
    finds = [f for f in rep.get("findings", []) if f.get("pid") == child
             and f["kind"] == "inherited-context-call" and f.get("refused_call")
             and f["refused_call"]["call"] == "cuDeviceGetCount"
             and f["refused_call"]["ret"] == code]
    print(f"     (child {child}: cuDeviceGetCount = {code} ({name}); {len(incs)} poison-fork "
          f"incident(s) with first use '{want}'; {len(finds)} finding(s) with the refused call)")
    if not incs or not finds:
        print("     | " + json.dumps([(i["kind"], i["pids"], i.get("first_use"))
                                     for i in rep.get("incidents", [])]))
    if want not in live:
        print(f"     | check's verdict does not say '{want}'")
        return 1
    return 0 if incs and finds and code != 0 else 1


def main():
    if sys.argv[1] == "--query":
        return query(*sys.argv[2:5])
    rep = json.load(open(sys.argv[2]))
    got = child_call(sys.argv[1], r"cuInit\(0\)")
    if not got:
        return 1
    child, code, name = got
    want = f"{name} ({code})"
    incs = [i for i in rep.get("incidents", []) if i["kind"] == "poison-fork"
            and i["severity"] == "error" and child in i["pids"]]
    finds = [f for f in rep.get("findings", []) if f.get("pid") == child
             and want in f.get("detail", "")]
    print(f"     (child {child}: cuInit = {want}; {len(incs)} poison-fork incident(s) naming "
          f"it; {len(finds)} finding(s) on it with {want})")
    if not incs:
        print("     | no poison-fork error incident names the child: "
              + json.dumps([(i["kind"], i["pids"]) for i in rep.get("incidents", [])]))
    if not finds:
        print("     | no finding on the child carries " + want + ": "
              + json.dumps([(f["kind"], f["pid"], f.get("detail", "")[:120])
                            for f in rep.get("findings", [])]))
    return 0 if incs and finds else 1


if __name__ == "__main__":
    sys.exit(main())
