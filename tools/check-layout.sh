#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A lower stage of user/ never includes a higher one (docs/architecture.md): each folder may
# include only the folders before it in this order (output/report/ and output/timeline/ are
# one stage, output/). include/ (the wire formats) includes nothing from user/. Inside cli/
# (one file per command, and what commands share) and agent/, no two files call each other,
# directly or round a circle: checked on the built objects (.output/user/, after make all).
set -eu
cd "$(dirname "$0")/.."
order="lib trace decode model output collect agent cli"
rank() { i=0; for s in $order; do [ "$s" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; echo 99; }
bad=0
for f in user/*/*.[ch] user/*/*/*.[ch]; do
	[ -e "$f" ] || continue
	from=$(echo "$f" | cut -d/ -f2)
	rf=$(rank "$from")
	for inc in $(sed -n 's|^#include "\([a-z]*\)/.*"|\1|p' "$f"); do
		ri=$(rank "$inc")
		if [ "$ri" -gt "$rf" ]; then
			echo "layout: $f includes $inc/ (a later stage than $from/)" >&2
			bad=1
		fi
	done
	# output/ has two rooms: the report (text, JSON, JUnit, incidents, live lines) and the
	# timeline (its rules and the Perfetto and Chrome sinks), which borrows the report's
	# printing helpers; a report never needs the timeline
	case $f in
	user/output/report/*)
		if grep -q '^#include "output/timeline/' "$f"; then
			echo "layout: $f includes output/timeline/ (a report never needs the timeline)" >&2
			bad=1
		fi
		;;
	user/output/*/*) ;;
	user/output/*)
		echo "layout: $f: output/ files belong in output/report/ or output/timeline/" >&2
		bad=1
		;;
	esac
done
for f in include/*.h; do
	for inc in $(sed -n 's|^#include "\(.*\)".*|\1|p' "$f"); do
		if [ ! -e "include/$inc" ]; then
			echo "layout: $f includes $inc (include/ includes only include/)" >&2
			bad=1
		fi
	done
done
# a file's calls into the other files of its folder, from the objects' symbols; tsort names
# the files of a circle
circles() {
	dir=$1
	set -- .output/user/"$dir"/*.o
	[ -e "$1" ] || { echo "layout: $dir/ not built: its circles not checked" >&2; return 0; }
	tmp=$(mktemp -d)
	for o in "$@"; do
		f=$(basename "$o" .o)
		nm -g --defined-only "$o" | awk -v f="$f" 'NF == 3 { print $3, f }' >>"$tmp/defs"
		nm -u "$o" | awk -v f="$f" '{ print $2, f }' >>"$tmp/uses"
	done
	awk 'NR == FNR { def[$1] = $2; next } ($1 in def) && def[$1] != $2 { print $2, def[$1] }' \
		"$tmp/defs" "$tmp/uses" | sort -u >"$tmp/edges"
	loop=$(tsort "$tmp/edges" 2>&1 >/dev/null | sed -n 's/^tsort: \([a-z_0-9]*\)$/\1/p' |
		sort -u | tr '\n' ' ')
	rm -rf "$tmp"
	if [ -n "$loop" ]; then
		echo "layout: a circle of calls in $dir/ among: $loop" >&2
		bad=1
	fi
}
circles cli
circles agent
[ "$bad" = 0 ] && echo "layout: ok"
exit $bad
