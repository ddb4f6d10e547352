# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""blame_long.py DIR SRC [cuda] [--sync D] [--linger S]: blame.py's scenario with every site at
the end of a long function, whose co_linetable is far longer than the prefix the kernel copies
(GCTX_PY_LT_LEN, 384 bytes): the lines come from the table the collector reads from memory.

Writes the program to SRC (with its BLAME-* marks for check_stacks.py) and runs it. With
"cuda", cuInit of the CUDA test double initialises the GPU (LD_LIBRARY_PATH must name
build/doubles). With --sync D, the program waits for D/go before touching the GPU and writes
D/reaped once its child has exited. With --linger S, it stays S seconds before it exits."""
import argparse
import os
import runpy

FILLER = 400  # statements before each site: 3.10 pairs are 2 bytes a line, 3.11+ more

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("src")
ap.add_argument("mode", nargs="?", default="")
ap.add_argument("--sync")
ap.add_argument("--linger", type=float, default=0)
a = ap.parse_args()


def long_def(head, site):
    """def HEAD: FILLER statements, then the SITE lines (already indented)."""
    body = ["    t = 0"] + ["    t += %d" % (i % 7 + 1) for i in range(FILLER)]
    return ["def %s:" % head] + body + site + [""]


init = ['    cuda = ctypes.CDLL("libcuda.so.1")',
        "    assert cuda.cuInit(0) == 0  # BLAME-INIT-CUDA",
        "    gpu.fd = ctl_fd()"] if a.mode == "cuda" else [
        '    gpu.fd = os.open(os.path.join(DIR, "nvidiactl"), os.O_RDWR)  # BLAME-INIT']
prog = [
    "import ctypes", "import fcntl", "import os", "import time",
    "from gpufd import CHECK_VERSION, ctl_fd",
    "DIR, SYNC, LINGER = %r, %r, %r" % (a.dir, a.sync, a.linger), "",
    "class Gpu:", "    fd = -1", "",
] + long_def("init_gpu(gpu)", init) + long_def("worker_loop(gpu)", [
    "    try:",
    "        fcntl.ioctl(gpu.fd, CHECK_VERSION, bytearray(72))  # BLAME-USE",
    "    except OSError:",
    "        pass",
]) + long_def("start_worker(gpu)", [
    "    pid = os.fork()  # BLAME-FORK",
    "    if pid == 0:",
    "        worker_loop(gpu)",
    "        os._exit(0)",
    "    return pid",
]) + long_def("main()", [
    "    while SYNC and not os.path.exists(os.path.join(SYNC, 'go')):",
    "        time.sleep(0.01)",
    "    gpu = Gpu()",
    "    init_gpu(gpu)",
    "    os.waitpid(start_worker(gpu), 0)",
    "    if SYNC:",
    "        open(os.path.join(SYNC, 'reaped'), 'w').close()",
    "    time.sleep(LINGER)",
]) + [
    # the test is void unless each site lies past the prefix: the table is longer than
    # twice the prefix and the site is the function's last statement
    "for f in (init_gpu, worker_loop, start_worker, main):",
    "    assert len(f.__code__.co_linetable) > 2 * 384, (f, len(f.__code__.co_linetable))",
    "main()",
]
with open(a.src, "w") as out:
    out.write("\n".join(prog) + "\n")
runpy.run_path(a.src, run_name="__main__")
