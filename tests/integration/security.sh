#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Hardening (issue 9): one test per defect, acting as an attacker (an unprivileged user via
# setpriv, planted symlinks, FIFOs, crafted libraries) or a careless user (a full disk, a
# signal to gpuctx alone, bad option values). Each fails without its fix. Scratch files only:
# never a real system path. Needs root. Usage: tests/integration/security.sh [TEST...]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
G=${GPUCTX:-$top/build/gpuctx} # GPUCTX=another build: check that each test fails without its fix
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
SUITE=security
. "$top/tests/lib.sh"
[ "$(id -u)" = 0 ] || { echo "security: FAIL: needs root" >&2; exit 1; }

T=$(mktemp -d /tmp/gpuctx-sec.XXXXXX)
chmod 755 "$T"
. "$top/tests/integration/libs.sh"
cleanup() {
	mountpoint -q "$T/full" && umount "$T/full"
	[ -n "${KEEP:-}" ] || rm -rf "$T" "$DOUBLES"
}
trap cleanup EXIT

RESULT_LABEL=sec_ # result NAME RC [WHY]: "FAIL sec_NAME: WHY", then NAME.err's last lines
RESULT_WHY=1
RESULT_FILES=(err)
RESULT_TAIL=15

# A libcuda.so.1 whose constructor leaves a mark saying who ran it: the comm (the traced
# program, or "gpuctx" for gpuctx's resolver child), the uid, the effective capabilities and
# the parent (other gpuctx -a runs on this machine may look at the library too).
build_evil_lib() { # OUT MARKDIR
	cat >"$T/evil.c" <<EOF
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void)
{
	char comm[32] = "", line[256], cap[32] = "?", path[512];
	FILE *f = fopen("/proc/self/comm", "r");
	if (f) { if (fgets(comm, sizeof(comm), f)) comm[strcspn(comm, "\n")] = 0; fclose(f); }
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7)) sscanf(line + 7, "%31s", cap);
	if (f) fclose(f);
	snprintf(path, sizeof(path), "$2/ran-%s-uid%d-cap%s-ppid%d", comm, (int)geteuid(), cap,
		 (int)getppid());
	fclose(fopen(path, "w"));
}
int cuInit(unsigned int flags) { return 0; }
int cuGetProcAddress_v2(const char *s, void **p, int v, unsigned long long fl, int *st)
{ *p = (void *)cuInit; if (st) *st = 0; return 0; }
EOF
	gcc -shared -fPIC -o "$1" "$T/evil.c"
}

# 1. Code in a library a traced unprivileged process maps never runs as root.
t_root_exec() {
	local d=$T/evil rc=0
	mkdir -p "$d/marks" && chmod 1777 "$d/marks"
	build_evil_lib "$d/libcuda.so.1" "$d/marks" || { result root_exec 1 "cannot build"; return; }
	chown -R 65534:65534 "$d" # the attacker's own file, in the attacker's own directory
	"$G" record -q -o "$T/root_exec.gctx" -- "${NOBODY[@]}" /usr/bin/python3 -c \
		"import ctypes, time; ctypes.CDLL('$d/libcuda.so.1'); time.sleep(0.5)" \
		>/dev/null 2>"$T/root_exec.err" &
	local rec=$!
	wait "$rec" || rc=1
	if ls "$d/marks" | grep -q "^ran-gpuctx-.*-ppid$rec\$"; then
		result root_exec 1 "gpuctx ran the library's code: $(ls "$d/marks")"
	else
		result root_exec $rc "record failed"
	fi
	# root's library in a directory anyone may write to (not sticky): another user could have
	# swapped it, so it never runs
	local w=$T/wwdir mw=$T/wwmarks
	mkdir -p "$w" "$mw" && chmod 777 "$w" && chmod 1777 "$mw"
	build_evil_lib "$w/libcuda.so.1" "$mw"
	"$G" record -q -o "$T/root_exec3.gctx" -- "${NOBODY[@]}" /usr/bin/python3 -c \
		"import ctypes, time; ctypes.CDLL('$w/libcuda.so.1'); time.sleep(0.5)" \
		>/dev/null 2>"$T/root_exec3.err" &
	rec=$!
	wait "$rec"
	if ls "$mw" | grep -q "^ran-gpuctx-.*-ppid$rec\$"; then
		result root_exec_writable_dir 1 "gpuctx ran a library from a world-writable directory: $(ls "$mw")"
	else
		result root_exec_writable_dir 0
	fi
	# a library only root could have written (root's file in root-only directories, or under a
	# sticky one such as /tmp) does run, but unprivileged and without capabilities; in a
	# directory of its own under /tmp, not the checkout, whose path may be anyone's
	local r m=$T/rootmarks
	r=$(mktemp -d /tmp/gpuctx-rootlib.XXXXXX)
	mkdir -p "$m" && chmod 755 "$r" && chmod 1777 "$m"
	build_evil_lib "$r/libcuda.so.1" "$m"
	"$G" record -q -o "$T/root_exec2.gctx" -- "${NOBODY[@]}" /usr/bin/python3 -c \
		"import ctypes, time; ctypes.CDLL('$r/libcuda.so.1'); time.sleep(0.5)" \
		>/dev/null 2>"$T/root_exec2.err" &
	rec=$!
	wait "$rec"
	rm -rf "$r"
	if ls "$m" | grep -q "^ran-gpuctx-uid0-.*-ppid$rec\$"; then
		result root_exec_dropped 1 "resolver ran as root: $(ls "$m")"
	elif ! ls "$m" | grep -q "^ran-gpuctx-uid65534-cap0000000000000000-ppid$rec\$"; then
		result root_exec_dropped 1 "resolver did not run unprivileged: $(ls "$m")"
	else
		result root_exec_dropped 0
	fi
}

