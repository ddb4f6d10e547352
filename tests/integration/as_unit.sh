#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# as_unit.sh UNIT RWDIR... -- CMD...: run CMD (as root) under the sandbox a systemd unit file
# asks for, as far as a machine without a running systemd can: a test fixture (the agent's
# unit, tests/integration/agent.sh t_agent_sandboxed), never how gpuctx is shipped.
#   CapabilityBoundingSet=  the bounding set; no inheritable or ambient capabilities, so root
#                           keeps only these (setpriv)
#   NoNewPrivileges=yes     no_new_privs (setpriv --nnp)
#   UMask=                  umask
#   ProtectSystem=strict    in a mount namespace of its own, the whole tree read-only but the
#                           RWDIRs (what StateDirectory=, RuntimeDirectory= and ReadWritePaths=
#                           make writable), so ProtectHome=read-only as well
#   ProtectKernelTunables=, ProtectControlGroups=   /proc/sys, /sys and its mounts read-only
# Anything else the unit asks (seccomp filters, address families, device policy) is not
# emulated: systemd-analyze verify and security check those lines (agent_unit).
set -euo pipefail

unit=$1
shift
rw=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	rw+=("$1")
	shift
done
[ $# -gt 1 ] || { echo "usage: as_unit.sh UNIT RWDIR... -- CMD..." >&2; exit 2; }
shift

key() { sed -n "s/^$1=//p" "$unit" | tail -1; }
caps=$(key CapabilityBoundingSet | tr '[:upper:]' '[:lower:]' | sed 's/cap_//g; s/ \+/,+/g')
[ "$(key ProtectSystem)" = strict ] || { echo "as_unit.sh: the unit lacks ProtectSystem=strict" >&2; exit 2; }
[ "$(key NoNewPrivileges)" = yes ] || { echo "as_unit.sh: the unit lacks NoNewPrivileges=yes" >&2; exit 2; }
[ -n "$caps" ] || { echo "as_unit.sh: the unit has no CapabilityBoundingSet=" >&2; exit 2; }
umask "$(key UMask)"

# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare -m --propagation private bash -c '
set -e
n=$1
shift
for d in "${@:2:$n}"; do mount --bind "$d" "$d"; done
mount -o remount,bind,ro /
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
for m in $(findmnt -rn -o TARGET -R /sys); do mount -o remount,bind,ro "$m"; done
caps=$1
shift $((n + 1))
# a session of its own, as a service has: a signal to another user'"'"'s process needs CAP_KILL
# (SIGCONT would pass within one session); not a group leader, so setsid keeps this pid
exec setsid setpriv --nnp --inh-caps=-all --ambient-caps=-all --bounding-set="-all,+$caps" -- "$@"
' as_unit "${#rw[@]}" "$caps" "${rw[@]}" "$@"
