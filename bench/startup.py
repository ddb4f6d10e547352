#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Traced start-up of a Python job (issue 34): `import torch` timed inside the process
(/usr/bin/python3, Debian's python3-torch), untraced and under `gpuctx record`, interleaved in
every round (the order alternates), on the machine as it is and with two CPU hogs at normal
priority; a spawn DataLoader job whose 4 workers import torch; and the collector's CPU time per
1,000 library mappings (a process that loads N copies of libz, against one that loads none).
A round's ratio is traced over untraced of that round; the tables give the median and the
min-max spread. Times inside the process leave out gpuctx's own start (its load time is
`make bench`'s start/stop row).

Usage: python3 bench/startup.py [--rounds N] [--only quiet,busy,dataloader,libs] [--out FILE]   (root; bench/run.py --only startup
runs it too and puts the rows in RESULTS.md)
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
G = os.path.join(TOP, "build/gpuctx")
PY = "/usr/bin/python3"

# Each script prints its wall time and its own CPU time (user + system, its children's too):
# wall minus CPU is time spent waiting, the part a tracer could add by making it wait.
IMPORT = r"""
import time
t = time.perf_counter()
c = time.process_time()
import torch
print(time.perf_counter() - t, time.process_time() - c)
"""

DATALOADER = r"""
import resource, time
t = time.perf_counter()
c = time.process_time()
import torch
from torch.utils.data import DataLoader, Dataset

class DS(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        return torch.full((4,), i)

if __name__ == "__main__":
    n = sum(int(b.sum()) for b in DataLoader(DS(), batch_size=8, num_workers=4,
                                             multiprocessing_context="spawn"))
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(time.perf_counter() - t, time.process_time() - c + ch.ru_utime + ch.ru_stime)
"""

# The collector's CPU time, read by the traced process from its parent (gpuctx) after its
# own work, once the collector has had time to drain what it mapped.
LIBS = r"""
import ctypes, os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    ctypes.CDLL(os.path.join(d, "libz%d.so" % i))
time.sleep(1.0)
st = open("/proc/%d/stat" % os.getppid()).read().rsplit(")", 1)[1].split()
print((int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK"))
"""


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run_py(tmp, script, traced, args=(), extra=()):
    """Run script under /usr/bin/python3, traced or not; its last line of output (a float)
    and, traced, the trace's report."""
    p = os.path.join(tmp, "s.py")
    with open(p, "w") as f:
        f.write(script)
    trace = os.path.join(tmp, "t.gctx")
    cmd = [PY, p] + list(args)
    if traced:
        cmd = [G, "record", "-q", "-o", trace] + list(extra) + ["--"] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp)
    if r.returncode:
        sys.exit(f"bench: {' '.join(cmd[:6])} failed: {r.stderr[-400:]}")
    last = r.stdout.strip().splitlines()[-1].split()
    val = float(last[0])
    cpu = float(last[1]) if len(last) > 1 else None
    rep = None
    if traced:
        rep = json.loads(subprocess.run([G, "report", "--json", trace], capture_output=True,
                                        text=True).stdout)
        os.unlink(trace)
    return val, rep, cpu


def interleaved(tmp, script, rounds, log):
    """Per round: (untraced s, traced s, holds, gaps), order alternating."""
    out = []
    for i in range(rounds):
        res = {}
        for traced in ((False, True) if i % 2 == 0 else (True, False)):
            res[traced] = run_py(tmp, script, traced)
        rep = res[True][1]
        cov = rep.get("api_coverage", {})
        out.append({"untraced": res[False][0], "traced": res[True][0],
                    "cpu_untraced": res[False][2], "cpu_traced": res[True][2],
                    "holds": len(cov.get("holds", [])), "gaps": len(cov.get("gaps", [])),
                    "load": loadavg()})
        log(f"round {i + 1}: untraced {res[False][0]:.3f} s (CPU {res[False][2]:.3f}), "
            f"traced {res[True][0]:.3f} s (CPU {res[True][2]:.3f})")
    return out


def hogs(n):
    # normal priority, pure CPU
    return [subprocess.Popen([PY, "-c", "while True: pass"]) for _ in range(n)]


def libs_cpu(tmp, rounds, nlibs, log):
    """Collector CPU seconds per 1,000 library mappings: a process mapping nlibs new files
    against one mapping none, in the same round."""
    src = None
    for line in subprocess.run(["ldconfig", "-p"], capture_output=True,
                               text=True).stdout.splitlines():
        if "libz.so.1 " in line and "x86-64" in line:
            src = line.split()[-1]
            break
    if not src:
        return None
    out = []
    for r in range(rounds):
        d = tempfile.mkdtemp(dir=tmp)
        for i in range(nlibs):
            shutil.copy(src, os.path.join(d, f"libz{i}.so"))
        c0, _, _ = run_py(tmp, LIBS, True, (d, "0"))
        c1, rep, _ = run_py(tmp, LIBS, True, (d, str(nlibs)))
        maps = rep["events"]["libmap"]
        out.append({"cpu_none": c0, "cpu_libs": c1, "libmaps": maps,
                    "per_1000": (c1 - c0) / max(nlibs, 1) * 1000})
        log(f"libs round {r + 1}: collector {c0:.2f} s (none) {c1:.2f} s ({nlibs} libraries, "
            f"{maps} library records)")
        shutil.rmtree(d, ignore_errors=True)
    return out


ROWS = ("quiet", "busy", "dataloader", "libs")