# A library whose .dynsym has sh_entsize 0 (once a division by zero).
entsize0() { # LIB
	python3 - "$1" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum = struct.unpack_from("<HH", b, 0x3a)
for i in range(shnum):
    off = shoff + i * shentsize
    if struct.unpack_from("<I", b, off + 4)[0] == 11:  # SHT_DYNSYM
        struct.pack_into("<Q", b, off + 0x38, 0)       # sh_entsize = 0
open(sys.argv[1], "wb").write(b)
EOF
}

# 2. A crafted .dynsym (sh_entsize 0) is skipped; recording goes on and ends cleanly.
t_elf_entsize() {
	local lib=$T/elf/libcuda.so.1 rc
	mkdir -p "$T/elf"
	cp "$DOUBLES/libcuda.so.1" "$lib" 2>/dev/null || build_evil_lib "$lib" "$T"
	entsize0 "$lib"
	timeout 60 "$G" record -q -o "$T/elf.gctx" -- /usr/bin/python3 -c \
		"import ctypes, time; ctypes.CDLL('$lib'); time.sleep(0.5)" >/dev/null \
		2>"$T/elf_entsize.err"
	rc=$?
	[ $rc = 0 ] || { result elf_entsize 1 "record exited $rc"; return; }
	grep -q "bad .dynsym section: skipped" "$T/elf_entsize.err" ||
		{ result elf_entsize 1 "no warning about the bad library"; return; }
	"$G" report --json "$T/elf.gctx" 2>>"$T/elf_entsize.err" | /usr/bin/python3 -c \
		'import json, sys; sys.exit(0 if json.load(sys.stdin)["meta"]["clean_end"] else 1)'
	result elf_entsize $? "the trace has no clean end"
}

# 3. A FIFO put where a mapped (then deleted) library was never blocks the collector.
t_fifo_lib() {
	local d=$T/fifo rc
	mkdir -p "$d"
	cp "$DOUBLES/libcuda.so.1" "$d/libcuda.so.1" 2>/dev/null ||
		build_evil_lib "$d/libcuda.so.1" "$T"
	cp /usr/lib/x86_64-linux-gnu/libz.so.1 "$d/other.so"
	timeout 60 "$G" record -q -o "$T/fifo.gctx" -- /usr/bin/python3 -c "
import ctypes, os, time
ctypes.CDLL('$d/libcuda.so.1')
time.sleep(0.3)
os.unlink('$d/libcuda.so.1'); os.mkfifo('$d/libcuda.so.1')
ctypes.CDLL('$d/other.so')   # a new library: gpuctx rescans this process's mappings
time.sleep(0.3)" >/dev/null 2>"$T/fifo_lib.err"
	rc=$?
	result fifo_lib $rc "record exited $rc (124: blocked on the FIFO)"
}

# 4. record -o: a failed start leaves an existing file; a symlink is never followed.
t_record_output() {
	local f=$T/precious.gctx
	echo precious >"$f"
	"$G" record -q -o "$f" --cgroup "$T/no-such-cgroup" >/dev/null 2>"$T/record_output.err"
	[ "$(cat "$f" 2>/dev/null)" = precious ] ||
		{ result record_output 1 "a failed start destroyed $f"; return; }
	echo "root's file" >"$T/target"
	ln -s "$T/target" "$T/link.gctx"
	"$G" record -q -o "$T/link.gctx" -- true >/dev/null 2>>"$T/record_output.err"
	[ "$(cat "$T/target")" = "root's file" ] ||
		{ result record_output 1 "record wrote through a symlink"; return; }
	grep -q "symbolic link" "$T/record_output.err" ||
		{ result record_output 1 "no clear refusal of the symlink"; return; }
	ls -a "$T" | grep -q '^\.link\.gctx\.' && { result record_output 1 "temp file left"; return; }
	result record_output 0
}

