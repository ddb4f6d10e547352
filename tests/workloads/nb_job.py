# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A job on Numba's CUDA binding (Debian's python3-numba, run by /usr/bin/python3) over a real
libcuda.so.1 (NUMBA_CUDA_DRIVER names it): the real client of tests/realdriver/numba.sh.

  nb_job.py MODE [--wait]
The parent asks numba.cuda.cudadrv.driver.driver.get_device_count() (cuInit, then the device
count), then, by MODE:
  fork, spawn, forkserver  one multiprocessing worker of that start method asks the same (a
                           forked one gets Numba's CudaDriverError: libcuda refuses it)
  subprocess               subprocess.run(["/bin/true"])
  pool-spawn               a spawn Pool of 2 whose initializer initialises CUDA in each worker
                           (its own cuInit); each task asks the device count; closed and
                           joined
  pool-cpu                 a fork Pool of 2 whose workers do CPU work only
--wait: print "ready" and wait for SIGUSR1 before starting the workers (an attach point).
Prints "worker ..." lines (a result, or the worker's exit code) and "nb_job: done"; exits 0
when the parent's own CUDA calls worked.
"""
import multiprocessing as mp
import signal
import subprocess
import sys

from numba.cuda.cudadrv.driver import driver


def worker():
    print("worker device count", driver.get_device_count(), flush=True)


def pool_init():
    driver.get_device_count()  # the spawned worker's own cuInit


def pool_task(i):
    return driver.get_device_count() + i - i


def cpu_task(i):
    return sum(range(i * 1000))


def main():
    mode = sys.argv[1]
    n = driver.get_device_count()
    print("parent device count", n, flush=True)
    if "--wait" in sys.argv:
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
        print("ready", flush=True)
        signal.sigwait([signal.SIGUSR1])
    if mode in ("fork", "spawn", "forkserver"):
        p = mp.get_context(mode).Process(target=worker)
        p.start()
        p.join()
        print("worker exit code", p.exitcode, flush=True)
    elif mode == "subprocess":
        print("worker exit code", subprocess.run(["/bin/true"]).returncode, flush=True)
    elif mode == "pool-spawn":
        pool = mp.get_context("spawn").Pool(2, initializer=pool_init)
        print("worker results", pool.map(pool_task, range(4)), flush=True)
        pool.close()  # not `with`: its exit terminates the workers (SIGTERM)
        pool.join()
    elif mode == "pool-cpu":
        with mp.get_context("fork").Pool(2) as pool:
            print("worker results", pool.map(cpu_task, range(4)), flush=True)
    else:
        sys.exit("nb_job.py: unknown mode " + mode)
    print("nb_job: done", flush=True)
    return 0 if n == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
