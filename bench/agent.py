#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""gpuctx agent benchmark (issue 29 points 3 and 4): the agent's RSS after a million short-lived
processes, its RSS over a soak of mixed churn, and its idle cost per fork, exec and ioctl next to
record -a, empty BPF programs and an untraced run (interleaved rounds, as bench/run.py does).
Raw samples go to bench/out/agent-raw.json; the tables to standard output (bench/RESULTS-agent.md
is written from them by hand, with the machine's load next to each number).

The agent runs in a private mount namespace with its own /run (unshare -m), so that its lock
and socket do not stop an agent of a test running on the same machine, and with --no-hold (no
process is held: the bench processes map no CUDA library). The churn drivers run at nice 19.

Usage: python3 bench/agent.py [--procs N] [--soak-min M] [--rounds R] [--secs S]
                              [--only rss,soak,idle,gpujobs,livejob] [--window-size SIZE]
                              [--window SECONDS]
                              [--gpu-min M] [--gpu-window S] [--live-min M]
       python3 bench/agent.py --render    (the tables of bench/out/agent-raw.json)
       python3 bench/agent.py --render-log LOG    (a soak's table from its standard error,
                                                   while it runs or after it was stopped)
Needs root, build/gpuctx, build/fakegpu, build/bench/{loops,empty_loader}, build/workloads.
"""
import argparse
import ast
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (Env, G, LOADER, LOOPS, TOP, Tracer, die, log, med, parse_pairs,  # noqa: E402
                    run_cmd, spread)
from measure import interleaved  # noqa: E402

W = os.path.join(TOP, "build/workloads")


def agent_argv(env, name, extra=()):
    spool, prom = env.path(f"{name}.spool"), env.path(f"{name}.prom")
    devs = env.devs + ["--device", f"{env.mnt}/nvidia0:nvidia"]
    return (["unshare", "-m", "--propagation", "private", "sh", "-c",
             'mount -t tmpfs -o mode=755 tmpfs /run && exec "$0" "$@"', G, "agent", "--spool",
             spool, "--metrics", prom, "--no-hold"] + devs + list(extra)), prom


def metrics(prom):
    out = {}
    try:
        with open(prom) as f:
            for line in f:
                if line.startswith("#") or "{" in line:
                    continue
                k, v = line.split()
                out[k] = float(v)
    except (OSError, ValueError):
        pass
    return out


def status_kb(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def cpu_s(pid):
    """The process's user + system CPU time in seconds (/proc/PID/stat), None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            st = f.read()
        fields = st[st.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class Agent:
    def __init__(self, env, name, extra=()):
        argv, self.prom = agent_argv(env, name, extra)
        self.t = Tracer(name, daemon=argv, ready="attached to")
        self.t.start(env, "run")
        self.pid = self.t.proc.pid
        self.t0 = time.time()

    def sample(self, procs, note=""):
        m = metrics(self.prom)
        s = {"t_s": round(time.time() - self.t0, 1), "procs_driven": procs,
             "rss_kb": status_kb(self.pid, "VmRSS"), "hwm_kb": status_kb(self.pid, "VmHWM"),
             "slots": m.get("gpuctx_processes"), "folded": m.get("gpuctx_processes_folded_total"),
             "events": m.get("gpuctx_events_total"), "lost": m.get("gpuctx_events_lost_total"),
             "window_bytes": m.get("gpuctx_window_bytes"), "dumps": m.get("gpuctx_dumps_total"),
             "spool_bytes": m.get("gpuctx_spool_bytes"),
             "compactions": m.get("gpuctx_compactions_total"),
             "compact_s": m.get("gpuctx_compaction_seconds_total"),
             "compact_max_s": m.get("gpuctx_compaction_max_seconds"),
             "dump_s": m.get("gpuctx_dump_seconds_total"),
             "dump_max_s": m.get("gpuctx_dump_max_seconds"), "cpu_s": cpu_s(self.pid),
             "load1": round(os.getloadavg()[0], 2),
             "note": note}
        log(f"  {s}")
        return s

    def stop(self):
        self.t.stop()


def pauses(samples):
    """The event loop's stalls as the last sample gives them (the metrics are cumulative)."""
    last = samples[-1] if samples else {}
    s = {k: last.get(k) for k in ("compactions", "compact_s", "compact_max_s", "dump_s",
                                  "dump_max_s")}
    log(f"  pauses: {s['compactions'] or 0:.0f} compactions, longest "
        f"{fmt_ms(s['compact_max_s'])}, total {fmt_ms(s['compact_s'])}; dumps: longest "
        f"{fmt_ms(s['dump_max_s'])}, total {fmt_ms(s['dump_s'])}")
    return s


# --py-parent: the churn runs under a Python process started after the agent (as a job's
# launcher would): the agent follows a Python process's children for their stacks.
PY_PARENT = [sys.executable, "-c", "import subprocess, sys; "
             "sys.exit(subprocess.run(sys.argv[1:]).returncode)"]


def churn(args, secs, modes):
    """nice 19 loops procs: the processes it made."""
    argv = ["nice", "-n", "19", LOOPS, "procs", "--secs", str(secs)] + modes
    if args.py_parent:
        argv = PY_PARENT + argv
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if p.returncode:
        raise RuntimeError(f"loops procs exited {p.returncode}: {p.stderr.strip()[-300:]}")
    return sum(int(line.split()[2]) for line in p.stdout.splitlines() if len(line.split()) == 3)


def bench_rss(env, args):
    extra = ["--window-size", args.window_size] if args.window_size else []
    extra += ["--window", f"{args.window:g}"] if args.window else []
    a = Agent(env, "rss", extra)
    samples, procs = [], 0
    try:
        time.sleep(6)  # the first metrics
        samples.append(a.sample(0, "attached"))
        marks = [args.procs // 4, args.procs // 2, args.procs]
        while procs < args.procs:
            procs += churn(args, 10, ["fork-exit"])
            note = ""
            while marks and procs >= marks[0]:
                note = f"past {marks.pop(0)}"
            samples.append(a.sample(procs, note))
        time.sleep(16)  # folding lags 10 s; metrics every 5 s
        samples.append(a.sample(procs, "15 s after the churn"))
    finally:
        a.stop()
    return {"procs": procs, "window_size": args.window_size or "256M (default)",
            "window_s": args.window or 600,
            "samples": samples, "pauses": pauses(samples)}


def git_head():
    return subprocess.run(["git", "-C", TOP, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()


def bench_soak(env, args):
    a = Agent(env, "soak")
    samples, procs = [], 0
    # what --render-log needs to give the table of a soak cut short (its samples follow)
    log(f"soak: git {git_head()} started "
        f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} minutes {args.soak_min:g}")
    end = time.time() + args.soak_min * 60
    next_sample = next_gpu = 0
    try:
        time.sleep(6)
        samples.append(a.sample(0, "attached"))
        while time.time() < end:
            # mixed churn at about half a core: fork/exit, fork/exec, posix_spawn
            procs += churn(args, 1, ["fork-exit", "fork-exec", "spawn"])
            time.sleep(3)
            if time.time() >= next_gpu:  # GPU jobs now and then: a crash, a poison fork
                for wl in (["wl_segv", env.mnt, "--self"], ["wl_fork_child_ioctl", env.mnt],
                           ["wl_fork_storm", env.mnt, "2000"]):
                    # under a shell, as a job runs: each is its own tree (under this
                    # driver they would all be one tree, its dumps the whole window)
                    subprocess.run(["nice", "-n", "19", "sh", "-c", '"$@"; :', "sh",
                                    os.path.join(W, wl[0])] + wl[1:],
                                   capture_output=True, timeout=120)
                next_gpu = time.time() + 60
            if time.time() >= next_sample:
                samples.append(a.sample(procs))
                next_sample = time.time() + 60
        time.sleep(6)
        samples.append(a.sample(procs, "end"))
    finally:
        a.stop()
    return {"minutes": args.soak_min, "procs": procs, "samples": samples, "pauses": pauses(samples)}


def bench_gpujobs(env, args):
    """Short GPU jobs for --gpu-min minutes, each a poison fork under a shell (its own tree and
    dump), --gpu-rate a second at most, with a --gpu-window s window: once a job has left the
    window the model may drop it, so RSS should hold flat after the first window's worth."""
    extra = ["--window", str(args.gpu_window), "--window-size", "16M", "--spool-files", "20"]
    a = Agent(env, "gpujobs", extra)
    samples, jobs = [], 0
    end = time.time() + args.gpu_min * 60
    next_sample = time.time() + 30
    job = ["nice", "-n", "19", "sh", "-c", '"$@"; :', "sh",
           os.path.join(W, "wl_fork_child_ioctl"), env.mnt]
    try:
        time.sleep(6)
        samples.append(a.sample(0, "attached"))
        while time.time() < end:
            t = time.time()
            subprocess.run(job, capture_output=True, timeout=60)
            jobs += 1
            time.sleep(max(0.0, 1 / args.gpu_rate - (time.time() - t)))
            if time.time() >= next_sample:
                samples.append(a.sample(jobs))
                next_sample = time.time() + 30
        time.sleep(args.gpu_window + 16)  # the last jobs leave the window, then a compaction
        samples.append(a.sample(jobs, f"{args.gpu_window + 16:.0f} s after the jobs"))
    finally:
        a.stop()
    return {"jobs": jobs, "minutes": args.gpu_min, "window_s": args.gpu_window,
            "rate": args.gpu_rate, "samples": samples, "pauses": pauses(samples)}


def left_out(prom):
    """gpuctx_model_left_out_total by kind."""
    out = {}
    try:
        with open(prom) as f:
            for line in f:
                if line.startswith("gpuctx_model_left_out_total{kind="):
                    out[line.split('"')[1]] = int(float(line.split()[-1]))
    except (OSError, ValueError):
        pass
    return out


def bench_livejob(env, args):
    """One GPU process that lives --live-min minutes churning threads, each making and freeing
    an RM object on the shared nvidiactl fd (wl_livejob), under an agent with a 30 s / 16M
    window (so that the window is full early and RSS is the model's): the model trims what the
    process accumulates, so RSS should hold flat while the counts of what was left out climb."""
    a = Agent(env, "livejob", ["--window", "30", "--window-size", "16M"])
    samples, out = [], env.path("livejob.wl")
    job = ["nice", "-n", "19", os.path.join(W, "wl_livejob"), env.mnt, str(10**12), "6",
           str(int(args.live_min * 60))]

    def sample(note, threads=0):
        lo = left_out(a.prom)
        s = a.sample(threads, f"{note}; left out: {lo.get('exited_thread', 0):,} exited "
                     f"threads, {lo.get('destroyed_object', 0):,} destroyed objects" if lo else
                     note)
        s["left_out"] = lo
        samples.append(s)

    try:
        time.sleep(6)
        sample("attached")
        with open(out, "w") as f:  # a file: the workload says every RM call
            p = subprocess.Popen(job, stdout=f, stderr=subprocess.STDOUT)
        while p.poll() is None:
            time.sleep(min(20, args.live_min * 60 / 6))
            sample("churning")
        with open(out) as f:
            churned = [int(w.split()[3]) for w in f if " churned " in w]
        time.sleep(6)  # a metrics write after its end
        sample("the job ended", churned[0] if churned else 0)
    finally:
        a.stop()
    return {"minutes": args.live_min, "threads": churned[0] if churned else None,
            "samples": samples, "pauses": pauses(samples)}


def bench_idle(env, args):
    loops = (f"{LOOPS} procs --secs {args.secs} fork-exit fork-exec spawn && "
             f"{LOOPS} ioctl --secs {args.secs} ioctl={env.plain},fionread")
    cmd = ["sh", "-c", loops]
    ra = [G, "record", "-q", "-a", "-o", env.path("idle-a.gctx"), "--no-hold"] + env.devs
    tracers = [Tracer("empty-all", wrap=lambda c: [LOADER, "all", "--"] + c),
               Tracer("record-a", daemon=ra, ready="attached to"),
               Tracer("agent", daemon=agent_argv(env, "idle")[0], ready="attached to")]

    def once(t, tag):
        out, _ = run_cmd(env, t, cmd, tag)
        return parse_pairs(out), {"load1": round(os.getloadavg()[0], 2)}

    res = interleaved("agent-idle", args.rounds, tracers, once)
    # per round: cost per operation (µs per process from the rates, ns per ioctl)
    names = ["untraced"] + [t.name for t in tracers]
    table = {}
    for row in ("fork-exit", "fork-exec", "spawn", "ioctl"):
        per = {n: [] for n in names}
        for i in range(res["used"]):
            for n in names:
                v = res["raw"][n][i].get(row)
                per[n].append(None if not v else (v if row == "ioctl" else 1e6 / v))
        ratios = {}
        for n in names[1:]:
            ratios[n + "/untraced"] = [x / u if x and u else None
                                       for x, u in zip(per[n], per["untraced"])]
            ratios[n + "/empty"] = [x / e if x and e else None
                                    for x, e in zip(per[n], per["empty-all"])]
        table[row] = {"cost": {n: med(per[n]) for n in names},
                      "ratio": {k: (med(v), spread(v)) for k, v in ratios.items()}}
    res["table"] = table
    return res


def fmt_mb(kb):
    return "—" if kb is None else f"{kb / 1024:.1f} MiB"


def fmt_ms(s):
    return "—" if s is None else f"{s * 1e3:.1f} ms"


def render(raw):
    """Markdown tables of the raw results (bench/RESULTS-agent.md's numbers)."""
    out = []
    idle = raw.get("idle")
    if idle:
        loads = [m["load1"] for n, ms in idle["meta"].items() for m in ms if m]
        out += [f"### Idle cost (git {idle['git']}, {idle['started']}, {idle['used']} rounds "
                f"used of {idle['attempts']}, {idle['clean']} clean; load average "
                f"{min(loads):.2f}–{max(loads):.2f} during the runs)", "",
                "| operation | untraced | empty programs | record -a | agent | record -a ÷ "
                "empty | agent ÷ empty | agent ÷ record -a |", "|---|---|---|---|---|---|---|---|"]
        for row, unit in (("fork-exit", "µs"), ("fork-exec", "µs"), ("spawn", "µs"),
                          ("ioctl", "ns")):
            t = idle["table"][row]
            c = t["cost"]
            r = t["ratio"]

            def rat(k):
                m, (lo, hi) = r[k]
                return "—" if m is None else f"{m:.2f}× ({lo:.2f}–{hi:.2f})"
            ag_ra = (c["agent"] / c["record-a"]) if c["agent"] and c["record-a"] else None
            out.append(f"| {row} | " + " | ".join(
                "—" if c[n] is None else f"{c[n]:.1f} {unit}"
                for n in ("untraced", "empty-all", "record-a", "agent")) +
                f" | {rat('record-a/empty')} | {rat('agent/empty')} | "
                f"{'—' if ag_ra is None else f'{ag_ra:.2f}×'} |")
        out.append("")
    for key in sorted(k for k in raw if k.startswith(("rss", "soak", "gpujobs", "livejob"))):
        r = raw[key]
        if key.startswith("livejob"):
            title = (f"### One live GPU process churning threads and RM objects for "
                     f"{r['minutes']:g} minutes ({r['threads'] or 0:,} threads; left out: "
                     f"{r['samples'][-1].get('left_out')}), window 30 s / 16M")
        elif key.startswith("gpujobs"):
            title = (f"### RSS over {r['jobs']:,} short GPU jobs (a poison fork each; processes "
                     f"driven = jobs, {r.get('rate', 0):g} a second at most), window "
                     f"{r['window_s']:g} s / 16M")
        elif key.startswith("rss"):
            title = (f"### RSS over {r['procs']:,} short-lived processes (fork + exit"
                     f"{', under a Python parent' if r.get('py_parent') else ''}), window "
                     f"{r.get('window_s', 600):g} s / {r.get('window_size')}")
        elif r.get("from_log"):
            planned = f" of {r['minutes']:g} planned" if r["minutes"] else ""
            title = (f"### Soak: {r['elapsed_s'] / 60:.0f} minutes{planned} of mixed churn "
                     f"({r['procs']:,} processes; from its log, as far as it goes)")
        else:
            title = f"### Soak: {r['minutes']:g} minutes of mixed churn ({r['procs']:,} processes)"
        out += [f"{title} (git {r['git']}, {r['started']}, {r['elapsed_s']} s)", "",
                "| time | processes driven | RSS | peak RSS | model slots | folded | window | "
                "lost | dumps | compactions | longest compaction | load (1 min) | |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for s in r["samples"]:
            if key == "soak" and not s["note"] and len(r["samples"]) > 20 and \
                    r["samples"].index(s) % 2:
                continue
            out.append(f"| {s['t_s']:.0f} s | {s['procs_driven']:,} | {fmt_mb(s['rss_kb'])} | "
                       f"{fmt_mb(s['hwm_kb'])} | {s['slots'] or 0:.0f} | {s['folded'] or 0:.0f} | "
                       f"{(s['window_bytes'] or 0) / 2**20:.1f} MiB | {s['lost'] or 0:.0f} | "
                       f"{s['dumps'] or 0:.0f} | {s.get('compactions') or 0:.0f} | "
                       f"{fmt_ms(s.get('compact_max_s'))} | {s['load1']} | {s['note']} |")
        p = r.get("pauses")
        if p:
            out += ["", f"Event loop stalls (nothing drains the ring buffer meanwhile): "
                    f"{p['compactions'] or 0:.0f} compactions, longest "
                    f"{fmt_ms(p['compact_max_s'])}, total {fmt_ms(p['compact_s'])}; dumps: "
                    f"longest {fmt_ms(p['dump_max_s'])}, total {fmt_ms(p['dump_s'])}."]
        first, last = r["samples"][0], r["samples"][-1]
        if first.get("cpu_s") is not None and last.get("cpu_s") is not None and \
                (last["events"] or 0) > (first["events"] or 0):
            cpu, ev = last["cpu_s"] - first["cpu_s"], last["events"] - first["events"]
            out += ["", f"The agent's CPU time (user + system) from the first sample to the "
                    f"last: {cpu:.1f} s for {ev:,.0f} events, {cpu / ev * 1e6:.1f} µs an event."]
        out.append("")
    return "\n".join(out)


def soak_from_log(path):
    """A soak's result rebuilt from its log: the samples so far (its last one, when the soak
    still runs or was stopped, is not an end)."""
    head, samples = {}, []
    try:
        with open(path) as f:
            for line in f:
                m = re.search(r"soak: git (\S*) started (\S+) minutes (\S+)", line)
                if m:
                    head = {"git": m.group(1) or "?", "started": m.group(2),
                            "minutes": float(m.group(3))}
                m = re.search(r"(\{'t_s'.*\})\s*$", line)
                if m:
                    s = ast.literal_eval(m.group(1))
                    if not samples or s["t_s"] != samples[-1]["t_s"]:
                        samples.append(s)
    except (OSError, ValueError, SyntaxError) as e:
        die(f"cannot read {path}: {e}")
    if not samples:
        die(f"{path}: no samples")
    return {"minutes": head.get("minutes", 0), "procs": samples[-1]["procs_driven"],
            "samples": samples, "pauses": pauses(samples), "git": head.get("git", "?"),
            "started": head.get("started", "?"), "elapsed_s": int(samples[-1]["t_s"]),
            "from_log": True}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--procs", type=int, default=1000000)
    ap.add_argument("--soak-min", type=float, default=25)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--secs", type=float, default=1.0)
    ap.add_argument("--window-size", default="")
    ap.add_argument("--window", type=float, default=0,
                    help="rss: the agent's --window in seconds (default its own, 600)")
    ap.add_argument("--py-parent", action="store_true",
                    help="rss: the churn under a Python process started after the agent")
    ap.add_argument("--gpu-min", type=float, default=5, help="gpujobs: minutes of GPU jobs")
    ap.add_argument("--gpu-window", type=float, default=30, help="gpujobs: the agent's --window")
    ap.add_argument("--gpu-rate", type=float, default=5, help="gpujobs: jobs a second at most")
    ap.add_argument("--live-min", type=float, default=3, help="livejob: minutes of churn")
    ap.add_argument("--only", default="idle,rss,soak")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--out", default=os.path.join(TOP, "bench/out/agent-raw.json"))
    ap.add_argument("--render", action="store_true", help="only print the tables of --out")
    ap.add_argument("--render-log", metavar="LOG",
                    help="only print the table of the soak whose standard error is LOG, "
                    "finished or not (a soak writes its table only at its end)")
    args = ap.parse_args()
    if args.render:
        with open(args.out) as f:
            print(render(json.load(f)))
        return
    if args.render_log:
        print(render({"soak": soak_from_log(args.render_log)}))
        return
    if os.geteuid() != 0:
        die("run as root")
    for p in (G, LOOPS, LOADER):
        if not os.access(p, os.X_OK):
            die(f"{p} is missing")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    try:
        with open(args.out) as f:
            raw = json.load(f)
    except (OSError, ValueError):
        raw = {}
    env = Env(args)
    try:
        for what in args.only.split(","):
            t0 = time.time()
            r = {"idle": bench_idle, "rss": bench_rss, "soak": bench_soak,
                 "gpujobs": bench_gpujobs, "livejob": bench_livejob}[what](env, args)
            r["started"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0))
            r["elapsed_s"] = round(time.time() - t0)
            r["git"] = git_head()
            if what == "rss":
                r["py_parent"] = args.py_parent
                what += (f"-{args.window_size}" if args.window_size else "") + \
                    (f"-{args.window:g}s" if args.window else "") + \
                    ("-py" if args.py_parent else "")
            raw[what] = r
            with open(args.out, "w") as f:
                json.dump(raw, f, indent=1)
            log(f"{what}: done in {r['elapsed_s']} s")
    finally:
        env.close()
    print(render(raw))


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    main()
