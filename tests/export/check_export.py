#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks on `gpuctx export` output.

  check_export.py check [--perfetto F.pftrace] [--chrome F.json] [--report R.json]
                        [--proto P.proto] [--expect SCENARIO]
      Decode the protobuf with protoc against our .proto (any field printed as a bare number
      fails), parse the JSON strictly (duplicate keys, NaN/Infinity, invalid UTF-8 fail), check
      the rules a trace processor applies (descriptors before use, slices that nest, flows with
      one source and one destination, counters on counter tracks), and, with --report, that
      the timeline holds what `gpuctx report --json` says: a track per process and GPU file
      holder, fork and inheritance arrows, every finding with all its fields.
  check_export.py normalize (--perfetto F | --chrome F) [--proto P]
      Print the timeline with pids, tids and times replaced (golden files).
  check_export.py memtest --gpuctx G --gen GEN --dir D [--small N] [--large N]
      Export traces of N records in both formats and compare the exporter's peak RSS.
  check_export.py bench --gpuctx G --gen GEN --dir D [--records N]
      Export speed (records/s, events/s) and size (bytes/record) of both formats.
Exits non-zero with the failed check on stderr.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time

import tl_load

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, "gpuctx_trace.proto")
LANE_TID = 1000000000  # GCTX_CHROME_LANE_TID
FINDING_FIELDS = ("id", "kind", "severity", "pid", "tid", "opener_pid", "file_id",
                  "device_kind", "time_ns", "event", "related_finding", "chain",
                  "exec_between", "later_used", "uses", "errno", "status", "call", "detail")


