# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A PyTorch training job's data side, run by Debian's python3-torch (/usr/bin/python3).

The trainer initialises CUDA the way torch.cuda does (cuInit, primary context retain, set
current, cuMemAlloc) through the libcuda test double (LD_LIBRARY_PATH=build/doubles,
GPUCTX_FAKEGPU_DIR=<emulated driver>), then iterates a real torch DataLoader.

  --start fork|spawn|forkserver   DataLoader multiprocessing_context (fork: the poison fork)
  --workers N --epochs E          N workers re-created for each of E epochs
  --touch                         each worker calls cuMemAlloc (forked: on the inherited state;
                                  spawned: after its own cuInit, as a worker using the GPU would)
  --segv                          the first worker of the first epoch dies by SIGSEGV
  --import-only                   the trainer initialises CUDA but allocates nothing (an import did it)
  --rename                        workers call themselves pt_data_worker (what torch >= 2.2 does)
  --threads                       a thread pool does the loading instead (no fork at all)
  --no-guard                      the script's code runs at import: spawned workers re-run it
  --linger S                      stay S seconds after the last epoch (a job goes on training)
"""
import argparse
import ctypes
import os
import signal
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

cu = ctypes.CDLL(os.environ.get("GPUCTX_LIBCUDA", "libcuda.so.1"))
touched = False


def cuda_init(alloc=True):
    dev, ctx, ptr = ctypes.c_int(0), ctypes.c_void_p(0), ctypes.c_uint64(0)
    assert cu.cuInit(0) == 0
    assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert cu.cuCtxSetCurrent(ctx) == 0
    if alloc:
        assert cu.cuMemAlloc_v2(ctypes.byref(ptr), 1 << 20) == 0


class Items(Dataset):
    def __init__(self, n, touch, segv_pid_file):
        self.n, self.touch, self.segv_pid_file = n, touch, segv_pid_file

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        global touched
        if self.touch and not touched:
            touched = True
            if args_start() == "fork" and str(os.getpid()) != os.environ["DL_JOB_PARENT"]:
                ptr = ctypes.c_uint64(0)
                cu.cuMemAlloc_v2(ctypes.byref(ptr), 4096)  # on the inherited state: fails
            else:
                cuda_init()  # a spawned worker or a thread sets its own context up
        if self.segv_pid_file:
            try:
                fd = os.open(self.segv_pid_file, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                os.close(fd)
                os.kill(os.getpid(), signal.SIGSEGV)
            except FileExistsError:
                pass
        return torch.tensor([i])


def rename(_):
    libc = ctypes.CDLL(None)
    libc.prctl(15, b"pt_data_worker", 0, 0, 0)  # PR_SET_NAME


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--start", default="fork")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--touch", action="store_true")
    p.add_argument("--segv", default="")
    p.add_argument("--import-only", action="store_true")
    p.add_argument("--rename", action="store_true")
    p.add_argument("--threads", action="store_true")
    p.add_argument("--no-guard", action="store_true")
    p.add_argument("--linger", type=float, default=0)
    return p.parse_args()


def args_start():
    return os.environ.get("DL_JOB_START", "fork")


def main(a):
    os.environ["DL_JOB_START"] = a.start
    os.environ.setdefault("DL_JOB_PARENT", str(os.getpid()))
    cuda_init(alloc=not a.import_only)
    ds = Items(a.workers * 2, a.touch, a.segv)
    if a.threads:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(a.workers) as ex:
            for _ in range(a.epochs):
                list(ex.map(ds.__getitem__, range(len(ds))))
        return 0
    for _ in range(a.epochs):
        dl = DataLoader(ds, batch_size=1, num_workers=a.workers,
                        multiprocessing_context=a.start,
                        worker_init_fn=rename if a.rename else None)
        for _ in dl:
            pass
    time.sleep(a.linger)
    return 0


if "--no-guard" in sys.argv:
    # the mistake of seed 004: no `if __name__ == "__main__":` guard; spawn gives its workers
    # the parent's sys.argv, so each re-runs this when it imports the script
    sys.exit(main(parse()))

if __name__ == "__main__":
    sys.exit(main(parse()))
