#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A lower stage of user/ never includes a higher one (docs/architecture.md): each folder may
# include only the folders before it in this order (output/report/ and output/timeline/ are
# one stage, output/).
set -eu
cd "$(dirname "$0")/.."
order="lib trace decode model output collect cli"
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
[ "$bad" = 0 ] && echo "layout: ok"
exit $bad