class CheckError(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise CheckError(msg)


# ---- protobuf text format (protoc --decode output) ----

def unescape(s):
    """Bytes of a text-format string body (C escapes, octal for non-ASCII)."""
    out = bytearray()
    i = 0
    simple = {"n": 10, "r": 13, "t": 9, '"': 34, "'": 39, "\\": 92, "a": 7, "b": 8, "f": 12,
              "v": 11, "?": 63}
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        i += 1
        c = s[i]
        if c in simple:
            out.append(simple[c])
            i += 1
        elif c in "01234567":
            j = i
            while j < len(s) and j < i + 3 and s[j] in "01234567":
                j += 1
            out.append(int(s[i:j], 8) & 0xff)
            i = j
        elif c == "x":
            j = i + 1
            while j < len(s) and j < i + 3 and s[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(s[i + 1:j], 16))
            i = j
        else:
            raise CheckError("bad escape \\%s in protoc output" % c)
    return bytes(out)


LINE_RE = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*)(?::\s*(.*)|\s*\{)\s*$')


def parse_text(text):
    """protoc text output -> nested dicts of lists: {field: [value or dict, ...]}."""
    root = {}
    stack = [root]
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s:
            continue
        if re.match(r'^\d+\s*[:{]', s):
            raise CheckError("line %d: field decoded as a bare number (wrong field number "
                             "or wire type): %s" % (n, s))
        if s == "}":
            check(len(stack) > 1, "line %d: unbalanced }" % n)
            stack.pop()
            continue
        m = LINE_RE.match(line)
        check(m is not None, "line %d: cannot parse protoc output: %r" % (n, line))
        key, val = m.group(1), m.group(2)
        if val is None:
            child = {}
            stack[-1].setdefault(key, []).append(child)
            stack.append(child)
            continue
        if val.startswith('"'):
            check(val.endswith('"') and len(val) >= 2, "line %d: bad string" % n)
            raw = unescape(val[1:-1])
            try:
                v = raw.decode("utf-8", "strict")
            except UnicodeDecodeError as e:
                raise CheckError("line %d: string field %s is not valid UTF-8: %s" % (n, key, e))
        elif re.match(r'^-?\d+$', val):
            v = int(val)
        elif val in ("true", "false"):
            v = val == "true"
        else:
            v = val  # enum name
        stack[-1].setdefault(key, []).append(v)
    check(len(stack) == 1, "unbalanced braces in protoc output")
    return root


def one(d, key, default=None):
    v = d.get(key)
    return v[0] if v else default


def protoc_decode(path, proto):
    with open(path, "rb") as f:
        r = subprocess.run(["protoc", "--proto_path=" + os.path.dirname(proto),
                            "--decode=gpuctx_export.Trace", os.path.basename(proto)],
                           stdin=f, capture_output=True)
    check(r.returncode == 0, "protoc --decode failed: %s" % r.stderr.decode(errors="replace"))
    return r.stdout.decode("ascii", errors="strict")


# ---- a format-neutral timeline ----

class Timeline:
    def __init__(self, fmt):
        self.fmt = fmt
        self.tracks = {}      # id -> dict(kind, pid, tid, name, parent)
        self.events = []      # dict(track, ph, ts, name, cat, args, fout, fin, seq, key)
        self.cmdlines = {}    # pid -> last argv (perfetto ProcessTree)
        self.meta = {}

    def add_event(self, **e):
        e["seq"] = len(self.events)
        self.events.append(e)

    def by_track(self):
        out = {}
        for e in self.events:
            out.setdefault(e["track"], []).append(e)
        return out

    def process_tracks(self):
        return {t["pid"]: tid for tid, t in self.tracks.items() if t["kind"] == "process"}


def annotations(te, interned):
    args = {}
    for da in te.get("debug_annotations", []):
        name = one(da, "name")
        if name is None and "name_iid" in da:
            name = interned.lookup("debug_annotation_names", one(da, "name_iid"))
        check(name is not None, "debug annotation without a name")
        check(name not in args, "duplicate debug annotation %r" % name)
        args[name] = da_value(da, interned)
    return args


def da_value(da, interned):
    for k in ("uint_value", "int_value", "bool_value", "string_value"):
        if k in da:
            return da[k][0]
    if "string_value_iid" in da:
        return interned.lookup("debug_annotation_string_values", one(da, "string_value_iid"))
    if "array_values" in da:
        return [da_value(v, interned) for v in da["array_values"]]
    return None


def load_perfetto(path, proto):
    """The timeline as Perfetto's trace processor builds it (names: the last descriptor or
    ProcessTree entry wins), after tl_load checked the import rules."""
    tree = parse_text(protoc_decode(path, proto))
    packets = tree.get("packet", [])
    check(packets, "no packets")
    errors = tl_load.perfetto_import_errors(packets)
    check(not errors, "the trace processor would report import errors: %s" % errors)
    tl = Timeline("perfetto")
    interned = tl_load.Interned()
    cs = None
    for p in packets:
        cs = one(p, "clock_snapshot")
        if cs is not None:
            break
    clocks = {one(c, "clock_id"): one(c, "timestamp") for c in cs.get("clocks", [])}
    tl.meta = {"start_mono_ns": clocks[3], "start_wall_ns": clocks[1],
               "start_boot_ns": clocks[6]}
    described_at = {}
    tl.ppids = {}       # pid -> ppid from ProcessTree
    tl.tree_names = {}  # pid -> ProcessTree name (cmdline[0])
    tl.start_ts = {}    # pid -> ProcessDescriptor.start_timestamp_ns
    tl.placeholders = []  # process descriptors of parents outside the trace
    for i, p in enumerate(packets):
        if one(p, "sequence_flags", 0) & 1:
            interned = tl_load.Interned()
        interned.add(one(p, "interned_data"))
        ts = p["_ts"]  # resolved by tl_load
        td = one(p, "track_descriptor")
        if td is not None:
            uuid = one(td, "uuid")
            t = {"parent": one(td, "parent_uuid", 0), "name": one(td, "name", "")}
            proc, thr, ctr = one(td, "process"), one(td, "thread"), one(td, "counter")
            if proc is not None and one(proc, "process_name") == "(not traced)":
                tl.placeholders.append(dict(pid=one(proc, "pid"), name="(not traced)"))
                continue
            if proc is not None:
                t.update(kind="process", pid=one(proc, "pid"), tid=one(proc, "pid"),
                         name=one(proc, "process_name", ""), parent=0)
                check(t["pid"] and t["pid"] > 0, "process descriptor with pid %r" % t["pid"])
                if "start_timestamp_ns" in proc:
                    tl.start_ts[t["pid"]] = one(proc, "start_timestamp_ns")
            elif thr is not None:
                t.update(kind="thread", pid=one(thr, "pid"), tid=one(thr, "tid"),
                         name=one(thr, "thread_name", ""))
                check(t["pid"] > 0 and t["tid"] > 0, "thread descriptor without pid/tid")
            else:
                check(t["name"], "track %d has no name" % uuid)
                if t["parent"]:
                    check(t["parent"] in tl.tracks, "track %r parent %r not described "
                          "before it" % (t["name"], t["parent"]))
                    t["pid"] = tl.tracks[t["parent"]]["pid"]
                else:
                    t["pid"] = 0
                t["tid"] = None
                t["kind"] = "counter" if ctr is not None else ("gpu" if t["parent"]
                                                               else "global")
                if t["kind"] == "gpu":
                    check(one(td, "sibling_merge_behavior") == "SIBLING_MERGE_BEHAVIOR_NONE",
                          "GPU track %r may be merged with a same-name sibling" % t["name"])
                if ctr is not None:
                    t["unit"] = one(ctr, "unit")
                    t["unit_name"] = one(ctr, "unit_name")
            old = tl.tracks.get(uuid)
            if old is not None:
                check(old["kind"] == t["kind"] and old["pid"] == t["pid"] and
                      old.get("tid") == t.get("tid"),
                      "uuid %d described twice as different tracks" % uuid)
                check(old["kind"] in ("process", "thread"),
                      "%s track %r described twice" % (old["kind"], old["name"]))
                old["name"] = t["name"]  # a rename: the latest descriptor wins
                old.setdefault("names", []).append(t["name"])
            else:
                t["names"] = [t["name"]]
                tl.tracks[uuid] = t
                described_at[uuid] = ts
            continue
        pt = one(p, "process_tree")
        if pt is not None:
            for pr in pt.get("processes", []):
                pid = one(pr, "pid")
                tl.cmdlines[pid] = pr.get("cmdline", [])
                if "ppid" in pr:
                    tl.ppids[pid] = one(pr, "ppid")
                if pr.get("cmdline"):
                    tl.tree_names[pid] = pr["cmdline"][0]
            continue
        te = one(p, "track_event")
        if te is None:
            continue
        uuid = one(te, "track_uuid")
        check(uuid in tl.tracks, "event on track %r with no descriptor before it" % uuid)
        check(described_at[uuid] <= ts, "track %r described after its first event" % uuid)
        typ = one(te, "type")
        ph = {"TYPE_SLICE_BEGIN": "B", "TYPE_SLICE_END": "E", "TYPE_INSTANT": "I",
              "TYPE_COUNTER": "C"}.get(typ)
        check(ph is not None, "event of type %r" % typ)
        kind = tl.tracks[uuid]["kind"]
        if ph == "C":
            check(kind == "counter", "counter value on a non-counter track")
            check("counter_value" in te, "counter event without a value")
        else:
            check(kind != "counter", "%s event on a counter track" % ph)
        name = one(te, "name")
        if name is None and "name_iid" in te:
            name = interned.lookup("event_names", one(te, "name_iid"))
        cat = one(te, "categories")
        if cat is None and "category_iids" in te:
            cat = interned.lookup("event_categories", one(te, "category_iids"))
        if ph in "BI":
            check(name, "%s event without a name" % ph)
        fo, fi = te.get("flow_ids", []), te.get("terminating_flow_ids", [])
        check(len(fo) <= 1 and len(fi) <= 1, "more than one flow id on an event")
        cs = one(te, "callstack")
        frames = [(one(f, "function_name", ""), one(f, "source_file", ""),
                   one(f, "line_number", 0)) for f in (cs or {}).get("frames", [])]
        check(cs is None or (frames and all(f[0] for f in frames)),
              "a callstack without frames or with a nameless frame")
        tl.add_event(track=uuid, ph=ph, ts=ts, name=name, cat=cat,
                     args=annotations(te, interned),
                     fout=fo[0] if fo else 0, fin=fi[0] if fi else 0,
                     value=one(te, "counter_value"), key=0, callstack=frames)
    return tl


def strict_json(path):
    def pairs(kv):
        d = {}
        for k, v in kv:
            if k in d:
                raise CheckError("duplicate key %r in a JSON object" % k)
            d[k] = v
        return d

    def const(c):
        raise CheckError("non-standard JSON number %s" % c)

    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8", "strict")
    except UnicodeDecodeError as e:
        raise CheckError("the JSON is not valid UTF-8: %s" % e)
    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=const)
    except ValueError as e:
        raise CheckError("invalid JSON: %s" % e)