# 4b. The traced command inherits no descriptor of gpuctx's (the trace least of all).
t_fd_leak() {
	"$G" record -q -o "$T/fd.gctx" -- sh -c 'ls -l /proc/$$/fd' >"$T/fd_leak.out" \
		2>"$T/fd_leak.err"
	if grep -q "gctx\|bpf\|anon_inode" "$T/fd_leak.out"; then
		result fd_leak 1 "the command holds: $(grep "gctx\|bpf\|anon_inode" "$T/fd_leak.out")"
	else
		result fd_leak 0
	fi
}

# 5. export -o: a failed export leaves the target alone, a device node included.
t_export_output() {
	mknod "$T/node" c 1 3 # a scratch /dev/null
	# a good header then garbage: the export fails after its output was opened
	"$G" record -q -o "$T/ok.gctx" -- true >/dev/null 2>&1
	{ head -c "$(od -An -tu2 -j10 -N2 "$T/ok.gctx")" "$T/ok.gctx"; head -c 200 /dev/zero | tr '\0' '\132'; } >"$T/bad.gctx"
	"$G" export -o "$T/node" "$T/bad.gctx" >/dev/null 2>"$T/export_output.err"
	[ -c "$T/node" ] || { result export_output 1 "export removed a device node"; return; }
	echo keep >"$T/keep.json"
	"$G" export -o "$T/keep.json" "$T/bad.gctx" >/dev/null 2>>"$T/export_output.err"
	[ "$(cat "$T/keep.json")" = keep ] || { result export_output 1 "failed export lost a file"; return; }
	result export_output 0
}

# 6. Traces and timelines are created 0600 (they hold command lines and paths).
t_modes() {
	(umask 022; "$G" record -q -o "$T/m.gctx" --chrome "$T/m.json" -- true) >/dev/null \
		2>"$T/modes.err"
	local a b
	a=$(stat -c %a "$T/m.gctx" 2>/dev/null) b=$(stat -c %a "$T/m.json" 2>/dev/null)
	[ "$a" = 600 ] && [ "$b" = 600 ]
	result modes $? "modes are $a and $b"
}

# 7. A full disk: records not written are counted, the exit status and the report say so.
t_disk_full() {
	local rc
	mkdir -p "$T/full"
	mount -t tmpfs -o size=48k none "$T/full" || { result disk_full 1 "cannot mount"; return; }
	"$G" record -q -o "$T/full/t.gctx" -- sh -c 'for i in $(seq 200); do /bin/true; done' \
		>/dev/null 2>"$T/disk_full.err"
	rc=$?
	[ $rc != 0 ] || { result disk_full 1 "record exited 0 on a full disk"; return; }
	grep -q "records could not be written" "$T/disk_full.err" ||
		{ result disk_full 1 "the summary does not count unwritten records"; return; }
	"$G" report "$T/full/t.gctx" >"$T/disk_full.txt" 2>>"$T/disk_full.err" ||
		{ result disk_full 1 "report failed"; return; }
	grep -q "stopped writing at .*No space left on device" "$T/disk_full.txt"
	result disk_full $? "the report does not say where writing stopped"
	umount "$T/full"
}

# 8. SIGTERM to gpuctx alone reaches the command, and the trace covers its end.
t_signal() {
	local rc
	"$G" record -q -o "$T/sig.gctx" -- sh -c \
		"trap 'echo got-term >$T/sig.mark; exit 3' TERM; : >$T/sig.ready; sleep 10 & wait" \
		>/dev/null 2>"$T/signal.err" &
	local rec=$!
	# the command has set its trap (a loaded machine may take seconds to get there)
	for _ in $(seq 200); do [ -e "$T/sig.ready" ] && break; sleep 0.1; done
	kill -TERM "$rec"
	wait "$rec"
	rc=$?
	[ -s "$T/sig.mark" ] || { result signal 1 "the command never got SIGTERM"; return; }
	[ $rc = 3 ] || { result signal 1 "gpuctx exited $rc, not the command's 3"; return; }
	"$G" report --json "$T/sig.gctx" 2>>"$T/signal.err" | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin)["meta"]
sys.exit(0 if m["end_reason"] == "exited" and m["exit_status"] == 3 << 8 else 1)'
	result signal $? "the trace does not end with the command's exit"
}

# 9. gpuctx's own resolver child is never traced (-a).
t_own_child() {
	local rc=0
	[ -e "$DOUBLES/libcuda.so.1" ] || { echo "SKIP sec_own_child: no CUDA double"; return; }
	/usr/bin/python3 -c "import ctypes, time; ctypes.CDLL('$DOUBLES/libcuda.so.1'); time.sleep(3)" &
	local wl=$!
	sleep 0.3
	"$G" record -q -a -o "$T/own.gctx" --duration 1.5 >/dev/null 2>"$T/own_child.err" &
	local rec=$!
	wait "$rec" || rc=1
	wait "$wl"
	[ $rc = 0 ] || { result own_child 1 "record failed"; return; }
	# ours: forked by the recorder (no fork record: gpuctx is never followed); a child of
	# another gpuctx run on this machine is that run's, and rightly traced
	"$G" report --json "$T/own.gctx" 2>>"$T/own_child.err" | /usr/bin/python3 -c '
import json, sys
bad = [(p["pid"], p.get("ppid")) for p in json.load(sys.stdin)["processes"]
       if p["comm"] == "gpuctx" and p.get("api_calls") and p.get("ppid") in (0, None, '"$rec"')]
print("traced:", bad, file=sys.stderr)
sys.exit(1 if bad else 0)' 2>>"$T/own_child.err"
	result own_child $? "gpuctx traced its own resolver child"
}

