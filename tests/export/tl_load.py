#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The import rules of Perfetto's trace processor, checked offline.

No trace_processor binary or perfetto Python package can be installed here (Debian and npm
have neither, and nothing else is reachable), so this module applies the rules that make the
trace processor (v58, what ui.perfetto.dev runs) count an import error or silently drop data,
as shared/reference/perfetto.md and issue 13 describe them:

  .pftrace (protoc-decoded packets):
    clock_sync_unrelatable_clock_domains   a packet's clock, or BOOTTIME (always synced), is
                                           missing from the ClockSnapshot
    track_event_missing_sequence_id        a TrackEvent without trusted_packet_sequence_id
    interned_data_skipped_incremental_state_invalid / packet_skipped_seq_needs_incremental_
    state_invalid                          interning or defaults before SEQ_INCREMENTAL_STATE_CLEARED
    interned_iid_unknown                   an iid used that the sequence never defined
    track_descriptor_missing_uuid, track_descriptor_process_missing_pid,
    track_descriptor_thread_missing_pid_tid
    track_event_counter_invalid_track_uuid a COUNTER on a non-counter track
    process_tree_entry_ignored             a ProcessTree process without cmdline (skipped)
    process_tree_parent_pid0               a ProcessTree process without ppid (parented to a
                                           nameless pid 0)
    event_on_undescribed_track             (no stat: becomes a stray global track)
    misplaced_end_event                    a SLICE_END with no slice open on its track
    unterminated_slice                     a SLICE_BEGIN never ended (dur -1)
    zero_length_slice                      a BEGIN and END at the same time (entry-only events
                                           must be instants)
  Chrome JSON:
    json_tokenizer_failure, json_parser_failure (no ph, X without dur, bad instant scope),
    flow_without_direction, misplaced_end_event (E first at one timestamp: the sort order the
    importer uses), zero_length_slice, unterminated_slice, unnamed_process (a pid without
    process_name metadata, pid 0 included)

  tl_load.py FILE...   prints the stats of each file and exits 1 on any error.
"""
import json
import os
import subprocess
import sys


def one(d, key, default=None):
    v = d.get(key)
    return v[0] if v else default


class LoadError(Exception):
    pass


class Interned:
    """One sequence's interning tables."""
    FIELDS = ("event_names", "event_categories", "debug_annotation_names",
              "debug_annotation_string_values")

    def __init__(self):
        self.t = {f: {} for f in self.FIELDS}
        self.unknown = 0

    def add(self, idata):
        if idata is None:
            return
        for f in self.FIELDS:
            for e in idata.get(f, []):
                key = "str" if f == "debug_annotation_string_values" else "name"
                self.t[f][one(e, "iid")] = one(e, key, "")

    def lookup(self, f, iid):
        if iid not in self.t[f]:
            raise LoadError("interned %s iid %r used but never defined" % (f, iid))
        return self.t[f][iid]

    def has(self, f, iid):
        return iid in self.t[f]


def resolve_timestamps(packets):
    """Each packet's time as CLOCK_MONOTONIC ns in p["_ts"] (None without a timestamp): its
    clock is timestamp_clock_id, else the sequence default, else BOOTTIME; an incremental
    clock adds its delta to the clock's last value. Raises LoadError for a clock the
    snapshot does not relate. Each machine (TracePacket.machine_id) has its own clocks, as the
    trace processor gives each its own context."""
    snaps = {}
    seqs = {}
    for p in packets:
        snap = snaps.setdefault(one(p, "machine_id", 0), {})
        seq = one(p, "trusted_packet_sequence_id", 0)
        st = seqs.setdefault(seq, dict(clock=None, inc={}))
        if one(p, "sequence_flags", 0) & 1:
            st.update(clock=None, inc={})
        d = one(p, "trace_packet_defaults")
        if d is not None and "timestamp_clock_id" in d:
            st["clock"] = one(d, "timestamp_clock_id")
        cs = one(p, "clock_snapshot")
        if cs is not None:
            for c in cs.get("clocks", []):
                cid, cts = one(c, "clock_id"), one(c, "timestamp")
                snap[cid] = cts
                if one(c, "is_incremental"):
                    if one(c, "unit_multiplier_ns", 1) != 1:
                        raise LoadError("incremental clock %d not in ns" % cid)
                    st["inc"][cid] = cts
        ts = one(p, "timestamp")
        p["_ts"] = None
        if ts is None:
            continue
        cid = one(p, "timestamp_clock_id") or st["clock"] or 6
        if cid in st["inc"]:
            st["inc"][cid] += ts
            ts = st["inc"][cid]
        if cid != 3:
            if cid not in snap or 3 not in snap:
                raise LoadError("packet on clock %d, which no snapshot relates to "
                                "MONOTONIC" % cid)
            ts = ts - snap[cid] + snap[3]
        p["_ts"] = ts


