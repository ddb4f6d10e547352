/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Throwaway helper processes for work on hostile input whose failure must not take gpuctx
 * down: parsing the ELF/DWARF of a traced user's libraries (a truncated file is a SIGBUS, a
 * crafted one a crash or a loop) and demangling the names in them (exponential time and
 * memory). The helper is forked, then gives up everything before it reads any input: no file
 * but its socket, nobody's uid when started as root, no capabilities, no_new_privs, a
 * seccomp allowlist (everything else fails with EPERM: no exec, no network, no writes to
 * files, no signals to others), resource limits, and it ends at EOF on its socket. The
 * caller talks to it over a socket with a deadline on every wait, and kills it when one
 * passes: nothing the helper does can block or crash gpuctx.
 */
#ifndef __GPUCTX_SANDBOX_H
#define __GPUCTX_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct gctx_sandbox_opts {
	unsigned long mem_bytes; /* RLIMIT_AS (not under sanitizers, which reserve terabytes) */
	unsigned int cpu_s;	 /* RLIMIT_CPU over the helper's life */
	unsigned int nofile;	 /* RLIMIT_NOFILE */
	bool read_files;	 /* may open files read-only (as nobody): libdw's debug files */
};

struct gctx_sandbox {
	pid_t pid; /* 0: not running */
	int fd;	   /* our end of the socket (SOCK_SEQPACKET) */
};

/* Fork a helper that enters the sandbox and runs fn(fd) on its end of a SOCK_SEQPACKET
 * socket (fn must not return). 0, or -errno. */
int gctx_sandbox__start(struct gctx_sandbox *sb, const struct gctx_sandbox_opts *o,
			void (*fn)(int fd));
/* Kill the helper and reap it (no-op when not running). */
void gctx_sandbox__stop(struct gctx_sandbox *sb);

/* Milliseconds on CLOCK_MONOTONIC, for deadlines. */
__u64 gctx_sandbox_now_ms(void);
/* One message of at most len bytes, with up to one passed fd (*fd, -1 if none; NULL: none
 * accepted), before deadline_ms. Bytes received, or -errno (-ETIMEDOUT, -EPIPE at EOF). */
ssize_t gctx_sandbox_recv(int sock, void *buf, size_t len, int *fd, __u64 deadline_ms);
/* Send one message (iov: a header and a body, body may be NULL), passing fd when >= 0,
 * before deadline_ms. 0 or -errno. */
int gctx_sandbox_send(int sock, const void *hdr, size_t hlen, const void *body, size_t blen, int fd,
		      __u64 deadline_ms);

#endif /* __GPUCTX_SANDBOX_H */
