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

# 2. A library the job truncates while gpuctx's symboliser has it mapped: the job keeps its
# code (the file is cut after its last loadable segment) and forks from it, so symbolising
# the fork touches the symbol table past the new end of file: SIGBUS. gpuctx (libdw runs in
# a sandboxed helper) records to the end and keeps the stack, symbolised by a new helper.
t_stack_truncated_lib() {
	local name=stack_truncated_lib rc=0 d=$T/trunc
	mkdir -p "$d"
	cat >"$d/victim.c" <<'C'
#include <fcntl.h>
#include <unistd.h>
int victim_open(const char *path) { int fd = open(path, O_RDWR); asm volatile(""); return fd; }
int victim_fork(void) { int pid = fork(); asm volatile(""); return pid; }
/* a symbol table worth mapping: many functions */
#define F(n) int victim_pad_##n(int x) { return x * n + 1; }
#define F10(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
F10(1) F10(2) F10(3) F10(4) F10(5) F10(6) F10(7) F10(8) F10(9)
C
	cat >"$d/job.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
int victim_open(const char *path);
int victim_fork(void);
int main(int argc, char **argv)
{
	int st = 0, pid;
	if (victim_open(argv[1]) < 0) { perror("open"); return 1; }
	sleep(2); /* gpuctx symbolises the first stack: its helper maps the library */
	if (truncate(argv[2], atol(argv[3]))) { perror("truncate"); return 1; }
	pid = victim_fork();
	if (pid == 0) _exit(0);
	waitpid(pid, &st, 0);
	sleep(1);
	return 0;
}
C
	if ! gcc -g -O1 -shared -fPIC -o "$d/libvictim.so" "$d/victim.c" ||
		! gcc -g -o "$d/job" "$d/job.c" -L"$d" -lvictim -Wl,-rpath,"$d"; then
		result "$name" 1 "cannot build"
		return
	fi
	# the end of the last loadable segment, page-rounded: the code stays, the symbols go
	local keep
	keep=$(python3 - "$d/libvictim.so" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
phoff, = struct.unpack_from("<Q", b, 0x20)
phentsize, phnum = struct.unpack_from("<HH", b, 0x36)
end = 0
for i in range(phnum):
    t, _, off, _, _, filesz = struct.unpack_from("<IIQQQQ", b, phoff + i * phentsize)
    if t == 1:
        end = max(end, off + filesz)
print((end + 4095) // 4096 * 4096)
PY
)
	record "$name" -- "$d/job" "$MNT/nvidiactl" "$d/libvictim.so" "$keep"
	rc=$?
	if [ $rc != 0 ]; then
		echo "gpuctx, the job or the report exited $rc" >>"$T/$name.err"
	elif ! python3 - "$T/$name.json" >>"$T/$name.err" 2>&1 <<'PY'; then
import json, sys
rep = json.load(open(sys.argv[1]))
forks = [f["stacks"]["fork"] for f in rep["findings"] if (f.get("stacks") or {}).get("fork")]
assert forks, "no fork stack: %s" % [f["kind"] for f in rep["findings"]]
# a new symboliser sees the file as it is now: what is left of it (.dynsym) still names it
names = [fr.get("function") or "" for st in forks for fr in st]
assert "victim_fork" in names, "fork stack without victim_fork: %s" % names
PY
		rc=1
	fi
	result "$name" $rc
}

all_tests+=(stack_truncated_lib)

# 6. A function whose mangled name demangles into gigabytes (596 bytes: 10 s and 1.3 GB in
# gpuctx on fc0e731) on the stack of the GPU open: recording ends promptly with gpuctx's
# memory small, the frame keeps the name mangled (cut) and the stack's note says why.
t_stack_hostile_name() {
	local name=stack_hostile_name rc=0 d=$T/hname sym
	mkdir -p "$d"
	sym=$(python3 - <<'PY'
def seq(i):
    if i == 0:
        return "S_"
    i -= 1
    d, s = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", ""
    while True:
        s = d[i % 36] + s
        i //= 36
        if not i:
            return "S" + s + "_"
n, last = "_Z1fI1bI1aS_E", 2
for i in range(50):
    n += seq(1) + "I" + seq(last) + seq(last) + "E"
    last += 1
print(n + "Evv")
PY
)
	cat >"$d/job.c" <<C
#include <fcntl.h>
__attribute__((noinline)) int hostile(const char *p) __asm__("$sym");
int hostile(const char *p) { int fd = open(p, O_RDWR); asm volatile(""); return fd; }
int main(int argc, char **argv) { return hostile(argv[1]) < 0; }
C
	gcc -g -O1 -o "$d/job" "$d/job.c" || { result "$name" 1 "cannot build"; return; }
	# gpuctx's peak memory (KiB), the largest of the children waited for: gpuctx itself
	python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:], stdout=open(sys.argv[1] + ".out", "w"),
                     stderr=open(sys.argv[1] + ".err", "w"))
open(sys.argv[1] + ".rss", "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$T/$name" "$G" record -q -o "$T/$name.gctx" "${DEVS[@]}" -- \
		"$d/job" "$MNT/nvidiactl"
	rc=$?
	mv "$T/$name.rss" "$d/rss"
	"$G" report --json "$T/$name.gctx" >"$T/$name.json" 2>>"$T/$name.err" || rc=1
	if [ $rc != 0 ]; then
		echo "gpuctx or the report exited $rc" >>"$T/$name.err"
	elif [ "$(cat "$d/rss")" -gt 400000 ]; then
		echo "gpuctx used $(cat "$d/rss") KiB" >>"$T/$name.err"
		rc=1
	elif ! python3 - "$T/$name.json" >>"$T/$name.err" 2>&1 <<'PY'; then
import json, sys
rep = json.load(open(sys.argv[1]))
def stacks(o):
    if isinstance(o, dict):
        if "frames" in o and "note" in o:
            yield o
        for v in o.values():
            yield from stacks(v)
    elif isinstance(o, list):
        for v in o:
            yield from stacks(v)
found = [s for s in stacks(rep) if any((f.get("function") or "").endswith("Evv")
                                       for f in s["frames"])]
assert found, "no stack with the frame kept mangled"
assert any("kept mangled" in (s.get("note") or "") for s in found), [s.get("note") for s in found]
PY
		rc=1
	fi
	result "$name" $rc
}

all_tests+=(stack_hostile_name)
