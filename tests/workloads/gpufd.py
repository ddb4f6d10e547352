# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Helpers of the Python test workloads (blame.py, blame_dataloader.py)."""
import os

# _IOWR('F', NV_ESC_CHECK_VERSION_STR, 72): an RM escape any holder of nvidiactl may issue
CHECK_VERSION = (3 << 30) | (72 << 16) | (ord("F") << 8) | 0xD2


def ctl_fd():
    """The fd of this process's nvidiactl (opened here or inherited), -1 if none."""
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + name).endswith("nvidiactl"):
                return int(name)
        except OSError:
            pass
    return -1
