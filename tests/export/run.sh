#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Timeline export tests: record build/workloads/wl_demo over the emulated driver (build/fakegpu),
# export it to Perfetto protobuf and Chrome JSON, decode the protobuf with protoc against our
# .proto and parse the JSON strictly, check both against `gpuctx report --json`, and compare a
# normalised listing (pids, tids, times and handles replaced) with tests/export/golden/*.txt.
# Synthetic traces (tests/export/gen_trace.c) check hostile process names, the command-line
# errors, and that a 1,000,000-record trace exports in flat memory.
# Needs root (for the recording) and protoc. Usage:
#   tests/export/run.sh [--update-golden] [TEST...]
#   TEST: demo api launches attach fork_storm stacks synthetic torture errors memory
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
G=$top/build/gpuctx
HERE=$top/tests/export
GOLD=$HERE/golden
CHECK="python3 $HERE/check_export.py"
SUITE=export
. "$top/tests/lib.sh"
update=0
if [ "${1:-}" = --update-golden ]; then
	update=1
	shift
fi

for tool in protoc python3 cc; do
	command -v $tool >/dev/null ||
		{ echo "export: FAIL: $tool not found (make test-deps)" >&2; exit 1; }
done
[ -x "$G" ] || { echo "export: FAIL: build/gpuctx missing (make all)" >&2; exit 1; }

T=$(mktemp -d /tmp/gpuctx-export.XXXXXX)
. "$top/tests/integration/libs.sh"
MNT=$T/gpu
cleanup() {
	fakegpu_stop
	rm -rf "$T" "$DOUBLES"
}
trap cleanup EXIT

RESULT_FILES=(err)
RESULT_TAIL=30

# The generator of synthetic traces, built against the pure trace writer.
GEN=$T/gen_trace
build_gen() {
	[ -x "$GEN" ] && return 0
	make --no-print-directory -s .output/user/trace/tracefile.o .output/user/lib/crc32.o \
		.output/user/lib/infile.o >/dev/null 2>&1 || true
	cc -O2 -D_GNU_SOURCE -Iinclude -Iuser "$HERE/gen_trace.c" .output/user/trace/tracefile.o \
		.output/user/lib/crc32.o .output/user/lib/infile.o -lpthread -o "$GEN"
}

# export_both NAME TRACE: NAME.pftrace, NAME.json, NAME.report.json in $T
export_both() {
	local name=$1 trace=$2
	"$G" report --json "$trace" >"$T/$name.report.json" 2>>"$T/$name.err" || return 1
	"$G" export -q -f perfetto -o "$T/$name.pftrace" "$trace" 2>>"$T/$name.err" || return 1
	"$G" export -q -f chrome -o "$T/$name.json" "$trace" 2>>"$T/$name.err" || return 1
}

# golden NAME: compare the normalised listings with golden/NAME.{perfetto,chrome}.txt
golden() {
	local name=$1 fmt file rc=0
	for fmt in perfetto chrome; do
		file=$T/$name.pftrace
		[ $fmt = chrome ] && file=$T/$name.json
		$CHECK normalize --$fmt "$file" >"$T/$name.$fmt.txt" 2>>"$T/$name.err" || return 1
		if [ $update = 1 ]; then
			mkdir -p "$GOLD"
			cp "$T/$name.$fmt.txt" "$GOLD/$name.$fmt.txt"
			echo "     updated tests/export/golden/$name.$fmt.txt"
		elif ! diff -u "$GOLD/$name.$fmt.txt" "$T/$name.$fmt.txt" >>"$T/$name.err" 2>&1; then
			echo "normalised $fmt timeline differs from golden/$name.$fmt.txt" \
				"(tests/export/run.sh --update-golden $name if the change is intended)" \
				>>"$T/$name.err"
			rc=1
		fi
	done
	return $rc
}

# Mount the emulated driver once; 1 when recording is impossible.
start_fakegpu() {
	local name=$1
	if [ "$(id -u)" != 0 ]; then
		echo "recording needs root" >"$T/$name.err"
		return 1
	fi
	[ -n "$FAKE" ] && return 0
	fakegpu_start && return 0
	echo "fakegpu did not mount" >"$T/$name.err"
	return 1
}

