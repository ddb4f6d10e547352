#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Call stacks on the timeline events they were taken at (issue 11).

  check_stacks.py SCENARIO F.pftrace F.json [--pipe]
    SCENARIO c:   build/workloads/wl_blame DIR crash (tests/workloads/wl_blame.c)
    SCENARIO py:  blame.py DIR cudause over the libcuda double (tests/workloads/blame.py)
    --pipe:       the trace was read from a pipe (no read-ahead): a stack written after its
                  event (the collector resolves stacks on a thread of its own, so usually
                  all of them) is an instant "stack: <role>" of its own instead

In both formats, each event a stack belongs to carries it, with the workload's function at the
right place: the GPU initialisation (the first open's holding slice, or cuInit), the fork
instant in the parent, the child's first use (its ioctl, or its refused cuMemAlloc), the crash (a fatal
signal instant). Perfetto: TrackEvent.callstack decoded with protoc, frames outermost first,
plus a "site" debug annotation; Chrome JSON: "stack" (one frame per line, innermost first) and
"site" args. No stack is shown twice, and none is left over as a "stack: <role>" instant.
"""
import sys

import check_export as ce

# role -> (how to find the event, the workload function that must be in its stack, the
# function that called it: must be further out)
SCENARIOS = {
    "c": {
        "init": (("gpu-file", "opened", "parent"), "setup_gpu", "main"),
        "fork": (("fork", "fork ", "parent"), "spawn_worker", "main"),
        "use": (("ioctl", "RM_ALLOC", "child"), "worker_step", "spawn_worker"),
        "crash": (("signal", "fatal signal SIGSEGV", "child"), "worker_crash", "worker_step"),
    },
    "py": {
        "init": (("api", "cuInit", "parent"), "init_gpu", "main"),
        "fork": (("fork", "fork ", "parent"), "start_worker", "main"),
        "use": (("api", "cuMemAlloc", "child"), "worker_loop", "start_worker"),
    },
}


def fail(msg):
    print("check_stacks: FAIL: %s" % msg, file=sys.stderr)
    sys.exit(1)


def frames_of(e, fmt):
    """Function names of the event's stack, innermost first."""
    if fmt == "perfetto":
        return [f[0] for f in reversed(e.get("callstack") or [])]
    return (e["args"].get("stack") or "").split("\n") if e["args"].get("stack") else []


def position(frames, fn):
    """Index of the first frame naming function fn (as a whole word), or -1."""
    for i, f in enumerate(frames):
        words = f.replace("(", " ").replace(")", " ").replace("+", " ").split()
        if fn in words:
            return i
    return -1


def check_format(tl, fmt, scenario, pipe):
    # gpuctx forks the workload, which forks its worker: the parent is the workload
    forks = [e for e in tl.events if e["cat"] == "fork" and e["ph"] == "I" and
             e["name"].startswith("fork ")]
    children = {e["args"]["child_pid"] for e in forks}
    forks = [e for e in forks if tl.tracks[e["track"]]["pid"] in children]
    if len(forks) != 1:
        fail("%s: expected one fork instant, got %d" % (fmt, len(forks)))
    parent = tl.tracks[forks[0]["track"]]["pid"]
    child = forks[0]["args"]["child_pid"]
    with_stack = [e for e in tl.events if e["cat"] != "finding" and
                  (e.get("callstack") or "stack" in e["args"])]
    seen = []
    for role, ((cat, name, who), fn, caller) in SCENARIOS[scenario].items():
        pid = parent if who == "parent" else child
        cands = [e for e in with_stack if e["cat"] == cat and e["name"].startswith(name) and
                 tl.tracks[e["track"]]["pid"] == pid]
        if pipe and not cands:
            cat, name = "stack", "stack: " + role
            cands = [e for e in with_stack if e["cat"] == cat and e["name"] == name and
                     tl.tracks[e["track"]]["pid"] == pid]
        if len(cands) != 1:
            fail("%s: %s: expected one %s event %r of pid %d with a stack, got %d (events "
                 "with stacks: %s)" % (fmt, role, cat, name, pid, len(cands),
                                       [(e["cat"], e["name"]) for e in with_stack]))
        e = cands[0]
        seen.append(e["seq"])
        fr = frames_of(e, fmt)
        i, j = position(fr, fn), position(fr, caller)
        if i < 0:
            fail("%s: %s: no frame of %s in the stack of %r: %s" % (fmt, role, fn, e["name"], fr))
        if j <= i:
            fail("%s: %s: %s is not called from %s in the stack of %r (frames innermost "
                 "first): %s" % (fmt, role, fn, caller, e["name"], fr))
        # the site: the user's innermost frame, so at or inside the workload function
        site = e["args"].get("site", "")
        if not any(position([site], f.split(" (")[0].split(" in ")[-1]) >= 0 and f
                   for f in fr[:i + 1]):
            fail("%s: %s: site %r names no frame of %s or inside it: %s" % (fmt, role, site,
                                                                         fn, fr[:i + 1]))
        if fmt == "perfetto":
            if "stack" in e["args"]:
                fail("perfetto: %s: the stack is also a debug annotation" % role)
            cs = e["callstack"]
            k = [f[0] for f in cs].index(fr[i]) if fr[i] in [f[0] for f in cs] else -1
            if k < 0 or not cs[k][1] or not cs[k][2]:
                fail("perfetto: %s: frame %r has no source file and line: %s" % (role, fn, cs))
    # what a Python child that inherited GPU state raised is an instant "raised TYPE: message"
    # on its thread, with the raise's stack (ctypes' look-ups of cuMemAlloc_v2 raise
    # AttributeError in blame.py's worker); read from a pipe, a stack written after its
    # exception is the instant "stack: raise" instead
    raised = [e for e in tl.events if e["cat"] == "python" and e["ph"] == "I" and
              e["name"].startswith("raised ") and tl.tracks[e["track"]]["pid"] == child]
    if scenario == "py" and not any(e in with_stack for e in raised):
        fail("%s: no \"raised ...\" instant with its stack in the child: %s" % (
            fmt, [(e["name"], e["args"]) for e in raised]))
    if scenario == "py" and any(not e["args"].get("exception") or
                                e["name"] != ("raised " + e["args"]["exception"])[:87] and
                                not e["name"].endswith("...") for e in raised):
        fail("%s: a raised instant's name is not its exception: %s" % (
            fmt, [(e["name"], e["args"]) for e in raised]))
    extra = [e for e in with_stack if e["seq"] not in seen and e not in raised and
             not (pipe and e["name"] == "stack: raise" and
                  tl.tracks[e["track"]]["pid"] == child)]
    if extra:
        fail("%s: stacks on unexpected events: %s" % (fmt, [(e["cat"], e["name"], e["args"].get(
            "site")) for e in extra]))
    print("%s: ok: %d events carry their stack" % (fmt, len(seen)))


def main():
    args = sys.argv[1:]
    pipe = "--pipe" in args
    args = [a for a in args if a != "--pipe"]
    if len(args) != 3 or args[0] not in SCENARIOS:
        fail("usage: check_stacks.py c|py F.pftrace F.json [--pipe]")
    scenario, pf, js = args
    try:
        check_format(ce.load_perfetto(pf, ce.PROTO), "perfetto", scenario, pipe)
        check_format(ce.load_chrome(js), "chrome", scenario, pipe)
    except ce.CheckError as e:
        fail(str(e))


if __name__ == "__main__":
    main()
