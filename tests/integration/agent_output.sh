# SPDX-License-Identifier: GPL-2.0
# Sourced by run.sh after agent.sh: the agent's own lines (standard output, which is the journal
# under systemd, and --syslog) carry nothing raw of what a traced process controls (issue 43
# item 8, docs/security.md). Jobs whose command name, argv, executable and script paths,
# library directory, Python exception message and cgroup hold ESC, BEL, a bidi override, a C1
# control, DEL and newlines followed by a forged line crash and poison-fork under an agent, and
# a client follows their cgroup; the agent's lines still name each process (its pid and the
# start of its command name), one line each. On main before the fix, the cgroup went to the
# journal raw.

# what a traced user may put in a string: ESC [2J, U+202E, U+009B (C1 CSI), DEL, a newline and
# a forged line
AGENT_BAD=$'\e[2J\xe2\x80\xae\xc2\x9b\x7f\nFORGED'
# a cgroup name holds anything but '/' and a newline (the kernel refuses those)
AGENT_BAD_CG=$'\e[2J\xe2\x80\xae\xc2\x9b\x7f\a'

# agent_syslog_wrap DIR: a command that runs `gpuctx agent ARGS` with /dev/log a socket of the
# test's, in a mount namespace of its own (an overlay on /dev), the datagrams in DIR/syslog;
# the listener's pid in DIR/listener.pid
agent_syslog_wrap() {
	local d=$1
	mkdir -p "$d/up" "$d/work"
	cat >"$d/wrap" <<EOF
#!/bin/sh
exec unshare -m sh -c '
mount -t overlay overlay -o lowerdir=/dev,upperdir=$d/up,workdir=$d/work /dev ||
	{ echo "no overlay on /dev" >&2; exit 97; }
rm -f /dev/log
python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(\"/dev/log\")
out = open(sys.argv[1], \"ab\", buffering=0)
while True:
    out.write(s.recv(65536).hex().encode() + b\"\\\\n\")
" $d/syslog &
echo \$! >$d/listener.pid
for i in \$(seq 100); do [ -S /dev/log ] && break; sleep 0.05; done
exec "\$@"' sh "$G" "\$@"
EOF
	chmod 755 "$d/wrap"
}

# agent_hostile_run NAME [syslog]: the jobs under an agent; 0 when all went as planned, 2 when
# this machine cannot run it (said). Sets EVIL_PIDS (command-name prefix:pid of each job).
agent_hostile_run() {
	local name=$1 mode=${2:-} rc=0 evil crash py lib script mnt cg base p ag=$G opts=()
	evil=$T/$'wl_evil\e[31m\xe2\x80\xae\nFORGED'
	crash=$T/$'wl_crash\e]0;x\a\nFORGED'
	py=$T/$'python3\e[7m\xc2\x9b\nFORGED'
	lib=$T/$'lib\e[33m\xe2\x80\xae\nFORGED'
	script=$T/$'job\e[35m\xe2\x80\xae\nFORGED.py'
	mnt=$T/$'gpu\e]0;x\a\xe2\x80\xae\nFORGED'
	cp "$W/wl_fork_child_ioctl" "$evil"
	cp "$W/wl_segv" "$crash"
	# the interpreter itself (a shim, such as pyenv's, runs what its name says)
	ln -sfn "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" "$py"
	mkdir -p "$lib"
	cp "$DOUBLES/libcuda.so.1" "$lib/"
	ln -sfn "$MNT" "$mnt"
	cat >"$script" <<'PY'
import ctypes, os, sys, time
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
time.sleep(0.5)  # the agent has read the new interpreter before its child raises
pid = os.fork()
if pid == 0:
    try:
        if cuda.cuDeviceGetCount(ctypes.byref(ctypes.c_int())):
            raise RuntimeError("CUDA in a forked child" + sys.argv[1])
    except RuntimeError:
        os._exit(1)
os.waitpid(pid, 0)
PY
	job_cgroup "$name" "gpuctxit$$_$AGENT_BAD_CG.scope" step_0 || return 2
	if [ "$mode" = syslog ]; then
		agent_syslog_wrap "$T/$name.sys"
		ag=$T/$name.sys/wrap
		opts=(--syslog)
	fi
	if ! G=$ag agent_start "$name.agent" --grace 0.5 "${opts[@]}"; then
		agent_hostile_clean
		grep -q "no overlay on /dev" "$T/$name.agent.err" &&
			{ echo "SKIP $name: no overlay mount on /dev for a syslog socket"; return 2; }
		return 1
	fi
	"$G" record --from-agent --run-dir "$AGENT_RUN" --cgroup "$cg" -q -o "$T/$name.fa.gctx" \
		>/dev/null 2>"$T/$name.fa.err" &
	p=$!
	for _ in $(seq 300); do grep -qs attached "$T/$name.fa.err" && break; sleep 0.05; done
	kill -INT $p
	wait $p
	EVIL_PIDS=()
	sh -c 'exec "$@" >/dev/null 2>&1' sh "$evil" "$mnt" "$AGENT_BAD" &
	p=$!
	wait $p
	EVIL_PIDS+=("wl_evil:$p")
	sh -c 'exec "$@" >/dev/null 2>&1' sh "$crash" "$mnt" --self "$AGENT_BAD" &
	p=$!
	wait $p 2>/dev/null
	EVIL_PIDS+=("wl_crash:$p")
	GPUCTX_FAKEGPU_DIR=$MNT LD_LIBRARY_PATH=$lib "$py" "$script" "$AGENT_BAD" >/dev/null 2>&1 &
	p=$!
	wait $p
	EVIL_PIDS+=("python3:$p")
	for p in "${EVIL_PIDS[@]}"; do
		agent_wait_dump "$T/$name.agent.spool" "${p#*:}" ||
			{ echo "no dump for ${p%%:*} (pid ${p#*:})" >>"$T/$name.err"; rc=1; }
	done
	kill -TERM $AGENT_PID
	wait $AGENT_PID || { echo "the agent exited $?" >>"$T/$name.err"; rc=1; }
	agent_hostile_clean
	return $rc
}

# (agent_hostile_run's locals) the syslog listener, the files, the cgroup
agent_hostile_clean() {
	[ -s "$T/$name.sys/listener.pid" ] && kill "$(cat "$T/$name.sys/listener.pid")"
	rm -rf "$evil" "$crash" "$py" "$lib" "$script" "$mnt"
	rmdir "$cg" "$base"
}

# agent_hostile_check NAME LINES ERR: LINES (the agent's lines, one a line) and ERR (its
# standard error) hold no raw control byte, DEL, C1 control or bidi override, no line of its
# own for a forged one, and LINES name each job: "pid N (NAME" in its incident line, the cgroup
# by its escaped name, the Python child's exception
agent_hostile_check() {
	local name=$1 lines=$2 err=$3 rc=0 f p
	for f in $'\e' $'\a' $'\xe2\x80\xae' $'\xc2\x9b' $'\x7f' $'\r'; do
		if LC_ALL=C grep -aq "$f" "$lines" "$err"; then
			echo "raw $(printf %s "$f" | od -An -tx1):" >>"$T/$name.err"
			LC_ALL=C grep -a "$f" "$lines" "$err" | cat -v | cut -c1-200 | head -5 >>"$T/$name.err"
			rc=1
		fi
	done
	if LC_ALL=C grep -av "^gpuctx agent: " "$lines" | grep -q . || grep -aq "^FORGED" "$err"; then
		echo "a line split:" >>"$T/$name.err"
		{ LC_ALL=C grep -av "^gpuctx agent: " "$lines"; grep -a "^FORGED" "$err"; } |
			cat -v | cut -c1-200 | head -5 >>"$T/$name.err"
		rc=1
	fi
	for p in "${EVIL_PIDS[@]}"; do
		grep -aq "\.gctx: .*pid ${p#*:} (${p%%:*}" "$lines" || {
			echo "no incident line names ${p%%:*} (pid ${p#*:})" >>"$T/$name.err"
			rc=1
		}
	done
	grep -aq "following cgroup .*/gpuctxit$$_\\\\x1b\[2J" "$lines" ||
		{ echo "the cgroup followed is not named (escaped)" >>"$T/$name.err"; rc=1; }
	grep -aFq "raised RuntimeError: CUDA in a forked child?[2J???????FORGED at " "$lines" ||
		{ echo "the Python child's exception is not in its line" >>"$T/$name.err"; rc=1; }
	[ $rc = 0 ] || { echo "the agent's lines:"; cat -v "$lines" "$err" | cut -c1-240; } >>"$T/$name.err"
	return $rc
}

# The agent's standard output (and its standard error: record's warnings, its start).
t_agent_hostile_output() {
	local name=agent_hostile_output rc=0
	[ -e "$DOUBLES/libcuda.so.1" ] || { echo "SKIP $name: no CUDA test double"; return; }
	agent_hostile_run $name
	case $? in 2) return ;; 1) rc=1 ;; esac
	agent_hostile_check $name "$T/$name.agent.out" "$T/$name.agent.err" || rc=1
	result $name $rc
}

# --syslog: each message one datagram, with the same text.
t_agent_hostile_syslog() {
	local name=agent_hostile_syslog rc=0 st
	[ -e "$DOUBLES/libcuda.so.1" ] || { echo "SKIP $name: no CUDA test double"; return; }
	agent_hostile_run $name syslog
	case $? in 2) return ;; 1) rc=1 ;; esac
	st=$(cat "$T/$name.sys/syslog" 2>/dev/null | wc -l)
	if [ "$st" -lt 4 ]; then
		echo "$st syslog messages" >>"$T/$name.err"
		rc=1
	fi
	# "<28>Dec  8 10:00:00 gpuctx[PID]: TEXT" -> "gpuctx agent: TEXT", a datagram's newline kept
	python3 - "$T/$name.sys/syslog" >"$T/$name.lines" <<'PY'
import re, sys
for h in open(sys.argv[1]):
    m = bytes.fromhex(h.strip())
    m = re.sub(rb"^<\d+>.{15} gpuctx\[\d+\]: ", b"gpuctx agent: ", m, flags=re.S)
    sys.stdout.buffer.write(m + b"\n")
PY
	agent_hostile_check $name "$T/$name.lines" "$T/$name.agent.err" || rc=1
	result $name $rc
}

agent_output_tests=(agent_hostile_output agent_hostile_syslog)
