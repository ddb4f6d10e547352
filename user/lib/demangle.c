// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Display names of native functions (interface in demangle.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/demangle.h"
#include "lib/sandbox.h"
#include "lib/str.h"

/* libstdc++'s demangler (cxxabi.h is C++ only); it allocates the result with malloc */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Length of d without its trailing parameter list: "ns::C::m(int) const" -> "ns::C::m".
 * The list is the last balanced "(...)"; only qualifiers and "[clone .x]" may follow it. */
static size_t strip_params(const char *d, size_t n)
{
	size_t close = n, depth = 0;

	while (close > 0 && d[close - 1] != ')') {
		if (strchr("(<>", d[close - 1]))
			return n;
		close--;
	}
	if (!close)
		return n;
	for (size_t i = close; i-- > 0;) {
		if (d[i] == ')')
			depth++;
		else if (d[i] == '(' && --depth == 0)
			return i ? i : n;
	}
	return n;
}

/* Copy n bytes of s, keeping the tail behind GCTX_NAME_CUT when they do not fit. */
static void fit_tail(char *out, size_t outlen, const char *s, size_t n)
{
	size_t mark = strlen(GCTX_NAME_CUT);

	if (n < outlen || outlen <= mark + 1) {
		gctx_copy_str(out, outlen, s, n);
		return;
	}
	memcpy(out, GCTX_NAME_CUT, mark);
	memcpy(out + mark, s + n - (outlen - 1 - mark), outlen - 1 - mark);
	out[outlen - 1] = 0;
}

/* The demangling itself, in the helper: the display name of the terminated name in (n bytes)
 * into out. 1 if demangled, 0 if kept. */
static int demangle_here(const char *in, size_t n, char *out, size_t outlen)
{
	int status = -1;
	char *d = __cxa_demangle(in, NULL, NULL, &status);

	if (!d || status) {
		free(d);
		fit_tail(out, outlen, in, n);
		return 0;
	}
	n = strlen(d);
	if (n >= outlen)
		n = strip_params(d, n);
	fit_tail(out, outlen, d, n);
	free(d);
	return 1;
}

/*
 * A crafted name makes __cxa_demangle take time and memory exponential in its length (536
 * bytes: 27 s and 890 MB), and it cannot be interrupted: it runs in a sandboxed helper
 * process (lib/sandbox.h) with a memory limit, and each name gets GCTX_DEMANGLE_BUDGET_MS.
 * A name over budget is kept mangled and the helper is killed (a new one for the next name).
 */
struct dm_req {
	__u32 outlen;
	char name[GCTX_DEMANGLE_MAX_IN];
};

struct dm_rep {
	__u32 demangled;
	char out[GCTX_DEMANGLE_MAX_OUT];
};

static void helper_main(int fd)
{
	static struct dm_req q;
	static struct dm_rep r;
	char in[GCTX_DEMANGLE_MAX_IN + 1];

	for (;;) {
		ssize_t n = gctx_sandbox_recv(fd, &q, sizeof(q), NULL, ~0ull);
		size_t len;

		if (n < 0)
			_exit(0);
		if ((size_t)n < sizeof(q.outlen) || q.outlen < 1 || q.outlen > sizeof(r.out))
			_exit(1);
		len = n - sizeof(q.outlen);
		alarm(2); /* gpuctx gives up after the budget; without gpuctx, end here */
		memcpy(in, q.name, len);
		in[len] = 0;
		r.demangled = demangle_here(in, len, r.out, q.outlen);
		if (gctx_sandbox_send(fd, &r, sizeof(r.demangled) + strlen(r.out) + 1, NULL, 0, -1,
				      ~0ull))
			_exit(1);
		alarm(0);
	}
}

static struct {
	pthread_mutex_t lock;
	struct gctx_sandbox sb;
	unsigned long refused;
} dm = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const struct gctx_sandbox_opts dm_opts = {
    .mem_bytes = 256ul << 20,
    .cpu_s = 60,
    .nofile = 16,
};

/* The helper's answer for name (n bytes, "_Z..."), or -1 past the budget (or no helper). */
static int demangle_budgeted(const char *name, size_t n, char *out, size_t outlen)
{
	static struct dm_req q;
	static struct dm_rep r;
	__u64 deadline = gctx_sandbox_now_ms() + GCTX_DEMANGLE_BUDGET_MS;
	ssize_t got;
	int ret = -1;

	pthread_mutex_lock(&dm.lock);
	if (dm.sb.pid <= 0 && gctx_sandbox__start(&dm.sb, &dm_opts, helper_main))
		goto out;
	q.outlen = outlen < sizeof(r.out) ? outlen : sizeof(r.out);
	memcpy(q.name, name, n);
	if (gctx_sandbox_send(dm.sb.fd, &q, sizeof(q.outlen) + n, NULL, 0, -1, deadline))
		goto fail;
	got = gctx_sandbox_recv(dm.sb.fd, &r, sizeof(r), NULL, deadline);
	if (got <= (ssize_t)sizeof(r.demangled) || r.out[got - sizeof(r.demangled) - 1])
		goto fail;
	gctx_copy_str(out, outlen, r.out, strlen(r.out));
	ret = r.demangled ? 1 : 0;
	goto out;
fail:
	gctx_sandbox__stop(&dm.sb);
out:
	if (ret < 0)
		dm.refused++;
	pthread_mutex_unlock(&dm.lock);
	return ret;
}

unsigned long gctx_demangle_refused(void)
{
	unsigned long n;

	pthread_mutex_lock(&dm.lock);
	n = dm.refused;
	pthread_mutex_unlock(&dm.lock);
	return n;
}

void gctx_demangle_stop(void)
{
	pthread_mutex_lock(&dm.lock);
	gctx_sandbox__stop(&dm.sb);
	pthread_mutex_unlock(&dm.lock);
}

int gctx_demangle(const char *name, size_t len, char *out, size_t outlen)
{
	size_t n = strnlen(name, len);
	int ret;

	if (n < 2 || n > GCTX_DEMANGLE_MAX_IN || name[0] != '_' || name[1] != 'Z') {
		fit_tail(out, outlen, name, n);
		return 0;
	}
	ret = demangle_budgeted(name, n, out, outlen);
	if (ret < 0)
		fit_tail(out, outlen, name, n);
	return ret > 0;
}