def us_to_ns(v, what):
    check(isinstance(v, (int, float)) and not isinstance(v, bool), "%s is not a number" % what)
    return int(round(v * 1000))


def load_chrome(path):
    doc = strict_json(path)
    check(isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list),
          "no traceEvents array")
    errors = tl_load.chrome_import_errors(doc)
    check(not errors, "the trace processor would report import errors: %s" % errors)
    check(doc.get("displayTimeUnit") in (None, "ms", "ns"), "bad displayTimeUnit")
    tl = Timeline("chrome")
    tl.meta = doc.get("metadata", {})
    check("start_wall_ns" in tl.meta and "start_mono_ns" in tl.meta,
          "metadata lacks start_wall_ns / start_mono_ns")
    names = {}  # (pid, tid) or pid -> name
    for i, e in enumerate(doc["traceEvents"]):
        check(isinstance(e, dict), "event %d is not an object" % i)
        ph = e.get("ph")
        check(isinstance(ph, str) and ph in "BEXiCM", "event %d: ph %r" % (i, ph))
        for k in ("pid", "tid"):
            check(isinstance(e.get(k), int) and 0 <= e[k] < 2 ** 32,
                  "event %d: %s %r" % (i, k, e.get(k)))
        pid, tid = e["pid"], e["tid"]
        for k in ("name", "cat"):
            check(k not in e or isinstance(e[k], str), "event %d: %s is not a string" % (i, k))
        check("args" not in e or isinstance(e["args"], dict), "event %d: args" % i)
        if ph == "M":
            check(e.get("name") in ("process_name", "thread_name"), "metadata %r" % e)
            nm = e.get("args", {}).get("name")
            check(isinstance(nm, str) and nm, "metadata without a name: %r" % e)
            names[pid if e["name"] == "process_name" else (pid, tid)] = nm
            continue
        ts = us_to_ns(e.get("ts"), "event %d ts" % i)
        if "bind_id" in e:
            check(isinstance(e["bind_id"], int) and (e.get("flow_in") or e.get("flow_out")),
                  "event %d: bind_id without direction" % i)
            check(ph in "BX", "event %d: a flow on a %s event" % (i, ph))
        fout = e["bind_id"] if e.get("flow_out") else 0
        fin = e["bind_id"] if e.get("flow_in") else 0
        key = 2 ** 62
        if ph == "i":
            s = e.get("s")
            check(s in ("g", "p", "t"), "event %d: instant scope %r" % (i, s))
            if s == "g":
                track = ("global",)
                tl.tracks.setdefault(track, dict(kind="global", pid=0, tid=None,
                                                 name="gpuctx recording", parent=0))
            elif s == "p":
                track = ("p", pid)
            else:
                track = ("t", pid, tid)
            ph2 = "I"
        elif ph == "C":
            args = e.get("args")
            check(args and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                               for v in args.values()), "counter without numeric args")
            track = ("c", pid, e.get("name"))
            ph2 = "C"
        else:
            track = ("p", pid) if tid == pid else ("t", pid, tid)
            ph2 = ph
            if ph == "X":
                dur = us_to_ns(e.get("dur"), "event %d dur" % i)
                check(dur == 0, "event %d: X events are zero-length instants here" % i)
                ph2 = "I"
                key = 2 ** 62  # a zero-length X sorts with B and i
            if ph == "E":
                key = -1
        if ph in "BiX":
            check(e.get("name"), "event %d: %s without a name" % (i, ph))
        tl.add_event(track=track, ph=ph2, ts=ts, name=e.get("name"), cat=e.get("cat"),
                     args=e.get("args", {}), fout=fout, fin=fin,
                     value=list(e["args"].values())[0] if ph == "C" else None, key=key,
                     jph=ph)
    # tracks: processes (pid), threads / GPU lanes (pid, tid), counters (pid, name)
    for e in tl.events:
        tr = e["track"]
        if tr in tl.tracks:
            continue
        if tr[0] == "p":
            tl.tracks[tr] = dict(kind="process", pid=tr[1], tid=tr[1], name=names.get(tr[1]),
                                 parent=0)
        elif tr[0] == "t":
            kind = "gpu" if tr[2] >= LANE_TID else "thread"
            tl.tracks[tr] = dict(kind=kind, pid=tr[1], tid=tr[2], name=names.get((tr[1], tr[2])),
                                 parent=("p", tr[1]))
        elif tr[0] == "c":
            tl.tracks[tr] = dict(kind="counter", pid=tr[1], tid=None, name=tr[2],
                                 parent=("p", tr[1]))
    check(names.get(0) == "gpuctx recording" and names.get((0, 0)) == "gpuctx recording",
          "the recording's pid 0 is not named")
    names.pop(0)
    names.pop((0, 0))
    for pid in [k for k in names if isinstance(k, int)]:
        tl.tracks.setdefault(("p", pid), dict(kind="process", pid=pid, tid=pid,
                                              name=names[pid], parent=0))
    for k in [k for k in names if isinstance(k, tuple)]:
        kind = "gpu" if k[1] >= LANE_TID else "thread"
        tl.tracks.setdefault(("t",) + k, dict(kind=kind, pid=k[0], tid=k[1], name=names[k],
                                              parent=("p", k[0])))
    for t in tl.tracks.values():
        if t["kind"] in ("gpu", "thread"):
            check(t["name"], "thread %d/%d has no thread_name" % (t["pid"], t["tid"]))
    return tl


