// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * wl_fdpass DIR: the parent forks first, then opens nvidiactl, allocates a client and sends
 * the fd (and the client handle) to the child over a socketpair with SCM_RIGHTS. The child,
 * which neither opened nor inherited the file, issues an RM_CONTROL on it: accepted, since
 * it is the same open file.
 */
#include <sys/socket.h>

#include "gpu_uapi.h"

static void send_fd(int sock, int fd, __u32 client)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = &client, .iov_len = sizeof(client)};
	struct msghdr msg = {
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = cbuf,
	    .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(sock, &msg, 0) != sizeof(client))
		wl_fail("sendmsg: %s", strerror(errno));
	wl_say("parent: sent nvidiactl fd %d and client 0x%x over SCM_RIGHTS", fd, client);
}

static int recv_fd(int sock, __u32 *client)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = client, .iov_len = sizeof(*client)};
	struct msghdr msg = {
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = cbuf,
	    .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	ssize_t n;
	int fd;

	do {
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n != sizeof(*client))
		wl_fail("recvmsg: %s", n < 0 ? strerror(errno) : "short message");
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
		wl_fail("recvmsg: no SCM_RIGHTS fd received");
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static __attribute__((noreturn)) void child(int sock)
{
	__u32 client = 0;
	int fd = recv_fd(sock, &client);

	wl_say("child: received fd %d (client 0x%x)", fd, client);
	nv_expect_ok(nv_rm_control(fd, client, client, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2),
		     "child RM_CONTROL on received fd");
	close(fd);
	wl_say("child: exiting 0");
	exit(0);
}

int main(int argc, char **argv)
{
	const char *dir = wl_dir_arg(argc, argv);
	__u32 client;
	int sv[2], fd;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		wl_fail("socketpair: %s", strerror(errno));
	pid = wl_fork();
	if (!pid) {
		close(sv[0]);
		child(sv[1]);
	}
	close(sv[1]);
	wl_say("parent: forked child %d before opening any GPU file", (int)pid);
	fd = wl_open(dir, "nvidiactl", O_RDWR | O_CLOEXEC);
	nv_check_version(fd);
	client = nv_alloc_client(fd);
	send_fd(sv[0], fd, client);
	wl_wait_ok(pid, "child");
	nv_expect_ok(nv_rm_free(fd, client, 0, client), "RM_FREE client");
	close(fd);
	close(sv[0]);
	wl_say("parent: done");
	return 0;
}
