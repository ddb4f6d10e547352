#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of the cluster tests (cluster.sh): job attribution, merged hosts.

  check_cluster.py job_attr PREFIX   PREFIX.json (report --json), PREFIX.txt (report)
  check_cluster.py job_quick PREFIX  PREFIX.json
  check_cluster.py merge PREFIX      PREFIX.{txt,json,direct.json,check,pftrace,self.pftrace}
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "export"))
import check_export  # noqa: E402
import tl_load  # noqa: E402


def fail(msg):
    print("check_cluster: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def job_attr(prefix):
    r = json.load(open(prefix + ".json"))
    txt = open(prefix + ".txt").read()
    wl = [p for p in r["processes"] if p["comm"] == "wl_fork_child_i"]
    check(len(wl) == 2, "want the workload and its fork child, got %r" %
          [p["comm"] for p in r["processes"]])
    for p in wl:
        j = p["job"]
        check(j and j["kind"] == "slurm" and j["id"] == "4242" and j["step"] == "0"
              and j["task"] == "1", "pid %d: job %r" % (p["pid"], j))
        check(p["cgroup"].endswith("/uid_0/job_4242/step_0/task_1"),
              "pid %d: cgroup %r" % (p["pid"], p["cgroup"]))
    # the job: the workload, its child and the sleep before it; gpuctx is in no job
    injob = [p for p in r["processes"] if p["job"]]
    check(sorted(p["comm"] for p in injob) == ["sleep", "wl_fork_child_i", "wl_fork_child_i"],
          "processes in the job: %r" % [p["comm"] for p in injob])
    root = [p for p in wl if p["ppid"] not in [q["pid"] for q in wl]][0]
    jobs = r["jobs"]
    check(len(jobs) == 1 and jobs[0]["label"] == "slurm job 4242 step 0"
          and jobs[0]["processes"] == 3, "jobs %r" % jobs)
    check(jobs[0]["root_pids"] == [root["pid"]], "root pids %r" % jobs[0]["root_pids"])
    line = [l for l in txt.splitlines() if l.startswith("  jobs:")]
    check(line and "slurm job 4242 step 0: 3 processes, from pid %d" % root["pid"] in line[0],
          "text report's jobs line: %r" % line)


def job_quick(prefix):
    r = json.load(open(prefix + ".json"))
    quick = [p for p in r["processes"] if p["comm"] == "true"]
    check(len(quick) == 30, "want the 30 quick children, got %d: %r" %
          (len(quick), [p["comm"] for p in r["processes"]]))
    wrong = [(p["pid"], p["job"]) for p in quick if not p["job"] or p["job"]["kind"] != "slurm"
             or p["job"]["id"] != "4343" or p["job"]["step"] != "0" or p["job"]["task"] != "2"]
    check(not wrong, "%d of 30 quick children not in slurm job 4343 step 0 task 2: %r" %
          (len(wrong), wrong[:5]))
    parents = [p for p in r["processes"] if p["pid"] in [q["ppid"] for q in quick]]
    check(parents and all(not p["job"] or p["job"]["id"] != "4343" for p in parents),
          "the children's parent is outside the job: %r" % [(p["pid"], p["job"]) for p in parents])
    jobs = [j for j in r["jobs"] if j["label"] == "slurm job 4343 step 0"]
    check(len(jobs) == 1 and jobs[0]["processes"] == 30, "jobs %r" % r["jobs"])


def strip_sources(r):
    for h in r["hosts"]:
        h.pop("source")
    return r


def machines(path):
    """machine id -> {"name": str, "pids": set of process descriptor pids}, and the import
    errors the trace processor would count."""
    packets = check_export.parse_text(check_export.protoc_decode(path, check_export.PROTO)) \
        .get("packet", [])
    out = {}
    for p in packets:
        m = out.setdefault(tl_load.one(p, "machine_id", 0), {"name": None, "pids": set()})
        si = tl_load.one(p, "system_info")
        if si is not None:
            m["name"] = tl_load.one(si, "machine_name")
        td = tl_load.one(p, "track_descriptor")
        if td is not None and tl_load.one(td, "process") is not None:
            m["pids"].add(tl_load.one(tl_load.one(td, "process"), "pid"))
    return out, tl_load.perfetto_import_errors(packets)


def merge(prefix):
    txt = open(prefix + ".txt").read()
    r = json.load(open(prefix + ".json"))
    direct = json.load(open(prefix + ".direct.json"))
    check(strip_sources(r) == strip_sources(direct),
          "the merged trace and the two traces give different reports")
    job = r["job"]
    check(job["hosts"] == 2 and job["errors"] == 1 and job["verdict"].startswith("FAIL"),
          "job: %r" % job)
    check([i["host"] for i in job["incident_hosts"]] == ["nodea"],
          "incidents' hosts: %r" % job["incident_hosts"])
    check([h["host"] for h in r["hosts"]] == ["nodea", "nodeb"], "hosts %r" % r["hosts"])
    for h in r["hosts"]:
        check(h["report"]["meta"]["hostname"] == h["host"], "host %s: its own meta" % h["host"])
        # two namespaces of one machine: one clock, so the alignment is exact to the
        # microseconds between reading the wall and the monotonic clock
        check(abs(h["clock"]["offset_ns"]) < 5000000, "host %s offset %d ns" %
              (h["host"], h["clock"]["offset_ns"]))
    job_procs = sum(len(h["report"]["processes"]) for h in r["hosts"])
    check(job["processes"] == job_procs, "job processes %d != %d" % (job["processes"], job_procs))
    # the text: a job line, each incident with its host, each host's own report
    check("job:       2 hosts (nodea, nodeb), %d processes" % job_procs in txt, "text job line")
    check("Verdict over the job: FAIL: 1 incident (1 error, 0 warnings) on 1 of 2 hosts "
          "(nodea)" in txt, "text verdict line")
    lines = [l for l in txt.splitlines() if l.startswith("  host ")]
    check(len(lines) == 1 and lines[0].startswith("  host nodea: #1 error poison-fork"),
          "text incident lines: %r" % lines)
    check("==== host nodea" in txt and "==== host nodeb" in txt, "per-host sections")
    chk = open(prefix + ".check").read()
    check("gpuctx check: host nodea: POISON FORK" in chk and
          "gpuctx check: host nodeb: NO PROBLEM FOUND" in chk, "check's verdicts: %r" % chk)
    # Perfetto: a machine per host, named, each with its own processes, no import error
    ms, errs = machines(prefix + ".pftrace")
    check(not errs, "import errors: %r" % errs)
    check(sorted(ms) == [0, 1] and [ms[0]["name"], ms[1]["name"]] == ["nodea", "nodeb"],
          "machines %r" % {k: v["name"] for k, v in ms.items()})
    for i, h in enumerate(r["hosts"]):
        pids = {p["pid"] for p in h["report"]["processes"]}
        check(pids <= ms[i]["pids"], "machine %d lacks processes %r" % (i, pids - ms[i]["pids"]))
    # the same trace twice: the same pids on two machines, two processes each
    ms, errs = machines(prefix + ".self.pftrace")
    check(not errs, "self merge import errors: %r" % errs)
    check(sorted(ms) == [0, 1] and ms[0]["pids"] == ms[1]["pids"] and ms[0]["pids"],
          "self merge machines %r" % ms)
    check([ms[0]["name"], ms[1]["name"]] == ["nodea", "nodea#2"], "self merge names")


def main():
    what, prefix = sys.argv[1], sys.argv[2]
    {"job_attr": job_attr, "job_quick": job_quick, "merge": merge}[what](prefix)


if __name__ == "__main__":
    main()