# ---- rules every timeline must follow ----

def sort_key(e):
    # trace processors: by time; in JSON at one time E first, then B/i/zero-length X;
    # then file order
    return (e["ts"], e["key"], e["seq"])


def check_nesting(tl):
    for track, evs in tl.by_track().items():
        stack = []
        for e in sorted(evs, key=sort_key):
            if e["ph"] == "B":
                stack.append(e)
            elif e["ph"] == "E":
                check(stack, "slice end without a begin on track %r at %d" % (track, e["ts"]))
                b = stack.pop()
                check(b["ts"] <= e["ts"], "slice %r ends before it begins" % b["name"])
                e["begin"] = b
                b["end"] = e
        check(not stack, "slice %r on track %r never ends" % (stack[-1]["name"] if stack
                                                               else "", track))


def check_flows(tl):
    outs, ins = {}, {}
    for e in tl.events:
        if e["fout"]:
            check(e["fout"] not in outs, "flow %d has two sources" % e["fout"])
            outs[e["fout"]] = e
        if e["fin"]:
            check(e["fin"] not in ins, "flow %d has two destinations" % e["fin"])
            ins[e["fin"]] = e
    check(set(outs) == set(ins), "flows without both ends: %s" %
          sorted(set(outs) ^ set(ins))[:10])
    for fid, src in outs.items():
        dst = ins[fid]
        check(sort_key(src) < sort_key(dst) or src["seq"] < dst["seq"] and
              src["ts"] == dst["ts"], "flow %d goes back in time" % fid)
        check(dst["ph"] in "BI" and src["ph"] in "BI", "flow %d not on slices" % fid)
    return [(outs[f], ins[f]) for f in sorted(outs)]


def check_findings(tl):
    found = []
    for e in tl.events:
        if e["cat"] != "finding":
            continue
        t = tl.tracks[e["track"]]
        check(t["kind"] == "process", "finding %r not on a process track" % e["name"])
        a = e["args"]
        missing = [k for k in FINDING_FIELDS if k not in a]
        check(not missing, "finding %r lacks args %s" % (e["name"], missing))
        check(e["name"] == "%s (%s)" % (a["kind"], a["severity"]),
              "finding named %r, not by kind and severity" % e["name"])
        check(a["pid"] == t["pid"], "finding of pid %d on the track of %d" % (a["pid"], t["pid"]))
        found.append(e)
    return found


def check_after_end(tl):
    """No event of a process after its life slice ends: its counters, threads and GPU file
    holdings (a context it created may outlive it, held by its children)."""
    end = {}
    for e in tl.events:
        t = tl.tracks[e["track"]]
        if e["ph"] == "E" and t["kind"] == "process" and e.get("begin", {}).get("cat") == \
                "process":
            end[t["pid"]] = max(end.get(t["pid"], 0), e["ts"])
    rec_end = max([e["ts"] for e in tl.events if tl.tracks[e["track"]]["kind"] == "global"])
    for e in tl.events:
        check(e["ts"] <= rec_end, "%s %r at %d, after the recording ended at %d" %
              (e["ph"], e["name"], e["ts"], rec_end))
        t = tl.tracks[e["track"]]
        if t["kind"] == "global" or t["pid"] not in end:
            continue
        if t["kind"] == "gpu" and (t["name"] or "").startswith("ctx "):
            continue  # a GPU context lives on in the processes that inherited it
        check(e["ts"] <= end[t["pid"]], "%s %r on %s track %r of pid %d at %d, after the "
              "process ended at %d" % (e["ph"], e["name"], t["kind"], t["name"], t["pid"],
                                       e["ts"], end[t["pid"]]))