# 10. Numeric options: one-line error, exit 2.
t_duration() {
	local v
	for v in inf nan 1e300 -1 0 abc; do
		"$G" record -o "$T/d.gctx" --duration "$v" -- true >/dev/null 2>"$T/duration.err"
		if [ $? != 2 ] || [ "$(wc -l <"$T/duration.err")" != 1 ]; then
			result duration 1 "--duration $v accepted"
			return
		fi
	done
	result duration 0
}

# 12. One corrupt record does not lose the trace.
t_corrupt() {
	"$G" record -q -o "$T/c.gctx" -- sh -c 'true; true' >/dev/null 2>&1
	local size
	size=$(stat -c %s "$T/c.gctx")
	printf '\xff\xff\xff\xff' | dd of="$T/c.gctx" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
	head -c 64 /dev/urandom >>"$T/c.gctx" # and garbage after the clean end
	"$G" report "$T/c.gctx" >"$T/corrupt.txt" 2>"$T/corrupt.err" ||
		{ result corrupt 1 "report refused the trace"; return; }
	grep -q "bytes skipped" "$T/corrupt.err" && grep -q "^Processes" "$T/corrupt.txt"
	result corrupt $? "no skip warning or no processes"
}

# 13. record -o - is refused, and creates no file named "-".
t_stdout() {
	(cd "$T" && "$G" record -o - -- true >/dev/null 2>"$T/stdout.err")
	local rc=$?
	[ $rc = 2 ] && [ ! -e "$T/-" ]
	result stdout $? "exit $rc"
}

# 14. The demo killed with SIGKILL does not leave the emulated driver mounted.
t_demo_kill() {
	GPUCTX_DEMO_OUT=$T/demo.gctx setsid "$top/tools/demo.sh" >/dev/null 2>&1 &
	local demo=$! fake="" mnt
	for _ in $(seq 100); do
		fake=$(pgrep -P "$demo" -x fakegpu) && break
		sleep 0.05
	done
	[ -n "$fake" ] || { result demo_kill 1 "no fakegpu"; return; }
	mnt=$(tr '\0' ' ' <"/proc/$fake/cmdline" | awk '{ print $2 }')
	for _ in $(seq 100); do mountpoint -q "$mnt" && break; sleep 0.05; done
	kill -KILL "$demo"
	for _ in $(seq 60); do mountpoint -q "$mnt" || break; sleep 0.05; done
	if mountpoint -q "$mnt"; then
		kill "$fake"
		result demo_kill 1 "fakegpu still mounted on $mnt"
	else
		result demo_kill 0
	fi
	wait "$demo" 2>/dev/null
}

# 15. -p of a process that has already exited: said so, non-zero exit.
t_gone() {
	/usr/bin/python3 -c 'import os, time
pid = os.fork()
if pid == 0:
    os._exit(0)
print(pid, flush=True)
time.sleep(5)' >"$T/gone.pid" &
	local parent=$! rc
	for _ in $(seq 50); do [ -s "$T/gone.pid" ] && break; sleep 0.05; done
	timeout 10 "$G" record -q -o "$T/gone.gctx" -p "$(cat "$T/gone.pid")" >/dev/null \
		2>"$T/gone.err"
	rc=$?
	kill "$parent"
	wait "$parent" 2>/dev/null
	[ $rc = 1 ] && grep -q "is gone" "$T/gone.err"
	result gone $? "exit $rc"
}

# A libcuda.so.1 whose cuGetProcAddress_v2 hands out what the attacker chooses: the address in
# $EVIL_ADDR, or with NFUNCS > 0 a new one of its own NFUNCS functions at each call.
build_procaddr_lib() { # OUT NFUNCS
	{
		echo '#include <stdlib.h>'
		for i in $(seq 0 $(($2 - 1))); do echo "int f$i(void) { return $i; }"; done
		echo "static int (*const fs[])(void) = {"
		for i in $(seq 0 $(($2 - 1))); do echo "f$i,"; done
		echo "0 };"
		cat <<'EOF2'
int cuInit(unsigned int flags) { return 0; }
static unsigned int next;
int cuGetProcAddress_v2(const char *s, void **p, int v, unsigned long long fl, int *st)
{
	const char *a = getenv("EVIL_ADDR");
	*p = a ? (void *)strtoull(a, 0, 0) : (void *)fs[next++ % (sizeof(fs) / sizeof(fs[0]) - 1)];
	if (st) *st = 0;
	return 0;
}
EOF2
	} >"$1.c"
	gcc -O0 -shared -fPIC -o "$1" "$1.c"
}

