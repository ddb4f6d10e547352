# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""pyexc_job.py DIR MODE: the parent initialises CUDA (cuInit through the libcuda test double,
LD_LIBRARY_PATH must name build/doubles; GPUCTX_FAKEGPU_DIR=DIR), then forks one worker that
fails the way real frameworks do in a forked child (issue 42):
  torch    raises RuntimeError("Cannot re-initialize CUDA in forked subprocess") in Python,
           before any driver call, as PyTorch's lazy init does
  numba    calls cuDeviceGetCount (refused in user space: 3), then raises its own
           CudaDriverError, as Numba does
  noise    raises and catches a KeyError only: nothing about the GPU
  latin1   as torch, a message with non-ASCII Latin-1 characters (a 1-byte compact str)
  emoji    as torch, a message with a character past the BMP (a 4-byte compact str)
The worker catches what it raised and exits 1 (0 for noise). The lines marked RAISE-* are the
sites the report must name."""
import ctypes
import os
import sys

MODE = sys.argv[2]


class CudaDriverError(Exception):
    pass


MESSAGES = {"torch": "Cannot re-initialize CUDA in forked subprocess",
            "latin1": "déjà vu: CUDA in forked subprocess, ½ done",
            "emoji": "CUDA in forked subprocess \U0001F6AB"}


def lazy_init():
    raise RuntimeError(MESSAGES[MODE])  # RAISE-TORCH


def get_device_count(cuda):
    n = ctypes.c_int(-1)
    rc = cuda.cuDeviceGetCount(ctypes.byref(n))
    if rc != 0:
        raise CudaDriverError("CUDA initialized before forking")  # RAISE-NUMBA
    return n.value


def worker(cuda):
    try:
        if MODE in MESSAGES:
            lazy_init()
        elif MODE == "numba":
            get_device_count(cuda)
        else:
            {}["x"]  # RAISE-NOISE
    except (RuntimeError, CudaDriverError, KeyError) as e:
        print("worker raised", type(e).__name__, e, flush=True)
        return 0 if MODE == "noise" else 1
    return 0


def main():
    cuda = ctypes.CDLL("libcuda.so.1")
    assert cuda.cuInit(0) == 0
    pid = os.fork()
    if pid == 0:
        os._exit(worker(cuda))
    _, st = os.waitpid(pid, 0)
    want = 0 if MODE == "noise" else 1
    assert os.WEXITSTATUS(st) == want, st
    print("pyexc_job", MODE, "ok", flush=True)


main()
