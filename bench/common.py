# SPDX-License-Identifier: GPL-2.0
"""Shared pieces of the overhead benchmark (bench/run.py): paths, logging and statistics
helpers, the scratch environment (Env), how a configuration runs a command (Tracer), and the
wait for a quiet machine (QUIET, whose rounds the RESULTS.md writer reads).
"""
import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
G = os.path.join(TOP, "build/gpuctx")
FAKEGPU = os.path.join(TOP, "build/fakegpu")
LOOPS = os.path.join(TOP, "build/bench/loops")
LOADER = os.path.join(TOP, "build/bench/empty_loader")
LIBCUDA = os.path.join(TOP, "build/doubles/libcuda.so.1")

SUMMARY_RE = re.compile(r"(\d+) events, (\d+) lost.*\((\d+) bytes\)")


@contextlib.contextmanager
def fakegpu(mnt):
    """The emulated driver mounted on mnt for the duration."""
    fake = subprocess.Popen([FAKEGPU, mnt], stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(os.path.join(mnt, "nvidiactl")):
                break
            time.sleep(0.05)
        yield
    finally:
        fake.terminate()
        fake.wait()
        subprocess.run(["umount", mnt], stderr=subprocess.DEVNULL)


def die(msg):
    print(f"bench: {msg}", file=sys.stderr)
    sys.exit(1)


T_START = time.time()


def log(msg):
    print(f"bench: [{time.time() - T_START:5.0f}s] {msg}", file=sys.stderr, flush=True)


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def spread(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), max(xs)) if xs else (None, None)


def fmt_ns(x):
    if x is None:
        return "—"
    if x >= 10000:
        return f"{x / 1000:.1f} µs"
    if x >= 100:
        return f"{x:.0f} ns"
    return f"{x:.1f} ns"


def fmt_ratio(x):
    return "—" if x is None else f"{x:.2f}×"


def fmt_rate(x):
    if x is None:
        return "—"
    return f"{x / 1e6:.2f}M/s" if x >= 1e6 else f"{x / 1e3:.0f}k/s"


def stop_proc(proc, sig=None, timeout=10):
    """End proc if it still runs: send sig and wait up to timeout s for it, else (or with no
    sig) kill it."""
    if proc.poll() is not None:
        return
    if sig is not None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
            return
        except subprocess.TimeoutExpired:
            pass
    proc.kill()
    proc.wait()


class Env:
    """Scratch files, the emulated driver and the registered GPU files."""

    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="gpuctx-bench.", dir="/tmp")
        self.shm = tempfile.mkdtemp(prefix="gpuctx-bench.", dir="/dev/shm")
        self.plain = os.path.join(self.shm, "plain")   # a non-GPU file
        self.gpu = os.path.join(self.shm, "gpu")       # registered as nvidiactl
        self.kfd = os.path.join(self.shm, "kfd")       # registered as kfd (progcost row k)
        for p in (self.plain, self.gpu, self.kfd):
            with open(p, "w") as f:
                f.write("gpuctx bench\n")
        self.mnt = os.path.join(self.tmp, "gpu")
        os.mkdir(self.mnt)
        self.fifo = os.path.join(self.tmp, "hold")
        os.mkfifo(self.fifo)
        self.fake_log = open(os.path.join(self.tmp, "fakegpu.log"), "w")
        self.fake = subprocess.Popen([FAKEGPU, self.mnt], stdout=self.fake_log,
                                     stderr=subprocess.STDOUT)
        self.fakectl = os.path.join(self.mnt, "nvidiactl")
        for _ in range(200):
            if os.path.exists(self.fakectl):
                break
            time.sleep(0.025)
        else:
            self.close()
            die("the emulated driver (build/fakegpu) did not mount")
        self.devs = ["--device", f"{self.gpu}:nvidiactl", "--device", f"{self.fakectl}:nvidiactl"]
        self.loader_devs = ["--device", self.gpu, "--device", self.fakectl]
        st = os.stat(self.gpu)
        self.gpu_key = ((os.major(st.st_dev) << 20) | os.minor(st.st_dev), st.st_ino)
        st = os.stat(self.fakectl)
        self.fake_key = ((os.major(st.st_dev) << 20) | os.minor(st.st_dev), st.st_ino)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def close(self):
        stop_proc(self.fake, signal.SIGTERM, 10)
        subprocess.run(["umount", self.mnt], capture_output=True)
        if not self.args.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.rmtree(self.shm, ignore_errors=True)


