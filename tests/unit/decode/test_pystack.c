// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of Python frame decoding: line tables, strings, splicing, layouts. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "decode/pystack.h"

struct range {
	int start, end, line; /* bytes [start, end), line -1 = None (co_lines()) */
};

/* f() of a small module, compiled by CPython itself: co_linetable and co_lines(). */
/* clang-format off */
static const __u8 lt312[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x80, 0x41, 0xd9, 0x07, 0x08, 0xe4, 0x16, 0x1b, 0x98, 0x41,
	0x93, 0x68, 0xf6, 0x03, 0x01, 0x0d, 0x20, 0xd8, 0x11, 0x12, 0xf2, 0x03, 0x00, 0x0e, 0x0f,
	0xf0, 0x00, 0x01, 0x0d, 0x20, 0x88, 0x01, 0xf0, 0x00, 0x01, 0x0d, 0x20, 0xf0, 0x08, 0x00,
	0x0d, 0x0e, 0xd8, 0x0c, 0x0d, 0xf0, 0x03, 0x01, 0x0c, 0x0f, 0xf0, 0x00, 0x01, 0x05, 0x0f,
	0xf0, 0x03, 0x00, 0x0d, 0x0e, 0x88, 0x01, 0xd8, 0x0c, 0x0d, 0xd8, 0x0c, 0x0d, 0xf0, 0x03,
	0x01, 0x0c, 0x0f, 0xf0, 0x00, 0x01, 0x05, 0x0f, 0xf9, 0xf2, 0x09, 0x01, 0x0d, 0x20,
};
static const struct range lines312[] = {
	{0, 2, 2}, {2, 6, 3}, {6, 10, 4}, {10, 30, 6}, {30, 44, 5}, {44, 46, 6}, {46, 58, 5},
	{58, 60, 9}, {60, 62, 10}, {62, 66, 9}, {66, 70, 8}, {70, 72, 9}, {72, 74, 10},
	{74, 78, 9}, {78, 82, -1}, {82, 88, 5},
};
static const __u8 lt310[] = {
	0x04, 0x01, 0x04, 0x01, 0x06, 0x01, 0x06, 0x01, 0x06, 0xff, 0x02, 0x04, 0x02, 0x01, 0x04,
	0xff, 0x04, 0xff, 0x02, 0x01, 0x02, 0x01, 0x04, 0xff,
};
static const struct range lines310[] = {
	{0, 4, 3}, {4, 8, 4}, {8, 14, 5}, {14, 20, 6}, {20, 26, 5}, {26, 28, 9}, {28, 30, 10},
	{30, 34, 9}, {34, 38, 8}, {38, 40, 9}, {40, 42, 10}, {42, 46, 9},
};
/* clang-format on */

/* Every instruction of a CPython 3.12 function maps to the line co_lines() gives it. */
static void test_line_311(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(lines312) / sizeof(lines312[0]); r++)
		for (int b = lines312[r].start; b < lines312[r].end; b += 2)
			assert_int_equal(gctx_py311_line(lt312, sizeof(lt312), 2, b / 2),
					 lines312[r].line);
	/* past the table, a cut table, garbage, and a frame not started yet */
	assert_int_equal(gctx_py311_line(lt312, sizeof(lt312), 2, 44), -2);
	assert_int_equal(gctx_py311_line(lt312, 20, 2, 40), -2);
	assert_int_equal(gctx_py311_line((const __u8 *)"\x01\x02", 2, 2, 0), -2);
	assert_int_equal(gctx_py311_line(lt312, sizeof(lt312), 7, -1), 7);
}

static void test_line_310(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(lines310) / sizeof(lines310[0]); r++)
		for (int b = lines310[r].start; b < lines310[r].end; b += 2)
			assert_int_equal(gctx_py310_line(lt310, sizeof(lt310), 2, b / 2),
					 lines310[r].line);
	assert_int_equal(gctx_py310_line(lt310, sizeof(lt310), 2, 23), -2);
	/* -128: an instruction with no line */
	assert_int_equal(gctx_py310_line((const __u8 *)"\x04\x80", 2, 5, 1), -1);
}