def check_names(tl):
    """Perfetto: every process's ProcessTree entry names it as its descriptor does, links it
    to a parent with a name, and its threads end with their latest names."""
    if tl.fmt != "perfetto":
        return
    for t in tl.tracks.values():
        if t["kind"] == "counter":  # a unit enum hides the free-form unit name
            check(not (t.get("unit") and t.get("unit_name")),
                  "counter %r has both a unit and a unit name" % t["name"])
            if t["name"] == "ioctl rate":
                check(t.get("unit_name") == "ioctls/s", "ioctl rate unit %r" % t.get("unit_name"))
    procs = tl.process_tracks()
    placeholders = {t["pid"] for t in tl.placeholders}
    for pid, ppid in tl.ppids.items():
        check(pid in tl.tree_names, "ProcessTree entry of %d without a name" % pid)
        if pid in procs:
            check(tl.tree_names[pid] == tl.tracks[procs[pid]]["name"],
                  "pid %d: ProcessTree name %r, descriptor %r" %
                  (pid, tl.tree_names[pid], tl.tracks[procs[pid]]["name"]))
        check(ppid in procs or ppid in placeholders,
              "parent %d of %d is a nameless process" % (ppid, pid))


def check_common(tl):
    check_nesting(tl)
    check_after_end(tl)
    check_names(tl)
    flows = check_flows(tl)
    findings = check_findings(tl)
    procs = tl.process_tracks()
    lives = {}
    for e in tl.events:
        if e["ph"] == "B" and e["cat"] == "process":
            t = tl.tracks[e["track"]]
            check(t["kind"] == "process", "process life slice off the process track")
            lives.setdefault(t["pid"], []).append(e)
    for pid in procs:
        check(pid in lives, "process %d has no life slice" % pid)
    for tid, t in tl.tracks.items():
        if t["kind"] == "gpu":
            check(re.match(r"^(file #\d+ \S+|ctx .+)$", t["name"] or ""),
                  "GPU track named %r" % t["name"])
            if tl.fmt == "perfetto":
                par = tl.tracks.get(t["parent"])
                check(par and par["kind"] in ("process", "gpu") and par["pid"] == t["pid"],
                      "GPU track %r not inside its process" % t["name"])
    return flows, findings, lives


def check_report(tl, rep, flows, findings, lives):
    """The timeline holds what the report says."""
    procs = tl.process_tracks()
    pids = {p["pid"] for p in rep["processes"]}
    check(pids <= set(procs), "processes without a track: %s" % sorted(pids - set(procs)))
    if True:  # titled by the final comm (Perfetto: unless an exec's argv[0] overrides it)
        for p in rep["processes"]:
            check(tl.tracks[procs[p["pid"]]]["name"] == p["comm"],
                  "process %d titled %r, comm %r" % (p["pid"], tl.tracks[procs[p["pid"]]]
                                                     ["name"], p["comm"]))
    # Perfetto: every forked child is linked to its parent (ProcessTree ppid), its threads
    # carry their latest names, and its start time is set
    if tl.fmt == "perfetto":
        for p in rep["processes"]:
            if p["ppid"]:  # (without one, the descriptor alone names it)
                check(tl.ppids.get(p["pid"]) == p["ppid"],
                      "pid %d has no ProcessTree entry with ppid %d" % (p["pid"], p["ppid"]))
            if p["start_ns"]:
                boot = tl.meta["start_boot_ns"] - tl.meta["start_mono_ns"]
                check(tl.start_ts.get(p["pid"]) == p["start_ns"] + boot,
                      "pid %d: start_timestamp_ns %r, expected %d (BOOTTIME)" %
                      (p["pid"], tl.start_ts.get(p["pid"]), p["start_ns"] + boot))
            main = [t for t in tl.tracks.values() if t["kind"] == "thread" and
                    t["tid"] == p["pid"]]
            for t in main:
                check(t["name"] == p["comm"],
                      "main thread of %d named %r, its comm is %r" % (p["pid"], t["name"],
                                                                       p["comm"]))
    # fork arrows: the forking thread of the parent -> the child's life
    fork_flows = {(tl.tracks[s["track"]]["pid"], tl.tracks[d["track"]]["pid"])
                  for s, d in flows if s["cat"] == "fork" and d["cat"] == "process"}
    by_pid = {p["pid"]: p for p in rep["processes"]}
    for p in rep["processes"]:
        par = by_pid.get(p["ppid"])
        if par and p["start_ns"] and not p["present_at_attach"] and p["pid"] in par["children"]:
            check((p["ppid"], p["pid"]) in fork_flows, "no fork arrow %d -> %d" %
                  (p["ppid"], p["pid"]))
    # a GPU track per holder, named by file; inheritance arrows
    gpu = {}
    for tid, t in tl.tracks.items():
        if t["kind"] == "gpu":
            gpu.setdefault((t["pid"], t["name"]), []).append(tid)
    inh = {(tl.tracks[s["track"]]["pid"], tl.tracks[d["track"]]["pid"], d["args"].get("file_id"))
           for s, d in flows if s["cat"] == "inherit"}
    for f in rep["gpu_files"]:
        name = "file #%d %s" % (f["id"], f["kind"])
        for h in f["holders_detail"]:
            check((h["pid"], name) in gpu, "no track %r in process %d" % (name, h["pid"]))
            evs = [e for tid in gpu[(h["pid"], name)] for e in tl.events
                   if e["track"] == tid and e["ph"] == "B" and e["cat"] == "gpu-file"]
            check(evs, "no holding slice of %r in %d" % (name, h["pid"]))
            want = ("inherited from %d" % h["from_pid"] if h["how"] == "inherited"
                    else h["how"])
            check(evs[0]["name"] == want, "holding slice %r, expected %r" % (evs[0]["name"], want))
            if h["how"] == "inherited" and h["since_ns"]:
                check((h["from_pid"], h["pid"], f["id"]) in inh,
                      "no inheritance arrow for file #%d %d -> %d" % (f["id"], h["from_pid"],
                                                                      h["pid"]))
    # every finding, with its fields
    got = {e["args"]["id"]: e for e in findings}
    check(len(got) == len(rep["findings"]), "%d findings in the timeline, %d in the report" %
          (len(got), len(rep["findings"])))
    for f in rep["findings"]:
        e = got.get(f["id"])
        check(e is not None, "finding #%d missing" % f["id"])
        a = e["args"]
        for k in ("kind", "severity", "pid", "tid", "opener_pid", "file_id", "call", "chain",
                  "exec_between", "later_used", "uses", "detail", "time_ns"):
            check(a[k] == f[k] or (k in ("file_id", "opener_pid", "chain") and not f[k] and
                                   not a[k]),
                  "finding #%d: %s is %r, report says %r" % (f["id"], k, a[k], f[k]))
        check(e["ts"] == f["time_ns"], "finding #%d at the wrong time" % f["id"])
    # contexts: one track each in the creator's process
    ctx_kinds = {"rm-client", "rm-channel-group", "uvm-space", "kfd-process", "drm-ctx"}
    ctx_tracks = {(t["pid"], t["name"]) for t in tl.tracks.values()
                  if t["kind"] == "gpu" and (t["name"] or "").startswith("ctx ")}
    for o in rep["gpu_objects"]:
        if o["kind"] in ctx_kinds:
            check(any(pid == o["creator_pid"] and n.startswith("ctx " + o["kind"])
                      for pid, n in ctx_tracks),
                  "no context track for %s object #%d" % (o["kind"], o["id"]))
    for c in rep.get("api_contexts", []):
        pid = c.get("creator_pid")
        check(any(p == pid and (" context " in n) for p, n in ctx_tracks),
              "no track for API context %r" % c.get("id"))


