// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Display names of native functions (interface in demangle.h). */
#include <stdlib.h>
#include <string.h>

#include "lib/demangle.h"
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

int gctx_demangle(const char *name, size_t len, char *out, size_t outlen)
{
	char in[GCTX_DEMANGLE_MAX_IN + 1], *d;
	size_t n = strnlen(name, len);
	int status = -1;

	if (n < 2 || n > GCTX_DEMANGLE_MAX_IN || name[0] != '_' || name[1] != 'Z') {
		fit_tail(out, outlen, name, n);
		return 0;
	}
	memcpy(in, name, n);
	in[n] = 0;
	d = __cxa_demangle(in, NULL, NULL, &status);
	if (!d || status) {
		free(d);
		fit_tail(out, outlen, name, n);
		return 0;
	}
	n = strlen(d);
	if (n >= outlen)
		n = strip_params(d, n);
	fit_tail(out, outlen, d, n);
	free(d);
	return 1;
}