/* Hand-built 3.11 entries: every entry form, including long varints. */
static void test_line_311_forms(void **state)
{
	/* no-column +2 (2 units), short (1), one-line +1 (3), none (1), long -3 (1),
	 * no-column +200 (varint over two bytes) (1) */
	static const __u8 t[] = {0x80 | 13 << 3 | 1,
				 4,
				 0x80 | 0 << 3 | 0,
				 0x10,
				 0x80 | 11 << 3 | 2,
				 1,
				 2,
				 0x80 | 15 << 3,
				 0x80 | 14 << 3,
				 7,
				 0,
				 1,
				 2,
				 0x80 | 13 << 3,
				 0x40 | (400 & 63),
				 400 >> 6};

	(void)state;
	assert_int_equal(gctx_py311_line(t, sizeof(t), 10, 0), 12);
	assert_int_equal(gctx_py311_line(t, sizeof(t), 10, 1), 12);
	assert_int_equal(gctx_py311_line(t, sizeof(t), 10, 2), 12);
	assert_int_equal(gctx_py311_line(t, sizeof(t), 10, 3), 13);
	assert_int_equal(gctx_py311_line(t, sizeof(t), 10, 5), 13);
	assert_int_equal(gctx_py311_line(t, sizeof(t), 10, 6), -1);
	assert_int_equal(gctx_py311_line(t, sizeof(t), 10, 7), 10);
	assert_int_equal(gctx_py311_line(t, sizeof(t), 10, 8), 210);
	assert_int_equal(gctx_py311_line(t, sizeof(t) - 1, 10, 8), -2); /* varint cut */
}

static void test_str_utf8(void **state)
{
	static const __u8 latin1[] = {'a', 0xe9};
	static const __u8 ucs2[] = {0xac, 0x20, 'x', 0};
	static const __u8 ucs4[] = {0x00, 0xf6, 0x01, 0x00};
	static const __u8 ctl[] = {'a', '\n', 0x1b, 'b'};
	static const __u8 bad4[] = {0x00, 0x00, 0x11, 0x00}; /* > U+10FFFF */
	char out[16];

	(void)state;
	assert_int_equal(gctx_py_str_utf8(latin1, 2, 1, out, sizeof(out)), 3);
	assert_string_equal(out, "a\xc3\xa9");
	gctx_py_str_utf8(ucs2, 4, 2, out, sizeof(out));
	assert_string_equal(out, "\xe2\x82\xacx");
	gctx_py_str_utf8(ucs4, 4, 4, out, sizeof(out));
	assert_string_equal(out, "\xf0\x9f\x98\x80");
	gctx_py_str_utf8(ctl, 4, 1, out, sizeof(out));
	assert_string_equal(out, "a??b");
	gctx_py_str_utf8(bad4, 4, 4, out, sizeof(out));
	assert_string_equal(out, "?");
	assert_int_equal(gctx_py_str_utf8(latin1, 2, 3, out, sizeof(out)), 0); /* bad kind */
	assert_string_equal(out, "");
	/* a character that does not fit whole is left out */
	assert_int_equal(gctx_py_str_utf8(latin1, 2, 1, out, 3), 1);
	assert_string_equal(out, "a");
	assert_int_equal(gctx_py_str_utf8(ucs4, 3, 4, out, sizeof(out)), 0); /* odd length */
}

static void test_frame_resolve(void **state)
{
	struct gctx_py_frame f;
	struct gctx_rec_frame r;

	(void)state;
	memset(&f, 0, sizeof(f));
	memcpy(f.file, "/srv/app/train.py", 17);
	f.file_len = 17;
	f.file_kind = 1;
	memcpy(f.name, "Model.build", 11);
	f.name_len = 11;
	f.name_kind = 1;
	f.firstlineno = 2;
	memcpy(f.lt, lt312, sizeof(lt312));
	f.lt_len = sizeof(lt312);
	f.instr = 3; /* bytes 6..7: line 4 */
	gctx_py_frame_resolve(&f, &r);
	assert_int_equal(r.kind, GCTX_FRAME_PYTHON);
	assert_string_equal(r.file, "/srv/app/train.py");
	assert_string_equal(r.function, "Model.build");
	assert_int_equal(r.line, 4);

	/* a cut file name, an unreadable name, lengths past the buffers, 3.10 mode */
	f.flags = GCTX_PYF_FILE_CUT | GCTX_PYF_LASTI;
	f.name_kind = 0;
	f.name_len = 60000;
	f.lt_len = 60000;
	memcpy(f.lt, lt310, sizeof(lt310));
	memset(f.lt + sizeof(lt310), 0, sizeof(f.lt) - sizeof(lt310));
	f.instr = 4; /* bytes 8..9: line 5 */
	gctx_py_frame_resolve(&f, &r);
	assert_string_equal(r.file, ".../srv/app/train.py");
	assert_string_equal(r.function, "?");
	assert_int_equal(r.line, 5);
}

/* A table longer than the kernel's prefix: 3.11+ entries "one line down, one code unit" (3
 * bytes), or 3.10 pairs (2 bytes, +1 line), so that instruction k is on line first + k + 1. */
#define LONG_ENTRIES 300
static __u8 long_lt[LONG_ENTRIES * 3];

static size_t long_table(bool py310)
{
	size_t n = 0;

	for (int k = 0; k < LONG_ENTRIES; k++) {
		if (py310) {
			long_lt[n++] = 2;
			long_lt[n++] = 1;
		} else {
			long_lt[n++] = 0x80 | 11 << 3;
			long_lt[n++] = 0;
			long_lt[n++] = 1;
		}
	}
	return n;
}

