// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_nongpu [DIR]: ioctls on files that are not GPUs, which the tracer must ignore:
 * FIONREAD 1000 times on /dev/null (not supported there: ENOTTY) and on a pipe, and TCGETS
 * on /dev/null (ENOTTY). Opens nothing under DIR.
 */
#include <termios.h>

#include "gpu_uapi.h"

#define ROUNDS 1000

static void fionread_devnull(int fd)
{
	int i, n, ok = 0, enotty = 0;

	for (i = 0; i < ROUNDS; i++) {
		if (wl_ioctl(fd, FIONREAD, &n) == 0)
			ok++;
		else if (errno == ENOTTY)
			enotty++;
		else
			wl_fail("FIONREAD on /dev/null: %s", strerror(errno));
	}
	wl_say("FIONREAD x%d on /dev/null: %d ok, %d ENOTTY", ROUNDS, ok, enotty);
}

static void fionread_pipe(int rfd)
{
	int i, n;

	for (i = 0; i < ROUNDS; i++) {
		if (wl_ioctl(rfd, FIONREAD, &n) < 0)
			wl_fail("FIONREAD on pipe: %s", strerror(errno));
		if (n != 5)
			wl_fail("FIONREAD on pipe: %d bytes, expected 5", n);
	}
	wl_say("FIONREAD x%d on a pipe: 5 bytes each time", ROUNDS);
}

int main(int argc, char **argv)
{
	struct termios t;
	int null_fd, p[2];

	(void)argc;
	(void)argv;
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0)
		wl_fail("open /dev/null: %s", strerror(errno));
	if (pipe(p) < 0 || write(p[1], "hello", 5) != 5)
		wl_fail("pipe: %s", strerror(errno));
	fionread_devnull(null_fd);
	fionread_pipe(p[0]);
	if (wl_ioctl(null_fd, TCGETS, &t) == 0 || errno != ENOTTY)
		wl_fail("TCGETS on /dev/null: expected ENOTTY");
	wl_say("TCGETS on /dev/null -> ENOTTY");
	close(p[0]);
	close(p[1]);
	close(null_fd);
	wl_say("done");
	return 0;
}