def measure(rounds=15, log=lambda m: print(f"bench: {m}", file=sys.stderr, flush=True),
            only=ROWS):
    if os.geteuid():
        sys.exit("bench: needs root")
    if subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode:
        log("no torch for /usr/bin/python3 (python3-torch): startup rows skipped")
        return None
    tmp = tempfile.mkdtemp(prefix="gpuctx-startup.")
    res = {"rounds": rounds, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "nproc": os.cpu_count(), "load_start": loadavg()}
    try:
        if "quiet" in only:
            res["quiet"] = interleaved(tmp, IMPORT, rounds, log)
        if "busy" in only:
            hs = hogs(os.cpu_count() or 2)
            try:
                res["busy"] = interleaved(tmp, IMPORT, rounds, log)
            finally:
                for h in hs:
                    h.kill()
                    h.wait()
        if "dataloader" in only:
            res["dataloader"] = interleaved(tmp, DATALOADER, max(3, rounds // 2 + 2), log)
        if "libs" in only:
            res["libs"] = libs_cpu(tmp, 3, 1000, log)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res["load_end"] = loadavg()
    return res


def ratios(rows, key=""):
    return [r[key + "traced"] / r[key + "untraced"] for r in rows
            if r.get(key + "traced") and r.get(key + "untraced")]


def median_ci(xs):
    """Distribution-free 95% interval of the median: the order statistics k and n-k+1 with
    P(Binomial(n, 1/2) < k) <= 2.5%; None below 6 samples, where no such k exists."""
    xs, n = sorted(xs), len(xs)
    k, cum = 0, 0.0
    while True:
        p = math.comb(n, k) / 2**n
        if cum + p > 0.025:
            break
        cum += p
        k += 1
    if k == 0:
        return None
    return xs[k - 1], xs[n - k]


def render(res):
    """Markdown lines for RESULTS.md, and (target, measured, verdict) tuples."""
    if not res:
        return ["## Traced start-up (issue 34)", "", "Not run: no python3-torch.", ""], []
    L, targets = [], []
    L += ["## Traced start-up (issue 34)", "",
          f"bench/startup.py, {res['date']}, {res['rounds']} interleaved rounds "
          f"({res['nproc']} CPUs; load average {res['load_start']} at start, "
          f"{res['load_end']} at the end). `import torch` (/usr/bin/python3, Debian "
          "python3-torch) timed inside the process, untraced and under `gpuctx record` "
          "(defaults: holds, API probes, stacks on), order alternating; a round's ratio is "
          "traced ÷ untraced of that round. The 95% interval is that of the median ratio "
          "(order statistics, no assumption on the spread); own CPU is the process's user + "
          "system time (its workers' too), so a traced run that waits on gpuctx shows a wall "
          "ratio above its CPU ratio.", "",
          "| row | untraced (median) | traced (median) | ratio: median [95% interval] "
          "(min–max) | own CPU ratio (median) | holds / gaps in the traces | target |",
          "|---|---:|---:|---:|---:|---:|---|"]
    for key, name, target in (("quiet", "`import torch`, machine as it is", 1.05),
                              ("busy", "`import torch`, every CPU busy at normal priority",
                               1.10),
                              ("dataloader", "spawn DataLoader, 4 workers importing torch",
                               1.03)):
        rows = res.get(key) or []
        if not rows:
            continue
        rs, cs = ratios(rows), ratios(rows, "cpu_")
        m = statistics.median(rs)
        ci = median_ci(rs)
        ok = m <= target
        verdict = "met" if ok else "**missed**"
        if ok and ci and ci[1] > target:
            verdict = "met (median; the interval reaches above)"
        cpu = f"{statistics.median(cs):.3f}×" if cs else "–"
        L.append(f"| {name} | {statistics.median(r['untraced'] for r in rows):.3f} s | "
                 f"{statistics.median(r['traced'] for r in rows):.3f} s | {m:.3f}× "
                 f"[{'%.3f–%.3f' % ci if ci else 'too few rounds'}] "
                 f"({min(rs):.2f}–{max(rs):.2f}) | {cpu} | {sum(r['holds'] for r in rows)} / "
                 f"{sum(r['gaps'] for r in rows)} | ≤ {target:.2f}× {verdict} |")
        targets.append((f"{name} ≤ {target:.2f}×", f"{m:.3f}×", verdict, None))
    libs = res.get("libs")
    if libs:
        per = statistics.median(r["per_1000"] for r in libs)
        L += ["", f"Collector CPU per 1,000 library mappings: **{per:.2f} s** (median of "
              f"{len(libs)} rounds; {', '.join('%.2f' % r['per_1000'] for r in libs)}), "
              "the collector's utime + stime with a process mapping 1,000 new copies of libz "
              f"({libs[0]['libmaps']} library records) minus the same process mapping none."]
    L.append("")
    return L, targets


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--out", default=os.path.join(TOP, "bench/RESULTS-startup.md"))
    ap.add_argument("--only", default=",".join(ROWS), help="rows: " + ",".join(ROWS))
    a = ap.parse_args()
    if not os.access(G, os.X_OK):
        sys.exit(f"bench: {G} missing (make all)")
    res = measure(a.rounds, only=a.only.split(","))
    os.makedirs(os.path.join(TOP, "bench/out"), exist_ok=True)
    with open(os.path.join(TOP, "bench/out/startup.json"), "w") as f:
        json.dump(res, f, indent=1)
    lines, _ = render(res)
    lines[0] = "# " + lines[0][3:]
    with open(a.out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