# 16. (issue 27.1) cuGetProcAddress answered with an address inside another library the process
# maps (a root's library an untraced daemon may use), or in the middle of one of the library's
# own functions: gpuctx never puts a uprobe there (it would corrupt every process running that
# code); the address is refused, and record and the report say so.
t_procaddr_foreign() {
	local d=$T/pa rc
	mkdir -p "$d/v" && chmod 755 "$d/v"
	cp /usr/lib/x86_64-linux-gnu/libz.so.1 "$d/v/libvictim.so" # root's, root-only directory
	build_procaddr_lib "$d/libcuda.so.1" 1 || { result procaddr_foreign 1 "cannot build"; return; }
	chown 65534:65534 "$d" "$d/libcuda.so.1"
	timeout 60 "$G" record -q -o "$T/pa.gctx" -- "${NOBODY[@]}" /usr/bin/python3 -c "
import ctypes, os, time
v = ctypes.CDLL('$d/v/libvictim.so')
c = ctypes.CDLL('$d/libcuda.so.1')
time.sleep(0.3)
p = ctypes.c_void_p(); st = ctypes.c_int()
for addr in (ctypes.cast(v.crc32, ctypes.c_void_p).value + 4,
             ctypes.cast(c.cuInit, ctypes.c_void_p).value + 1):
    os.environ['EVIL_ADDR'] = str(addr)
    c.cuGetProcAddress_v2(b'cuMemAlloc', ctypes.byref(p), 12000, ctypes.c_ulonglong(0),
                          ctypes.byref(st))
    time.sleep(0.3)
time.sleep(3)  # alive while gpuctx follows the addresses (a busy machine lags)" \
		>/dev/null 2>"$T/procaddr_foreign.err"
	rc=$?
	[ $rc = 0 ] || { result procaddr_foreign 1 "record exited $rc"; return; }
	"$G" report --json "$T/pa.gctx" 2>>"$T/procaddr_foreign.err" | /usr/bin/python3 -c '
import json, sys
pr = json.load(sys.stdin)["probes"]
bad = [(p["lib"], p["offset"]) for p in pr if p["how"] == "cuGetProcAddress"]
refused = [p for p in pr if p["how"] == "refused" and p["error"] == "EPERM"]
print("probed:", bad, "refused:", len(refused), file=sys.stderr)
sys.exit(1 if bad or len(refused) != 2 else 0)' 2>>"$T/procaddr_foreign.err" ||
		{ result procaddr_foreign 1 "a probe at a chosen address, or no refusal reported"; return; }
	grep -q "2 address(es) cuGetProcAddress handed out were not probed: 2 not a function" \
		"$T/procaddr_foreign.err"
	result procaddr_foreign $? "record does not say what it refused"
}

# 17. (issue 27.8) A library answering each cuGetProcAddress call with a new function: the
# probes it causes are capped (64 per process), the rest counted and reported.
t_probe_cap() {
	local d=$T/cap rc n=300
	mkdir -p "$d"
	build_procaddr_lib "$d/libcuda.so.1" $n || { result probe_cap 1 "cannot build"; return; }
	chown -R 65534:65534 "$d"
	timeout 120 "$G" record -q -o "$T/cap.gctx" -- "${NOBODY[@]}" /usr/bin/python3 -c "
import ctypes, time
c = ctypes.CDLL('$d/libcuda.so.1')
time.sleep(0.3)
p = ctypes.c_void_p(); st = ctypes.c_int()
for i in range($n):
    c.cuGetProcAddress_v2(b'cuMemAlloc', ctypes.byref(p), 12000, ctypes.c_ulonglong(0),
                          ctypes.byref(st))
time.sleep(4)  # alive while gpuctx follows the addresses (a busy machine lags)" >/dev/null 2>"$T/probe_cap.err"
	rc=$?
	[ $rc = 0 ] || { result probe_cap 1 "record exited $rc"; return; }
	"$G" report --json "$T/cap.gctx" 2>>"$T/probe_cap.err" | /usr/bin/python3 -c '
import json, sys
pr = json.load(sys.stdin)["probes"]
n = len([p for p in pr if p["how"] == "cuGetProcAddress"])
refused = [p for p in pr if p["how"] == "refused" and p["error"] == "EDQUOT"]
print("probed:", n, "refused records:", len(refused), file=sys.stderr)
sys.exit(0 if n <= 64 and refused else 1)' 2>>"$T/probe_cap.err" ||
		{ result probe_cap 1 "not capped, or the refusals not in the report"; return; }
	grep -q "over the probe caps" "$T/probe_cap.err"
	result probe_cap $? "record does not count the refused addresses"
}

