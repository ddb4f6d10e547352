#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""check_fork.py OUT REPORT: nv_cuda's forked child (its pid and its cuInit result, from OUT)
is diagnosed by gpuctx (REPORT: report --json) as a poison fork: an error incident of kind
poison-fork that names the child, and a finding on the child that carries the child's real
result code."""
import json
import re
import sys


def main():
    out = open(sys.argv[1]).read()
    rep = json.load(open(sys.argv[2]))
    m = re.search(r"^child (\d+) exited (\d+)$", out, re.M)
    r = re.search(r"^child: cuInit\(0\) = (-?\d+) \((\w+)\)$", out, re.M)
    if not m or not r:
        print("     | nv_cuda did not report its child (no 'child N exited' / cuInit line)")
        return 1
    child, code, name = int(m.group(1)), int(r.group(1)), r.group(2)
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
