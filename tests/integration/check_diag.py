#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of the diagnosis integration tests (tests/integration/diagnosis.sh).

Usage: check_diag.py SCENARIO BASE   -- reads BASE.json/.txt (when recorded with -o), BASE.xml
(JUnit) and BASE.err (what `gpuctx check` printed)."""
import json
import os
import sys
import xml.etree.ElementTree as ET

name, base = sys.argv[1], sys.argv[2]
err = open(base + ".err").read()
junit = ET.parse(base + ".xml").getroot()
cases = junit.findall("./testsuite/testcase")
fails = [c.find("failure") for c in cases if c.find("failure") is not None]
d = json.load(open(base + ".json")) if os.path.exists(base + ".json") else None
text = open(base + ".txt").read() if os.path.exists(base + ".txt") else None
I = d["incidents"] if d else None
P = {p["pid"]: p for p in d["processes"]} if d else {}


def kinds(k):
    return [f for f in d["findings"] if f["kind"] == k]


def first_screen(words):
    head = "\n".join(text.splitlines()[:40])
    for w in words:
        assert w in head, (w, head)


if name == "dl_fork_touch":
    assert len(I) == 1, I
    i = I[0]
    assert i["kind"] == "poison-fork" and i["severity"] == "error", i
    assert len(i["pids"]) == 12 and i["generations"] == 3 and i["used"] == 12, i
    assert i["api"] == "CUDA" and i["first_use"].startswith("cuMemAlloc"), i
    assert P[i["pid"]]["comm"] == "python3", P[i["pid"]]
    # every finding belongs to it; no api-error repeats an inherited call
    assert sorted(i["findings"]) == sorted(f["id"] for f in d["findings"]), i
    assert not kinds("api-error"), kinds("api-error")
    assert all(f["later_used"] for f in kinds("fork-with-gpu-state"))
    assert "persistent_workers=True" in i["fix"] and "spawn" in i["fix"], i
    first_screen(["Verdict: POISON FORK: pid %d" % i["pid"], "Fix: ", "in 3 generations"])
    assert len(cases) == 1 and len(fails) == 1, cases
    assert fails[0].get("type") == "poison-fork"
    assert "gpuctx check: POISON FORK" in err and "Fix: " in err, err
    # the live event stream is not printed, the findings not either
    assert "FINDING" not in err, err
elif name == "dl_fork_idle":
    assert [x["kind"] for x in I] == ["fork-with-gpu-state"], I
    assert I[0]["severity"] == "warning" and I[0]["used"] == 0, I
    assert I[0]["generations"] == 2 and len(I[0]["pids"]) == 4, I
    assert len(cases) == 1 and not fails, cases
elif name == "dl_fork_idle_warn":
    assert len(fails) == 1 and fails[0].get("type") == "fork-with-gpu-state", cases
    assert "GPU STATE INHERITED" in err, err
elif name == "dl_segv":
    assert len(I) == 1 and I[0]["kind"] == "poison-fork", I
    i = I[0]
    assert i["crashed"] == 1 and i["used"] >= 1, i  # the other worker may be stopped first
    crash = kinds("crash-after-inheritance")
    assert len(crash) == 1, crash
    icc = {f["id"]: f for f in kinds("inherited-context-call")}
    assert crash[0]["related_finding"] in icc, crash
    assert icc[crash[0]["related_finding"]]["pid"] == crash[0]["pid"], crash
    assert "never used" not in crash[0]["detail"], crash
    w = P[crash[0]["pid"]]
    assert w["comm_history"] == ["python3", "pt_data_worker"] and w["signal_name"] == "SIGSEGV", w
    assert "died by SIGSEGV (pid %d)" % w["pid"] in i["summary"], i
    assert "DataLoader with multiprocessing_context" in i["fix"].split(";")[0], i
    first_screen(["Verdict: POISON FORK", "Fix: Create the DataLoader"])
elif name == "dl_spawn":
    assert I == [] and not d["findings"], (I, d["findings"])
    s = d["summary"]
    assert s["verdict"].startswith("NO PROBLEM FOUND"), s
    workers = [p for p in d["processes"] if any("--multiprocessing-fork" in a
                                                for x in p["execs"] for a in x["argv"])]
    assert len(workers) >= 4, workers
    # seed 002: each spawned worker's start-up to its own GPU context
    assert all(isinstance(p["gpu_init_ns"], int) and p["gpu_init_ns"] > 0 for p in workers)
    assert s["contexts_created"] == 1 + len(workers) and s["startup_max_ns"] > 0, s
    assert s["worker_generations"] == 2, s  # --epochs 2: the pool is spawned twice
    assert len(cases) == 1 and not fails and cases[0].get("classname") == "gpuctx.clean", cases
    assert "gpuctx check: NO PROBLEM FOUND" in err, err
elif name == "dl_spawn_tmp":
    assert not fails and "NO PROBLEM FOUND" in err, err
elif name == "dl_noguard":
    assert [x["kind"] for x in I] == ["spawn-startup-failure"], I
    assert 'if __name__ == "__main__":' in I[0]["fix"], I
    assert len(fails) == 1, cases
elif name == "dl_threads":
    assert I == [] and not d["findings"], (I, d["findings"])
    assert "NO PROBLEM FOUND" in err and not fails, err
else:
    sys.exit("unknown scenario " + name)