# 18. (issue 27.4) LD_LIBRARY_PATH pointing into a directory only root may enter: gpuctx lists
# and probes it only as the traced user could, so not at all (and never runs what is in it).
t_llp_root_only() {
	local d=$T/llp m=$T/llpmarks
	mkdir -p "$d/secret" "$m" && chmod 700 "$d/secret" && chmod 1777 "$m"
	build_evil_lib "$d/secret/libcuda.so.1" "$m" || { result llp_root_only 1 "cannot build"; return; }
	timeout 60 "$G" record -q -o "$T/llp.gctx" -- "${NOBODY[@]}" env LD_LIBRARY_PATH="$d/secret" \
		/usr/bin/python3 -c "import time; time.sleep(0.5)" >/dev/null 2>"$T/llp_root_only.err" ||
		{ result llp_root_only 1 "record failed"; return; }
	"$G" report --json "$T/llp.gctx" 2>>"$T/llp_root_only.err" | /usr/bin/python3 -c '
import json, sys
bad = {p["lib"] for p in json.load(sys.stdin)["probes"] if "/secret/" in p["lib"]}
print("probed:", bad, file=sys.stderr)
sys.exit(1 if bad else 0)' 2>>"$T/llp_root_only.err" ||
		{ result llp_root_only 1 "a library in a root-only directory was probed"; return; }
	if ls "$m" | grep -q "^ran-gpuctx"; then
		result llp_root_only 1 "its code ran: $(ls "$m")"
	else
		result llp_root_only 0
	fi
}

# 19. (issue 27.4) A library path that gpuctx could follow elsewhere: the traced user maps
# "DIR/evil dir/libcuda.so.1" and makes "DIR/evil" a symlink to a 0600 root-only library. The
# file probed is the one mapped (through /proc/PID/map_files), never what a path names.
t_lib_symlink() {
	local d=$T/sym r=$T/symroot
	mkdir -p "$d/evil dir" "$r" && chmod 700 "$r"
	printf 'int hipInit(unsigned int f) { return 0; }\n' >"$r/secret.c"
	gcc -shared -fPIC -o "$r/libsecret.so" "$r/secret.c" && chmod 600 "$r/libsecret.so" ||
		{ result lib_symlink 1 "cannot build"; return; }
	build_procaddr_lib "$d/evil dir/libcuda.so.1" 1 || { result lib_symlink 1 "cannot build"; return; }
	ln -s "$r/libsecret.so" "$d/evil"
	chown -R 65534:65534 "$d"
	chown -h 65534:65534 "$d/evil"
	timeout 60 "$G" record -q -o "$T/sym.gctx" -- "${NOBODY[@]}" /usr/bin/python3 -c "
import ctypes, time; ctypes.CDLL('$d/evil dir/libcuda.so.1'); time.sleep(0.3)" \
		>/dev/null 2>"$T/lib_symlink.err" || { result lib_symlink 1 "record failed"; return; }
	"$G" report --json "$T/sym.gctx" 2>>"$T/lib_symlink.err" | /usr/bin/python3 -c '
import json, sys
pr = json.load(sys.stdin)["probes"]
bad = {(p["lib"], p["symbol"]) for p in pr if p["lib"].endswith("/evil")}
ok = {p["symbol"] for p in pr if p["lib"].endswith("/evil dir/libcuda.so.1")}
print("followed:", bad, "mapped:", ok, file=sys.stderr)
sys.exit(1 if bad or "cuInit" not in ok else 0)' 2>>"$T/lib_symlink.err"
	result lib_symlink $? "probed what the path names, not the file mapped"
}

# 20. (issue 27.10) Terminal escapes in a library path: record's warnings and -v lines show
# them escaped, as every other output does.
t_escape_lib() {
	local d rc
	d=$T/$(printf 'esc\033]0;pwned\007\033[31m')
	mkdir -p "$d"
	cp "$DOUBLES/libcuda.so.1" "$d/libcuda.so.1" 2>/dev/null ||
		build_evil_lib "$d/libcuda.so.1" "$T"
	entsize0 "$d/libcuda.so.1"
	LIB=$d/libcuda.so.1 timeout 60 "$G" record -v -o "$T/esc.gctx" -- /usr/bin/python3 -c "
import ctypes, os, time; ctypes.CDLL(os.environ['LIB']); time.sleep(0.3)" >/dev/null \
		2>"$T/escape_lib.err"
	rc=$?
	[ $rc = 0 ] || { result escape_lib 1 "record exited $rc"; return; }
	grep -q "bad .dynsym section: skipped" "$T/escape_lib.err" ||
		{ result escape_lib 1 "no warning about the library"; return; }
	if grep -q $'\033' "$T/escape_lib.err"; then
		grep -a $'\033' "$T/escape_lib.err" | cat -v | head -3 >>"$T/escape_lib.err"
		result escape_lib 1 "a raw escape reached the terminal"
	else
		result escape_lib 0
	fi
}

