#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Installing gpuctx (issue 31), as an admin would:
#   install     make install into an empty DESTDIR; the installed binary, run from elsewhere
#               with the source tree hidden (a private mount namespace), records `true`, reads
#               the trace back, checks a command; man finds the installed pages; make
#               uninstall leaves nothing behind
#   man         each man page's OPTIONS against its subcommand's --help (check_man.py)
#   completion  the bash completion function, given COMP_WORDS, offers what it should
#   deb         make deb; the package's control file, dependencies, files, man pages; the
#               packaged binary runs; lintian's errors and warnings, when lintian is installed
#   readme      the README's commands name real options, its first check runs, its demo screen
#               is what make demo prints (check_readme.py)
# Needs root (recording loads BPF programs). Nothing outside a temporary directory is changed:
# the package is inspected, not installed (docs/install.md says how it was installed by hand).
# Usage: tests/install/run.sh [TEST...]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
HERE=$top/tests/install
VERSION=$(sed -n 's/^VERSION := //p' Makefile)

if [ "$(id -u)" != 0 ]; then
	echo "install: FAIL: these tests record with the installed binary and need root" >&2
	exit 1
fi
T=$(mktemp -d /tmp/gpuctx-install.XXXXXX)
trap 'rm -rf "$T"' EXIT

pass=0
fail=0
failed=()
result() { # NAME RC: the log of a failed test is $T/NAME.log
	if [ "$2" = 0 ]; then
		pass=$((pass + 1))
		echo "ok   $1"
	else
		fail=$((fail + 1))
		failed+=("$1")
		echo "FAIL $1"
		sed 's/^/     | /' "$T/$1.log" | tail -25
	fi
}
# expect WHAT CONDITION...: fail the running test with WHAT unless CONDITION holds
expect() {
	local what=$1
	shift
	"$@" && return 0
	echo "expected: $what" >&2
	return 1
}

t_install() {
	local d=$T/root p=/opt/gpuctx-test f
	make --no-print-directory install DESTDIR="$d" PREFIX=$p || return 1
	# exactly the binary, the man pages, the completion (and systemd units, where present)
	(cd "$d" && find . -type f | sort) >"$T/files"
	{
		echo ./opt/gpuctx-test/bin/gpuctx
		echo ./opt/gpuctx-test/share/bash-completion/completions/gpuctx
		for f in man/*.8; do echo "./opt/gpuctx-test/share/man/man8/${f#man/}"; done
		for f in systemd/*.service tools/*.service; do
			[ -e "$f" ] && echo "./opt/gpuctx-test/lib/systemd/system/${f##*/}"
		done
		# the Slurm plugin, when built: into Slurm's own plugin directory (docs/cluster.md)
		[ -e build/gpuctx_spank.so ] &&
			echo "./usr/lib/$(${CC:-cc} -print-multiarch)/slurm-wlm/gpuctx_spank.so"
	} | sort >"$T/want"
	diff -u "$T/want" "$T/files" || return 1
	expect "the binary is executable" test -x "$d$p/bin/gpuctx" || return 1

	# the installed binary alone: source tree and build tree hidden, run from another directory
	mkdir -p "$T/job"
	unshare -m bash -c '
		set -e
		mount -t tmpfs none "$1"
		cd "$2"
		export PATH=$3:/usr/bin:/bin
		gpuctx --help | grep -q "^  record"
		gpuctx version | grep -q "^gpuctx $4 "
		gpuctx record -q -o t.gctx -- true
		gpuctx report t.gctx >report.txt
		grep -q "^Verdict: NO PROBLEM FOUND" report.txt
		gpuctx report --json t.gctx | python3 -c "import json,sys; json.load(sys.stdin)"
		gpuctx check -- true
		rc=0; gpuctx check -- sh -c "exit 3" 2>/dev/null || rc=$?
		[ $rc = 3 ] || { echo "check -- sh -c \"exit 3\" exited $rc, not 3" >&2; exit 1; }
		gpuctx export -q -o t.json t.gctx
		python3 -c "import json,sys; json.load(open(\"t.json\"))"
		[ ! -e "$1/Makefile" ] || { echo "the source tree was not hidden" >&2; exit 1; }
	' sh "$top" "$T/job" "$d$p/bin" "$VERSION" || return 1

	# man finds the installed pages, and they render without a warning
	for f in "$d$p"/share/man/man8/*.8; do
		local n=${f##*/}
		MANWIDTH=80 man -M "$d$p/share/man" "${n%.8}" >"$T/man.txt" 2>"$T/man.err" || return 1
		expect "man ${n%.8} shows its NAME" grep -q "^NAME" "$T/man.txt" || return 1
		man --warnings -l "$f" 2>&1 >/dev/null | tee "$T/man.warn"
		expect "no groff warnings in $n" test ! -s "$T/man.warn" || return 1
	done

	make --no-print-directory uninstall DESTDIR="$d" PREFIX=$p || return 1
	find "$d" -type f >"$T/left"
	expect "make uninstall removes every installed file" test ! -s "$T/left" || { cat "$T/left"; return 1; }
}

