#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The README's claims stay true of the code:
- at most MAX_LINES lines, and every relative link names a file of the tree;
- every `gpuctx CMD ...` line in its code blocks names a command of `gpuctx --help` and only
  options of that command's --help (check also takes record's);
- the block after `<!-- readme-test: run -->` runs, line by line, in a temporary directory with
  build/ first on PATH, each line exiting 0;
- the block after `<!-- readme-test: demo -->` is what the demo prints: its lines, numbers aside
  (pids, times, source lines), appear in that order in the output of tools/demo.sh;
- the demo's trace fails `gpuctx check` with 86, as the README says a poison fork does.
Usage: check_readme.py README TOP (root: the demo records)"""
import os
import re
import subprocess
import sys
import tempfile

MAX_LINES = 200
bad = []


def fail(msg):
    bad.append(msg)
    print(f"readme: FAIL: {msg}", file=sys.stderr)


def blocks(text):
    """(marker, info, lines, first line number) of each fenced block; marker from a
    `<!-- readme-test: X -->` line right before it."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = re.match(r"^```(.*)$", lines[i])
        if not m:
            i += 1
            continue
        mark = None
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j >= 0:
            mm = re.match(r"^<!-- readme-test: (\w+) -->$", lines[j].strip())
            mark = mm.group(1) if mm else None
        k = i + 1
        while k < len(lines) and not lines[k].startswith("```"):
            k += 1
        out.append((mark, m.group(1).strip(), lines[i + 1:k], i + 2))
        i = k + 1
    return out


def gpuctx_help(gpuctx, *args):
    r = subprocess.run([gpuctx, *args, "--help"], capture_output=True, text=True, timeout=10)
    return r.stdout if r.returncode == 0 else None


def help_options(text):
    opts = set()
    for line in text.splitlines():
        if re.match(r"^ +-", line):
            head = re.split(r"(?<=\S)\s{2,}", line.strip(), maxsplit=1)[0]
            opts.update(w for w in head.replace(",", " ").split() if w.startswith("-"))
    return opts | {"-h", "--help"}


def check_commands(gpuctx, blks):
    top = gpuctx_help(gpuctx)
    cmds = set()
    on = False
    for line in top.splitlines():
        if line.startswith("Commands:"):
            on = True
        elif on and not line.strip():
            on = False
        elif on:
            cmds.add(line.split()[0])
    seen = 0
    for mark, info, lines, first in blks:
        if info not in ("", "sh", "console") or mark == "demo":
            continue
        prompted = any(l.startswith("$ ") for l in lines)
        for n, line in enumerate(lines, first):
            if prompted and not line.startswith("$ "):
                continue  # the output of a command shown with its prompt
            line = re.sub(r"^\$ ", "", line)
            line = re.sub(r"\s+#.*$", "", line)
            words = line.split()
            if len(words) < 2 or words[0] != "gpuctx" or words[1].startswith("-"):
                continue
            cmd = words[1]
            if cmd not in cmds:
                fail(f"README line {n}: gpuctx {cmd}: no such command in gpuctx --help")
                continue
            opts = help_options(gpuctx_help(gpuctx, cmd) or "")
            if cmd == "check":
                opts |= help_options(gpuctx_help(gpuctx, "record") or "")
            for w in words[2:]:
                if w == "--":
                    break
                if w.startswith("-") and w != "-" and w.split("=")[0] not in opts:
                    fail(f"README line {n}: gpuctx {cmd}: {w} is not in gpuctx {cmd} --help")
            seen += 1
    print(f"readme: {seen} gpuctx command lines name existing commands and options")
    if not seen:
        fail("no gpuctx command line found in the README's code blocks")


def run_blocks(top, blks):
    runs = [b for b in blks if b[0] == "run"]
    if not runs:
        fail("no block marked <!-- readme-test: run -->")
    env = dict(os.environ, PATH=f"{top}/build:{os.environ['PATH']}")
    with tempfile.TemporaryDirectory(prefix="gpuctx-readme.") as d:
        for _, _, lines, first in runs:
            for n, line in enumerate(lines, first):
                cmd = re.sub(r"^\$ ", "", line).strip()
                if not cmd or cmd.startswith("#"):
                    continue
                r = subprocess.run(["bash", "-c", cmd], cwd=d, env=env, capture_output=True,
                                   text=True, timeout=120)
                if r.returncode != 0:
                    fail(f"README line {n}: `{cmd}` exited {r.returncode}: "
                         f"{(r.stderr or r.stdout).strip()[-300:]}")
                else:
                    print(f"readme: ran `{cmd}`: exit 0")


def norm(line):
    """Numbers (pids, times, addresses, source lines), the demo's temporary directory, libc's
    source lines and the ioctl that came first among racing workers (RM_CONTROL or RM_ALLOC)
    are not the README's claim."""
    line = re.sub(r"gpuctx-demo\.\w+", "gpuctx-demo.X", line)
    # libc's frames have a source line only where its debug symbols are installed
    line = re.sub(r"(\(libc\.so\.6\)) at [\w.-]+:\d+", r"\1", line)
    line = re.sub(r"0x[0-9a-f]+", "0x#", line)
    line = re.sub(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", "IOCTL", line)
    return " ".join(re.sub(r"\d+", "#", line).split())


def check_demo(top, blks):
    demo = [b for b in blks if b[0] == "demo"]
    if len(demo) != 1:
        fail(f"{len(demo)} blocks marked <!-- readme-test: demo -->, expected one")
        return
    _, _, lines, first = demo[0]
    with tempfile.TemporaryDirectory(prefix="gpuctx-readme.") as d:
        trace = os.path.join(d, "demo.gctx")
        r = subprocess.run([f"{top}/tools/demo.sh"], env=dict(os.environ, GPUCTX_DEMO_OUT=trace),
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f"tools/demo.sh exited {r.returncode}: {r.stderr.strip()[-300:]}")
            return
        out = [norm(l) for l in r.stdout.splitlines()]
        pos = 0
        for n, line in enumerate(lines, first):
            want = norm(line)
            if not want:
                continue
            try:
                pos = out.index(want, pos) + 1
            except ValueError:
                fail(f"README line {n} is not in the demo's output (in this order): {line}")
                print("     | " + "\n     | ".join(r.stdout.splitlines()[:40]), file=sys.stderr)
                return
        print(f"readme: the demo block's {len([l for l in lines if l.strip()])} lines are in "
              f"the demo's output")
        c = subprocess.run([f"{top}/build/gpuctx", "check", trace], capture_output=True,
                           text=True, timeout=60)
        if c.returncode != 86:
            fail(f"gpuctx check on the demo's trace exited {c.returncode}, not 86")
        else:
            print("readme: gpuctx check on the demo's trace: exit 86")


def main():
    readme, top = sys.argv[1], os.path.abspath(sys.argv[2])
    text = open(readme).read()
    n = len(text.splitlines())
    if n > MAX_LINES:
        fail(f"{readme} has {n} lines, more than {MAX_LINES}")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target and not os.path.exists(os.path.join(top, target)):
            fail(f"link to {target}: no such file")
    blks = blocks(text)
    check_commands(f"{top}/build/gpuctx", blks)
    run_blocks(top, blks)
    check_demo(top, blks)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
