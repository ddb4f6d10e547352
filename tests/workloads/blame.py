# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""blame.py DIR [cuda|cudause|crash]: the GPU is initialised in init_gpu(), the fork happens in
start_worker(), the child uses the inherited GPU file in worker_loop(). With "cuda" the
initialisation goes through the CUDA test double (cuInit over ctypes, LD_LIBRARY_PATH must
name build/doubles), else the device file is opened directly; "cudause" also makes the child's
use a CUDA call (no ioctl: the driver refuses it in user space). With "crash" the child then
dies by SIGSEGV. The stack test checks that the report names these functions and the lines
marked BLAME-*."""
import ctypes
import fcntl
import os
import signal
import sys

from gpufd import CHECK_VERSION, ctl_fd

DIR = sys.argv[1]
MODE = sys.argv[2] if len(sys.argv) > 2 else ""


class Gpu:
    fd = -1


def init_gpu(gpu):
    if MODE in ("cuda", "cudause"):
        cuda = ctypes.CDLL("libcuda.so.1")
        rc = cuda.cuInit(0)  # BLAME-INIT-CUDA
        assert rc == 0, rc
        gpu.fd = ctl_fd()
        assert gpu.fd >= 0, "no nvidiactl fd after cuInit"
    else:
        gpu.fd = os.open(os.path.join(DIR, "nvidiactl"), os.O_RDWR)  # BLAME-INIT


def worker_loop(gpu):
    if MODE == "cudause":
        # a forked worker calls CUDA on the inherited state: the driver refuses it in user
        # space (CUDA_ERROR_NOT_INITIALIZED, no ioctl), as the real libcuda does before cuInit
        ctypes.CDLL("libcuda.so.1").cuMemAlloc_v2(ctypes.byref(ctypes.c_uint64()), 4096)  # BLAME-USE-CUDA
        return
    buf = bytearray(72)
    try:
        fcntl.ioctl(gpu.fd, CHECK_VERSION, buf)  # BLAME-USE
    except OSError:
        pass
    if MODE == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)  # BLAME-CRASH


def start_worker(gpu):
    pid = os.fork()  # BLAME-FORK
    if pid == 0:
        worker_loop(gpu)
        os._exit(0)
    return pid


def main():
    gpu = Gpu()
    init_gpu(gpu)
    pid = start_worker(gpu)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
