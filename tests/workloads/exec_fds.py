# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""exec_fds.py DIR: open the emulated GPU as libcuda does (nvidiactl without O_CLOEXEC, then
fcntl(F_SETFD, FD_CLOEXEC)), issue one call on it, then start what a CUDA job starts after
init: subprocess.run(["/bin/true"]) and a multiprocessing "spawn" worker. Neither holds a GPU
file after its exec (each checks /proc/self/fd and says so)."""
import ctypes
import fcntl
import multiprocessing
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpufd  # noqa: E402


def worker():
    print("spawn worker: gpu fd", gpufd.ctl_fd(), flush=True)


def main():
    libc = ctypes.CDLL(None, use_errno=True)
    path = os.path.join(sys.argv[1], "nvidiactl").encode()
    fd = libc.open(path, os.O_RDWR)  # no O_CLOEXEC: libcuda's open of nvidiactl
    if fd < 0:
        sys.exit(f"open {path}: {os.strerror(ctypes.get_errno())}")
    fcntl.fcntl(fd, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
    fcntl.ioctl(fd, gpufd.CHECK_VERSION, bytearray(72))
    subprocess.run(["/bin/sh", "-c", "echo subprocess: gpu fds $(ls -l /proc/$$/fd | grep -c nvidiactl)"],
                   check=True)
    ctx = multiprocessing.get_context("spawn")
    p = ctx.Process(target=worker)
    p.start()
    p.join()
    sys.exit(p.exitcode)


if __name__ == "__main__":
    main()
