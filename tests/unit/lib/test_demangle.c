// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the frame-name demangler: C++ names demangled, hostile names bounded. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include <linux/types.h>
#include "gpuctx_events.h"
#include "lib/demangle.h"

/* Methods, namespaces and templates read as the source writes them. */
static void test_demangled(void **state)
{
	char out[GCTX_SFN_LEN];

	(void)state;
	assert_int_equal(gctx_demangle("_ZN2wl3Gpu5setupEPKc", 64, out, sizeof(out)), 1);
	assert_string_equal(out, "wl::Gpu::setup(char const*)");
	assert_int_equal(gctx_demangle("_ZNK2ns1C1mEi", 64, out, sizeof(out)), 1);
	assert_string_equal(out, "ns::C::m(int) const");
	assert_int_equal(gctx_demangle("_Z3fooIiEvT_", 64, out, sizeof(out)), 1);
	assert_string_equal(out, "void foo<int>(int)");
	/* a compiler's clone of a function (hot/cold split) */
	assert_int_equal(gctx_demangle("_Z4workv.cold", 64, out, sizeof(out)), 1);
	assert_string_equal(out, "work() [clone .cold]");
}

/* C names, other languages and malformed names are kept as they are. */
static void test_kept(void **state)
{
	char out[GCTX_SFN_LEN];

	(void)state;
	assert_int_equal(gctx_demangle("ioctl", 5, out, sizeof(out)), 0);
	assert_string_equal(out, "ioctl");
	assert_int_equal(gctx_demangle("_Zzz!", 5, out, sizeof(out)), 0);
	assert_string_equal(out, "_Zzz!");
	assert_int_equal(gctx_demangle("Z3foov", 6, out, sizeof(out)), 0);
	assert_string_equal(out, "Z3foov");
	/* not terminated: only len bytes are read */
	assert_int_equal(gctx_demangle("_Z3foovXXXX", 7, out, sizeof(out)), 1);
	assert_string_equal(out, "foo()");
	assert_int_equal(gctx_demangle("", 0, out, sizeof(out)), 0);
	assert_string_equal(out, "");
}

/* Too long to fit: the parameter list goes first, then the front of the qualified name
 * behind a marker, never the innermost name. */
static void test_fit(void **state)
{
	char out[GCTX_SFN_LEN], mangled[512], want[512];
	size_t o = 0;

	(void)state;
	/* ns::Class::method(std::basic_string<...> const&, std::map<...>&, ...) > 95 bytes */
	assert_int_equal(gctx_demangle("_ZN2ns5Class6methodERKNSt7__cxx1112basic_stringIcSt11char_"
				       "traitsIcESaIcEEERSt6vectorIiSaIiEEPKc",
				       200, out, sizeof(out)),
			 1);
	assert_string_equal(out, "ns::Class::method");
	/* qualifiers after the list go with it; operator() keeps its own parentheses */
	assert_int_equal(gctx_demangle("_ZNK2ns5ClassclERKNSt7__cxx1112basic_stringIcSt11char_tr"
				       "aitsIcESaIcEEERSt6vectorIiSaIiEEPKc",
				       200, out, sizeof(out)),
			 1);
	assert_string_equal(out, "ns::Class::operator()");
	/* forty nested namespaces n0::n1::...::n39::f(): the tail stays, the cut is marked */
	o += snprintf(mangled + o, sizeof(mangled) - o, "_ZN");
	for (int i = 0; i < 40; i++)
		o += snprintf(mangled + o, sizeof(mangled) - o, "%d%s%d", i < 10 ? 2 : 3, "n", i);
	snprintf(mangled + o, sizeof(mangled) - o, "1fEv");
	assert_int_equal(gctx_demangle(mangled, sizeof(mangled), out, sizeof(out)), 1);
	assert_int_equal(strlen(out), sizeof(out) - 1);
	assert_memory_equal(out, GCTX_NAME_CUT, strlen(GCTX_NAME_CUT));
	snprintf(want, sizeof(want), "::n38::n39::f");
	assert_string_equal(out + strlen(out) - strlen(want), want);
	/* a long C name is cut the same way */
	memset(want, 'a', 200);
	want[199] = 'z';
	assert_int_equal(gctx_demangle(want, 200, out, sizeof(out)), 0);
	assert_memory_equal(out, GCTX_NAME_CUT, strlen(GCTX_NAME_CUT));
	assert_int_equal(out[sizeof(out) - 2], 'z');
}

