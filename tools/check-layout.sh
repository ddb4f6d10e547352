#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A lower stage of user/ never includes a higher one (docs/architecture.md): each folder may
# include only the folders before it in this order.
set -eu
cd "$(dirname "$0")/.."
order="lib trace decode model output collect cli"
rank() { i=0; for s in $order; do [ "$s" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; echo 99; }
bad=0
for f in user/*/*.[ch]; do
	from=$(basename "$(dirname "$f")")
	rf=$(rank "$from")
	for inc in $(sed -n 's|^#include "\([a-z]*\)/.*"|\1|p' "$f"); do
		ri=$(rank "$inc")
		if [ "$ri" -gt "$rf" ]; then
			echo "layout: $f includes $inc/ (a later stage than $from/)" >&2
			bad=1
		fi
	done
done
[ "$bad" = 0 ] && echo "layout: ok"
exit $bad
