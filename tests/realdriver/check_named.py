#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""check_named.py LIVE TIMELINE REPORT: every GPU ioctl gpuctx showed has a name from its tables,
every RM control and every RM class its NVIDIA name: in the live stream (gpuctx record's event
lines), in the chrome timeline (gpuctx export) and in the report's GPU objects (report --json).
Exit 1 listing what is unnamed."""
import json
import re
import sys

RAW = re.compile(r"^(ioctl\(|uvm\()")  # the decoder's fallback names
CTRL = re.compile(r"cmd=(NV[0-9A-Z_]+)\(0x[0-9a-f]{8}\)")
RAW_CLASS = re.compile(r"class=0x[0-9a-f]+")


def check(where, name, args, bad):
    if RAW.match(name):
        bad.append(f"{where}: raw name {name}")
    elif name == "RM_CONTROL" and not CTRL.search(args):
        bad.append(f"{where}: RM control without a name: {args}")
    elif RAW_CLASS.search(args):
        bad.append(f"{where}: RM class without a name: {name} {args}")


def main():
    live, timeline, report = sys.argv[1:4]
    bad, n_live, n_tl, ctrls = [], 0, 0, set()
    for line in open(live, errors="replace"):
        f = line.split()
        # "  0.52 PID/TID COMM ioctl DEVICE fd=N NAME args..." (COMM may hold spaces)
        if "ioctl" not in f or f.index("ioctl") + 3 >= len(f):
            continue
        i = f.index("ioctl")
        if not f[i + 2].startswith("fd="):
            continue
        n_live += 1
        check("live", f[i + 3], " ".join(f[i + 4:]), bad)
        ctrls.update(CTRL.findall(line))
    t = json.load(open(timeline))
    for e in t["traceEvents"] if isinstance(t, dict) else t:
        if e.get("cat") != "ioctl" or e.get("ph") not in ("B", "X"):
            continue
        n_tl += 1
        check("timeline", e["name"], e.get("args", {}).get("args", ""), bad)
    objs = json.load(open(report)).get("gpu_objects", [])
    for o in objs:
        if o["kind"].startswith("rm-") and o.get("class") is not None and not o.get("class_name"):
            bad.append(f"report: {o['kind']} 0x{o['handle']:x} of class 0x{o['class']:x} unnamed")
    for b in bad[:20]:
        print("     | " + b)
    print(f"     ({n_live} ioctls in the live stream, {n_tl} in the timeline, "
          f"{len(ctrls)} different RM controls, {len(objs)} GPU objects in the report, "
          f"{len(bad)} unnamed)")
    return 1 if bad or n_live < 100 or n_tl < 100 else 0


if __name__ == "__main__":
    sys.exit(main())