def _inc(stats, k, n=1):
    stats[k] = stats.get(k, 0) + n


def _slices(stats, per_track):
    """per_track: track -> [(ts, order, ph)]; sorted as the importer sorts."""
    for track, evs in per_track.items():
        depth = []
        for ts, _, ph in sorted(evs):
            if ph == "B":
                depth.append(ts)
            elif ph == "E":
                if not depth:
                    _inc(stats, "misplaced_end_event")
                    continue
                if depth.pop() == ts:
                    _inc(stats, "zero_length_slice")
        if depth:
            _inc(stats, "unterminated_slice", len(depth))


def perfetto_import_errors(packets):
    stats = {}
    try:
        resolve_timestamps(packets)
    except LoadError:
        _inc(stats, "clock_sync_unrelatable_clock_domains")
        return stats
    seqs = {}  # seq id -> dict(valid, interned, clock)
    snap_clocks = set()
    used_clocks = set()
    kinds = {}
    per_track = {}
    for i, p in enumerate(packets):
        seq = one(p, "trusted_packet_sequence_id", 0)
        flags = one(p, "sequence_flags", 0)
        st = seqs.setdefault(seq, dict(valid=False, interned=Interned(), clock=None))
        if flags & 1:
            st.update(valid=True, interned=Interned(), clock=None)
        if flags & 2 and not seq:
            _inc(stats, "sequence_flags_without_sequence_id")
        if flags & 2 and not st["valid"]:
            _inc(stats, "packet_skipped_seq_needs_incremental_state_invalid")
            continue
        if "interned_data" in p or "trace_packet_defaults" in p:
            if not st["valid"]:
                _inc(stats, "interned_data_skipped_incremental_state_invalid")
            else:
                st["interned"].add(one(p, "interned_data"))
                d = one(p, "trace_packet_defaults")
                if d is not None and "timestamp_clock_id" in d:
                    st["clock"] = one(d, "timestamp_clock_id")
        cs = one(p, "clock_snapshot")
        if cs is not None:
            snap_clocks |= {one(c, "clock_id") for c in cs.get("clocks", [])}
            continue
        ts = p.get("_ts")
        if one(p, "timestamp") is not None:
            used_clocks.add(one(p, "timestamp_clock_id") or st["clock"] or 6)
        pt = one(p, "process_tree")
        if pt is not None:
            for pr in pt.get("processes", []):
                if not pr.get("cmdline"):
                    _inc(stats, "process_tree_entry_ignored")  # no cmdline: skipped
                elif not one(pr, "ppid"):
                    _inc(stats, "process_tree_parent_pid0")  # a nameless pid 0 parent
        td = one(p, "track_descriptor")
        if td is not None:
            uuid = one(td, "uuid")
            if not uuid:
                _inc(stats, "track_descriptor_missing_uuid")
                continue
            proc, thr = one(td, "process"), one(td, "thread")
            if proc is not None and not one(proc, "pid"):
                _inc(stats, "track_descriptor_process_missing_pid")
            if thr is not None and not (one(thr, "pid") and one(thr, "tid")):
                _inc(stats, "track_descriptor_thread_missing_pid_tid")
            kinds.setdefault(uuid, "counter" if "counter" in td else "other")
            continue
        te = one(p, "track_event")
        if te is None:
            continue
        if not seq:
            _inc(stats, "track_event_missing_sequence_id")
            continue
        it = st["interned"]
        refs = [("event_names", te.get("name_iid", [])),
                ("event_categories", te.get("category_iids", []))]
        for da in te.get("debug_annotations", []):
            refs.append(("debug_annotation_names", da.get("name_iid", [])))
            refs.append(("debug_annotation_string_values", da.get("string_value_iid", [])))
            for av in da.get("array_values", []):
                refs.append(("debug_annotation_string_values",
                             av.get("string_value_iid", [])))
        for f, iids in refs:
            for iid in iids:
                if not it.has(f, iid):
                    _inc(stats, "interned_iid_unknown")
        uuid = one(te, "track_uuid", 0)
        typ = one(te, "type")
        if uuid not in kinds:
            _inc(stats, "event_on_undescribed_track")
            continue
        if typ == "TYPE_COUNTER":
            if kinds[uuid] != "counter":
                _inc(stats, "track_event_counter_invalid_track_uuid")
            continue
        if typ in ("TYPE_SLICE_BEGIN", "TYPE_SLICE_END"):
            per_track.setdefault(uuid, []).append((ts, i, "B" if typ == "TYPE_SLICE_BEGIN"
                                                   else "E"))
    # the trace processor always syncs BOOTTIME; every clock used must relate to it
    if snap_clocks:
        missing = (used_clocks | {6}) - snap_clocks
    else:
        missing = used_clocks - {6}
    if missing:
        _inc(stats, "clock_sync_unrelatable_clock_domains", len(missing))
    _slices(stats, per_track)
    return stats


