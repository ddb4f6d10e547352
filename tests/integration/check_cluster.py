#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of the cluster tests (cluster.sh): job attribution, merged hosts.

  check_cluster.py job_attr PREFIX   PREFIX.json (report --json), PREFIX.txt (report)
"""
import json
import sys


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
        check(p["cgroup"].endswith("/slurm/uid_0/job_4242/step_0/task_1"),
              "pid %d: cgroup %r" % (p["pid"], p["cgroup"]))
    jobs = r["jobs"]
    check(len(jobs) == 1 and jobs[0]["label"] == "slurm job 4242 step 0"
          and jobs[0]["processes"] == 2, "jobs %r" % jobs)
    check(jobs[0]["root_pids"] == [wl[0]["pid"]], "root pids %r" % jobs[0]["root_pids"])
    # gpuctx's own fork (before the move) is in no job
    others = [p for p in r["processes"] if p not in wl]
    check(all(p["job"] is None for p in others), "processes outside the job: %r" % others)
    line = [l for l in txt.splitlines() if l.startswith("  jobs:")]
    check(line and "slurm job 4242 step 0: 2 processes, from pid %d" % wl[0]["pid"] in line[0],
          "text report's jobs line: %r" % line)


def main():
    what, prefix = sys.argv[1], sys.argv[2]
    {"job_attr": job_attr}[what](prefix)


if __name__ == "__main__":
    main()