# record NAME [record options] -- CMD...: $T/NAME.gctx
record() {
	local name=$1
	shift
	"$G" record -q -o "$T/$name.gctx" --device "$MNT/nvidiactl:nvidiactl" \
		--device "$MNT/nvidia0:nvidia" --device "$MNT/nvidia-uvm:nvidia-uvm" \
		--device "$MNT/kfd:kfd" --device "$MNT/renderD128:drm-render" \
		"$@" >"$T/$name.out" 2>>"$T/$name.err"
}

# The bundled demo, recorded for real. Without stacks: their frame offsets depend on this
# machine's libc build, which a golden file cannot (tests/integration/stacks.sh checks them).
t_demo() {
	local name=demo rc=0
	start_fakegpu $name || { result $name 1; return; }
	record demo --no-stacks -- "$top/build/workloads/wl_demo" "$MNT" || rc=1
	[ $rc = 0 ] && { export_both $name "$T/demo.gctx" || rc=1; }
	[ $rc = 0 ] && { $CHECK check --perfetto "$T/demo.pftrace" --chrome "$T/demo.json" \
		--report "$T/demo.report.json" --expect demo >>"$T/$name.err" 2>&1 || rc=1; }
	[ $rc = 0 ] && { golden demo || rc=1; }
	result $name $rc
}

# export_check NAME RC: when RC is 0, export $T/NAME.gctx and check it against its report and
# the expectations of scenario NAME; report the result.
export_check() {
	local name=$1 rc=$2
	[ $rc = 0 ] && { export_both $name "$T/$name.gctx" || rc=1; }
	[ $rc = 0 ] && { $CHECK check --perfetto "$T/$name.pftrace" --chrome "$T/$name.json" \
		--report "$T/$name.report.json" --expect $name >>"$T/$name.err" 2>&1 || rc=1; }
	result $name $rc
}

# CUDA driver API contexts (the libcuda test double over the emulated driver): API context
# tracks, API calls, API memory, the inherited-context-call arrow.
t_api() {
	local rc=0
	start_fakegpu api || { result api 1; return; }
	LD_LIBRARY_PATH=$DOUBLES record api --libcuda "$DOUBLES/libcuda.so.1" \
		-- "$top/build/workloads/api_cuda_fork" "$MNT" || rc=1
	export_check api $rc
}

# Kernel launches under --launches: entry-only API calls (no recorded return) become instants,
# so the primary context's slice keeps its length and every launch nests in it (issue 13).
t_launches() {
	local rc=0
	start_fakegpu launches || { result launches 1; return; }
	LD_LIBRARY_PATH=$DOUBLES record launches --launches \
		--libcuda "$DOUBLES/libcuda.so.1" \
		-- "$top/build/workloads/api_cuda_launch" "$MNT" || rc=1
	export_check launches $rc
}

