#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The man pages say what --help says: every subcommand of `gpuctx --help` has a page
man/gpuctx-CMD.8 listed in gpuctx(8)'s COMMANDS, and each page's OPTIONS names exactly the
options its --help lists (-h/--help aside); every page has the sections an admin looks for.
Usage: check_man.py GPUCTX MANDIR"""
import os
import re
import subprocess
import sys

SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "FILES", "EXAMPLES",
            "SEE ALSO"]
OPT = re.compile(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)")
IGNORED = {"-h", "--help"}


def help_text(gpuctx, *args):
    r = subprocess.run([gpuctx, *args, "--help"], capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        sys.exit(f"man: {' '.join(['gpuctx', *args, '--help'])} exited {r.returncode}")
    return r.stdout


def help_commands(text):
    cmds, on = [], False
    for line in text.splitlines():
        if line.startswith("Commands:"):
            on = True
        elif on and not line.strip():
            break
        elif on:
            cmds.append(line.split()[0])
    return cmds


def help_options(text):
    """Options at the head of an option line: '  -o, --output FILE   text' -> -o, --output."""
    opts = set()
    for line in text.splitlines():
        if not re.match(r"^ +-", line):
            continue
        head = re.split(r"(?<=\S)\s{2,}", line.strip(), maxsplit=1)[0]
        for word in head.replace(",", " ").split():
            if word.startswith("-"):
                opts.add(word)
    return opts - IGNORED


def plain(roff):
    """roff line -> text: escapes and font changes dropped, macro name dropped."""
    s = roff.replace("\\-", "-").replace("\\&", "")
    s = re.sub(r"\\f[BIRP]|\\f\(..", "", s)
    s = re.sub(r'^\.\w+\s*', "", s)
    return s.replace('"', "")


def sections(path):
    out, cur = {}, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith(".SH "):
                cur = line[4:].strip().strip('"')
                out[cur] = []
            elif cur:
                out[cur].append(line)
    return out


def man_options(lines):
    """The tag line after each .TP of OPTIONS names its options."""
    opts = set()
    for i, line in enumerate(lines):
        if line.strip() == ".TP" and i + 1 < len(lines):
            tag = plain(lines[i + 1])
            opts.update(m.group(1) for m in OPT.finditer(tag))
    return opts - IGNORED


def main():
    gpuctx, mandir = sys.argv[1], sys.argv[2]
    bad = []
    top = help_text(gpuctx)
    cmds = [c for c in help_commands(top) if c != "version"]
    if not cmds:
        sys.exit("man: no commands found in gpuctx --help")
    pages = {"gpuctx": os.path.join(mandir, "gpuctx.8")}
    pages.update({c: os.path.join(mandir, f"gpuctx-{c}.8") for c in cmds})
    for name, path in pages.items():
        if not os.path.exists(path):
            bad.append(f"{name}: no man page {path}")
            continue
        sec = sections(path)
        for s in SECTIONS:
            if s not in sec:
                bad.append(f"{path}: no {s} section")
        if name == "gpuctx":
            listed = set()
            for i, line in enumerate(sec.get("COMMANDS", [])):
                if line.strip() == ".TP":
                    listed.add(plain(sec["COMMANDS"][i + 1]).split()[0])
            missing = (set(cmds) | {"version"}) - listed
            if missing:
                bad.append(f"{path}: COMMANDS lacks {' '.join(sorted(missing))} "
                           f"(in gpuctx --help)")
            for c in sorted(listed - set(cmds) - {"version"}):
                if not os.path.exists(os.path.join(mandir, f"gpuctx-{c}.8")):
                    bad.append(f"{path}: COMMANDS lists {c}: not in gpuctx --help, no page")
            continue
        want = help_options(help_text(gpuctx, name))
        have = man_options(sec.get("OPTIONS", []))
        if want - have:
            bad.append(f"{path}: OPTIONS lacks {' '.join(sorted(want - have))} "
                       f"(in gpuctx {name} --help)")
        if have - want:
            bad.append(f"{path}: OPTIONS has {' '.join(sorted(have - want))}, "
                       f"not in gpuctx {name} --help")
        print(f"man: gpuctx-{name}.8: {len(have)} options, as in --help")
    # a page may come before its command lands (written from the branch that adds it): said,
    # not failed; its options are checked once the binary has the command
    extra = {f for f in os.listdir(mandir) if f.endswith(".8")} - \
        {os.path.basename(p) for p in pages.values()}
    for f in sorted(extra):
        if not re.match(r"^gpuctx-[a-z]+\.8$", f):
            bad.append(f"{mandir}/{f}: not a gpuctx-COMMAND.8 page")
        else:
            print(f"man: note: {f}: this gpuctx has no such command: not checked")
    for b in bad:
        print(f"man: FAIL: {b}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
