# SPDX-License-Identifier: GPL-2.0
# Sourced by the test scripts after setting top: the test doubles (build/doubles) copied into a
# directory of their own, /tmp/gpuctx-libs.XXXXXX, root's, 0755, files 0644, whatever the
# checkout's path, owner and mode (issue 26). gpuctx runs a library's cuGetProcAddress, in an
# unprivileged child, only when root alone could have written it and every directory above it
# (user/collect/libfile.c): a checkout in a user's home or a group-writable one is not that, and
# under a 0700 directory the child could not reach it (issue 33). Sets DOUBLES; the caller's
# cleanup removes it.
DOUBLES=$(mktemp -d /tmp/gpuctx-libs.XXXXXX)
chmod 755 "$DOUBLES"
for lib in "$top"/build/doubles/*.so*; do
	[ -f "$lib" ] && install -m 0644 "$lib" "$DOUBLES/"
done