def expect_scenario(tl, name, flows, findings):
    """Scenario-specific content."""
    kinds = {}
    for e in findings:
        kinds.setdefault(e["args"]["kind"], []).append(e)
    names = {e["name"] for e in tl.events}
    if name == "demo":
        # wl_demo: the trainer's workers inherit its context; two use it, one crashes
        for k in ("inherited-gpu-use", "fork-with-gpu-state", "crash-after-inheritance"):
            check(k in kinds, "no %s finding" % k)
        check(any(s["cat"] == "gpu-use" for s, d in flows),
              "no arrow from a GPU context or file to an inherited use")
        check(any(n and n.startswith("RM_ALLOC") for n in names), "no RM_ALLOC slice")
        check(any((t["name"] or "").startswith("ctx rm-client") for t in tl.tracks.values()),
              "no RM client context track")
        check(any(t["kind"] == "counter" and t["name"].startswith("live GPU files")
                  for t in tl.tracks.values()), "no live GPU files counter")
    elif name == "api":
        # api_cuda_fork: CUDA contexts; a forked child calls into the parent's driver state
        check("inherited-context-call" in kinds, "no inherited-context-call finding")
        check(any((t["name"] or "").startswith("ctx CUDA") for t in tl.tracks.values()),
              "no CUDA context track")
        check(any(s["cat"] == "gpu-use" and
                  (tl.tracks[s["track"]]["name"] or "").startswith("ctx CUDA") and
                  d["cat"] == "api" for s, d in flows),
              "no arrow from a CUDA context to the child's API call")
        check(any(e["cat"] == "api" and e["name"] == "cuMemAlloc" for e in tl.events),
              "no cuMemAlloc slice")
        check(any(t["kind"] == "counter" and t["name"] == "GPU memory allocated"
                  for t in tl.tracks.values()), "no API memory counter")
    elif name == "launches":
        # api_cuda_launch --launches: 1000 cuLaunchKernel entries without a return, instants
        # inside the primary context's slice, which lasts until the context is released
        launches = [e for e in tl.events if e["name"] == "cuLaunchKernel"]
        check(len(launches) == 1000, "%d cuLaunchKernel events, expected 1000" % len(launches))
        check(all(e["ph"] == "I" for e in launches), "an entry-only launch is not an instant")
        ctx = [e for e in tl.events if e["ph"] == "B" and e["cat"] == "gpu-context" and
               (e["name"] or "").startswith("CUDA primary context")]
        check(len(ctx) == 1, "expected one CUDA primary context slice, got %d" % len(ctx))
        c = ctx[0]
        check("end" in c, "the primary context's slice never ends")
        for e in launches:
            if e["track"] == c["track"]:
                check(c["ts"] <= e["ts"] <= c["end"]["ts"],
                      "a launch at %d outside its context's slice [%d, %d]" %
                      (e["ts"], c["ts"], c["end"]["ts"]))
        check(all(e["track"] == c["track"] for e in launches),
              "launches not on the primary context's track")
    elif name == "fork_storm":
        procs = tl.process_tracks()
        check(len(procs) >= 551, "%d processes, expected the storm's 551" % len(procs))
        if tl.fmt == "perfetto":
            linked = [p for p in procs if tl.ppids.get(p) in procs]
            check(len(linked) >= 550, "only %d processes linked to a parent" % len(linked))
    elif name == "attach":
        # -p attach: the attached process's parent is outside the trace
        if tl.fmt == "perfetto":
            procs = tl.process_tracks()
            outside = {pp for p, pp in tl.ppids.items() if pp not in procs}
            check(outside, "no parent outside the trace")
            for pp in outside:
                named = [t["name"] for t in tl.placeholders if t["pid"] == pp]
                check(named == ["(not traced)"],
                      "parent %d outside the trace named %r" % (pp, named))
    elif name in ("synthetic", "torture"):
        check(len(kinds.get("inherited-gpu-use", [])) == 4, "expected 4 inherited uses")
        check("crash-after-inheritance" in kinds, "no crash finding")
        check(any(t["kind"] == "counter" and t["name"].startswith("GPU memory allocated")
                  for t in tl.tracks.values()), "no GPU memory counter")
        if name == "torture":
            weird = [t["name"] for t in tl.tracks.values() if t["kind"] == "process"
                     and t["name"] and "\ufffd" in t["name"]]
            check(weird or tl.fmt == "perfetto", "the torture name lost its replacement "
                  "characters")


