#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""check_numba.py REPORT MODE WL: gpuctx's report (report --json) of a tests/workloads/nb_job.py
run in MODE says what the runtime did (WL: the job's output, which says it).

fork: the worker got Numba's CudaDriverError; the report has exactly one incident, a
poison-fork error naming the worker, that names the call libcuda refused
(cuDeviceGetCount -> CUDA_ERROR_NOT_INITIALIZED) and what the worker raised
(CudaDriverError: CUDA initialized before forking) and where (nb_job.py's worker).
spawn, forkserver, subprocess, pool-spawn: no incident, NO PROBLEM FOUND.
pool-cpu: no error incident."""
import json
import re
import sys

RAISED = ("CudaDriverError", "CUDA initialized before forking")
REFUSED = ("cuDeviceGetCount", "CUDA_ERROR_NOT_INITIALIZED")


def fail(msg, ctx=None):
    print("check_numba: " + msg)
    if ctx is not None:
        print(json.dumps(ctx, indent=1)[:3000])
    sys.exit(1)


def main():
    rep = json.load(open(sys.argv[1]))
    mode = sys.argv[2]
    wl = open(sys.argv[3]).read()
    incs = rep.get("incidents", [])
    verdict = rep.get("summary", {}).get("verdict", "")
    if "parent device count 1" not in wl or "nb_job: done" not in wl:
        fail("the job did not run to its end with one device:\n" + wl[-2000:])
    if mode == "fork":
        if not all(s in wl for s in RAISED) or "worker exit code 1" not in wl:
            fail("the fork worker did not get Numba's CudaDriverError:\n" + wl[-2000:])
        if len(incs) != 1:
            fail(f"{len(incs)} incidents, expected one poison-fork error", incs)
        i = incs[0]
        if i["kind"] != "poison-fork" or i["severity"] != "error":
            fail("not a poison-fork error", i)
        text = json.dumps(i)
        for want in REFUSED + RAISED:
            if want not in text:
                fail(f"the incident does not say {want!r}", i)
        # and where the child raised it: nb_job.py's worker()
        if not re.search(r"nb_job\.py:\d+ in worker", i.get("raised") or ""):
            fail("the exception's site is not nb_job.py's worker()", i)
        if not verdict.startswith("POISON FORK"):
            fail("the verdict does not call it a poison fork: " + verdict)
        print(f"     (fork: {i['summary'][:160]})")
    elif mode in ("spawn", "forkserver", "subprocess", "pool-spawn"):
        want = {"subprocess": "worker exit code 0", "pool-spawn": "worker results [1, 1, 1, 1]"}
        if want.get(mode, "worker device count 1") not in wl:
            fail("the worker did not use CUDA of its own:\n" + wl[-2000:])
        if incs or not verdict.startswith("NO PROBLEM FOUND"):
            fail("expected NO PROBLEM FOUND, got: " + verdict, incs)
    elif mode == "pool-cpu":
        errs = [i for i in incs if i["severity"] == "error"]
        if "worker results" not in wl or errs:
            fail("a CPU-only fork pool is no error: " + verdict, errs)
    else:
        fail("unknown mode " + mode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