t_man() {
	python3 "$HERE/check_man.py" "$top/build/gpuctx" "$top/man"
}

t_completion() {
	bash "$HERE/completion.sh" "$top/completion/gpuctx.bash" "$top/build"
}

t_deb() {
	local deb=build/gpuctx_${VERSION}_$(dpkg --print-architecture).deb x=$T/deb f
	make --no-print-directory deb || return 1
	dpkg-deb -I "$deb" >"$T/info" || return 1
	cat "$T/info"
	grep -q "^ Package: gpuctx$" "$T/info" &&
		grep -q "^ Version: $VERSION$" "$T/info" || { echo "expected: package gpuctx $VERSION" >&2; return 1; }
	# the libraries the binary links, as dpkg-shlibdeps found them (zlib1g comes through
	# libelf1 and libbpf1: gpuctx calls no zlib function itself)
	sed -n 's/^ Depends: //p' "$T/info" | tr ',' '\n' | awk '{ print $1 }' >"$T/depends"
	for p in libbpf1 libelf1 libdw1 libstdc++6 libc6; do
		expect "Depends on $p" grep -qxF "$p" "$T/depends" || return 1
	done
	dpkg-deb -c "$deb" | awk '{ print $6 }' | sort >"$T/debfiles"
	for f in ./usr/bin/gpuctx ./usr/share/bash-completion/completions/gpuctx \
		./usr/share/doc/gpuctx/copyright ./usr/share/doc/gpuctx/changelog.gz \
		$(for m in man/*.8; do echo "./usr/share/man/man8/${m#man/}.gz"; done); do
		expect "$f in the package" grep -qx "$f" "$T/debfiles" || return 1
	done
	dpkg-deb -x "$deb" "$x" || return 1
	(cd / && "$x/usr/bin/gpuctx" --help | grep -q "^  check") || return 1
	(cd "$T" && "$x/usr/bin/gpuctx" record -q -o deb.gctx -- true &&
		"$x/usr/bin/gpuctx" check deb.gctx) || return 1
	expect "a stripped binary" sh -c "! readelf -S '$x/usr/bin/gpuctx' | grep -q '\.symtab'" ||
		return 1
	MANWIDTH=80 man -l "$x/usr/share/man/man8/gpuctx-check.8.gz" | grep -q "gpuctx-check" || return 1
	if command -v lintian >/dev/null; then
		lintian --allow-root "$deb" >"$T/lintian" 2>&1
		cat "$T/lintian"
		expect "no lintian error or warning" sh -c "! grep -E '^(E|W):' '$T/lintian'" || return 1
	else
		echo "lintian not installed: not run (apt-get install lintian to check the package)"
	fi
}

t_readme() {
	python3 "$HERE/check_readme.py" "$top/README.md" "$top"
}

all="install man completion deb readme"
for t in ${@:-$all}; do
	declare -F "t_$t" >/dev/null || { echo "install: no test $t (tests: $all)" >&2; exit 2; }
	"t_$t" >"$T/$t.log" 2>&1
	result "$t" $?
done
echo "install: $pass passed, $fail failed${failed:+: ${failed[*]}}"
[ "$fail" = 0 ]
