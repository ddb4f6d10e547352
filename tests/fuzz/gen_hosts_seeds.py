#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# Usage: python3 tests/fuzz/gen_hosts_seeds.py TRACE [MERGED] OUTDIR
# Seeds for fuzz_hosts: a trace (tests/fuzz/corpus/fuzz_trace/synthetic) paired with copies
# whose header clocks are crafted (a wall clock past INT64_MAX, a boot time and offset that
# overflow an int64); MERGED (gpuctx merge of two such traces), alone. An input is the first
# trace's length (u32, little endian), the first trace, the second.
import os, struct, sys, zlib

src, outdir = sys.argv[1], sys.argv[-1]
merged = sys.argv[2] if len(sys.argv) == 4 else None
base = open(src, "rb").read()
hlen = struct.unpack_from("<H", base, 10)[0]
I64, U64 = (1 << 63) - 1, (1 << 64) - 1


def crafted(wall, mono, boot=None):
    t = bytearray(base)
    struct.pack_into("<QQ", t, 16, wall, mono)
    if boot is not None and hlen >= 16 + 696:
        struct.pack_into("<Q", t, 16 + 688, boot)
    struct.pack_into("<I", t, 12, zlib.crc32(bytes(t[16:hlen])))
    return bytes(t)


def pair(name, a, b):
    open(os.path.join(outdir, name), "wb").write(struct.pack("<I", len(a)) + a + b)


pair("late-wall", crafted(U64, 0), base)
pair("int64-overflow", crafted(1 << 63, 1, 1 << 63), crafted(0, I64, 5))
pair("boot-overflow", crafted(5, 5, U64), crafted(U64, U64, 0))
if merged:
    m = open(merged, "rb").read()
    pair("merged", m, b"")
    pair("merged-and-one", m, crafted(1 << 63, 1))