def chrome_import_errors(doc):
    stats = {}
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    named = set()
    pids = set()
    per_track = {}
    for i, e in enumerate(events):
        if not isinstance(e, dict) or not e:
            continue
        ph = e.get("ph")
        if ph is None:
            _inc(stats, "json_tokenizer_failure")
            continue
        pid = e.get("pid", 0)
        tid = e.get("tid", pid)
        if ph == "M":
            if e.get("name") == "process_name" and e.get("args", {}).get("name"):
                named.add(pid)
            continue
        pids.add(pid)
        if "ts" not in e:
            _inc(stats, "json_parser_failure")
            continue
        if "bind_id" in e and not (e.get("flow_in") or e.get("flow_out")):
            _inc(stats, "flow_without_direction")
        if ph == "X" and "dur" not in e:
            _inc(stats, "json_parser_failure")
        if ph in "iI" and e.get("s", "t") == "t" and "tid" not in e:
            _inc(stats, "json_parser_failure")
        if ph in "BE":
            # at one timestamp the importer takes E before B, then file order
            per_track.setdefault((pid, tid), []).append((e["ts"], 0 if ph == "E" else 1, i, ph))
    for track, evs in per_track.items():
        per_track[track] = [(ts, (k, i), ph) for ts, k, i, ph in evs]
    # a zero-length pair shows up as an E sorted before its own B
    for track, evs in per_track.items():
        bs = {(ts) for ts, _, ph in evs if ph == "B"}
        for ts, _, ph in evs:
            if ph == "E" and ts in bs:
                opened = [x for x in evs if x[2] == "B" and x[0] == ts]
                if opened:
                    _inc(stats, "zero_length_slice")
                    break
    _slices(stats, per_track)
    unnamed = pids - named
    if unnamed:
        _inc(stats, "unnamed_process", len(unnamed))
    return stats


def load_file(path, proto=None):
    with open(path, "rb") as f:
        head = f.read(2)
    if head[:1] in (b"{", b"["):
        with open(path) as f:
            return chrome_import_errors(json.load(f))
    import check_export
    text = check_export.protoc_decode(path, proto or check_export.PROTO)
    return perfetto_import_errors(check_export.parse_text(text).get("packet", []))


def main():
    rc = 0
    for path in sys.argv[1:]:
        try:
            stats = load_file(path)
        except (LoadError, Exception) as e:
            print("%s: FAIL: %s" % (path, e))
            rc = 1
            continue
        print("%s: %s" % (path, "no import errors" if not stats else
                          "import errors: %s" % stats))
        rc |= 1 if stats else 0
    return rc


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
