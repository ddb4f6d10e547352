// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Python frames to file:function:line (interface in pystack.h). */
#include <stdio.h>
#include <string.h>

#include "decode/pystack.h"

int gctx_py310_line(const __u8 *lt, size_t len, int firstlineno, int instr)
{
	long addr = 0, target = (long)instr * 2, line = firstlineno;

	if (instr < 0)
		return firstlineno;
	/* (bytecode delta, signed line delta) pairs; -128 means "no line" for that range */
	for (size_t i = 0; i + 1 < len; i += 2) {
		int ld = (__s8)lt[i + 1];
		long end = addr + lt[i];
		bool none = ld == -128;

		if (!none)
			line += ld;
		if (target >= addr && target < end)
			return none || line < 0 || line > 1 << 30 ? -1 : (int)line;
		addr = end;
	}
	return -2;
}

/* Varints of the 3.11 table: 6-bit chunks, least significant first, bit 6 = more. */
static bool rd_varint(const __u8 *lt, size_t len, size_t *i, unsigned long *out)
{
	unsigned long v = 0;
	unsigned shift = 0;
	__u8 b;

	do {
		if (*i >= len || shift > 56)
			return false;
		b = lt[(*i)++];
		v |= (unsigned long)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*out = v;
	return true;
}

static bool rd_svarint(const __u8 *lt, size_t len, size_t *i, long *out)
{
	unsigned long u;

	if (!rd_varint(lt, len, i, &u))
		return false;
	*out = (u & 1) ? -(long)(u >> 1) : (long)(u >> 1);
	return true;
}

int gctx_py311_line(const __u8 *lt, size_t len, int firstlineno, int instr)
{
	long line = firstlineno, addr = 0, d;
	unsigned long skip;
	size_t i = 0;

	if (instr < 0)
		return firstlineno;
	while (i < len) {
		__u8 b = lt[i++];
		unsigned code = (b >> 3) & 15, n = (b & 7) + 1;
		bool none = false;

		if (!(b & 0x80))
			return -2; /* not an entry start: torn or not a line table */
		switch (code) {
		case 15:
			none = true;
			break;
		case 14:
			if (!rd_svarint(lt, len, &i, &d))
				return -2;
			line += d;
			if (line < -(1L << 40) || line > 1L << 40)
				return -1; /* no table of real code: garbage (and no overflow) */
			for (int k = 0; k < 3; k++)
				if (!rd_varint(lt, len, &i, &skip))
					return -2;
			break;
		case 13:
			if (!rd_svarint(lt, len, &i, &d))
				return -2;
			line += d;
			if (line < -(1L << 40) || line > 1L << 40)
				return -1;
			break;
		case 10:
		case 11:
		case 12:
			line += code - 10;
			i += 2;
			break;
		default:
			i += 1;
			break;
		}
		if (instr >= addr && instr < addr + (long)n)
			return none || line < 0 || line > 1 << 30 ? -1 : (int)line;
		addr += n;
	}
	return -2;
}

static size_t put_utf8(char *out, size_t outlen, size_t o, __u32 c)
{
	char b[4];
	size_t n;

	if (c < 0x20 || c == 0x7f || (c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
		c = '?';
	if (c < 0x80) {
		b[0] = c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = 0xc0 | (c >> 6);
		b[1] = 0x80 | (c & 63);
		n = 2;
	} else if (c < 0x10000) {
		b[0] = 0xe0 | (c >> 12);
		b[1] = 0x80 | ((c >> 6) & 63);
		b[2] = 0x80 | (c & 63);
		n = 3;
	} else {
		b[0] = 0xf0 | (c >> 18);
		b[1] = 0x80 | ((c >> 12) & 63);
		b[2] = 0x80 | ((c >> 6) & 63);
		b[3] = 0x80 | (c & 63);
		n = 4;
	}
	if (o + n >= outlen)
		return o;
	memcpy(out + o, b, n);
	return o + n;
}

size_t gctx_py_str_utf8(const void *raw, size_t len, unsigned kind, char *out, size_t outlen)
{
	const __u8 *p = raw;
	size_t o = 0;

	if (!outlen)
		return 0;
	if (kind == 1 || kind == 2 || kind == 4) {
		for (size_t i = 0; i + kind <= len; i += kind) {
			__u32 c = p[i];

			if (kind == 2)
				c |= (__u32)p[i + 1] << 8;
			else if (kind == 4)
				c |= (__u32)p[i + 1] << 8 | (__u32)p[i + 2] << 16 |
				     (__u32)p[i + 3] << 24;
			size_t no = put_utf8(out, outlen, o, c);

			if (no == o)
				break;
			o = no;
		}
	}
	out[o] = 0;
	return o;
}

static size_t prefix_len(const struct gctx_py_frame *f)
{
	return f->lt_len < sizeof(f->lt) ? f->lt_len : sizeof(f->lt);
}

void gctx_py_frame_resolve(const struct gctx_py_frame *f, struct gctx_rec_frame *out)
{
	size_t flen = f->file_len < sizeof(f->file) ? f->file_len : sizeof(f->file);
	size_t nlen = f->name_len < sizeof(f->name) ? f->name_len : sizeof(f->name);
	size_t ltlen = prefix_len(f);
	size_t o = 0;
	int line;

	memset(out, 0, sizeof(*out));
	out->kind = GCTX_FRAME_PYTHON;
	out->addr = f->code;
	if (f->flags & GCTX_PYF_FILE_CUT) {
		memcpy(out->file, "...", 3);
		o = 3;
	}
	gctx_py_str_utf8(f->file, flen, f->file_kind, out->file + o, sizeof(out->file) - o);
	if (!f->file_kind)
		snprintf(out->file, sizeof(out->file), "?");
	gctx_py_str_utf8(f->name, nlen, f->name_kind, out->function, sizeof(out->function));
	if (!f->name_kind)
		snprintf(out->function, sizeof(out->function), "?");
	line = gctx_py_frame_line(f, f->lt, ltlen);
	out->line = line > 0 ? line : 0;
}

int gctx_py_frame_line(const struct gctx_py_frame *f, const __u8 *lt, size_t len)
{
	if (f->flags & GCTX_PYF_LASTI)
		return gctx_py310_line(lt, len, f->firstlineno, f->instr);
	return gctx_py311_line(lt, len, f->firstlineno, f->instr);
}

bool gctx_py_frame_line_cut(const struct gctx_py_frame *f)
{
	return (f->flags & GCTX_PYF_LT_CUT) && gctx_py_frame_line(f, f->lt, prefix_len(f)) == -2;
}

static __u64 rd_u64(const __u8 *p)
{
	__u64 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A user-space object address on x86-64: below the 47-bit boundary, 8-byte aligned. */
static bool user_ptr(__u64 p)
{
	return p >= 4096 && p < (1ull << 47) && !(p & 7);
}

__u64 gctx_py_code_linetable(const struct gctx_py_layout *l, const struct gctx_py_frame *f,
			     const __u8 *code, size_t len)
{
	__s32 first;
	__u64 lt;

	if ((size_t)l->code_linetable + 8 > len || (size_t)l->code_firstlineno + 4 > len)
		return 0;
	memcpy(&first, code + l->code_firstlineno, sizeof(first));
	lt = rd_u64(code + l->code_linetable);
	return first == f->firstlineno && user_ptr(lt) ? lt : 0;
}

size_t gctx_py_table_size(const __u8 *hdr, size_t len)
{
	__s64 refs, size;

	if (len < GCTX_PY_BYTES_DATA)
		return 0;
	memcpy(&refs, hdr, sizeof(refs)); /* ob_refcnt: the code object holds one */
	memcpy(&size, hdr + GCTX_PY_BYTES_SIZE, sizeof(size));
	if (refs <= 0 || !user_ptr(rd_u64(hdr + 8)) || size <= GCTX_PY_LT_LEN ||
	    size > GCTX_PY_LT_MAX)
		return 0;
	return size;
}

bool gctx_py_table_extends(const struct gctx_py_frame *f, const __u8 *lt, size_t len)
{
	/* a prefix the kernel could not read whole proves nothing */
	return (f->flags & GCTX_PYF_LT_CUT) && f->lt_len == GCTX_PY_LT_LEN &&
	       len > GCTX_PY_LT_LEN && len <= GCTX_PY_LT_MAX && !memcmp(lt, f->lt, GCTX_PY_LT_LEN);
}

void gctx_py_version_str(__u32 hex, char *out, size_t len)
{
	snprintf(out, len, "%u.%u", (hex >> 24) & 0xff, (hex >> 16) & 0xff);
}

static bool is_eval_frame(const struct gctx_rec_frame *f)
{
	return f->kind == GCTX_FRAME_NATIVE && (!strcmp(f->function, "_PyEval_EvalFrameDefault") ||
						!strcmp(f->function, "_PyEval_EvalFrame"));
}

int gctx_py_splice(const struct gctx_rec_frame *native, int nn, const struct gctx_rec_frame *py,
		   const __u8 *pyflags, int np, struct gctx_rec_frame *out, int max)
{
	int n = 0, pi = 0;

	for (int i = 0; i < nn && n < max; i++) {
		if (!is_eval_frame(&native[i]) || pi >= np) {
			out[n++] = native[i];
			continue;
		}
		while (pi < np && n < max) {
			bool entry = pyflags[pi] & (GCTX_PYF_ENTRY | GCTX_PYF_LASTI);

			out[n++] = py[pi++];
			if (entry)
				break;
		}
	}
	while (pi < np && n < max)
		out[n++] = py[pi++];
	return n;
}

/* clang-format off */
static const struct gctx_py_layout layouts[] = {
	/* 3.10: PyFrameObject chain, f_lasti in code units, no qualname */
	{ .version = 0x030a0000, .supported = 1, .interp_head = 32, .interp_tstate = 8,
	  .interp_next = 0, .tstate_next = 8, .tstate_thread_id = 176, .tstate_frame = 24,
	  .cframe_frame = -1, .frame_code = 32, .frame_back = 24, .frame_instr = 96,
	  .frame_owner = -1, .frame_is_entry = -1, .code_firstlineno = 40, .code_filename = 104,
	  .code_name = 112, .code_linetable = 120, .code_adaptive = 0, .str_ascii_data = 48,
	  .str_compact_data = 72 },
	/* 3.11: _PyInterpreterFrame through cframe, is_entry marks a C-level eval call */
	{ .version = 0x030b0000, .supported = 1, .interp_head = 40, .interp_tstate = 16,
	  .interp_next = 0, .tstate_next = 8, .tstate_thread_id = 152, .tstate_frame = 56,
	  .cframe_frame = 8, .frame_code = 32, .frame_back = 48, .frame_instr = 56,
	  .frame_owner = -1, .frame_is_entry = 68, .code_firstlineno = 72, .code_filename = 112,
	  .code_name = 128, .code_linetable = 136, .code_adaptive = 184, .str_ascii_data = 48,
	  .str_compact_data = 72 },
	/* 3.12: C-stack shim frames (owner 3) */
	{ .version = 0x030c0000, .supported = 1, .interp_head = 40, .interp_tstate = 72,
	  .interp_next = 0, .tstate_next = 8, .tstate_thread_id = 136, .tstate_frame = 56,
	  .cframe_frame = 0, .frame_code = 0, .frame_back = 8, .frame_instr = 56,
	  .frame_owner = 70, .frame_is_entry = -1, .code_firstlineno = 68, .code_filename = 112,
	  .code_name = 128, .code_linetable = 136, .code_adaptive = 192, .str_ascii_data = 40,
	  .str_compact_data = 56 },
	/* 3.13: current_frame in the thread state; matches its _Py_DebugOffsets */
	{ .version = 0x030d0000, .supported = 1, .interp_head = 632, .interp_tstate = 7344,
	  .interp_next = 7264, .tstate_next = 8, .tstate_thread_id = 152, .tstate_frame = 72,
	  .cframe_frame = -1, .frame_code = 0, .frame_back = 8, .frame_instr = 56,
	  .frame_owner = 70, .frame_is_entry = -1, .code_firstlineno = 68, .code_filename = 112,
	  .code_name = 128, .code_linetable = 136, .code_adaptive = 200, .str_ascii_data = 40,
	  .str_compact_data = 56 },
};
/* clang-format on */

bool gctx_py_layout_for(unsigned minor, struct gctx_py_layout *l)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		if (((layouts[i].version >> 16) & 0xff) == minor) {
			*l = layouts[i];
			return true;
		}
	}
	memset(l, 0, sizeof(*l));
	l->version = 0x03000000 | (minor & 0xff) << 16;
	return false;
}