class Tracer:
    """How a configuration runs a command: wrapped (tracer starts it) or as a daemon."""

    def __init__(self, name, wrap=None, daemon=None, ready=None):
        self.name = name
        self.wrap = wrap          # cmd -> argv that runs cmd under the tracer
        self.daemon = daemon      # argv of a tracer that runs until SIGINT
        self.ready = ready        # text on the daemon's stderr/stdout once attached
        self.proc = None
        self.out = None

    def start(self, env, tag):
        """Start a daemon tracer; returns once it is attached."""
        self.out = env.path(f"{self.name}.{tag}.log")
        f = open(self.out, "w")
        self.proc = subprocess.Popen(self.daemon, stdout=f, stderr=subprocess.STDOUT)
        f.close()
        t0 = time.time()
        while time.time() - t0 < 60:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {tail(self.out)}")
            with open(self.out, errors="replace") as f:
                if self.ready in f.read():
                    return
            time.sleep(0.02)
        raise RuntimeError(f"{self.name} did not attach in 60 s")

    def stop(self):
        if self.proc:
            stop_proc(self.proc, signal.SIGINT, 60)
        self.proc = None


def tail(path, n=3):
    try:
        with open(path, errors="replace") as f:
            lines = [l.strip() for l in f if l.strip() and "RLIMIT_MEMLOCK" not in l]
        return " | ".join(lines[-n:])
    except OSError:
        return ""


def summary_of(path):
    """gpuctx's 'N events, M lost ... (B bytes)' line from a log file."""
    try:
        with open(path, errors="replace") as f:
            m = SUMMARY_RE.findall(f.read())
    except OSError:
        return None
    if not m:
        return None
    ev, lost, size = m[-1]
    return {"events": int(ev), "lost": int(lost), "bytes": int(size)}


def run_cmd(env, tracer, cmd, tag, timeout=300):
    """Run cmd under tracer (or untraced when tracer is None); returns (stdout, log path)."""
    logp = env.path(f"{tracer.name if tracer else 'untraced'}.{tag}.log")
    if tracer and tracer.daemon:
        tracer.start(env, tag)
    argv = tracer.wrap(cmd) if tracer and tracer.wrap else cmd
    try:
        with open(logp, "w") as lf:
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=lf, text=True,
                               timeout=timeout)
    finally:
        if tracer and tracer.daemon:
            tracer.stop()
            with open(logp, "a") as lf, open(tracer.out, errors="replace") as tf:
                lf.write(tf.read())
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])}... exited {p.returncode}: {tail(logp)}")
    return p.stdout, logp


def parse_pairs(text):
    """'label value n' lines -> {label: value}."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            try:
                out[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return out


# ---- a quiet machine ----

TRACING_TYPES = ("tracepoint", "raw_tracepoint", "tracing", "kprobe", "perf_event")


def foreign_progs():
    """Tracing BPF programs loaded now (ours are all detached between runs)."""
    out = sh("bpftool prog show 2>/dev/null")
    return sum(1 for line in out.splitlines()
               if re.match(r"^\d+: (\S+)", line) and line.split()[1] in TRACING_TYPES)


def cpu_busy(interval=0.4):
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]
    t1, i1 = snap()
    time.sleep(interval)
    t2, i2 = snap()
    return 1.0 - (i2 - i1) / max(t2 - t1, 1)


class Quiet:
    """Before each round, wait (within a budget) for other tracers to detach and the CPUs to
    idle; remember what each round ran with."""

    def __init__(self, budget):
        self.budget = budget
        self.rounds = []

    def wait(self, what):
        t0 = time.time()
        waited = False
        while True:
            n, busy = foreign_progs(), cpu_busy()
            if (n == 0 and busy < 0.25) or self.budget <= 0:
                break
            if not waited:
                log(f"  waiting for a quiet machine ({n} foreign tracing BPF programs, "
                    f"CPU {100 * busy:.0f}% busy)")
                waited = True
            time.sleep(1)
            self.budget -= time.time() - t0
            t0 = time.time()
        self.rounds.append({"what": what, "foreign_progs": n, "busy": busy})


QUIET = Quiet(0)