# 21. (issue 33) A root library only root may reach (a 0600 file in a 0700 directory, as under
# /root or a private checkout) is pre-resolved all the same: the unprivileged child loads the
# file gpuctx checked without needing its path or its permission. And when pre-resolution
# does not run, the report says so, and why.
t_preresolve_private() {
	local d=$T/priv m=$T/privmarks a=$T/privuser rec
	mkdir -p "$d/lib" "$m" "$a" && chmod 700 "$d" && chmod 1777 "$m"
	build_evil_lib "$d/lib/libcuda.so.1" "$m" || { result preresolve_private 1 "cannot build"; return; }
	chmod 600 "$d/lib/libcuda.so.1"
	build_evil_lib "$a/libcuda.so.1" "$m"
	chown -R 65534:65534 "$a" # not root's alone: never run, and the report says so
	"$G" record -q -o "$T/priv.gctx" -- /usr/bin/python3 -c "
import ctypes, time
ctypes.CDLL('$d/lib/libcuda.so.1'); time.sleep(0.3)" >/dev/null 2>"$T/preresolve_private.err" &
	rec=$!
	wait "$rec" || { result preresolve_private 1 "record failed"; return; }
	ls "$m" | grep -q "^ran-gpuctx-uid65534-cap0000000000000000-ppid$rec\$" ||
		{ result preresolve_private 1 "resolver did not run unprivileged: $(ls "$m")"; return; }
	"$G" record -q -o "$T/priv2.gctx" -- "${NOBODY[@]}" /usr/bin/python3 -c "
import ctypes, time
ctypes.CDLL('$a/libcuda.so.1'); time.sleep(0.3)" >/dev/null 2>>"$T/preresolve_private.err" ||
		{ result preresolve_private 1 "record failed"; return; }
	"$G" report "$T/priv2.gctx" 2>>"$T/preresolve_private.err" | tee -a "$T/preresolve_private.err" |
		grep -q "cuGetProcAddress not pre-resolved: not root's alone"
	result preresolve_private $? "the report does not say pre-resolution did not run, and why"
}

# 22. (issue 43.2) Root reads traces in users' directories (the Slurm plugin's check, an admin's
# report): a symlink there to a root-only trace (its command line holds a password) or a FIFO
# at the path. Every reader refuses both, at once, and prints nothing of the root-only trace.
t_reader_root() {
	local d=$T/userdir rc=0 c out
	mkdir -p "$d"
	chown 65534:65534 "$d"
	"$G" record -q -o "$T/rootonly.gctx" -- /bin/echo password=hunter2 >/dev/null 2>&1
	chmod 600 "$T/rootonly.gctx"
	"${NOBODY[@]}" ln -s "$T/rootonly.gctx" "$d/link.gctx"
	"${NOBODY[@]}" mkfifo "$d/fifo.gctx"
	for f in link fifo; do
		for c in "report" "report --json" "report --list" "check" "export -o $T/x.json" \
			"merge -o $T/m.gctx" "report --html $T/x.html" "check --html $T/x.html"; do
			# shellcheck disable=SC2086
			out=$(timeout 10 "$G" $c "$d/$f.gctx" 2>&1)
			case $? in
			124) echo "$c $f: root blocked in it" >>"$T/reader_root.err"; rc=1 ;;
			0) echo "$c $f: read it" >>"$T/reader_root.err"; rc=1 ;;
			esac
			if echo "$out" | grep -q hunter2; then
				echo "$c $f: printed the root-only trace" >>"$T/reader_root.err"
				rc=1
			fi
			[ $f = link ] && ! echo "$out" | grep -q "symbolic link" &&
				{ echo "$c $f: no clear refusal: $out" >>"$T/reader_root.err"; rc=1; }
			[ $f = fifo ] && ! echo "$out" | grep -q "FIFO" &&
				{ echo "$c $f: no clear refusal: $out" >>"$T/reader_root.err"; rc=1; }
		done
	done
	[ -e "$T/x.html" ] && { echo "--html wrote a page of the refused trace" >>"$T/reader_root.err"; rc=1; }
	# the file a caller opened itself, handed over as /dev/fd/N, is read whatever the path
	"$G" report "/dev/fd/3" 3<"$T/rootonly.gctx" 2>>"$T/reader_root.err" | grep -q hunter2 ||
		{ echo "report /dev/fd/3 did not read the file handed over" >>"$T/reader_root.err"; rc=1; }
	result reader_root $rc "a reader as root followed a user's symlink or blocked on a FIFO"
}

