# SPDX-License-Identifier: GPL-2.0
# Issue 27 (stacks, symbols and traced memory as hostile input), sourced by run.sh: each test
# fails on fc0e731. Uses run.sh's record/result helpers, $MNT (the emulated driver) and $T.

# 14. No raw user memory in the trace: a secret on the stack at the GPU open is not in the
# .gctx, and the report still blames the function that initialised the GPU.
t_stack_secret() {
	local name=stack_secret rc=0
	record "$name" -- "$W/wl_stack_secret" "$MNT"
	rc=$?
	if [ $rc != 0 ]; then
		echo "workload or report exited $rc" >>"$T/$name.err"
	elif grep -q "GPUCTX-TEST-SECRET" "$T/$name.gctx"; then
		echo "the secret from the job's stack is in the trace" >>"$T/$name.err"
		rc=1
	elif ! python3 - "$T/$name.json" >>"$T/$name.err" 2>&1 <<'PY'; then
import json, sys
rep = json.load(open(sys.argv[1]))
def frames(st):  # a stack: a list of frames, or an object holding them
    return st if isinstance(st, list) else st.get("frames", [])
inits = [f["stacks"]["init"] for f in rep["findings"] if (f.get("stacks") or {}).get("init")]
names = [fr.get("function") or "" for st in inits for fr in frames(st)]
assert any("init_with_secret" in n for n in names), "init not blamed: %s" % names
PY
		rc=1
	fi
	result "$name" $rc
}

all_tests+=(stack_secret)
