// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Streaming JSON writer. Pretty mode indents by two spaces with one member per line
 * ("key": value), compact mode writes everything on one line without spaces. Neither writes
 * a trailing newline; consecutive top-level values are separated by a newline (JSON Lines).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/utf8.h"

#define GCTX_JSON_MAX_DEPTH 64

struct gctx_json_level {
	bool is_obj;
	bool has_items;
};

struct gctx_json {
	FILE *out;
	bool pretty;
	bool after_key;	  /* a key was written, its value comes next */
	bool top_written; /* a top-level value was written */
	int depth;
	struct gctx_json_level stack[GCTX_JSON_MAX_DEPTH];
};

struct gctx_json *gctx_json__new(FILE *out, bool pretty)
{
	struct gctx_json *j;

	if (!out)
		return NULL;
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->out = out;
	j->pretty = pretty;
	return j;
}

void gctx_json__free(struct gctx_json *j)
{
	free(j);
}

static void newline_indent(struct gctx_json *j, int depth)
{
	int i;

	fputc('\n', j->out);
	for (i = 0; i < depth; i++)
		fputs("  ", j->out);
}

/* Separator and indentation before a value or a key. */
static void prelude(struct gctx_json *j, bool is_key)
{
	struct gctx_json_level *top;

	if (j->after_key) {
		assert(!is_key); /* two keys in a row */
		j->after_key = false;
		return;
	}
	if (!j->depth) {
		assert(!is_key); /* a key outside an object */
		if (j->top_written)
			fputc('\n', j->out);
		j->top_written = true;
		return;
	}
	top = &j->stack[j->depth - 1];
	assert(top->is_obj == is_key); /* keys in objects, bare values in arrays */
	if (top->has_items)
		fputc(',', j->out);
	top->has_items = true;
	if (j->pretty)
		newline_indent(j, j->depth);
}

static void begin(struct gctx_json *j, bool is_obj)
{
	prelude(j, false);
	fputc(is_obj ? '{' : '[', j->out);
	assert(j->depth < GCTX_JSON_MAX_DEPTH); /* nested too deep */
	if (j->depth >= GCTX_JSON_MAX_DEPTH)
		return;
	j->stack[j->depth].is_obj = is_obj;
	j->stack[j->depth].has_items = false;
	j->depth++;
}

static void end(struct gctx_json *j, bool is_obj)
{
	struct gctx_json_level *top;

	assert(j->depth > 0 && !j->after_key);
	if (j->depth <= 0)
		return;
	top = &j->stack[j->depth - 1];
	assert(top->is_obj == is_obj); /* mismatched end */
	j->depth--;
	if (j->pretty && top->has_items)
		newline_indent(j, j->depth);
	fputc(is_obj ? '}' : ']', j->out);
}

void gctx_json__obj_begin(struct gctx_json *j)
{
	begin(j, true);
}

void gctx_json__obj_end(struct gctx_json *j)
{
	end(j, true);
}

void gctx_json__arr_begin(struct gctx_json *j)
{
	begin(j, false);
}

void gctx_json__arr_end(struct gctx_json *j)
{
	end(j, false);
}

/*
 * Escape as much of s as fits whole into out (no NUL written). Returns bytes written;
 * *used is set to the input bytes consumed.
 */
static size_t escape_some(char *out, size_t outlen, const char *s, size_t n, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0;

	while (i < n) {
		char tmp[6];
		const char *src = tmp;
		size_t in = 1, len = 2, bad = 0;
		unsigned char c = p[i];

		tmp[0] = '\\';
		switch (c) {
		case '"':
		case '\\':
			tmp[1] = (char)c;
			break;
		case '\n':
			tmp[1] = 'n';
			break;
		case '\t':
			tmp[1] = 't';
			break;
		case '\r':
			tmp[1] = 'r';
			break;
		case '\b':
			tmp[1] = 'b';
			break;
		case '\f':
			tmp[1] = 'f';
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				memcpy(tmp + 1, "u00", 3);
				tmp[4] = hex[c >> 4];
				tmp[5] = hex[c & 0xf];
				len = 6;
				break;
			}
			in = gctx_utf8_seq(p + i, n - i, &bad);
			if (in > 1 && gctx_utf8_deceptive(gctx_utf8_cp(p + i, in))) {
				/* valid, but it would reorder or hide what a terminal shows */
				unsigned int cp = gctx_utf8_cp(p + i, in);

				tmp[1] = 'u';
				for (int k = 0; k < 4; k++)
					tmp[2 + k] = hex[(cp >> (12 - 4 * k)) & 0xf];
				len = 6;
			} else if (in) {
				src = (const char *)p + i; /* ASCII or valid UTF-8: as is */
				len = in;
			} else {
				src = "\\ufffd";
				in = bad;
				len = 6;
			}
			break;
		}
		if (o + len > outlen)
			break;
		memcpy(out + o, src, len);
		o += len;
		i += in;
	}
	*used = i;
	return o;
}

size_t gctx_json_escape(char *out, size_t outlen, const char *s, size_t n)
{
	size_t used, o;

	if (!out || !outlen)
		return 0;
	o = escape_some(out, outlen - 1, s ? s : "", s ? n : 0, &used);
	out[o] = '\0';
	return o;
}

static void write_string(struct gctx_json *j, const char *s, size_t n)
{
	char buf[512];

	fputc('"', j->out);
	while (n) {
		size_t used, o = escape_some(buf, sizeof(buf), s, n, &used);

		fwrite(buf, 1, o, j->out);
		s += used;
		n -= used;
	}
	fputc('"', j->out);
}

void gctx_json__key(struct gctx_json *j, const char *key)
{
	prelude(j, true);
	write_string(j, key ? key : "", key ? strlen(key) : 0);
	fputs(j->pretty ? ": " : ":", j->out);
	j->after_key = true;
}

void gctx_json__str(struct gctx_json *j, const char *s)
{
	if (!s) {
		gctx_json__null(j);
		return;
	}
	gctx_json__strn(j, s, strlen(s));
}

void gctx_json__strn(struct gctx_json *j, const char *s, size_t n)
{
	prelude(j, false);
	write_string(j, s ? s : "", s ? n : 0);
}

void gctx_json__u64(struct gctx_json *j, __u64 v)
{
	prelude(j, false);
	fprintf(j->out, "%llu", (unsigned long long)v);
}

void gctx_json__s64(struct gctx_json *j, __s64 v)
{
	prelude(j, false);
	fprintf(j->out, "%lld", (long long)v);
}

void gctx_json__double(struct gctx_json *j, double v)
{
	char buf[40], *p;

	if (!isfinite(v)) {
		gctx_json__null(j);
		return;
	}
	prelude(j, false);
	snprintf(buf, sizeof(buf), "%.17g", v);
	for (p = buf; *p; p++) {
		if (*p == ',')
			*p = '.'; /* a locale's decimal comma */
	}
	fputs(buf, j->out);
}

void gctx_json__bool(struct gctx_json *j, bool v)
{
	prelude(j, false);
	fputs(v ? "true" : "false", j->out);
}

void gctx_json__null(struct gctx_json *j)
{
	prelude(j, false);
	fputs("null", j->out);
}