# 23. (issue 43.1) record -o /dev/fd/N writes the trace into a file its caller created (the
# Slurm plugin creates it as the job's user): an empty regular file only, nothing truncated.
t_handed_output() {
	local rc=0
	: >"$T/handed.gctx"
	"$G" record -q -o /dev/fd/3 -- /bin/echo handed-arg 3<>"$T/handed.gctx" >/dev/null \
		2>"$T/handed_output.err" || { echo "record -o /dev/fd/3 failed" >>"$T/handed_output.err"; rc=1; }
	"$G" report "$T/handed.gctx" 2>>"$T/handed_output.err" | grep -q handed-arg ||
		{ echo "the trace is not in the file handed over" >>"$T/handed_output.err"; rc=1; }
	echo precious >"$T/handed2.gctx"
	"$G" record -q -o /dev/fd/3 -- true 3<>"$T/handed2.gctx" >/dev/null 2>>"$T/handed_output.err" &&
		{ echo "record wrote into a file that was not empty" >>"$T/handed_output.err"; rc=1; }
	[ "$(cat "$T/handed2.gctx")" = precious ] || { echo "a file not empty was overwritten" >>"$T/handed_output.err"; rc=1; }
	grep -q "not empty" "$T/handed_output.err" || { echo "no clear refusal" >>"$T/handed_output.err"; rc=1; }
	result handed_output $rc "record -o /dev/fd/N"
}

# 24. (issue 43.8) A hostile trace: the traced user's hostname, program name (comm), command
# line and GPU file paths hold terminal escapes, C1 controls, bidi overrides and newlines. No
# output of any subcommand passes one on raw (JSON escapes them as \uXXXX), and no line of
# theirs can be forged. So for record's "cannot run PATH".
t_hostile_output() {
	local rc=0 m=$T/hgpu bad c f out evil dir
	# ESC [2J, a bidi override (U+202E), a C1 CSI (U+009B), DEL, and a newline with a forged line
	bad=$'\e[2J\xe2\x80\xae\xc2\x9b\x7f\nFORGED'
	mkdir -p "$m"
	"$top/build/fakegpu" "$m" 2>/dev/null &
	for _ in $(seq 100); do [ -e "$m/nvidiactl" ] && break; sleep 0.05; done
	evil=$T/$'\e[31m\xe2\x80\xae\nFORGED'
	cp "$top/build/workloads/wl_fork_child_ioctl" "$evil"
	dir=$T/$'gpu\e]0;x\a\xe2\x80\xae\nFORGED'
	ln -sfn "$m" "$dir"
	unshare -u /usr/bin/python3 -c '
import ctypes, os, sys
h = os.fsencode(sys.argv[1])
ctypes.CDLL(None).sethostname(h, len(h))
os.execv(sys.argv[2], sys.argv[2:])' $'h\e[7m\xe2\x80\xae' \
		"$G" record -q -o "$T/hostile.gctx" --device "$m/nvidiactl:nvidiactl" \
		--device "$m/nvidia0:nvidia" --device "$m/nvidia-uvm:nvidia-uvm" -- \
		sh -c 'exec "$@" >/dev/null 2>&1' sh "$evil" "$dir" "$bad" >"$T/hostile.record" 2>&1
	"$G" record -q -o "$T/hostile2.gctx" -- "$T/nope$bad" >>"$T/hostile.record" 2>&1
	"$G" record -o "$T/hostile3.gctx" -- /bin/true "$bad" >>"$T/hostile.record" 2>&1
	: >"$T/hostile.all"
	for c in "report" "report --json" "report --list" "report --list --json" "check" \
		"export -o $T/h.json" "merge -o $T/hm.gctx"; do
		# shellcheck disable=SC2086
		"$G" $c "$T/hostile.gctx" >"$T/hostile.out" 2>&1
		sed "s|^|$c: |" "$T/hostile.out" >>"$T/hostile.all"
	done
	"$G" report --list "$T" >>"$T/hostile.all" 2>&1
	"$G" check "$T/hostile.gctx" "$T/hm.gctx" >>"$T/hostile.all" 2>&1
	cat "$T/hostile.record" >>"$T/hostile.all"
	umount "$m" 2>/dev/null
	rm -f "$evil" "$dir"
	grep -q "POISON FORK" "$T/hostile.all" || { echo "no poison fork traced" >>"$T/hostile_output.err"; rc=1; }
	grep -q "cannot run" "$T/hostile.all" || { echo "no 'cannot run' line" >>"$T/hostile_output.err"; rc=1; }
	for f in $'\e' $'\xe2\x80\xae' $'\xc2\x9b' $'\x7f' $'\a'; do
		if LC_ALL=C grep -aq "$f" "$T/hostile.all"; then
			LC_ALL=C grep -a "$f" "$T/hostile.all" | cat -v | cut -c1-160 | head -5 >>"$T/hostile_output.err"
			rc=1
		fi
	done
	if grep -aq "^FORGED" "$T/hostile.all"; then
		grep -a -B1 "^FORGED" "$T/hostile.all" | cat -v | cut -c1-160 | head -6 >>"$T/hostile_output.err"
		rc=1
	fi
	result hostile_output $rc "a traced string reached the terminal raw"
}

all_tests=(root_exec elf_entsize fifo_lib record_output fd_leak export_output modes disk_full signal
	own_child duration corrupt stdout demo_kill gone procaddr_foreign probe_cap
	llp_root_only lib_symlink escape_lib preresolve_private reader_root handed_output hostile_output)
[ $# -gt 0 ] && all_tests=("$@")
for t in "${all_tests[@]}"; do
	"t_$t"
done
suite_summary
