#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Assertions on `gpuctx report --json` for each integration scenario.

Usage: check.py SCENARIO REPORT.json [--pid PID]
Exits non-zero with the failed assertion and the relevant part of the report.
"""
import json
import os
import sys


class Report:
    def __init__(self, path):
        with open(path) as f:
            self.doc = json.load(f)
        self.procs = self.doc["processes"]
        self.files = self.doc["gpu_files"]
        self.findings = self.doc["findings"]
        self.by_pid = {}
        for p in self.procs:
            self.by_pid.setdefault(p["pid"], []).append(p)

    def exe_procs(self, name):
        """Processes whose last exec (or present-at-attach exe) is the binary `name`."""
        out = []
        for p in self.procs:
            names = [os.path.basename(e["filename"]) for e in p.get("execs", [])]
            if p.get("exe"):
                names.append(os.path.basename(p["exe"]))
            if name in names:
                out.append(p)
        return out

    def children(self, proc):
        return [p for p in self.procs if p["ppid"] == proc["pid"] and p is not proc
                and p.get("start_ns", 0) >= proc.get("start_ns", 0)]

    def find(self, kind, **kw):
        out = []
        for f in self.findings:
            if f["kind"] != kind:
                continue
            if all(f.get(k) == v for k, v in kw.items()):
                out.append(f)
        return out


def check(cond, msg, ctx=None):
    if not cond:
        print("check failed:", msg)
        if ctx is not None:
            print(json.dumps(ctx, indent=1)[:3000])
        sys.exit(1)


def one(lst, what):
    check(len(lst) == 1, "expected exactly one %s, got %d" % (what, len(lst)), lst)
    return lst[0]


def no_drops(r):
    check(r.doc["drops"]["total"] == 0, "events were lost", r.doc["drops"])


def root_and_child(r, wl, nchildren=1, pid=None):
    """The process running wl (under -a, the one of that pid: the machine may run another)
    and its children."""
    procs = [p for p in r.exe_procs(wl) if not pid or p["pid"] == pid]
    root = one([p for p in procs if not any(
        e for e in p.get("execs", [])[1:])] or procs, "process running " + wl)
    kids = r.children(root)
    check(len(kids) >= nchildren, "%s should have forked %d children" % (wl, nchildren),
          root)
    return root, kids


def errors(r):
    return [f for f in r.findings if f["severity"] == "error"]


def s_fork_child_ioctl(r, a):
    no_drops(r)
    parent, kids = root_and_child(r, "wl_fork_child_ioctl", pid=a.pid)
    child = kids[0]
    f = one(r.find("inherited-gpu-use"), "inherited-gpu-use finding")
    check(f["pid"] == child["pid"], "finding names the child", f)
    check(f["opener_pid"] == parent["pid"], "finding names the opener", f)
    check(f["chain"] == [parent["pid"], child["pid"]], "fork chain opener->child", f)
    check(f["exec_between"] is False, "no exec between fork and use", f)
    check(f["device_kind"] == "nvidiactl", "on nvidiactl", f)
    check(f["call"] in ("RM_ALLOC", "RM_CONTROL"), "names the RM call", f)
    check(f["status_name"] == "NV_OK", "the driver accepted it (status in params)", f)
    w = one(r.find("fork-with-gpu-state", pid=child["pid"]), "fork-with-gpu-state")
    check(w["later_used"] is True, "the child later used the inherited files", w)
    check(child["exit_code"] == 0 and parent["exit_code"] == 0, "both exited 0", r.procs)
    ctl = [g for g in r.files if g["kind"] == "nvidiactl" and g["opener_pid"] == parent["pid"]]
    g = one(ctl, "nvidiactl file opened by the parent")
    check(sorted(g["holders"]) == sorted([parent["pid"], child["pid"]]),
          "parent and child hold the same description", g)
    kinds = {o["kind"] for o in r.doc.get("gpu_objects", [])}
    for k in ("rm-client", "rm-device", "rm-channel-group", "rm-ctxshare", "rm-channel"):
        check(k in kinds, "decoded GPU object %s" % k, sorted(kinds))


def s_fork_exec_own(r, a):
    no_drops(r)
    check(not r.find("inherited-gpu-use") and not r.find("foreign-gpu-use"),
          "no inherited or foreign use", r.findings)
    check(not r.find("fork-with-gpu-state"), "the child exec'd: no fork-with-gpu-state",
          r.findings)
    check(len([g for g in r.files if g["kind"] == "nvidiactl"]) >= 2,
          "parent and child each opened their own nvidiactl", r.files)


def s_thread(r, a):
    no_drops(r)
    check(not errors(r), "a thread of the opener is not a finding", r.findings)
    p = one(r.exe_procs("wl_thread"), "wl_thread process")
    check(len(p["threads"]) >= 2, "the thread is recorded", p)


def s_double_fork(r, a):
    no_drops(r)
    top, kids = root_and_child(r, "wl_double_fork")
    mid = kids[0]
    grand = r.children(mid)
    check(len(grand) == 1, "the child forked a grandchild", r.procs)
    f = one(r.find("inherited-gpu-use", pid=grand[0]["pid"]), "finding for the grandchild")
    check(f["opener_pid"] == top["pid"], "opener is the top process", f)
    check(f["chain"] == [top["pid"], mid["pid"], grand[0]["pid"]], "full fork chain", f)


def s_exec_leak(r, a):
    no_drops(r)
    f = r.find("gpu-fd-across-exec")
    check(len(f) >= 1, "gpu-fd-across-exec raised", r.findings)
    check(any(x["device_kind"] == "nvidiactl" for x in f), "for the nvidiactl fd", f)
    check(not any(x["device_kind"] == "nvidia" for x in f),
          "not for nvidia0, which had O_CLOEXEC", f)
    check(not r.find("inherited-gpu-use") and not r.find("foreign-gpu-use"),
          "using its own fd after exec is not an inherited use", r.findings)


def s_segv(r, a):
    no_drops(r)
    parent, kids = root_and_child(r, "wl_segv")
    child = kids[0]
    check(child["signal"] == 11 and child["signal_name"] == "SIGSEGV", "child killed by SIGSEGV",
          child)
    use = one(r.find("inherited-gpu-use", pid=child["pid"]), "inherited use by the child")
    crash = one(r.find("crash-after-inheritance", pid=child["pid"]), "crash-after-inheritance")
    check(crash["severity"] == "error", "crash is an error", crash)
    check(crash["related_finding"] == use["id"], "crash links the inherited use", crash)
    check(crash["opener_pid"] == parent["pid"], "crash names the opener", crash)


def s_kfd(r, a):
    no_drops(r)
    parent, kids = root_and_child(r, "wl_kfd")
    child = kids[0]
    k = one(r.find("inherited-gpu-use", pid=child["pid"], device_kind="kfd"), "kfd inherited use")
    check(k["err"] == 9 and k["errno_name"] == "EBADF", "KFD answered EBADF", k)
    check(k["opener_pid"] == parent["pid"], "opener is the parent", k)
    d = one(r.find("inherited-gpu-use", pid=child["pid"], device_kind="drm-render"),
            "render-node inherited use")
    check(d["err"] == 0, "the render node accepted the child's ioctl", d)
    kinds = {o["kind"] for o in r.doc.get("gpu_objects", [])}
    check("kfd-queue" in kinds and "drm-ctx" in kinds, "queue and ctx decoded", sorted(kinds))


def s_fdpass(r, a):
    no_drops(r)
    f = one(r.find("foreign-gpu-use"), "foreign-gpu-use")
    check(not r.find("inherited-gpu-use"), "a passed fd is not an inherited one", r.findings)
    parent = one(r.exe_procs("wl_fdpass"), "wl_fdpass")
    check(f["opener_pid"] == parent["pid"] and f["pid"] != parent["pid"], "names both", f)


def s_attach(r, a):
    pid = a.pid
    p = one(r.by_pid.get(pid, []), "attached process")
    check(p["present_at_attach"] is True, "marked present at attach", p)
    present = [g for g in r.files if g["present_at_attach"] and g["kind"] == "nvidiactl"]
    check(len(present) >= 1, "its GPU files are discovered at attach", r.files)
    kids = [c for c in r.procs if c["ppid"] == pid]
    check(len(kids) == 1, "the fork after attach is seen", r.procs)
    f = one(r.find("inherited-gpu-use", pid=kids[0]["pid"]), "inherited use after attach")
    check(f["opener_pid"] == pid, "names the attached process as opener", f)


def s_attach_threads(r, a):
    p = one(r.by_pid.get(a.pid, []), "attached process")
    check(p["present_at_attach"], "present at attach", p)
    check(len(p["threads"]) >= 4, "its 3 threads are recorded as well as the leader", p)


def s_fork_storm(r, a):
    no_drops(r)
    root = one(r.exe_procs("wl_fork_storm"), "wl_fork_storm")
    desc = [p for p in r.procs if p["ppid"] == root["pid"]]
    check(len(desc) == 500, "500 children seen, got %d" % len(desc))
    grand = [p for p in r.procs if p["ppid"] in {d["pid"] for d in desc}]
    check(len(grand) == 50, "50 grandchildren seen, got %d" % len(grand))
    missing = [p["pid"] for p in desc + grand if p["exit_code"] is None and p["signal"] is None]
    check(not missing, "every exit seen", missing[:20])
    bad = [p for i, p in enumerate(desc) if p["exit_code"] not in range(7)]
    check(not bad, "exit codes recorded", bad[:5])


def s_nongpu(r, a):
    no_drops(r)
    check(r.doc["events"]["ioctl"] == 0, "no ioctl reported", r.doc["events"])
    check(not r.files, "no GPU file", r.files)


def s_demo(r, a):
    no_drops(r)
    kinds = {f["kind"] for f in r.findings}
    for k in ("inherited-gpu-use", "fork-with-gpu-state", "crash-after-inheritance"):
        check(k in kinds, "demo shows %s" % k, r.findings)
    spawn = [p for p in r.procs if any("--spawn-worker" in e["argv"] for e in p.get("execs", []))]
    check(len(spawn) == 1, "one spawn worker", r.procs)
    check(not [f for f in r.findings if f["pid"] == spawn[0]["pid"] and
               f["severity"] == "error"], "the spawn worker is clean", r.findings)
    # the first lines a newcomer reads (issue 26): three workers forked within a millisecond
    # are no re-creation; the channel groups the raw ioctls made are GPU contexts
    s = r.doc["summary"]
    check("generation" not in s["verdict"] and "re-created" not in s["verdict"],
          "no re-creation claimed", s["verdict"])
    check(s["worker_generations"] <= 1, "one worker generation", s)
    tsg = [o for o in r.doc["gpu_objects"] if o["kind"] == "rm-channel-group"]
    check(len(tsg) >= 2 and s["driver_contexts_created"] == len(tsg) and
          s["contexts_created"] == 0, "every channel group counted as a GPU context", s)


def api_root(r, wl):
    return one([p for p in r.exe_procs(wl)], "process running " + wl)


def s_api_cuda(r, a):
    no_drops(r)
    parent = api_root(r, "api_cuda_fork")
    kids = [p for p in r.procs if p["ppid"] == parent["pid"]]
    check(len(kids) == 1, "one forked child", r.procs)
    child = kids[0]
    icc = one(r.find("inherited-context-call", pid=child["pid"]), "inherited-context-call")
    check(icc["severity"] == "error", "is an error", icc)
    check(icc["opener_pid"] == parent["pid"], "names the parent", icc)
    # the child's first call: refused in user space, as the real libcuda does (no ioctl)
    check(icc["call"] == "cuCtxSetCurrent", "names the first call", icc)
    check(icc["api_ret_name"] == "CUDA_ERROR_NOT_INITIALIZED", "return code by name", icc)
    check(icc["chain"] == [parent["pid"], child["pid"]], "names the fork", icc)
    ctxs = r.doc["api_contexts"]
    prim = [c for c in ctxs if c["primary"] and c["creator_pid"] == parent["pid"]]
    check(len(prim) == 1, "the parent's primary context", ctxs)
    check(icc["context_handle"] == prim[0]["handle"], "names the parent's context", icc)
    check(prim[0]["kernel_objects"], "joined to the RM objects created by the call", prim[0])
    objs = {o["id"]: o["kind"] for o in r.doc["gpu_objects"]}
    kinds = {objs.get(i) for i in prim[0]["kernel_objects"]}
    check("rm-channel-group" in kinds, "the context's channel group is joined", kinds)
    check(any(c["create_fn"].startswith("cuCtxCreate") and c["destroy_ns"] for c in ctxs),
          "cuCtxCreate context created and destroyed", ctxs)
    mem = [m for m in r.doc["api_memory"] if m["size"] == 2 * 1024 * 1024]
    check(len(mem) == 1, "cuMemAlloc through the cuGetProcAddress pointer was seen",
          r.doc["api_memory"])
    check(mem[0]["free_ns"], "and its cuMemFree", mem)
    via = [p for p in r.doc["probes"] if p["how"] != "symbol"]
    check({p["symbol"] for p in via} >= {"cuMemAlloc", "cuCtxSetCurrent"},
          "the non-exported addresses cuGetProcAddress returns are probed", r.doc["probes"])
    skipped = [p for p in r.doc["probes"] if p["endbr64_skipped"]]
    check(skipped, "probes skip endbr64", r.doc["probes"][:3])
    sc = [c for c in prim[0]["currents"]]
    check(sc, "current-context changes recorded", prim[0])


def s_api_cuda_single(r, a):
    s_api_cuda(r, a)


def s_api_cuda_stub(r, a):
    no_drops(r)
    errs = r.find("api-error")
    check(errs and all(e["api_ret_name"] == "CUDA_ERROR_STUB_LIBRARY" for e in errs),
          "every call returned 34 by name", errs)
    check(any(e["call"] == "cuInit" for e in errs), "cuInit seen on the real stub", errs)
    check(not r.find("inherited-context-call"), "the parent never initialised CUDA", r.findings)


def s_api_hip(r, a):
    no_drops(r)
    parent = api_root(r, "api_hip_fork")
    child = one([p for p in r.procs if p["ppid"] == parent["pid"]], "forked child")
    icc = one(r.find("inherited-context-call", pid=child["pid"]), "inherited-context-call")
    check(icc["api_ret_name"].startswith("hipError"), "HIP return code by name", icc)
    check(icc["opener_pid"] == parent["pid"], "names the parent", icc)
    # the real runtime answers the child from the inherited state: it reaches no driver file
    check(not r.find("inherited-gpu-use", pid=child["pid"]), "the child issued no ioctl",
          r.findings)
    ctxs = [c for c in r.doc["api_contexts"] if c["creator_pid"] == parent["pid"]]
    check(any(c["vendor"] == "hip" and c["mem_total"] >= 1 << 20 for c in ctxs),
          "hipMalloc memory attributed to a HIP context", ctxs)


def s_api_container(r, a):
    no_drops(r)
    libs = [p for p in r.doc["probes"] if p["lib"].startswith("/proc/")
            and p["lib"].endswith("/nslib/libcuda.so.1")]
    check(libs and not any(p["error"] for p in libs),
          "the namespace's libcuda probed through /proc/PID/root", r.doc["probes"][:4])
    check(r.doc["events"]["api"] >= 1, "its cuInit was seen", r.doc["events"])
    check(not r.find("api-error"), "cuInit succeeded on the emulated driver", r.findings)


def s_api_hip_real(r, a):
    no_drops(r)
    probes = [p for p in r.doc["probes"] if "libamdhip64" in p["lib"]]
    check(any(p["symbol"] == "hipInit" and not p["error"] for p in probes),
          "hipInit@@hip_4.2 of the real runtime probed", probes[:5])
    errs = r.find("api-error", call="hipInit")
    check(errs and errs[0]["api_ret_name"] == "hipErrorInvalidDevice",
          "the real runtime's hipInit returned 101 by name", r.findings)


def s_sigkill(r, a):
    check(len(r.procs) >= 3, "processes recorded before the kill survive", len(r.procs))
    check(r.doc["meta"]["clean_end"] is False, "the report says the recording was cut",
          r.doc["meta"])


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("report")
    ap.add_argument("--pid", type=int)
    a = ap.parse_args()
    fn = globals().get("s_" + a.scenario)
    if not fn:
        print("no such scenario:", a.scenario)
        return 2
    fn(Report(a.report), a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
