// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A trace file read into the HTML page, which must keep its shape whatever the trace says:
 * every tag one of the page's own, no event-handler or URL attribute, quotes paired inside
 * each tag, no script, no bidirectional control in the text. Seeds: the hostile traces
 * (markup, quotes, </script>, javascript: URLs, bidi controls in names and arguments).
 */
#include <stdint.h>
#include <string.h>
#include "fuzz_common.h"
#include "model/model.h"
#include "output/html/html.h"
#include "trace/hosts.h"
#include "trace/tracefile.h"

static const char *const tags[] = {
    "!DOCTYPE", "html", "head", "meta",	   "title",  "style", "body",	 "h1",	    "h2",
    "h3",	"p",	"div",	"section", "dl",     "dt",    "dd",	 "code",    "b",
    "i",	"span", "br",	"article", "ul",     "li",    "details", "summary", "pre",
    "svg",	"g",	"rect", "path",	   "circle", "text",  "tspan",	 "line",    "footer",
};

static void check_tag(const char *p, const char *e)
{
	size_t n = 0, quotes = 0;
	const char *name = p + 1 + (p[1] == '/');
	bool known = false;

	while (name + n < e && name[n] != ' ' && name[n] != '>' && name[n] != '/' &&
	       name[n] != '\n')
		n++;
	for (size_t k = 0; k < sizeof(tags) / sizeof(tags[0]); k++)
		known |= strlen(tags[k]) == n && !strncmp(tags[k], name, n);
	if (!known)
		abort();
	for (const char *q = p; q < e; q++) {
		quotes += *q == '"';
		/* an attribute named on...: the page has none */
		if (q[0] == ' ' && q[1] == 'o' && q[2] == 'n')
			abort();
		if (!strncmp(q, "href", 4) || !strncmp(q, " src=", 5))
			abort();
	}
	if (quotes % 2)
		abort();
}

static void check(const char *html, size_t len)
{
	const char *p = html, *end = html + len;

	if (memmem(html, len, "<script", 7) || memmem(html, len, "\xe2\x80\xae", 3) ||
	    memmem(html, len, "\xe2\x81\xa6", 3))
		abort();
	while ((p = memchr(p, '<', end - p))) {
		const char *e = memchr(p, '>', end - p);

		if (!e)
			abort();
		check_tag(p, e);
		/* the style element's text is the page's own: skip to its end */
		if (!strncmp(p, "<style>", 7)) {
			e = memmem(p, end - p, "</style>", 8);
			if (!e)
				abort();
		}
		p = e + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_as_file(data, size);
	struct gctx_trace_reader *r;
	struct gctx_model *m;
	const void *rec;
	__u32 type, len;
	char err[512], *buf = NULL;
	size_t blen = 0;
	FILE *out;

	(void)fuzz_null; /* the page is checked in memory, not thrown away */
	r = gctx_trace_reader__open(path, err, sizeof(err));
	if (!r)
		return 0;
	m = gctx_model__new();
	while (m && gctx_trace_reader__next(r, &type, &rec, &len) == 1)
		gctx_model__feed(m, type, rec, len);
	if (m) {
		/* the trace alone, then as two hosts of a job whose clocks the trace's header
		 * and its mirror image place (crafted clocks: anywhere in 64 bits) */
		struct gctx_trace_meta other = *gctx_trace_reader__meta(r);
		const struct gctx_trace_meta *metas[2] = {gctx_trace_reader__meta(r), &other};
		struct gctx_host_clock clocks[2];
		struct gctx_html_host h[2] = {{.m = m, .meta = metas[0], .clock = &clocks[0]},
					      {.m = m, .meta = metas[1], .clock = &clocks[1]}};

		other.start_wall_ns = ~other.start_wall_ns;
		other.start_mono_ns = ~other.start_mono_ns;
		gctx_hosts__align(metas, NULL, 2, clocks);
		gctx_model__finish(m);
		for (__u32 n = 1; n <= 2; n++) {
			struct gctx_html_host one = {.m = m, .meta = metas[0]};

			out = open_memstream(&buf, &blen);
			if (!out)
				abort();
			if (!gctx_html__write(out, n == 1 ? &one : h, n)) {
				fflush(out);
				check(buf, blen);
			}
			fclose(out);
			free(buf);
			buf = NULL;
			blen = 0;
		}
	}
	gctx_model__free(m);
	gctx_trace_reader__free(r);
	return 0;
}