# ---- normalised listing for golden files ----

def normalize(tl):
    """Tracks and their events in order, with pids/tids/times/addresses replaced."""
    procs = {}
    for e in tl.events:
        if e["ph"] == "B" and e["cat"] == "process":
            a = e["args"]
            procs.setdefault(a["pid"], (a.get("ppid", 0), e["ts"]))
    # canonical names by the fork tree: children in start order
    kids = {}
    for pid, (ppid, ts) in procs.items():
        kids.setdefault(ppid if ppid in procs else None, []).append((ts, pid))
    canon = {}

    def walk(parent, prefix):
        for i, (_, pid) in enumerate(sorted(kids.get(parent, []))):
            canon[pid] = "%s%d" % (prefix, i)
            walk(pid, canon[pid] + ".")
    walk(None, "P")
    tids = {}
    for t in tl.tracks.values():
        if t["kind"] == "thread" and t["pid"] in canon:
            tids.setdefault(t["pid"], set()).add(t["tid"])
    tcanon = {}
    for pid, ts in tids.items():
        for i, tid in enumerate(sorted(ts, key=lambda x: (x != pid, x))):
            tcanon[tid] = "%s/T%d" % (canon[pid], i)
    num = re.compile(r"\b\d{2,}\b")

    def sub(s):
        if not isinstance(s, str):
            return s
        s = re.sub(r"0x[0-9a-f]{5,}", "0xH", s)  # handles and addresses vary with the run
        return num.sub(lambda m: canon.get(int(m.group()), tcanon.get(int(m.group()),
                                                                     m.group())), s)

    volatile = {"ts", "time_ns", "start_ns", "dur_ns", "file", "start_wall_ns", "start_boot_ns",
                "start_mono_ns", "start_wall", "end_ns", "hostname", "kernel", "cmdline",
                "records", "out", "handle", "context_handle", "offset", "addr", "argv",
                "filename", "exe", "path", "args", "detail", "symbol", "gpuctx_version",
                "id", "related_finding", "object_id", "context_id"}

    def args(a):
        out = []
        for k in sorted(a):
            if k in volatile:
                continue
            v = a[k]
            if k in ("pid", "ppid", "tid", "opener_pid", "from_pid", "child_pid", "user_pid",
                     "creator_pid", "creator_tid", "child_tid") and isinstance(v, int):
                v = tcanon.get(v, canon.get(v, v)) if k.endswith("tid") else canon.get(v, v)
            elif k == "chain":
                v = [canon.get(p, p) for p in v]
            out.append("%s=%s" % (k, sub(json.dumps(v, ensure_ascii=True)) if not
                                  isinstance(v, str) else sub(v)))
        return " ".join(out)

    def tname(tr):
        t = tl.tracks[tr]
        if t["kind"] == "global":
            return "global"
        owner = canon.get(t["pid"], "?")
        if t["kind"] == "process":
            return owner
        if t["kind"] == "thread":
            return tcanon.get(t["tid"], owner + "/T?")
        return "%s [%s] %s" % (owner, t["kind"], sub(t["name"]))

    lines = []
    flows = {}
    for e in tl.events:
        if e["fout"]:
            flows.setdefault(e["fout"], [None, None])[0] = e
        if e["fin"]:
            flows.setdefault(e["fin"], [None, None])[1] = e
    per = tl.by_track()
    for tr in sorted(per, key=tname):
        t = tl.tracks[tr]
        name = sub(t["name"]) if t["kind"] in ("process", "thread") else ""
        if t["kind"] == "process" and tl.cmdlines.get(t["pid"]):
            # what the trace processor titles it: argv[0] of the last command line
            name += " title=" + sub(os.path.basename(tl.cmdlines[t["pid"]][0]))
        lines.append("track %s%s" % (tname(tr), (" name=" + name) if name else ""))
        evs = sorted(per[tr], key=sort_key)
        if t["kind"] == "counter":
            if "rate" in (t["name"] or ""):
                lines.append("  C (values vary with timing)")
                continue
            lines.append("  C " + " ".join(str(e["value"]) for e in evs))
            continue
        # marks left by other processes (inheritance, uses) come in the order they ran
        marks = sorted("  %s %s [%s] %s" % (e["ph"], sub(e["name"]), e["cat"], args(e["args"]))
                       for e in evs if e["cat"] in ("inherit", "gpu-use"))
        evs = [e for e in evs if e["cat"] not in ("inherit", "gpu-use")]
        for e in evs:
            if e["ph"] == "E" and not e["args"]:
                lines.append("  E")
                continue
            lines.append("  %s %s%s %s" % (e["ph"], sub(e["name"] or ""),
                                           " [%s]" % e["cat"] if e["cat"] else "",
                                           args(e["args"])))
        lines.extend(marks)
    for fid in sorted(flows, key=lambda f: (tname(flows[f][0]["track"]), sub(flows[f][0]["name"]),
                                            tname(flows[f][1]["track"]))):
        s, d = flows[fid]
        lines.append("flow %s: %s -> %s: %s" % (tname(s["track"]), sub(s["name"]),
                                                tname(d["track"]), sub(d["name"])))
    return "\n".join(l.rstrip() for l in lines) + "\n"


