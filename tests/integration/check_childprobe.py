#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of the fork_query_* tests (childprobe.sh): what a user reads about a forked child
whose only CUDA calls never reach the kernel.

Usage: check_childprobe.py MODE REPORT.json CHECK-OUTPUT [WORKLOAD.py]
MODE: count, errname, lookup, none (api_cuda_fork_query); py-torch, py-numba, py-noise
(pyexc_job.py, WORKLOAD.py: its source, for the lines marked RAISE-*); blocked (the Python
job of fork_blocked_output, CHECK-OUTPUT: gpuctx report's text).
"""
import json
import os
import sys

from check import check


def line_of(path, mark):
    for i, line in enumerate(open(path), 1):
        if mark in line:
            return i
    check(False, "no line marked " + mark + " in " + path)


def python_case(mode, rep, out, src, site=True):
    """A Python child raised: the incident quotes the exception and its site (not with
    --no-stacks: no stack, but the type and message all the same)."""
    # (python3 may be pyenv's shim: a shell whose own helpers are forked too)
    inc = [i for i in rep["incidents"]
           if i["kind"] in ("poison-fork", "fork-with-gpu-state")]
    check(len(inc) == 1, "one fork incident", rep["incidents"])
    inc = inc[0]
    check(len(inc["pids"]) == 1, "one forked child", inc)
    child = [p for p in rep["processes"] if p["pid"] == inc["pids"][0]][0]
    excs = [e for e in rep["python_exceptions"] if e["pid"] == child["pid"]]
    check(excs, "the child's exceptions recorded", rep["python_exceptions"])
    want = {"torch": ("RuntimeError", "Cannot re-initialize CUDA in forked subprocess",
                      "RAISE-TORCH", "lazy_init"),
            "latin1": ("RuntimeError", "d\u00e9j\u00e0 vu: CUDA in forked subprocess, \u00bd done",
                       "RAISE-TORCH", "lazy_init"),
            "emoji": ("RuntimeError", "CUDA in forked subprocess \U0001F6AB", "RAISE-TORCH",
                      "lazy_init"),
            "numba": ("CudaDriverError", "CUDA initialized before forking", "RAISE-NUMBA",
                      "get_device_count"),
            "noise": ("KeyError", "x", "RAISE-NOISE", "worker")}[mode]
    text = "%s: %s" % (want[0], want[1])
    if site:
        text += " at %s:%d in %s" % (src, line_of(src, want[2]), want[3])
    check(any(e["type"] == want[0] and e["message"] == want[1] for e in excs),
          "the exception's type and message", excs)
    check(inc["raised"] == text, "the incident quotes: " + text, inc)
    if mode == "noise":
        check(inc["kind"] == "fork-with-gpu-state" and inc["severity"] == "warning" and
              inc["raised_about_gpu"] == 0, "nothing about the GPU: a warning", inc)
        verdict = [ln for ln in out.splitlines() if ln.startswith("gpuctx check: GPU STATE")]
        check(len(verdict) == 1 and "none used it." in verdict[0] and
              "raised" not in verdict[0],
              "none used it, and the verdict is not cluttered with it", out)
        return
    check("raised " + text in out, "check's verdict quotes it", out)
    check(inc["kind"] == "poison-fork" and inc["severity"] == "error" and
          inc["raised_about_gpu"] == 1 and inc["used"] == 1, "a poison-fork error", inc)
    check("POISON FORK" in out, "check says POISON FORK", out)
    if mode == "numba":
        check(inc["first_use"] == "cuDeviceGetCount -> CUDA_ERROR_NOT_INITIALIZED",
              "the refused call too", inc)
    else:
        check(inc["first_use"] is None and child["api_calls"] == 0,
              "no driver call at all (PyTorch refuses in Python)", (inc, child))


def blocked_case(rep, out):
    """The child forked while record's main loop was blocked: its refused call still seen."""
    inc = [i for i in rep["incidents"] if i["kind"] == "poison-fork"]
    check(len(inc) == 1 and inc[0]["severity"] == "error", "a poison-fork error",
          rep["incidents"])
    inc = inc[0]
    check(len(inc["pids"]) == 1 and inc["used"] == 1, "its one child used it", inc)
    check(inc["first_use"] == "cuDeviceGetCount -> CUDA_ERROR_NOT_INITIALIZED",
          "the child's refused call", inc)
    check("POISON FORK" in out and "Coverage incomplete" not in out,
          "the report says POISON FORK, with nothing unseen", out)
    check(not rep["api_coverage"]["gaps"], "no API coverage gap", rep["api_coverage"])
    holds = [h for h in rep["api_coverage"]["fork_holds"] if h["pid"] == inc["pids"][0]]
    check(len(holds) == 1 and holds[0]["released_by"] == "collector",
          "the child was held until its probes were in", rep["api_coverage"])


def main():
    mode, rep, out = sys.argv[1], json.load(open(sys.argv[2])), open(sys.argv[3]).read()
    if mode.startswith("py-"):
        mode, site = mode[3:], not mode.endswith("-nosite")
        return python_case(mode.replace("-nosite", ""), rep, out,
                           os.path.realpath(sys.argv[4]), site)
    if mode == "blocked":
        return blocked_case(rep, out)
    procs = rep["processes"]
    parent = [p for p in procs
              if any(os.path.basename(e["filename"]) == "api_cuda_fork_query"
                     for e in p.get("execs", []))]
    check(len(parent) == 1, "one api_cuda_fork_query process", procs)
    parent = parent[0]
    kids = [p for p in procs if p["ppid"] == parent["pid"]]
    check(len(kids) == 1, "one forked child", procs)
    child = kids[0]
    # a healthy process pays nothing: only cuInit (probed for every process) is recorded of
    # the parent, not its four cuDeviceGetCount calls
    check(parent["api_calls"] == 1, "the parent's cuDeviceGetCount calls are not probed",
          parent)
    incs = rep["incidents"]
    icc = [f for f in rep["findings"]
           if f["kind"] == "inherited-context-call" and f["pid"] == child["pid"]]
    if mode == "none":
        check(not icc, "no inherited call", icc)
        check(child["api_calls"] == 0, "the child called nothing", child)
        inc = [i for i in incs if i["kind"] == "fork-with-gpu-state"]
        check(len(inc) == 1 and inc[0]["severity"] == "warning", "a warning incident", incs)
        check("none used it" in rep["summary"]["verdict"], "verdict: none used it",
              rep["summary"])
        check("GPU STATE INHERITED" in out, "check says GPU STATE INHERITED", out)
        return
    check(len(icc) == 1, "one inherited-context-call for the child", rep["findings"])
    icc = icc[0]
    check(icc["severity"] == "error", "an error", icc)
    inc = [i for i in incs if i["kind"] == "poison-fork"]
    check(len(inc) == 1 and inc[0]["severity"] == "error", "a poison-fork error", incs)
    inc = inc[0]
    check(inc["pids"] == [child["pid"]] and inc["used"] == 1, "the child used it", inc)
    check("none used it" not in rep["summary"]["verdict"], "not 'none used it'", rep["summary"])
    check("POISON FORK" in out, "check says POISON FORK", out)
    if mode == "lookup":
        check(icc["call"] == "cuGetErrorName" and icc["api_ret_name"] == "CUDA_SUCCESS",
              "the call named, with its result", icc)
        check(icc["refused_call"] is None, "nothing refused", icc)
        check(inc["first_use"] == "cuGetErrorName -> CUDA_SUCCESS", "first use", inc)
        return
    ref = icc["refused_call"]
    check(ref and ref["call"] == "cuDeviceGetCount" and ref["ret"] == 3 and
          ref["ret_name"] == "CUDA_ERROR_NOT_INITIALIZED", "the refused call and its result",
          icc)
    want = "cuDeviceGetCount -> CUDA_ERROR_NOT_INITIALIZED"
    if mode == "errname":
        check(icc["call"] == "cuGetErrorName", "the first call named", icc)
        want += ", after cuGetErrorName"
    else:
        check(icc["call"] == "cuDeviceGetCount", "the first call named", icc)
    check(inc["first_use"] == want, "first use: " + want, inc)
    check(want in out, "check's verdict names it", out)
    check(not [g for g in rep["api_coverage"]["gaps"]], "no API coverage gap",
          rep["api_coverage"])


main()
