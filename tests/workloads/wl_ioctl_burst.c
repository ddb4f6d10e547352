// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_ioctl_burst FILE N: N ioctls _IO('F', 0) on FILE (a regular file registered with
 * --device FILE:nvidiactl: ENOTTY), in bursts of 4096 a millisecond apart. 300,000 of them are
 * 33 MB of ring-buffer records: the 8 MiB ring wraps about four times.
 */
#include <time.h>

#include "gpu_uapi.h"

int main(int argc, char **argv)
{
	long i, n, enotty = 0;
	int fd;

	if (argc != 3 || (n = atol(argv[2])) <= 0)
		wl_fail("usage: wl_ioctl_burst FILE N");
	fd = open(argv[1], O_RDWR);
	if (fd < 0)
		wl_fail("open %s: %s", argv[1], strerror(errno));
	for (i = 0; i < n; i++) {
		if (wl_ioctl(fd, _IO('F', 0), 0) < 0 && errno == ENOTTY)
			enotty++;
		if ((i & 4095) == 4095)
			nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	wl_say("%ld ioctls, %ld ENOTTY", n, enotty);
	return enotty == n ? 0 : 1;
}
