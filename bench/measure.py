# SPDX-License-Identifier: GPL-2.0
"""The measuring sections of the overhead benchmark (bench/run.py): the ioctl path, the
per-program run time, process churn, API probes, event throughput, start and stop, the
collector, and the machine description. The bench_* functions return the raw results that
bench/results.py renders (and bench/run.py saves in bench/out/raw.json).
"""
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import time

from common import (G, LIBCUDA, LOADER, LOOPS, QUIET, TOP, Tracer, fmt_rate, foreign_progs, log,
                    med, parse_pairs, run_cmd, sh, stop_proc, summary_of, tail)


# ---- 1. ioctl path ----

IOCTL_ROWS = [
    ("a", "non-GPU fd, followed process"),
    ("b", "non-GPU fd, process not followed"),
    ("c1", "GPU fd, emulated driver (FUSE)"),
    ("c2", "GPU fd, registered tmpfs file, `_IO('F', 0)` (no parameters, ENOTTY)"),
    ("c2x", "GPU fd, registered tmpfs file, RM_CONTROL cmd (ENOTTY)"),
]


def bpftrace_script(env):
    keys = "".join(f"@dev[{d}, {i}] = 1; " for d, i in (env.gpu_key, env.fake_key))
    return (
        "BEGIN { @fol[cpid] = 1; " + keys + "} "
        "tracepoint:sched:sched_process_fork /@fol[args->parent_pid]/ "
        "{ @fol[args->child_pid] = 1; } "
        "tracepoint:syscalls:sys_enter_ioctl /@fol[pid]/ { "
        "$t = curtask->files->fdt; "
        "if (args->fd < $t->max_fds) { "
        "$i = (*($t->fd + args->fd))->f_inode; "
        "if ((($i->i_mode & 0xf000) == 0x2000 && ($i->i_rdev >> 20) == 195) || "
        "@dev[$i->i_sb->s_dev, $i->i_ino]) { @gpu[args->cmd] = count(); } } } "
        "END { clear(@fol); clear(@dev); }")


def ioctl_tracers(env):
    g = ["record", "-q"]
    return [
        Tracer("empty", wrap=lambda c: [LOADER, "ioctl", "--"] + c),
        Tracer("gpuctx", wrap=lambda c: [G] + g + ["-o", env.path("ioctl.gctx")] + env.devs
               + ["--"] + c),
        Tracer("gpuctx-a", daemon=[G] + g + ["-a", "-o", env.path("ioctl-a.gctx")] + env.devs,
               ready="attached to"),
        Tracer("bpftrace", wrap=lambda c: ["bpftrace", "-e", bpftrace_script(env), "-c",
                                           " ".join(c)]),
        Tracer("strace", wrap=lambda c: ["strace", "-f", "-qq", "-e", "trace=ioctl", "-o",
                                         env.path("strace.out"), "--"] + c),
        Tracer("diag-core", wrap=lambda c: [LOADER, "filter-core"] + env.loader_devs + ["--"]
               + c),
        Tracer("diag-typed", wrap=lambda c: [LOADER, "filter-typed"] + env.loader_devs
               + ["--"] + c),
        Tracer("diag-cmd", wrap=lambda c: [LOADER, "filter-cmd"] + env.loader_devs + ["--"]
               + c),
        Tracer("diag-fast", wrap=lambda c: [LOADER, "filter-fast"] + env.loader_devs + ["--"]
               + c),
    ]