# Call stacks on the events they were taken at (issue 11): the C blame workload (GPU opened in
# setup_gpu, forked in spawn_worker, used in worker_step, crashed in worker_crash) and the Python
# one over the libcuda double (cuInit in init_gpu, fork in start_worker, the child's cuInit in
# worker_loop), in both formats; then the C trace read from a pipe (no read-ahead).
t_stacks() {
	local name=stacks rc=0
	start_fakegpu $name || { result $name 1; return; }
	record stacks_c -- "$top/build/workloads/wl_blame" "$MNT" crash ||
		{ cat "$T/stacks_c.err" >>"$T/$name.err"; rc=1; }
	[ $rc = 0 ] && { export_both stacks_c "$T/stacks_c.gctx" 2>>"$T/$name.err" || rc=1; }
	[ $rc = 0 ] && { python3 "$HERE/check_stacks.py" c "$T/stacks_c.pftrace" \
		"$T/stacks_c.json" >>"$T/$name.err" 2>&1 || rc=1; }
	if [ -e "$DOUBLES/libcuda.so.1" ]; then
		GPUCTX_FAKEGPU_DIR=$MNT LD_LIBRARY_PATH=$DOUBLES record stacks_py -- \
			/usr/bin/python3 "$top/tests/workloads/blame.py" "$MNT" cudause ||
			{ cat "$T/stacks_py.err" >>"$T/$name.err"; rc=1; }
		[ $rc = 0 ] && { export_both stacks_py "$T/stacks_py.gctx" 2>>"$T/$name.err" || rc=1; }
		[ $rc = 0 ] && { python3 "$HERE/check_stacks.py" py "$T/stacks_py.pftrace" \
			"$T/stacks_py.json" >>"$T/$name.err" 2>&1 || rc=1; }
	else
		echo "     (no build/doubles/libcuda.so.1: the Python scenario is skipped)"
	fi
	[ $rc = 0 ] && { cat "$T/stacks_c.gctx" | "$G" export -q -f perfetto -o "$T/pipe.pftrace" \
		/dev/stdin 2>>"$T/$name.err" || rc=1; }
	[ $rc = 0 ] && { cat "$T/stacks_c.gctx" | "$G" export -q -f chrome -o "$T/pipe.json" \
		/dev/stdin 2>>"$T/$name.err" || rc=1; }
	[ $rc = 0 ] && { python3 "$HERE/check_stacks.py" c "$T/pipe.pftrace" "$T/pipe.json" \
		--pipe >>"$T/$name.err" 2>&1 || rc=1; }
	result $name $rc
}

# 500 forked children and 50 grandchildren without exec: each one linked to its parent in the
# .pftrace (ProcessTree ppid) and named by its comm, in both formats (issue 13).
t_fork_storm() {
	local rc=0
	start_fakegpu fork_storm || { result fork_storm 1; return; }
	record fork_storm -- "$top/build/workloads/wl_fork_storm" "$MNT" 500 || rc=1
	export_check fork_storm $rc
}

# -p attach: the attached process's parent is outside the trace; it gets a placeholder name
# (no nameless process), and the attached process is linked to it.
t_attach() {
	local name=attach rc=0 wl rec
	start_fakegpu $name || { result $name 1; return; }
	"$top/build/workloads/wl_attach" "$MNT" >"$T/attach.wl" 2>&1 &
	wl=$!
	for _ in $(seq 100); do grep -q ready "$T/attach.wl" && break; sleep 0.05; done
	record attach -p "$wl" &
	rec=$!
	for _ in $(seq 200); do grep -q attached "$T/$name.err" 2>/dev/null && break; sleep 0.05; done
	kill -USR1 "$wl"
	wait "$wl" || rc=1
	wait "$rec" || rc=1
	export_check attach $rc
}

# A generated trace: every record type the generator has, exact golden listings.
t_synthetic() {
	local name=synthetic rc=0
	build_gen 2>"$T/$name.err" || { result $name 1; return; }
	"$GEN" "$T/synthetic.gctx" 600 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && { export_both $name "$T/synthetic.gctx" || rc=1; }
	[ $rc = 0 ] && { $CHECK check --perfetto "$T/synthetic.pftrace" --chrome "$T/synthetic.json" \
		--report "$T/synthetic.report.json" --expect synthetic >>"$T/$name.err" 2>&1 || rc=1; }
	[ $rc = 0 ] && { golden synthetic || rc=1; }
	result $name $rc
}

# Process names and argv full of quotes, backslashes, newlines and invalid UTF-8.
t_torture() {
	local name=torture rc=0
	build_gen 2>"$T/$name.err" || { result $name 1; return; }
	"$GEN" "$T/torture.gctx" 400 --torture 2>>"$T/$name.err" || rc=1
	[ $rc = 0 ] && { export_both $name "$T/torture.gctx" || rc=1; }
	[ $rc = 0 ] && { $CHECK check --perfetto "$T/torture.pftrace" --chrome "$T/torture.json" \
		--report "$T/torture.report.json" --expect torture >>"$T/$name.err" 2>&1 || rc=1; }
	result $name $rc
}