/* Over the input cap the demangler is not called: the name is kept (cut). */
static void test_cap(void **state)
{
	char out[GCTX_SFN_LEN], big[GCTX_DEMANGLE_MAX_IN + 8];
	size_t o = 0;

	(void)state;
	o += snprintf(big, sizeof(big), "_Z");
	while (o + 4 < sizeof(big))
		o += snprintf(big + o, sizeof(big) - o, "%s", "PPPP");
	snprintf(big + o, sizeof(big) - o, "v");
	assert_true(strlen(big) > GCTX_DEMANGLE_MAX_IN);
	assert_int_equal(gctx_demangle(big, sizeof(big), out, sizeof(out)), 0);
	assert_memory_equal(out, GCTX_NAME_CUT, strlen(GCTX_NAME_CUT));
	/* deep nesting under the cap: an answer or the name, never a crash */
	memset(big, 0, sizeof(big));
	memcpy(big, "_Z1f", 4);
	for (o = 4; o < GCTX_DEMANGLE_MAX_IN - 1; o++)
		big[o] = 'P';
	big[o] = 'v';
	gctx_demangle(big, sizeof(big), out, sizeof(out));
	assert_true(strlen(out) < sizeof(out));
}

/* The n-th substitution reference: S_, S0_, S1_, ... S9_, SA_, ... */
static int seq_id(char *out, int i)
{
	static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	char tmp[8];
	int n = 0, o = 0;

	if (!i)
		return sprintf(out, "S_");
	for (i--; n == 0 || i; i /= 36)
		tmp[n++] = digits[i % 36];
	out[o++] = 'S';
	while (n)
		out[o++] = tmp[--n];
	out[o++] = '_';
	return o;
}

/* issue 27: a name whose demangling doubles with each 11 bytes (b<X,X> of the one before,
 * through substitutions): these 596 bytes took __cxa_demangle 10 s and 1.3 GB. It is
 * kept mangled within the budget, gpuctx's own memory does not grow, and the next name is
 * demangled again (by a new helper). */
static void test_budget(void **state)
{
	char name[GCTX_DEMANGLE_MAX_IN], out[GCTX_SFN_LEN];
	struct timespec a, b;
	struct rusage ru;
	int o, last = 2;
	double dt;

	(void)state;
	o = sprintf(name, "_Z1fI1bI1aS_E");
	for (int i = 0; i < 50; i++, last++) {
		o += seq_id(name + o, 1);
		name[o++] = 'I';
		o += seq_id(name + o, last);
		o += seq_id(name + o, last);
		name[o++] = 'E';
	}
	o += sprintf(name + o, "Evv");
	assert_true(o < 620);
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(gctx_demangle(name, o, out, sizeof(out)), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	dt = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	assert_true(dt < 2.0);
	assert_memory_equal(out, GCTX_NAME_CUT, strlen(GCTX_NAME_CUT));
	assert_string_equal(out + strlen(out) - 3, "Evv");
	assert_true(gctx_demangle_refused() >= 1);
	getrusage(RUSAGE_SELF, &ru);
	assert_true(ru.ru_maxrss < 200 * 1024); /* KiB */
	assert_int_equal(gctx_demangle("_ZN2wl3Gpu5setupEPKc", 64, out, sizeof(out)), 1);
	assert_string_equal(out, "wl::Gpu::setup(char const*)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_demangled), cmocka_unit_test(test_kept),
	    cmocka_unit_test(test_fit),	      cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
