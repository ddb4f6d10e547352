# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A job that gpuctx attaches to mid-run (gpuctx record -p / check -p; issue 26).

The parent initialises the GPU through the CUDA or HIP test double (LD_LIBRARY_PATH=build/doubles,
GPUCTX_FAKEGPU_DIR=<emulated driver>), forks --before workers, prints "ready" and waits for
SIGUSR1 (sent once gpuctx has attached). Then the workers forked before the attach, still alive,
make their first GPU call, and --after more workers are forked and make theirs: on the inherited
state every such call fails (the poison fork). --start spawn: the workers are new programs
(fork + exec) that initialise the GPU themselves: clean.

--churn N: first fork N short-lived children that never touch a GPU (a job driver's history,
as the agent's bounded dumps see it). --no-wait: no SIGUSR1 wait (record -- CMD runs it).

  attach_job.py --api cuda|hip --start fork|spawn --before N --after M [--churn N] [--no-wait]
"""
import argparse
import ctypes
import os
import signal
import subprocess
import sys

p = argparse.ArgumentParser()
p.add_argument("--api", choices=["cuda", "hip"], default="cuda")
p.add_argument("--start", choices=["fork", "spawn"], default="fork")
p.add_argument("--before", type=int, default=0)
p.add_argument("--after", type=int, default=2)
p.add_argument("--churn", type=int, default=0)
p.add_argument("--no-wait", action="store_true")
p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
args = p.parse_args()

lib = ctypes.CDLL("libcuda.so.1" if args.api == "cuda" else "libamdhip64.so.5")


def init():
    ctx, dev = ctypes.c_void_p(0), ctypes.c_int(0)
    if args.api == "cuda":
        assert lib.cuInit(0) == 0
        assert lib.cuDeviceGet(ctypes.byref(dev), 0) == 0
        assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
        assert lib.cuCtxSetCurrent(ctx) == 0
    else:
        assert lib.hipInit(0) == 0
        assert lib.hipSetDevice(0) == 0
    assert alloc() == 0


def alloc():
    ptr = ctypes.c_uint64(0)
    if args.api == "cuda":
        return lib.cuMemAlloc_v2(ctypes.byref(ptr), 4096)
    return lib.hipMalloc(ctypes.byref(ptr), 4096)


if args.worker:  # a spawned worker: a new program, its own GPU state
    init()
    sys.exit(0)


def worker(go):
    """Forked: wait for the go byte, then one GPU call on the inherited state."""
    os.read(go, 1)
    os._exit(0 if alloc() != 0 else 1)  # it must fail: exit 0 says it did


def start(go):
    if args.start == "spawn":
        return subprocess.Popen([sys.executable, __file__, "--api", args.api, "--worker"])
    pid = os.fork()
    if pid == 0:
        worker(go)
    return pid


for _ in range(args.churn):
    c = os.fork()
    if c == 0:
        os._exit(0)
    os.waitpid(c, 0)
init()
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
r, w = os.pipe()
early = [start(r) for _ in range(args.before)]
print("ready", flush=True)
if not args.no_wait:
    signal.sigwait([signal.SIGUSR1])
os.write(w, b"x" * (args.before + args.after))
late = [start(r) for _ in range(args.after)]
print("workers", *[c if isinstance(c, int) else c.pid for c in early + late], flush=True)
bad = 0
for c in early + late:
    if isinstance(c, int):
        bad += os.waitpid(c, 0)[1] != 0
    else:
        bad += c.wait() != 0
sys.exit(1 if bad else 0)