static void cut_frame(struct gctx_py_frame *f, bool py310, int instr)
{
	memset(f, 0, sizeof(*f));
	f->firstlineno = 1000;
	f->instr = instr;
	f->flags = GCTX_PYF_LT_CUT | (py310 ? GCTX_PYF_LASTI : 0);
	f->lt_len = GCTX_PY_LT_LEN;
	memcpy(f->lt, long_lt, GCTX_PY_LT_LEN);
}

/* The line past the prefix comes from the whole table, once it proves to be the same. */
static void test_line_past_prefix(void **state)
{
	struct gctx_py_frame f;
	struct gctx_rec_frame r;

	(void)state;
	for (int py310 = 0; py310 <= 1; py310++) {
		size_t n = long_table(py310);
		int past =
		    py310 ? 250 : 200; /* beyond the 192 pairs or 128 entries of the prefix */

		cut_frame(&f, py310, past);
		gctx_py_frame_resolve(&f, &r);
		assert_int_equal(r.line, 0);
		assert_true(gctx_py_frame_line_cut(&f));
		assert_true(gctx_py_table_extends(&f, long_lt, n));
		assert_int_equal(gctx_py_frame_line(&f, long_lt, n), 1000 + past + 1);
		/* within the prefix: nothing to read */
		cut_frame(&f, py310, 10);
		gctx_py_frame_resolve(&f, &r);
		assert_int_equal(r.line, 1011);
		assert_false(gctx_py_frame_line_cut(&f));
		/* a table not cut is never read further */
		cut_frame(&f, py310, past);
		f.flags &= ~GCTX_PYF_LT_CUT;
		assert_false(gctx_py_frame_line_cut(&f));
		assert_false(gctx_py_table_extends(&f, long_lt, n));
	}
	/* what was read is another table, or no longer than the prefix, or too long; or the
	 * kernel's prefix was not read whole */
	cut_frame(&f, false, 200);
	f.lt[GCTX_PY_LT_LEN - 1] ^= 1;
	assert_false(gctx_py_table_extends(&f, long_lt, sizeof(long_lt)));
	cut_frame(&f, false, 200);
	assert_false(gctx_py_table_extends(&f, long_lt, GCTX_PY_LT_LEN));
	assert_false(gctx_py_table_extends(&f, long_lt, GCTX_PY_LT_MAX + 1));
	f.lt_len = 0;
	assert_true(gctx_py_frame_line_cut(&f));
	assert_false(gctx_py_table_extends(&f, long_lt, sizeof(long_lt)));
}

static void put64(__u8 *p, __u64 v)
{
	memcpy(p, &v, sizeof(v));
}

/* The code object's head and the bytes object's header, as read from a process. */
static void test_table_headers(void **state)
{
	struct gctx_py_layout l;
	struct gctx_py_frame f;
	__u8 code[144], hdr[GCTX_PY_BYTES_DATA];
	__s32 first = 1000;

	(void)state;
	long_table(false);
	cut_frame(&f, false, 200);
	assert_true(gctx_py_layout_for(12, &l));
	memset(code, 0, sizeof(code));
	memcpy(code + l.code_firstlineno, &first, sizeof(first));
	put64(code + l.code_linetable, 0x7f1234567890);
	assert_int_equal(gctx_py_code_linetable(&l, &f, code, sizeof(code)), 0x7f1234567890);
	/* too short to hold co_linetable */
	assert_int_equal(gctx_py_code_linetable(&l, &f, code, l.code_linetable + 7), 0);
	/* not an object pointer: misaligned, kernel half, NULL */
	put64(code + l.code_linetable, 0x7f1234567891);
	assert_int_equal(gctx_py_code_linetable(&l, &f, code, sizeof(code)), 0);
	put64(code + l.code_linetable, 0xffff888012345678);
	assert_int_equal(gctx_py_code_linetable(&l, &f, code, sizeof(code)), 0);
	put64(code + l.code_linetable, 0);
	assert_int_equal(gctx_py_code_linetable(&l, &f, code, sizeof(code)), 0);
	/* another code object there now */
	put64(code + l.code_linetable, 0x7f1234567890);
	f.firstlineno = 999;
	assert_int_equal(gctx_py_code_linetable(&l, &f, code, sizeof(code)), 0);

	memset(hdr, 0, sizeof(hdr));
	put64(hdr, 1);			      /* ob_refcnt */
	put64(hdr + 8, 0x55d0c0a0b0c0);	      /* ob_type */
	put64(hdr + GCTX_PY_BYTES_SIZE, 900); /* ob_size */
	assert_int_equal(gctx_py_table_size(hdr, sizeof(hdr)), 900);
	assert_int_equal(gctx_py_table_size(hdr, sizeof(hdr) - 1), 0);
	put64(hdr + GCTX_PY_BYTES_SIZE, GCTX_PY_LT_LEN); /* the prefix had it all */
	assert_int_equal(gctx_py_table_size(hdr, sizeof(hdr)), 0);
	put64(hdr + GCTX_PY_BYTES_SIZE, GCTX_PY_LT_MAX + 1);
	assert_int_equal(gctx_py_table_size(hdr, sizeof(hdr)), 0);
	put64(hdr + GCTX_PY_BYTES_SIZE, (__u64)-900);
	assert_int_equal(gctx_py_table_size(hdr, sizeof(hdr)), 0);
	put64(hdr + GCTX_PY_BYTES_SIZE, 900);
	put64(hdr, 0); /* freed */
	assert_int_equal(gctx_py_table_size(hdr, sizeof(hdr)), 0);
	put64(hdr, 1);
	put64(hdr + 8, 0);
	assert_int_equal(gctx_py_table_size(hdr, sizeof(hdr)), 0);
}

