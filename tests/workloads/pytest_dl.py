# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A test suite as CI runs it (the README's `gpuctx check -- python3 -m pytest` example): the
training job passes, yet its forked DataLoader workers use the CUDA state they inherited."""
import os
import subprocess
import sys

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dl_job.py")


def test_one_epoch():
    r = subprocess.run([sys.executable, JOB, "--workers", "2", "--touch"])
    assert r.returncode == 0
