#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Usage: PYTHON tests/fuzz/gen_pystack_seeds.py tests/fuzz/corpus/fuzz_pystack (once per CPython 3.10-3.13)
# Seeds for fuzz_pystack: real line tables and frames from this CPython (one version at a time)
import struct, sys, os, inspect, json
out = sys.argv[1]
ver = sys.version_info
tag = "py3%d" % ver.minor
def long_fn():
    a = 1
    for i in range(3):
        a += i
    try:
        a /= 2
    except ZeroDivisionError:
        pass
    return a
fns = [long_fn, json.dumps, os.path.join, inspect.getsource]
LASTI = 0x8; LT_CUT = 0x4; ENTRY = 0x1
for k, fn in enumerate(fns):
    c = fn.__code__
    lt = c.co_linetable
    instr = (len(c.co_code) // 2) - 1
    hdr = struct.pack("<iiBBBB", c.co_firstlineno, instr, 0, 1, ver.minor, 0)
    open(os.path.join(out, "%s_table_%d" % (tag, k)), "wb").write(hdr + lt)
    name = getattr(c, "co_qualname", c.co_name).encode("latin-1", "replace")[:64]
    fname = c.co_filename.encode("latin-1", "replace")[-128:]
    flags = (LASTI if ver.minor == 10 else 0) | (LT_CUT if len(lt) > 384 else 0) | ENTRY
    fr = struct.pack("<QiiHHHBBB7x128s64s384s", id(c), instr, c.co_firstlineno, len(fname),
                     len(name), min(len(lt), 384), 1, 1, flags, fname, name, lt[:384])
    hdr = struct.pack("<iiBBBB", c.co_firstlineno, instr, 1, 1, ver.minor, 0)
    # the whole table as the collector reads it: PyBytesObject head, then the bytes
    body = struct.pack("<qQq8x", 1, 0x7f0000001000, len(lt)) + lt
    open(os.path.join(out, "%s_frame_%d" % (tag, k)), "wb").write(hdr + fr + body)
