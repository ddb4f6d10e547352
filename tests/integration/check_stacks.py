#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check_stacks.py KIND JSON SOURCE [crash|unknown|cuda|cudause|dataloader|gone]: the sites
gpuctx names for a blame workload (tests/workloads/blame.py for KIND=py, wl_blame.c for KIND=c,
wl_blame_cxx.cc for KIND=cxx, wl_inline.c for KIND=inline) are the functions and lines that
SOURCE marks with BLAME-* (INLINE-*) comments. Prints what is wrong and exits 1."""
import json
import os
import sys

kind, path, source = sys.argv[1:4]
# mode: "" | crash | unknown | cuda | cudause | dataloader | gone
mode = sys.argv[4] if len(sys.argv) > 4 else ""
rep = json.load(open(path))
marks = {}
for n, line in enumerate(open(source), 1):
    for tag in ("BLAME-", "INLINE-"):
        if tag in line:
            marks[line.split(tag)[1].split()[0]] = n
bad = []


def need(cond, what):
    if not cond:
        bad.append(what)


def frames_of(stack):
    return [f for f in stack if f.get("function")]


use = [f for f in rep["findings"] if f["kind"] == "inherited-gpu-use"]
if mode == "cudause":
    # no ioctl in the child: the findings about its CUDA calls carry the sites
    use = [f for f in rep["findings"] if (f.get("stacks") or {}).get("use")]
need(use, "no finding about the child's use")
if use:
    f = use[0]
    st = f.get("stacks", {})
    sites = f.get("sites", {})
    roles = ["init", "fork", "use"] + (["crash"] if mode == "crash" else [])
    if mode == "crash":
        # the crash stack belongs to the crash-after-inheritance finding
        crash = [c for c in rep["findings"] if c["kind"] == "crash-after-inheritance"]
        need(crash, "no crash-after-inheritance finding")
        if crash:
            st = dict(st, crash=crash[0].get("stacks", {}).get("crash"))
            sites = dict(sites, crash=crash[0].get("sites", {}).get("crash"))
    for r in roles:
        need(r in st and st[r], "finding has no %s stack" % r)
    if kind == "py" and mode == "gone":
        # the process exited before the collector resolved its stacks: the function is
        # right, the line past the table's prefix is unknown, and the note says why
        want = {"init": "init_gpu", "fork": "start_worker", "use": "worker_loop"}
        for r in roles:
            fr = (sites.get(r) or {}).get("frame") or {}
            note = (sites.get(r) or {}).get("note") or ""
            need(fr.get("function") == want[r] and fr.get("line") is None and
                 os.path.basename(fr.get("file") or "") == os.path.basename(source),
                 "%s site is %r, want %s without a line" % (r, fr, want[r]))
            need("line table cut" in note, "%s: no 'line table cut' note: %r" % (r, note))
    elif kind == "py" and mode != "unknown":
        want = {"init": ("init_gpu", "INIT-CUDA" if "cuda" in mode else "INIT"),
                "fork": ("start_worker", "FORK"),
                "use": ("worker_loop", "USE-CUDA" if mode == "cudause" else "USE"),
                "crash": ("worker_loop", "CRASH")}
        if mode == "dataloader":
            want = {"init": ("build_model", "INIT"), "fork": ("main", "FORK"),
                    "use": ("Frames.__getitem__", "USE")}
        for r in roles:
            fr = (sites.get(r) or {}).get("frame") or {}
            fn, mark = want[r]
            need(fr.get("function") == fn and fr.get("line") == marks[mark] and
                 os.path.basename(fr.get("file") or "") == os.path.basename(source),
                 "%s site is %r, want %s at %s:%d" % (r, fr, fn, source, marks[mark]))
            need((sites.get(r) or {}).get("note") is None,
                 "%s stack has a note: %s" % (r, (sites.get(r) or {}).get("note")))
        # the caller chain is there too, interleaved with native frames
        if mode in ("cuda", "cudause", "dataloader"):
            # the site's text names the CUDA call it made
            need("cuInit" in (sites.get("init") or {}).get("text", ""),
                 "init site does not name cuInit: %r" % (sites.get("init") or {}).get("text"))
        if mode == "dataloader":
            fork = [x.get("file") or "" for x in st.get("fork", [])]
            need(any(f.endswith("torch/utils/data/dataloader.py") for f in fork),
                 "fork stack lacks torch's dataloader.py: %s" % fork)
            # torch's long functions (line tables past the kernel's prefix) have their
            # lines too: the worker's start() that forked, the worker loop's fetch()
            for r, fn, text in (("fork", "_MultiProcessingDataLoaderIter.__init__", ".start()"),
                                ("use", "_worker_loop", "fetch(")):
                py = [x for x in st.get(r, []) if x.get("kind") == "python"]
                need(all(x.get("line") for x in py), "%s: Python frames without a line: %s" %
                     (r, [x["function"] for x in py if not x.get("line")]))
                hit = [x for x in py if x["function"] == fn]
                src = open(hit[0]["file"]).read().split("\n") if hit else []
                line = hit[0].get("line") or 0 if hit else 0
                need(0 < line <= len(src) and text in src[line - 1],
                     "%s: %s at line %s, not a line with %s" % (r, fn, line, text))
        init = [x["function"] for x in st.get("init", [])]
        need("main" in init and "<module>" in init, "init stack lacks main/<module>: %s" % init)
        need(any(x.get("kind") == "native" for x in st.get("init", [])),
             "init stack has no native frames")
    elif kind == "py":
        for r in roles:
            note = (sites.get(r) or {}).get("note") or ""
            need("Python frames unavailable" in note, "%s: no 'Python frames unavailable' "
                 "note: %r" % (r, note))
            need(all(x["kind"] == "native" for x in st.get(r, [])), "%s: Python frames "
                 "from an unknown layout" % r)
    elif kind == "cxx":
        # C++: the sites name the functions demangled, at the marked lines
        want = {"init": ("wl::Gpu::init()", "INIT"), "fork": ("wl::Pool::spawn(bool)", "FORK"),
                "use": ("wl::worker::step(int)", "USE")}
        for r in roles:
            fr = (sites.get(r) or {}).get("frame") or {}
            fn, mark = want[r]
            need(fr.get("function") == fn and fr.get("line") == marks[mark],
                 "%s site is %r, want %s at line %d" % (r, fr, fn, marks[mark]))
    elif kind == "inline":
        # the inlined function at the ioctl's line, then its caller at the call's line, at
        # the same address; the site is the inlined function (the user's line that called)
        fns = frames_of(st.get("use", []))
        i = [k for k, x in enumerate(fns) if x["function"] == "use_ctl"]
        need(i, "use stack lacks use_ctl: %s" % [x["function"] for x in fns])
        if i:
            inl, caller = fns[i[0]], (fns[i[0] + 1:] or [{}])[0]
            need(inl.get("inlined") is True and inl["line"] == marks["IOCTL"],
                 "use_ctl is %r, want inlined at line %d" % (inl, marks["IOCTL"]))
            need(caller.get("function") == "worker_step" and
                 caller.get("line") == marks["CALL"] and not caller.get("inlined") and
                 caller.get("address") == inl["address"],
                 "use_ctl's caller is %r, want worker_step at line %d, same address" %
                 (caller, marks["CALL"]))
            fr = (sites.get("use") or {}).get("frame") or {}
            need(fr.get("function") == "use_ctl", "use site is %r, want use_ctl" % fr)
    else:
        want = {"init": ("setup_gpu", None), "fork": ("spawn_worker", None),
                "use": ("worker_step", None), "crash": ("worker_crash", "CRASH")}
        for r in roles:
            fns = frames_of(st.get(r, []))
            fn, mark = want[r]
            hit = [x for x in fns if x["function"] == fn]
            need(hit, "%s stack lacks %s: %s" % (r, fn, [x["function"] for x in fns]))
            if hit and mark:
                need(hit[0]["line"] == marks[mark], "%s: %s at line %s, want %d" %
                     (r, fn, hit[0]["line"], marks[mark]))
            need(all(x.get("module") for x in fns), "%s: native frame without module" % r)
        # callers in main: the lines of the calls
        for r, mark in (("init", "MAIN-INIT"), ("fork", "MAIN-FORK")):
            m = [x for x in st.get(r, []) if x["function"] == "main"]
            need(m and m[0]["line"] == marks[mark], "%s: main at %s, want line %d" %
                 (r, m and m[0]["line"], marks[mark]))
        u = [x for x in st.get("use", []) if x["function"] == "spawn_worker"]
        need(u and u[0]["line"] == marks["STEP"], "use: spawn_worker line %s, want %d" %
             (u and u[0]["line"], marks["STEP"]))
for b in bad:
    print("check_stacks: " + b)
sys.exit(1 if bad else 0)
