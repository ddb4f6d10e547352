#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Assertions on a real-HIP-runtime run over the emulated driver (tests/realdriver/amd.sh).

Usage: check_amd.py REPORT.json TIMELINE.json OUT
OUT holds gpuctx record's live stream and the workload's own "[pid N] ..." lines.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from check import Report, check, one, no_drops  # noqa: E402

# ioctls hipInit issues on /dev/kfd and the render node (docs/gpu-validation.md)
HIPINIT = {"KFD_GET_VERSION", "KFD_GET_PROCESS_APERTURES_NEW", "KFD_ACQUIRE_VM",
           "KFD_ALLOC_MEMORY_OF_GPU", "KFD_MAP_MEMORY_TO_GPU", "KFD_CREATE_EVENT",
           "DRM_VERSION", "AMDGPU_INFO"}


def main():
    r = Report(sys.argv[1])
    with open(sys.argv[2]) as f:
        tl = json.load(f)
    with open(sys.argv[3]) as f:
        out = f.read()
    no_drops(r)
    check("amd_hip: ok" in out, "the workload saw the real runtime's expected results", out)
    said = re.findall(r"\[pid (\d+)\] (child: )?", out)
    parent_pid = int(next(p for p, c in said if not c))
    child_pid = int(next(p for p, c in said if c))
    parent = one([p for p in r.procs if p["pid"] == parent_pid], "the amd_hip parent")

    # every ioctl on the emulated files is named, in the live stream
    # ("TIME PID/TID COMM ioctl DEVICE fd=N NAME args... -> RET"; COMM may hold spaces)
    live = []
    for line in out.splitlines():
        f = line.split()
        i = f.index("ioctl") if "ioctl" in f else len(f)
        if i + 3 < len(f) and f[i + 2].startswith("fd="):
            live.append(f[i + 3])
    check(len(live) >= 20, "the runtime's ioctls are in the live stream", len(live))
    check(not [n for n in live if n.startswith("ioctl(")], "every ioctl named in the live stream",
          sorted(set(live)))
    # and in the timeline
    ev = tl["traceEvents"] if isinstance(tl, dict) else tl
    ioc = [e for e in ev if e.get("cat") == "ioctl" and e.get("ph") in ("B", "X")]
    check(len(ioc) >= 20, "the runtime's ioctls are in the timeline", len(ioc))
    raw = sorted({(e["name"], e["args"].get("cmd")) for e in ioc if e["name"].startswith("ioctl(")})
    check(not raw, "every KFD and amdgpu ioctl is named", raw)
    names = {e["name"] for e in ioc}
    check(HIPINIT <= names, "hipInit's ioctls", sorted(names))
    acq = [e for e in ioc if e["name"] == "KFD_ACQUIRE_VM"]
    check(acq and acq[0]["args"]["ret"] == 0 and "gpu_id=0x7f3a" in acq[0]["args"]["args"],
          "ACQUIRE_VM with the render node fd succeeded on the emulated gpu", acq[:1])

    # the forked child: a poison fork naming it, with its real error code
    icc = one(r.find("inherited-context-call", pid=child_pid), "inherited-context-call")
    check(icc["severity"] == "error", "is an error", icc)
    check(icc["opener_pid"] == parent["pid"], "names the parent", icc)
    check(icc["chain"] == [parent["pid"], child_pid], "names the fork", icc)
    # its first call (issue 42: any call is a use), answered from the inherited state
    check(icc["call"] == "hipGetDeviceCount" and icc["api_ret_name"] == "hipSuccess",
          "the child's first call, hipGetDeviceCount, returned hipSuccess", icc)
    # the incident names the first call the runtime refused: hipMalloc (hipGetErrorName, which
    # returns a string, refuses nothing)
    inc = one([i for i in r.doc["incidents"] if child_pid in i.get("pids", [])], "incident")
    check(inc["kind"] == "poison-fork" and inc["severity"] == "error" and
          inc["pid"] == parent_pid and
          (inc["first_use"] or "").startswith("hipMalloc -> hipErrorOutOfMemory"),
          "a poison-fork error naming the child's refused hipMalloc and its error code", inc)
    # the child issued no ioctl on the inherited /dev/kfd: libhsakmt refused in user space
    check(not r.find("inherited-gpu-use", pid=child_pid, device_kind="kfd"),
          "no KFD ioctl from the child", r.findings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