static struct gctx_rec_frame nat(const char *fn)
{
	struct gctx_rec_frame r;

	memset(&r, 0, sizeof(r));
	r.kind = GCTX_FRAME_NATIVE;
	strcpy(r.function, fn);
	return r;
}

static struct gctx_rec_frame pyf(const char *fn)
{
	struct gctx_rec_frame r;

	memset(&r, 0, sizeof(r));
	r.kind = GCTX_FRAME_PYTHON;
	strcpy(r.function, fn);
	return r;
}

/* Each eval-loop frame gives way to the Python frames it ran (up to an entry frame). */
static void test_splice(void **state)
{
	struct gctx_rec_frame n[] = {nat("__open"),
				     nat("os_open"),
				     nat("_PyEval_EvalFrameDefault"),
				     nat("cfunc_call"),
				     nat("_PyEval_EvalFrameDefault"),
				     nat("Py_RunMain")};
	struct gctx_rec_frame p[] = {pyf("leaf"), pyf("mid"), pyf("<module>")};
	__u8 flags[] = {0, GCTX_PYF_ENTRY, GCTX_PYF_ENTRY};
	const char *want[] = {"__open",	    "os_open",	"leaf",	     "mid",
			      "cfunc_call", "<module>", "Py_RunMain"};
	struct gctx_rec_frame out[16];
	int k;

	(void)state;
	k = gctx_py_splice(n, 6, p, flags, 3, out, 16);
	assert_int_equal(k, 7);
	for (int i = 0; i < k; i++)
		assert_string_equal(out[i].function, want[i]);
	/* no native frames (unwinding failed): the Python frames alone */
	k = gctx_py_splice(n, 0, p, flags, 3, out, 16);
	assert_int_equal(k, 3);
	assert_string_equal(out[0].function, "leaf");
	/* capped */
	assert_int_equal(gctx_py_splice(n, 6, p, flags, 3, out, 4), 4);
}

static void test_layouts(void **state)
{
	struct gctx_py_layout l;

	(void)state;
	for (unsigned m = 10; m <= 13; m++) {
		assert_true(gctx_py_layout_for(m, &l));
		assert_true(l.supported);
		assert_int_equal((l.version >> 16) & 0xff, m);
	}
	assert_true(gctx_py_layout_for(10, &l));
	assert_int_equal(l.code_adaptive, 0); /* 3.10 counts f_lasti */
	assert_false(gctx_py_layout_for(9, &l));
	assert_false(l.supported);
	assert_int_equal(l.version, 0x03090000);
	assert_false(gctx_py_layout_for(14, &l));
}

/* Frames are read from a traced process's memory: any bytes at all decode without reading
 * past the record, to terminated strings. */
static void test_garbage(void **state)
{
	struct gctx_py_frame f;
	struct gctx_rec_frame r;
	unsigned seed = 12345;

	(void)state;
	for (int it = 0; it < 20000; it++) {
		unsigned char *p = (unsigned char *)&f;

		for (size_t i = 0; i < sizeof(f); i++) {
			seed = seed * 1103515245 + 12345;
			p[i] = seed >> 16;
		}
		gctx_py_frame_resolve(&f, &r);
		assert_true(memchr(r.file, 0, sizeof(r.file)) != NULL);
		assert_true(memchr(r.function, 0, sizeof(r.function)) != NULL);
		assert_true(r.line < (1u << 31));
	}
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_311),
		cmocka_unit_test(test_line_310),
		cmocka_unit_test(test_line_311_forms),
		cmocka_unit_test(test_str_utf8),
		cmocka_unit_test(test_frame_resolve),
		cmocka_unit_test(test_line_past_prefix),
		cmocka_unit_test(test_table_headers),
		cmocka_unit_test(test_splice),
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_garbage),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
