#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""fork_summary.py OUT STRACE: what a fork probe (nv_forkprobe, hip_forkprobe) saw, in words
that do not depend on which library ran it, one fact a line (tests/realdriver/fork_compare.sh
diffs the real runtime's against the double's):

  call    parent|child NAME = CODE, ioctls: none|some   (the parent's ioctls: first call only)
  open    parent|child DEVICE FLAGS (O_CLOEXEC or not, then fcntl F_SETFD FD_CLOEXEC or not)
  use     child NAME: ioctl on inherited|new DEVICE

OUT: the probe's stdout ("[child: ]NAME = CODE"); STRACE: strace -f -e trace=openat,open,
ioctl,fcntl,write,close over it. A call is what lies between two of the probe's marks
(write(2, "@ [child: ]NAME\\n")) in the calling thread; ioctls of the runtime's own threads
are not counted. Devices: nvidiactl, nvidia0, nvidia-uvm, kfd, renderD128 (by file name)."""
import re
import sys

DEVICES = {"nvidiactl", "nvidia0", "nvidia-uvm", "kfd", "renderD128"}
LINE = re.compile(r"^(\d+) +(.*)$")
OPEN = re.compile(r'^open(?:at)?\((?:AT_FDCWD, )?"([^"]+)", ([A-Z_|]+)(?:, \d+)?\) += (-?\d+)')
FCNTL = re.compile(r"^fcntl\((\d+), F_SETFD, (\w+)\) += 0")
CLOSE = re.compile(r"^close\((\d+)\) += 0")
IOCTL = re.compile(r"^ioctl\((\d+),")
MARK = re.compile(r'^write\(2, "@ (child: )?([\w ]+)\\n"')


def joined(lines):
    """strace -f lines with '<unfinished ...>' / '<... resumed>' put back together, per tid."""
    pending = {}
    for raw in lines:
        m = LINE.match(raw.rstrip("\n"))
        if not m:
            continue
        tid, rest = int(m.group(1)), m.group(2)
        if rest.endswith("<unfinished ...>"):
            pending[tid] = rest[: -len("<unfinished ...>")].rstrip()
            continue
        r = re.match(r"^<\.\.\. \w+ resumed>(.*)$", rest)
        if r:
            rest = pending.pop(tid, "") + r.group(1)
        yield tid, rest


def main():
    codes = {}
    for line in open(sys.argv[1]):
        m = re.match(r"^(child: )?(\w+) = (-?\d+)$", line.strip())
        if m:
            who = "child" if m.group(1) else "parent"
            codes.setdefault((who, m.group(2)), []).append(m.group(3))
    calls, opens, uses = [], set(), set()
    fds = {}  # (pid, fd) -> device, for the parent; the child's own
    parent = child = None
    fork_table = {}
    current = {}  # tid -> [who, name, ioctls]
    last_open = {}  # (tid, fd) -> index in opens_list, for the fcntl after it
    for tid, rest in joined(open(sys.argv[2])):
        mk = MARK.match(rest)
        if mk:
            who = "child" if mk.group(1) else "parent"
            if who == "parent" and parent is None:
                parent = tid
            if who == "child" and child is None:
                child = tid
            if tid in current:
                calls.append(current.pop(tid))
            name = mk.group(2).strip()
            if name == "fork" and who == "parent":
                fork_table = {fd: dev for (p, fd), dev in fds.items() if p == parent}
            elif name != "exit":
                current[tid] = [who, name, 0, []]
            continue
        if parent is None:
            continue
        who = "child" if tid == child else "parent" if tid == parent else None
        om = OPEN.match(rest)
        if om and who and om.group(1).rsplit("/", 1)[-1] in DEVICES and int(om.group(3)) >= 0:
            dev, fd = om.group(1).rsplit("/", 1)[-1], int(om.group(3))
            fds[(tid, fd)] = dev
            last_open[(tid, fd)] = [who, dev, "O_CLOEXEC" in om.group(2).split("|"), False]
            opens.add(tuple(last_open[(tid, fd)]))
            continue
        fm = FCNTL.match(rest)
        if fm and (tid, int(fm.group(1))) in last_open and fm.group(2) == "FD_CLOEXEC":
            entry = last_open.pop((tid, int(fm.group(1))))
            opens.discard(tuple(entry))
            entry[3] = True
            opens.add(tuple(entry))
            continue
        cm = CLOSE.match(rest)
        if cm:
            fds.pop((tid, int(cm.group(1))), None)
            last_open.pop((tid, int(cm.group(1))), None)
            continue
        im = IOCTL.match(rest)
        if im and tid in current:
            current[tid][2] += 1
            if tid == child:
                fd = int(im.group(1))
                if (child, fd) in fds:
                    uses.add((current[tid][1], "new " + fds[(child, fd)]))
                elif fd in fork_table:
                    uses.add((current[tid][1], "inherited " + fork_table[fd]))
    calls.extend(current.values())
    if child is None:
        print("no child seen in the trace", file=sys.stderr)
        return 1
    seen = {}
    for k, (who, name, n, _) in enumerate(calls):
        i = seen.get((who, name), 0)
        seen[(who, name)] = i + 1
        got = codes.get((who, name), [])
        code = got[i] if i < len(got) else "?"
        if who == "parent" and k:  # where a runtime does its work is its own affair
            print(f"call    {who} {name} = {code}")
        else:
            print(f"call    {who} {name} = {code}, ioctls: {'some' if n else 'none'}")
    for who, dev, cloexec, setfd in sorted(opens):
        flags = "O_CLOEXEC" if cloexec else "without O_CLOEXEC"
        then = ", then F_SETFD FD_CLOEXEC" if setfd else ""
        print(f"open    {who} {dev} {flags}{then}")
    for name, what in sorted(uses):
        print(f"use     child {name}: ioctl on {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