def release_hold(env, proc, timeout=120):
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            fd = os.open(env.fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
            return
        except OSError:
            if proc.poll() is not None:
                return
            time.sleep(0.005)
    raise RuntimeError("the followed loop never reached its hold point")


def ioctl_once(env, tracer, tag, secs):
    """One suite run: rows a, c1, c2, c2x in the followed process, b in another one."""
    res = env.path("ioctl.res")
    if os.path.exists(res):
        os.unlink(res)
    specs = [f"a={env.plain},fionread", f"c1={env.fakectl},nv-version",
             f"c2={env.gpu},nv-none", f"c2x={env.gpu},nv-control"]
    suite = [LOOPS, "ioctl", "--secs", str(secs), "--out", res, "--hold", env.fifo] + specs
    name = tracer.name if tracer else "untraced"
    logp = env.path(f"{name}.{tag}.log")
    if tracer and tracer.daemon:
        tracer.start(env, tag)
    argv = tracer.wrap(suite) if tracer and tracer.wrap else suite
    lf = open(logp, "w")
    p = subprocess.Popen(argv, stdout=lf, stderr=subprocess.STDOUT)
    try:
        t0 = time.time()
        while not os.path.exists(res):
            if p.poll() is not None:
                raise RuntimeError(f"{name}: exited {p.returncode}: {tail(logp)}")
            if time.time() - t0 > 300:
                raise RuntimeError(f"{name}: no result in 300 s")
            time.sleep(0.01)
        b = subprocess.run([LOOPS, "ioctl", "--secs", str(secs), f"b={env.plain},fionread"],
                           capture_output=True, text=True, timeout=120)
        release_hold(env, p)
        p.wait(120)
    finally:
        stop_proc(p)
        lf.close()
        if tracer and tracer.daemon:
            tracer.stop()
            with open(logp, "a") as lf2, open(tracer.out, errors="replace") as tf:
                lf2.write(tf.read())
    with open(res) as f:
        out = parse_pairs(f.read())
    out.update(parse_pairs(b.stdout))
    meta = summary_of(logp)
    if name == "bpftrace":
        with open(logp, errors="replace") as f:
            hits = sum(int(x) for x in re.findall(r"@gpu\[\d+\]: (\d+)", f.read()))
        meta = {"events": hits, "lost": 0}
    return out, meta


def interleaved(kind, rounds, tracers, once, require_clean=True, extra_until=None):
    """Run rounds of [untraced, every tracer (rotated), untraced] with once(tracer or None,
    tag) -> (values, meta). A round is clean when no foreign tracing BPF program was loaded at
    its start or end; unclean rounds are rerun (at most 2 extra) and left out when at least
    min(3, rounds) clean ones exist."""
    runs = []
    while sum(r["clean"] for r in runs) < rounds and len(runs) < rounds + 2:
        i = len(runs)
        if i >= rounds and extra_until and time.time() > extra_until:
            log(f"{kind}: no time left for another round")
            break
        log(f"{kind} round {i + 1} ({sum(r['clean'] for r in runs)}/{rounds} clean so far)")
        if require_clean:
            QUIET.wait(f"{kind} {i + 1}")
        before = foreign_progs()
        vals, meta = {}, {}
        b1, _ = once(None, f"{kind}-r{i}u1")
        for t in tracers[i % len(tracers):] + tracers[:i % len(tracers)]:
            try:
                vals[t.name], meta[t.name] = once(t, f"{kind}-r{i}")
            except (RuntimeError, subprocess.SubprocessError, OSError, KeyError) as e:
                log(f"  {t.name}: {e}")
                vals[t.name], meta[t.name] = {"error": str(e)}, None
            wait_released()
        b2, _ = once(None, f"{kind}-r{i}u2")
        vals["untraced"] = {k: (b1[k] + b2[k]) / 2 for k in b1 if k in b2}
        after = foreign_progs()
        runs.append({"clean": not require_clean or (before == 0 and after == 0),
                     "vals": vals, "meta": meta,
                     "foreign": (before, after)})
    clean = [r for r in runs if r["clean"]]
    use = clean if len(clean) >= min(3, rounds) else runs
    names = ["untraced"] + [t.name for t in tracers]
    return {"raw": {n: [r["vals"].get(n, {}) for r in use] for n in names},
            "meta": {n: [r["meta"].get(n) for r in use] for n in names},
            "attempts": len(runs), "used": len(use), "clean": len(clean),
            "foreign": [r["foreign"] for r in runs], "require_clean": require_clean}


def bench_ioctl(env, rounds, secs, extra_until=None):
    res = interleaved("ioctl", rounds, ioctl_tracers(env),
                      lambda t, tag: ioctl_once(env, t, tag, secs), extra_until=extra_until)
    res["rows"] = IOCTL_ROWS
    return res


# ---- 2. process churn ----

CHURN_ROWS = [("fork-exit", "fork + exit"), ("fork-exec", "fork + exec + wait"),
              ("spawn", "posix_spawn + wait")]


def churn_tracers(env):
    return [
        Tracer("empty-sched", wrap=lambda c: [LOADER, "sched", "--"] + c),
        # the least any tracer that records ioctls attaches on this kernel (no kprobes)
        Tracer("empty-ioctl", wrap=lambda c: [LOADER, "ioctl", "--"] + c),
        Tracer("empty-all", wrap=lambda c: [LOADER, "all", "--"] + c),
        Tracer("gpuctx", wrap=lambda c: [G, "record", "-q", "-o", env.path("churn.gctx")]
               + env.devs + ["--"] + c),
        Tracer("strace", wrap=lambda c: ["strace", "-f", "-qq", "-o", env.path("strace.out"),
                                         "--"] + c),
    ]


CHURN_SECS_PER_LOOP_SECS = 4  # churn loops run this many times --secs
CHURN_ROUNDS = 15


def bench_churn(env, rounds, secs, extra_until=None):
    # getppid last: what the tracepoints cost a system call nobody traces (the churn floor)
    cmd = [LOOPS, "procs", "--secs", str(secs)] + [k for k, _ in CHURN_ROWS] + ["getppid"]

    def once(t, tag):
        out, logp = run_cmd(env, t, cmd, tag)
        return parse_pairs(out), summary_of(logp)

    res = interleaved("churn", rounds, churn_tracers(env), once, extra_until=extra_until)
    res["rows"] = CHURN_ROWS
    return res


# ---- 3. API probes ----

API_FUNCS = ["nop5", "push", "endbr64"]


def gpuctx_api_state():
    """(available, reason) for the gpuctx row on the CUDA test double."""
    if not os.path.exists(LIBCUDA):
        return False, ("the test-double CUDA library (build/doubles/libcuda.so.1) is not built "
                       "yet: it belongs to the API-level context tracing issue")
    try:
        h = subprocess.run([G, "record", "--help"], capture_output=True, text=True).stdout
    except OSError as e:
        return False, f"cannot run gpuctx: {e}"
    if "--libcuda" not in h:
        return False, "gpuctx record has no --libcuda option yet (API probes not merged)"
    return True, ""


def first_insn(path, sym, n=1):
    """The first n instructions of sym, joined with '; '."""
    out = sh(f"objdump -d --no-show-raw-insn {path} 2>/dev/null | "
             f"grep -A{n} '<{sym}>:' | tail -{n}")
    insns = []
    for line in out.splitlines():
        m = re.match(r"\s*[0-9a-f]+:\s*(.*)", line)
        if m:
            insns.append(" ".join(m.group(1).split("#")[0].split()))
    return "; ".join(insns) if insns else "?"


API_MODES = [("uprobe", "entry probe (empty)"),
             ("uprobe-ret", "entry + return probes (empty)"),
             ("api-event", "entry + return, stash + 64-byte event")]
API_REAL = [("cuCtxSetCurrent", [], "entry + return (default set)"),
            ("cuLaunchKernel", ["--launches"], "entry only (`--launches`)")]
API_ROUNDS = 3  # microsecond-scale costs, stable from round to round


def bench_api(env, rounds, secs):
    avail, why = gpuctx_api_state()

    def once(t, tag):
        vals = {}
        if t is None or t.name != "gpuctx":
            for f in API_FUNCS:
                cmd = [LOOPS, "call", "--secs", str(secs), f]
                tr = None if t is None else Tracer(t.name, wrap=lambda c, f=f: [
                    LOADER, t.name, "--exe", LOOPS, "--func", f"bench_fn_{f}", "--"] + c)
                vals.update(parse_pairs(run_cmd(env, tr, cmd, tag)[0]))
        if avail and (t is None or t.name == "gpuctx"):
            # One process, both functions: --launches adds the entry-only launch probes and
            # leaves cuCtxSetCurrent's entry + return probes as they are.
            cmd = [LOOPS, "call-lib", "--secs", str(secs), LIBCUDA] + [x for x, _, _ in API_REAL]
            tr = None if t is None else Tracer("gpuctx", wrap=lambda c: [
                G, "record", "-q", "-o", env.path("api.gctx"), "--libcuda", LIBCUDA,
                "--launches", "--"] + c)
            try:
                vals.update(parse_pairs(run_cmd(env, tr, cmd, tag)[0]))
            except RuntimeError as e:
                log(f"  call-lib: {e}")
        return vals, None

    tracers = [Tracer(m) for m, _ in API_MODES]
    if avail:
        tracers.append(Tracer("gpuctx"))
    # A call loop makes no system calls: other sessions' syscall programs do not touch it.
    res = interleaved("api", min(rounds, API_ROUNDS), tracers, once, require_clean=False)
    res.update({"insns": {f: first_insn(LOOPS, f"bench_fn_{f}") for f in API_FUNCS},
                "gpuctx_available": avail, "gpuctx_reason": why,
                "lib_insns": {sym: first_insn(LIBCUDA, sym, 2) for sym, _, _ in API_REAL}
                if avail else {}})
    return res


# ---- 4. event throughput ----

def rate_once(env, rate, secs, threads):
    cmd = [LOOPS, "rate", "--secs", str(secs), "--threads", str(threads), "--rate",
           str(int(rate)), env.gpu]
    t = Tracer("gpuctx", wrap=lambda c: [G, "record", "-q", "-o", env.path("rate.gctx"),
                                         "--device", f"{env.gpu}:nvidiactl", "--"] + c)
    try:
        out, logp = run_cmd(env, t, cmd, "rate")
    finally:
        if os.path.exists(env.path("rate.gctx")):
            os.unlink(env.path("rate.gctx"))
    m = re.search(r"achieved=([\d.]+) calls=(\d+)", out)
    s = summary_of(logp)
    if not m or not s:
        raise RuntimeError(f"no rate or summary: {tail(logp)}")
    calls = int(m.group(2))
    return {"target": rate, "threads": threads, "achieved": float(m.group(1)), "calls": calls,
            "events": s["events"], "lost": s["lost"],
            "drop_frac": s["lost"] / (s["events"] + s["lost"]) if s["events"] else 0.0}


def short(s, rate):
    return s["achieved"] < 0.97 * rate


def bench_throughput(env, secs, repeats):
    """Double the paced rate until events are lost. One producer thread first; when it cannot
    keep the pace, two (this machine has two CPUs, so the collector then competes for them)."""
    QUIET.wait("throughput")
    steps = []
    rate, threads = 50000, 1
    good, bad = None, None
    while rate <= 16e6:
        log(f"throughput: {fmt_rate(rate)}, {threads} thread(s)")
        s = rate_once(env, rate, secs, threads)
        steps.append(s)
        if s["lost"]:
            bad = s
            break
        if short(s, rate):
            if threads == 1:
                threads = 2
                continue
            bad = s
            break
        good = s
        rate *= 2
    if good and bad and bad["lost"]:
        lo, hi = good["target"], bad["target"]
        for _ in range(3):
            mid = (lo + hi) / 2
            log(f"throughput: {fmt_rate(mid)}, {bad['threads']} thread(s)")
            s = rate_once(env, mid, secs, bad["threads"])
            steps.append(s)
            if s["lost"] or short(s, mid):
                hi = mid
            else:
                lo, good = mid, s
    clean = [x for x in steps if not x["lost"]]
    result = {"steps": steps, "secs": secs, "producer_bound": bool(bad and not bad["lost"])}
    if not clean:
        return result
    top = max(clean, key=lambda x: x["achieved"])
    best = top["achieved"]
    checks = {}
    for name, r, th in (("best", top["target"], top["threads"]), ("target", 200000, 1),
                        ("double", 2 * best, 2)):
        runs = []
        for i in range(repeats):
            log(f"throughput: {name} {fmt_rate(r)}, {th} thread(s) ({i + 1}/{repeats})")
            runs.append(rate_once(env, r, secs, th))
        checks[name] = runs
    result.update({"best": best, "best_target": top["target"], "best_threads": top["threads"],
                   "checks": checks})
    return result


# ---- 1b. per-program run time (kernel BPF statistics) ----

PROGCOST_ROWS = [("a", "fionread", "plain"), ("c2", "nv-none", "gpu"), ("c2x", "nv-control", "gpu"),
                 ("k", "kfd-version", "kfd")]


def enable_bpf_stats():
    """BPF_ENABLE_STATS(BPF_STATS_RUN_TIME): the kernel times every BPF program run while the
    returned fd is open (a few tens of ns per run, for every program on the machine)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(16)  # enable_stats.type = BPF_STATS_RUN_TIME (0)
    fd = libc.syscall(321, 32, attr, 16)    # __NR_bpf, BPF_ENABLE_STATS (x86-64)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "BPF_ENABLE_STATS")
    return fd


def held_progs(pid):
    """{prog id} referenced by the fds of process pid (its programs and links)."""
    ids = set()
    d = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(d):
        try:
            with open(os.path.join(d, fd)) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def prog_stats(ids):
    out = {}
    for i in ids:
        try:
            j = json.loads(sh(f"bpftool prog show id {i} -j"))
        except ValueError:
            continue
        if j.get("run_cnt"):
            out[j["name"]] = {"ns": j["run_time_ns"] / j["run_cnt"], "cnt": j["run_cnt"]}
    return out


def wait_file(p, path, why, step):
    """Until path exists while p runs (at most 120 s); RuntimeError(why) otherwise."""
    t0 = time.time()
    while not os.path.exists(path):
        if p.poll() is not None or time.time() - t0 > 120:
            raise RuntimeError(why)
        time.sleep(step)


def progcost_once(env, name, row, cmd, path, secs):
    res = env.path("pc.res")
    if os.path.exists(res):
        os.unlink(res)
    loop = [LOOPS, "ioctl", "--secs", str(secs), "--out", res, "--hold", env.fifo,
            f"{row}={path},{cmd}"]
    kfd = row == "k"  # the KFD file is registered for its own row only: the others keep theirs
    argv = {"empty": [LOADER, "ioctl", "--"] + loop,
            "diag-typed": [LOADER, "filter-typed"] + env.loader_devs +
            (["--device", env.kfd] if kfd else []) + ["--"] + loop,
            "gpuctx": [G, "record", "-q", "-o", env.path("pc.gctx")] + env.devs +
            (["--device", f"{env.kfd}:kfd"] if kfd else []) + ["--"] + loop,
            }[name]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_file(p, res, f"{name}: no result", 0.01)
        stats = prog_stats(held_progs(p.pid))
        release_hold(env, p)
        p.wait(120)
    finally:
        stop_proc(p)
    wait_released()
    return {k: v for k, v in stats.items() if "ioctl" in k or "filter" in k}


def bench_progcost(env, rounds, secs):
    """ns per run of the ioctl programs, as the kernel times them: independent of how busy the
    machine is, unlike the loops' wall clock."""
    try:
        fd = enable_bpf_stats()
    except OSError as e:
        log(f"progcost: {e}")
        return None
    out = {}
    try:
        for i in range(rounds):
            log(f"progcost round {i + 1}/{rounds}")
            for name in ("empty", "diag-typed", "gpuctx"):
                for row, cmd, which in PROGCOST_ROWS:
                    path = {"plain": env.plain, "gpu": env.gpu, "kfd": env.kfd}[which]
                    try:
                        st = progcost_once(env, name, row, cmd, path, secs)
                    except (RuntimeError, subprocess.SubprocessError, OSError) as e:
                        log(f"  {name} {row}: {e}")
                        continue
                    for prog, v in st.items():
                        out.setdefault(f"{name}|{row}|{prog}", []).append(v["ns"])
        churn = []
        for i in range(rounds):
            try:
                churn.append(churncost_once(env, CHURNCOST_PROCS))
            except (RuntimeError, subprocess.SubprocessError, OSError) as e:
                log(f"  churn cost: {e}")
    finally:
        os.close(fd)
    return {"rounds": rounds, "ns": out, "churn": churn}


CHURNCOST_PROCS = 400


def churn_secs(text):
    for line in text.splitlines():
        if line.startswith("secs="):
            return float(line[5:])
    raise RuntimeError("loops churn printed no secs=")


def churncost_once(env, n):
    """Kernel time of gpuctx's programs per process of `loops churn` (fork + exec /bin/true +
    wait), as the kernel times them, next to the time one such process takes untraced."""
    out, done = env.path("cc.out"), env.path("cc.done")
    for f in (out, done):
        if os.path.exists(f):
            os.unlink(f)
    untraced = churn_secs(subprocess.run([LOOPS, "churn", "--procs", str(n)], text=True,
                                         capture_output=True, check=True).stdout)
    p = subprocess.Popen([G, "record", "-q", "-o", env.path("cc.gctx")] + env.devs +
                         ["--", "sh", "-c", f"'{LOOPS}' churn --procs {n} >'{out}'; "
                          f"touch '{done}'; sleep 2"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_file(p, done, "churn cost: no result", 0.05)
        stats = prog_stats(held_progs(p.pid))
        p.wait(120)
    finally:
        stop_proc(p)
    wait_released()
    with open(out) as f:
        traced = churn_secs(f.read())
    return {"procs": n, "untraced_us": untraced / n * 1e6, "traced_us": traced / n * 1e6,
            "progs": {k: v["ns"] * v["cnt"] / n for k, v in stats.items()},
            "runs": {k: v["cnt"] / n for k, v in stats.items()}}


# ---- 6. start and stop ----

STARTSTOP_CFGS = [
    ("untraced", "untraced"),
    ("gpuctx", "gpuctx record"),
    ("gpuctx-noapi", "gpuctx record --no-api"),
    ("bpftrace", "bpftrace, one tracepoint"),
    ("strace", "strace -f"),
    ("gpuctx-true", "gpuctx record -- true"),
    ("bpftrace-true", "bpftrace -c true"),
]


TRUE = shutil.which("true") or "/bin/true"
BPFTRACE_ONE = "tracepoint:syscalls:sys_enter_ioctl { @n = count(); }"


def release_pids():
    """gpuctx's background link releasers (collect/detach.c) alive now."""
    out = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/comm") as f:
                    if f.read().strip() == "gpuctx-release":
                        out.add(int(d))
            except OSError:
                pass
    return out


def wait_released(limit=10):
    """Let gpuctx's background link release (collect/detach.c) finish before the next
    configuration runs: its programs are still attached meanwhile."""
    t0 = time.time()
    while release_pids() and time.time() - t0 < limit:
        time.sleep(0.01)


def startstop_once(env, name):
    """One short command (loops stamp) under a tracer: seconds from launching the tracer to
    the command's first instruction (start), from the command's end to the tracer's return
    (stop), and in all (wall); for gpuctx also how long its background release still ran."""
    if name.endswith("-true"):
        # The issue's own comparison: wall time only
        argv = {"gpuctx-true": [G, "record", "-q", "-o", env.path("ss.gctx"), "--", TRUE],
                "bpftrace-true": ["bpftrace", "-e", BPFTRACE_ONE, "-c", TRUE]}[name]
        t0 = time.monotonic_ns()
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        t1 = time.monotonic_ns()
        if p.returncode:
            raise RuntimeError(f"{name} exited {p.returncode}")
        wait_released()
        return {"wall": (t1 - t0) / 1e9}
    stamp = [LOOPS, "stamp"]
    argv = {
        "untraced": stamp,
        "gpuctx": [G, "record", "-q", "-o", env.path("ss.gctx"), "--"] + stamp,
        "gpuctx-noapi": [G, "record", "-q", "--no-api", "-o", env.path("ss.gctx"), "--"] + stamp,
        "bpftrace": ["bpftrace", "-e", BPFTRACE_ONE, "-c", " ".join(stamp)],
        "strace": ["strace", "-f", "-qq", "-o", env.path("ss.strace"), "--"] + stamp,
    }[name]
    before = release_pids()
    t0 = time.monotonic_ns()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=60)
    t1 = time.monotonic_ns()
    if p.returncode:
        raise RuntimeError(f"{name} exited {p.returncode}: {p.stderr.strip()[-200:]}")
    m = re.search(r"^(\d{6,})$", p.stdout, re.M)
    if not m:
        raise RuntimeError(f"{name}: no stamp in {p.stdout[-200:]!r}")
    ts = int(m.group(1))
    out = {"start": (ts - t0) / 1e9, "stop": (t1 - ts) / 1e9, "wall": (t1 - t0) / 1e9}
    if name.startswith("gpuctx"):
        while release_pids() - before and time.monotonic_ns() - t1 < 10e9:
            time.sleep(0.002)
        out["released"] = (time.monotonic_ns() - t1) / 1e9
    return out


def bench_startstop(env, rounds):
    """Every configuration in every round, order rotated; medians and spreads over rounds."""
    runs = {c: [] for c, _ in STARTSTOP_CFGS}
    for i in range(rounds):
        log(f"start/stop round {i + 1}/{rounds}")
        QUIET.wait(f"start/stop {i + 1}")
        order = STARTSTOP_CFGS[i % len(STARTSTOP_CFGS):] + STARTSTOP_CFGS[:i % len(STARTSTOP_CFGS)]
        for c, _ in order:
            try:
                runs[c].append(startstop_once(env, c))
            except (RuntimeError, subprocess.SubprocessError, OSError) as e:
                log(f"  {c}: {e}")
                runs[c].append({"error": str(e)})
    return {"raw": runs, "rounds": rounds}


# ---- 5. collector ----

def parse_kv(text):
    out = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            try:
                out[k.strip()] = float(v)
            except ValueError:
                pass
    return out


def time_cmd(argv, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        ts.append(time.perf_counter() - t0)
        if p.returncode:
            raise RuntimeError(f"{' '.join(argv[:3])} exited {p.returncode}: "
                               f"{p.stderr.strip()[-200:]}")
    return med(ts)


def export_available():
    h = sh(f"{G} --help")
    return "export" in h.split("Commands:")[-1].split("EXAMPLES")[0] if h else False


def bench_collector(env, procs, gpu_iters, reps):
    res = {"procs": procs}
    QUIET.wait("collector")
    log(f"collector: {procs} short-lived processes, untraced")
    out, _ = run_cmd(env, None, [LOOPS, "churn", "--procs", str(procs), "--watch",
                                 str(os.getpid())], "c10k", timeout=600)
    res["untraced"] = parse_kv(out)
    log(f"collector: {procs} short-lived processes under gpuctx record")
    trace = env.path("churn10k.gctx")
    t = Tracer("gpuctx", wrap=lambda c: [G, "record", "-q", "-o", trace] + env.devs + ["--"] + c)
    out, logp = run_cmd(env, t, [LOOPS, "churn", "--procs", str(procs)], "c10k", timeout=600)
    res["gpuctx"] = parse_kv(out)
    res["gpuctx_summary"] = summary_of(logp)
    log(f"collector: {gpu_iters * 8 + 1} GPU ioctls on the emulated driver under gpuctx record")
    gtrace = env.path("gpumix.gctx")
    t = Tracer("gpuctx", wrap=lambda c: [G, "record", "-q", "-o", gtrace] + env.devs + ["--"] + c)
    out, logp = run_cmd(env, t, [LOOPS, "gpu-mix", "--iters", str(gpu_iters), env.mnt], "gmix",
                        timeout=600)
    res["gpumix_summary"] = summary_of(logp)
    res["report"] = {}
    res["export_available"] = export_available()
    for name, path, s in (("churn", trace, res["gpuctx_summary"]),
                          ("gpu", gtrace, res["gpumix_summary"])):
        if not s:
            continue
        log(f"collector: report timings on the {name} trace ({s['events']} events)")
        r = {"events": s["events"], "bytes": os.path.getsize(path)}
        r["text_s"] = time_cmd([G, "report", path], reps)
        r["json_s"] = time_cmd([G, "report", "--json", path], reps)
        if res["export_available"]:
            try:
                r["export_s"] = time_cmd([G, "export", "-f", "perfetto", "-o",
                                          env.path("x.pftrace"), path], reps)
            except RuntimeError as e:
                r["export_error"] = str(e)
        res["report"][name] = r
    return res


# ---- machine description ----

def machine():
    model = sh("lscpu | sed -n 's/^Model name: *//p'")
    hyp = sh("lscpu | sed -n 's/^Hypervisor vendor: *//p'")
    mem = sh("free -g | awk '/^Mem:/ {print $2}'")
    git = sh(f"cd {TOP} && git rev-parse --short HEAD")
    dirty = sh(f"cd {TOP} && git status --porcelain --untracked-files=no | wc -l")
    progs = sh("bpftool prog show 2>/dev/null | grep -cE ' (tracepoint|raw_tracepoint|"
               "tracing|kprobe|perf_event) '")
    return {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": model or platform.processor(), "hypervisor": hyp, "nproc": os.cpu_count(),
        "mem_gib": mem, "kernel": platform.release(),
        "gpuctx": sh(f"{G} version"),
        "git": git + (f" (+{dirty} modified files)" if dirty not in ("", "0") else ""),
        "bpftrace": sh("bpftrace --version"), "strace": sh("strace -V | head -1"),
        "loadavg": sh("cut -d' ' -f1-3 /proc/loadavg"),
        "foreign_progs": progs,
    }