# Bad input: one line on stderr, non-zero exit.
expect_error() {
	local name=$1 pattern=$2 rc
	shift 2
	"$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	if [ $rc = 0 ] || [ $rc -ge 128 ]; then
		echo "expected a clean failure, got exit $rc" >>"$T/$name.err"
		return 1
	elif [ "$(wc -l <"$T/$name.err")" != 1 ] || ! grep -q -- "$pattern" "$T/$name.err"; then
		echo "expected one line matching '$pattern'" >>"$T/$name.err"
		return 1
	fi
}

t_errors() {
	local rc=0 size
	build_gen 2>"$T/errors.err" || { result errors 1; return; }
	"$GEN" "$T/ok.gctx" 300 || rc=1
	expect_error err_format "unknown format" "$G" export -f svg -o "$T/o" "$T/ok.gctx" || rc=1
	expect_error err_missing "cannot open" "$G" export -o "$T/o.json" "$T/missing.gctx" || rc=1
	head -c 100 /dev/urandom >"$T/garbage.gctx"
	expect_error err_garbage "not a gpuctx trace" "$G" export -o "$T/o.json" "$T/garbage.gctx" ||
		rc=1
	cp "$T/ok.gctx" "$T/corrupt.gctx"
	size=$(stat -c %s "$T/corrupt.gctx")
	printf '\xff\xff\xff\xff' | dd of="$T/corrupt.gctx" bs=1 seek=$((size / 2)) conv=notrunc \
		2>/dev/null
	# a corrupt record is skipped with a warning, the rest is exported (issue 9)
	"$G" export -q -o "$T/c.json" "$T/corrupt.gctx" 2>"$T/export.err" ||
		{ echo "a corrupt record failed the export" >>"$T/errors.err"; rc=1; }
	grep -q "bytes skipped at offset" "$T/export.err" || rc=1
	python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/c.json" || rc=1
	# nothing readable after the header: a clean failure that leaves no output
	{ head -c "$(od -An -tu2 -j10 -N2 "$T/ok.gctx")" "$T/ok.gctx"; head -c 300 /dev/zero | tr '\0' '\132'; } >"$T/nothing.gctx"
	expect_error err_corrupt "no readable record" "$G" export -o "$T/n.json" "$T/nothing.gctx" ||
		rc=1
	[ -e "$T/n.json" ] && { echo "a failed export left its output" >>"$T/errors.err"; rc=1; }
	expect_error err_output "cannot create" "$G" export -o /nonexistent/dir/o.json "$T/ok.gctx" ||
		rc=1
	expect_error err_same "cannot create" "$G" export -f chrome -o "$T/ok.gctx" "$T/ok.gctx" ||
		rc=1
	# the corrupt and report wordings match
	"$G" report "$T/corrupt.gctx" >/dev/null 2>"$T/report.err"
	cmp -s "$T/report.err" "$T/export.err" || { echo "export and report word a corrupt trace" \
		"differently" >>"$T/errors.err"; rc=1; }
	# a trace cut inside a record exports what came before it, with a warning
	head -c $((size - 10)) "$T/ok.gctx" >"$T/cut.gctx"
	"$G" export -q -o "$T/cut.json" "$T/cut.gctx" 2>"$T/cut.err" || rc=1
	grep -q "ends inside a record" "$T/cut.err" || rc=1
	python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/cut.json" || rc=1
	for e in err_format err_missing err_garbage err_corrupt err_output err_same; do
		[ -s "$T/$e.err" ] && grep -q "expected" "$T/$e.err" && cat "$T/$e.err" >>"$T/errors.err"
	done
	result errors $rc
}

# 1,000,000 records export with the same peak memory as 100,000 (within 20%).
t_memory() {
	local name=memory rc=0
	build_gen 2>"$T/$name.err" || { result $name 1; return; }
	$CHECK memtest --gpuctx "$G" --gen "$GEN" --dir "$T" --small 100000 --large 1000000 \
		>"$T/$name.out" 2>>"$T/$name.err" || rc=1
	sed 's/^/     /' "$T/$name.out"
	[ $rc = 0 ] || cat "$T/$name.out" >>"$T/$name.err"
	result $name $rc
}

all_tests=(demo api launches attach fork_storm stacks synthetic torture errors memory)
[ $# -gt 0 ] && all_tests=("$@")
for t in "${all_tests[@]}"; do
	"t_$t"
done
suite_summary
