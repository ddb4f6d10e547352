#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""fixture.py FAKEGPU_LOG VERSION: the ioctls the real libcuda issued, as fakegpu -v logged them,
in the fixture format the decoder test reads (tests/unit/decode/test_nvidia_rmctrl.c):
"DEVICE CMD [CONTROL]" per line, parent first, then its forked child."""
import re
import sys

LINE = re.compile(r"^fakegpu: tgid (\d+) tid \d+ (\S+) ioctl (0x[0-9a-f]+) .*?(?: ctrl (0x[0-9a-f]+))?")
KIND = {"nvidiactl": "nvidiactl", "nvidia0": "nvidia", "nvidia-uvm": "nvidia-uvm"}


def main():
    log, version = sys.argv[1:3]
    seen, rows = [], {}
    for line in open(log, errors="replace"):
        m = LINE.match(line)
        if not m or m.group(2) not in KIND:
            continue
        tgid = m.group(1)
        if tgid not in rows:
            seen.append(tgid)
            rows[tgid] = []
        row = f"{KIND[m.group(2)]} {m.group(3)}"
        if " ctrl " in line:
            row += " " + re.search(r" ctrl (0x[0-9a-f]+)", line).group(1)
        rows[tgid].append(row)
    print(f"# ioctls of the real libcuda {version} over build/fakegpu (tests/realdriver/nvidia.sh,")
    print("# NV_FIXTURES_UPDATE=1): DEVICE CMD [RM CONTROL]; decoded by test_nvidia_rmctrl")
    for i, tgid in enumerate(seen):
        print("# parent: cuInit, device queries, primary context, cuMemAlloc" if i == 0
              else "# the forked child: cuInit, cuDeviceGetCount, cuCtxSetCurrent")
        prev, n = None, 0
        for row in rows[tgid] + [None]:  # runs of one call (a wait loop) written once
            if row == prev:
                n += 1
                continue
            if prev is not None:
                print(prev if n == 1 else f"{prev}\n# (the line above {n} times in a row)")
            prev, n = row, 1


if __name__ == "__main__":
    sys.exit(main())
