#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# nv_fetch.sh DIR: put the real NVIDIA user-mode driver (Debian 12's libcuda1, non-free) under
# DIR/root (dpkg-deb -x) and print the directory that holds libcuda.so.1. apt runs with a
# private configuration, state and cache under DIR: the machine's apt sources, lists and
# caches are not read or changed. A copy fetched before is used again. Exits 77 with the reason
# on stderr when the package cannot be had (no network, no apt): the caller skips.
set -u
dir=$1
# The driver this project's facts were measured with (gpu-facts §1.9); another 535 build is
# taken when the archive no longer has it (the test reads the version from the file name).
want=${NV_LIBCUDA_VERSION:-535.261.03-1}
lib=usr/lib/x86_64-linux-gnu/nvidia/current
skip() {
	echo "nv_fetch: cannot get libcuda1: $*" >&2
	exit 77
}

if ls "$dir"/root/$lib/libcuda.so.5* >/dev/null 2>&1; then
	echo "$dir/root/$lib"
	exit 0
fi
command -v apt-get >/dev/null || skip "no apt-get"
command -v dpkg-deb >/dev/null || skip "no dpkg-deb"
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] || skip "not an amd64 Debian system"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r $keyring ] || skip "no $keyring"
mkdir -p "$dir"/apt/etc/sources.list.d "$dir"/apt/etc/preferences.d "$dir"/apt/state/lists/partial \
	"$dir"/apt/cache/archives/partial "$dir"/deb || skip "cannot create $dir"
src="deb [signed-by=$keyring] http://deb.debian.org/debian"
{
	echo "$src bookworm main non-free"
	echo "$src bookworm-updates main non-free"
} >"$dir"/apt/etc/sources.list
a=$(cd "$dir"/apt && pwd)
opts=(-o "Dir::Etc=$a/etc" -o "Dir::Etc::sourcelist=$a/etc/sources.list"
	-o "Dir::Etc::sourceparts=$a/etc/sources.list.d" -o "Dir::Etc::preferencesparts=$a/etc/preferences.d"
	-o "Dir::State=$a/state" -o "Dir::Cache=$a/cache" -o "Debug::NoLocking=1"
	-o "APT::Sandbox::User=root" -o "Acquire::Retries=2" -o "Acquire::http::Timeout=30")
apt-get "${opts[@]}" -qq update >"$dir"/apt/update.log 2>&1 ||
	skip "apt-get update failed: $(tail -1 "$dir"/apt/update.log)"
# apt-get update exits 0 when it could not reach the archive: say why before the download fails
warn=$(grep -m1 -E "^(W|E): (Failed to fetch|Some index files failed)" "$dir"/apt/update.log)
(cd "$dir"/deb && apt-get "${opts[@]}" -qq download "libcuda1=$want" >/dev/null 2>&1 ||
	apt-get "${opts[@]}" -qq download libcuda1 >"$dir"/apt/download.log 2>&1) ||
	skip "apt-get download libcuda1 failed: $(tail -1 "$dir"/apt/download.log)${warn:+ ($warn)}"
deb=$(ls "$dir"/deb/libcuda1_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || skip "no libcuda1 package downloaded"
dpkg-deb -x "$deb" "$dir"/root || skip "dpkg-deb -x $deb failed"
ls "$dir"/root/$lib/libcuda.so.5* >/dev/null 2>&1 || skip "$deb has no $lib/libcuda.so.5*"
echo "$dir/root/$lib"
