#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of the api_caller test (callers.sh): cuInit called first by a library function
(libwl_cuda_init.so: wl_lib_gpu_init), then by main; a context created by main. The report, its
JSON and the Chrome timeline must name each call's caller, at the offset of the instruction
after the call as objdump shows it in the binary.

Usage: check_callers.py REPORT.json REPORT.txt TIMELINE.chrome.json
"""
import json
import os
import re
import subprocess
import sys


def fail(msg):
    print(f"check failed: {msg}")
    sys.exit(1)


def return_offset(path, func, callee):
    """Offset from func's start of the instruction after its first call to callee."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(rf"^([0-9a-f]+) <{re.escape(func)}>:\n(.*?)\n\n", out, re.M | re.S)
    if not m:
        fail(f"{func} not found in {path}")
    start = int(m.group(1), 16)
    lines = [l for l in m.group(2).splitlines() if re.match(r"\s+[0-9a-f]+:", l)]
    for i, l in enumerate(lines[:-1]):
        if "call" in l and f"<{callee}@plt>" in l:
            return int(lines[i + 1].split(":")[0], 16) - start
    fail(f"no call to {callee} in {func} of {path}")


def main():
    rep = json.load(open(sys.argv[1]))
    text = open(sys.argv[2]).read()
    tl = json.load(open(sys.argv[3]))

    procs = [p for p in rep["processes"]
             if any(s["fn"] == "cuInit" for s in p.get("api_call_sites", []))]
    if len(procs) != 1:
        fail(f"{len(procs)} processes called cuInit, expected 1")
    inits = sorted((s for s in procs[0]["api_call_sites"] if s["fn"] == "cuInit"),
                   key=lambda s: s["first_ns"])
    if len(inits) != 2:
        fail(f"cuInit has {len(inits)} call sites, expected 2: {inits}")
    want = [("libwl_cuda_init.so", "wl_lib_gpu_init"), ("api_cuda_caller", "main")]
    for s, (mod, func) in zip(inits, want):
        c = s["caller"]
        if not c or os.path.basename(c["module"]) != mod or c["function"] != func:
            fail(f"cuInit call site {s} is not {func} in {mod}")
        if s["calls"] != 1 or c["address"] != s["address"]:
            fail(f"cuInit call site {s}: expected 1 call at its caller's address")
        off = return_offset(c["module"], func, "cuInit")
        if c["offset"] != off:
            fail(f"{func} calls cuInit at +{c['offset']:#x}, objdump says +{off:#x}")
    print("ok: cuInit called first from wl_lib_gpu_init (libwl_cuda_init.so), then from main")

    ctxs = [x for x in rep["api_contexts"] if x["create_fn"] == "cuCtxCreate_v4"]
    if len(ctxs) != 1:
        fail(f"{len(ctxs)} contexts made by cuCtxCreate_v4, expected 1")
    c = ctxs[0]["caller"]
    if not c or c["function"] != "main" or os.path.basename(c["module"]) != "api_cuda_caller":
        fail(f"context's creating call caller is {c}, expected main in api_cuda_caller")
    off = return_offset(c["module"], "main", "cuCtxCreate_v4")
    if c["offset"] != off:
        fail(f"main calls cuCtxCreate_v4 at +{c['offset']:#x}, objdump says +{off:#x}")
    print("ok: the context names main as the caller of cuCtxCreate_v4")

    st = rep["caller_stats"]
    if not st or st["capped_calls"] or st["resolved"] < 3:
        fail(f"caller_stats {st}: expected no capped calls and at least 3 resolved")

    m = re.search(r"\| +cuInit  2 calls from 2 call sites\n(.*)\n(.*)\n", text)
    if not m:
        fail("the report has no 'cuInit  2 calls from 2 call sites' line")
    if not re.search(r"1 from .*wl_lib_gpu_init.* \(libwl_cuda_init\.so\)", m.group(1)):
        fail(f"first cuInit caller line: {m.group(1)!r}")
    if not re.search(r"1 from .*\bmain.* \(api_cuda_caller\)", m.group(2)):
        fail(f"second cuInit caller line: {m.group(2)!r}")
    if not re.search(r"\| +cuCtxCreate_v4  1 call  from .*\bmain.* \(api_cuda_caller\)", text):
        fail("the report does not name main as cuCtxCreate_v4's caller")
    print("ok: the text report names both callers")

    evs = tl["traceEvents"] if isinstance(tl, dict) else tl
    callers = [e.get("args", {}).get("caller", "") for e in evs
               if e.get("cat") == "api" and e.get("name") == "cuInit"]
    if not any("wl_lib_gpu_init" in c and "libwl_cuda_init.so" in c for c in callers):
        fail(f"no cuInit slice with the library as caller: {callers}")
    print("ok: the timeline's cuInit slices carry their caller")


if __name__ == "__main__":
    main()