# ---- memory and speed ----

def run_export(gpuctx, genbin, fmt, trace, out):
    """Peak RSS (KiB, measured by the small C generator: a child of python would inherit
    python's peak), seconds, bytes written, stderr."""
    t0 = time.monotonic()
    r = subprocess.run([genbin, "--rss", "--", gpuctx, "export", "-q", "-f", fmt, "-o", out,
                        trace], capture_output=True, text=True)
    dt = time.monotonic() - t0
    m = re.search(r"maxrss_kb (\d+) exit (\d+)", r.stdout)
    check(m is not None, "no RSS measured: %s %s" % (r.stdout, r.stderr))
    err = r.stderr if m.group(2) == "0" else (r.stderr or "exit " + m.group(2))
    return int(m.group(1)), dt, os.path.getsize(out) if os.path.exists(out) else 0, err


def gen(genbin, path, n):
    subprocess.run([genbin, path, str(n)], check=True)


def memtest(a):
    res = {}
    for n in (a.small, a.large):
        trace = os.path.join(a.dir, "mem%d.gctx" % n)
        gen(a.gen, trace, n)
        for fmt in ("perfetto", "chrome"):
            out = os.path.join(a.dir, "mem%d.%s" % (n, fmt))
            rss, dt, size, err = run_export(a.gpuctx, a.gen, fmt, trace, out)
            check(not err, "export failed: %s" % err)
            res[(n, fmt)] = rss
            print("%-8s %8d records: peak RSS %6d KiB, %.2f s, %.1f bytes/record" %
                  (fmt, n, rss, dt, size / n))
            os.unlink(out)
        os.unlink(trace)
    for fmt in ("perfetto", "chrome"):
        small, large = res[(a.small, fmt)], res[(a.large, fmt)]
        check(large <= small * 1.2, "%s: peak RSS grew from %d KiB (%d records) to %d KiB "
              "(%d records)" % (fmt, small, a.small, large, a.large))
    print("memtest: peak RSS flat within 20%% from %d to %d records" % (a.small, a.large))


def bench(a):
    trace = os.path.join(a.dir, "bench.gctx")
    gen(a.gen, trace, a.records)
    for fmt in ("perfetto", "chrome"):
        out = os.path.join(a.dir, "bench." + fmt)
        best = None
        for _ in range(a.rounds):
            rss, dt, size, err = run_export(a.gpuctx, a.gen, fmt, trace, out)
            check(not err, "export failed: %s" % err)
            best = dt if best is None else min(best, dt)
        print("export %-8s %d records: %.0f records/s, %.1f bytes/record, %.1f MB, "
              "peak RSS %d KiB" % (fmt, a.records, a.records / best, size / a.records,
                                   size / 1e6, rss))
        os.unlink(out)
    os.unlink(trace)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("--perfetto")
    c.add_argument("--chrome")
    c.add_argument("--report")
    c.add_argument("--proto", default=PROTO)
    c.add_argument("--expect")
    n = sub.add_parser("normalize")
    n.add_argument("--perfetto")
    n.add_argument("--chrome")
    n.add_argument("--proto", default=PROTO)
    for name in ("memtest", "bench"):
        m = sub.add_parser(name)
        m.add_argument("--gpuctx", required=True)
        m.add_argument("--gen", required=True)
        m.add_argument("--dir", required=True)
        m.add_argument("--small", type=int, default=100000)
        m.add_argument("--large", type=int, default=1000000)
        m.add_argument("--records", type=int, default=1000000)
        m.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    try:
        if a.cmd == "check":
            rep = None
            if a.report:
                with open(a.report) as f:
                    rep = json.load(f)
            for fmt, path in (("perfetto", a.perfetto), ("chrome", a.chrome)):
                if not path:
                    continue
                tl = load_perfetto(path, a.proto) if fmt == "perfetto" else load_chrome(path)
                flows, findings, lives = check_common(tl)
                if rep is not None:
                    check_report(tl, rep, flows, findings, lives)
                if a.expect:
                    expect_scenario(tl, a.expect, flows, findings)
                print("%s: ok: %d tracks, %d events, %d flows, %d findings" %
                      (path, len(tl.tracks), len(tl.events), len(flows), len(findings)))
        elif a.cmd == "normalize":
            tl = load_perfetto(a.perfetto, a.proto) if a.perfetto else load_chrome(a.chrome)
            check_nesting(tl)
            sys.stdout.write(normalize(tl))
        elif a.cmd == "memtest":
            memtest(a)
        else:
            bench(a)
    except CheckError as e:
        print("check_export: FAIL: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
