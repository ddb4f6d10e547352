// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Python frame and line-table decoders (decode/pystack.c) on what a traced process's
 * memory may hold (issue 27): the kernel copies frames, strings and line-table prefixes as
 * they are, and the collector reads whole tables from the process. Input: a 12-byte header
 * (firstlineno, instruction index, mode, string kind, Python minor), then either a line table
 * (mode bit 0 clear) or a captured frame (struct gctx_py_frame) followed by a whole table.
 */
#include <stdint.h>
#include <string.h>
#include "fuzz_common.h"
#include "decode/pystack.h"

struct in_hdr {
	int32_t firstlineno, instr;
	uint8_t mode, kind, minor, pad;
};

static void check_frame(const struct gctx_rec_frame *f)
{
	if (strnlen(f->function, sizeof(f->function)) >= sizeof(f->function) ||
	    strnlen(f->file, sizeof(f->file)) >= sizeof(f->file) ||
	    strnlen(f->module, sizeof(f->module)) >= sizeof(f->module))
		__builtin_trap();
}

static void lines(const uint8_t *lt, size_t n, int first, int instr)
{
	/* any int may come back from a crafted table (callers keep only lines > 0): what is
	 * checked is that no byte past n is read, and no overflow (UBSan) */
	gctx_py310_line(lt, n, first, instr);
	gctx_py311_line(lt, n, first, instr);
	gctx_py311_line(lt, n, first, instr / 2);
	gctx_py311_line(lt, n, first, instr ^ 1);
	gctx_py310_line(lt, n, first, instr ^ 1);
}

static void strings(const uint8_t *p, size_t n, unsigned kind)
{
	char small[4], big[256];

	gctx_py_str_utf8(p, n, kind, small, sizeof(small));
	if (strnlen(small, sizeof(small)) >= sizeof(small))
		__builtin_trap();
	gctx_py_str_utf8(p, n, kind, big, sizeof(big));
	if (strnlen(big, sizeof(big)) >= sizeof(big))
		__builtin_trap();
	gctx_py_str_utf8(p, n, kind, big, 1);
}

static void frame(const struct in_hdr *h, const uint8_t *p, size_t n)
{
	struct gctx_py_frame f;
	struct gctx_rec_frame py[2], native[3], out[6];
	struct gctx_py_layout l;
	__u8 flags[2] = {h->mode & 2 ? GCTX_PYF_ENTRY : 0, GCTX_PYF_ENTRY};
	size_t fl = n < sizeof(f) ? n : sizeof(f);

	memset(&f, 0, sizeof(f));
	memcpy(&f, p, fl);
	gctx_py_frame_resolve(&f, &py[0]);
	check_frame(&py[0]);
	py[1] = py[0];
	/* the rest: the whole table read from the process, and the code object's head */
	p += fl;
	n -= fl;
	gctx_py_frame_line(&f, p, n);
	gctx_py_frame_line_cut(&f);
	gctx_py_table_extends(&f, p, n);
	gctx_py_table_size(p, n);
	gctx_py_layout_for(h->minor, &l);
	gctx_py_code_linetable(&l, &f, p, n);
	for (unsigned minor = 10; minor <= 13; minor++)
		if (gctx_py_layout_for(minor, &l))
			gctx_py_code_linetable(&l, &f, p, n);
	memset(native, 0, sizeof(native));
	snprintf(native[1].function, sizeof(native[1].function), "_PyEval_EvalFrameDefault");
	for (int max = 0; max <= 6; max += 3) {
		int k = gctx_py_splice(native, 3, py, flags, 2, out, max);

		if (k < 0 || k > max)
			__builtin_trap();
		for (int i = 0; i < k; i++)
			check_frame(&out[i]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in_hdr h;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	data += sizeof(h);
	size -= sizeof(h);
	if (h.mode & 1) {
		frame(&h, data, size);
		return 0;
	}
	lines(data, size, h.firstlineno, h.instr);
	strings(data, size, h.kind);
	strings(data, size, 1);
	strings(data, size, 2);
	strings(data, size, 4);
	return 0;
}
