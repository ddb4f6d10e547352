// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The timeline (SVG): the shown processes (the tree's rows, same order) and the GPU files over
 * the run. A process is a bar from fork to exit with the times it held each GPU file on it
 * (opened: blue, inherited: orange), its findings as red diamonds, an X where a signal killed
 * it; each incident's moments (GPU initialised, first and last finding) are red dashed lines
 * across. Hosts of one job share the axis (html_page.c gives it).
 */
#include <stdlib.h>
#include <string.h>

#include "output/html/html_priv.h"

#define ROW_H	  16
#define LABEL_W	  190
#define PLOT_W	  800
#define FOLD_BINS 100 /* intervals of the folded processes' row */
#define TOP	  52  /* the axis and the incidents' labels */

struct tl {
	struct html_host_ctx *c;
	__u64 t0, t1; /* the axis */
	__u32 nfiles; /* file rows */
	__u32 height;
};

static __u32 xt(const struct tl *t, __u64 ts)
{
	__u64 t0 = t->t0, t1 = t->t1;

	if (!ts || ts <= t0)
		return LABEL_W;
	if (ts >= t1)
		return LABEL_W + PLOT_W;
	return LABEL_W + (__u32)((double)(ts - t0) * PLOT_W / (double)(t1 - t0));
}

static bool in_axis(const struct tl *t, __u64 ts)
{
	return ts >= t->t0 && ts <= t->t1;
}

/* Ticks at round times (1, 2 or 5 times a power of ten nanoseconds, at most 11), in integers:
 * a crafted trace's clocks may be anywhere in 64 bits, where a float step would not advance. */
static void ticks(struct tl *t)
{
	struct html_host_ctx *c = t->c;
	__u64 span = t->t1 - t->t0, step = 1000, rem, off;
	__s64 base = (__s64)(t->t0 - c->start); /* the axis's start, since the trace's */
	char lab[48];

	while (span / step > 10) {
		if (span / (step * 2) <= 10)
			step *= 2;
		else if (span / (step * 5) <= 10)
			step *= 5;
		else
			step *= 10;
	}
	/* base mod step, in [0, step): the first tick is that far from the axis's start */
	rem = base >= 0 ? (__u64)base % step : step - 1 - (__u64)(-(base + 1)) % step;
	off = rem ? step - rem : 0;
	for (int k = 0; k < 12 && off <= span; k++) {
		__u32 x = LABEL_W + (__u32)((double)off / (double)span * PLOT_W);

		snprintf(lab, sizeof(lab), "%g s", ((double)base + (double)off) / 1e9);
		fprintf(c->out,
			"<line class=\"grid\" x1=\"%u\" y1=\"%u\" x2=\"%u\" y2=\"%u\"/>"
			"<text x=\"%u\" y=\"%u\">%s</text>\n",
			x, TOP - 4, x, t->height, x + 2, 12, lab);
		if (span - off < step)
			break;
		off += step;
	}
	fprintf(c->out, "<line class=\"axis\" x1=\"%u\" y1=\"%u\" x2=\"%u\" y2=\"%u\"/>\n", LABEL_W,
		TOP - 4, LABEL_W + PLOT_W, TOP - 4);
}

static void holds(struct tl *t, __u32 idx, __u32 y)
{
	const struct gctx_model *m = t->c->m;

	for (__u32 i = 0; i < gctx_model__nfiles(m); i++) {
		const struct gctx_gpu_file *f = gctx_model__file(m, i);

		for (__u32 k = 0; f && k < f->nholders; k++) {
			const struct gctx_holder *h = &f->holders[k];
			__u32 a, b;

			if (h->proc_idx != idx)
				continue;
			a = xt(t, h->since_ns);
			b = h->until_ns ? xt(t, h->until_ns) : LABEL_W + PLOT_W;
			fprintf(t->c->out,
				"<rect class=\"hold%s\" data-file=\"%u\" x=\"%u\" y=\"%u\" "
				"width=\"%u\" height=\"4\"/>",
				h->how == GCTX_HOLD_INHERITED ? " inh" : "", f->id, a, y + 1,
				b > a ? b - a : 1);
		}
	}
}

static void proc_row(struct tl *t, __u32 r)
{
	struct html_host_ctx *c = t->c;
	const struct html_row *w = &c->sel.rows[r];
	const struct gctx_proc *p = gctx_model__proc(c->m, w->idx);
	__u8 fl = c->sel.flag[w->idx];
	__u32 y = TOP + ROW_H * r, a = xt(t, p->start_ns),
	      b = p->exited && p->exit_ns ? xt(t, p->exit_ns) : LABEL_W + PLOT_W;

	fprintf(c->out, "<g class=\"tlproc%s\" data-pid=\"%u\"><text x=\"4\" y=\"%u\">%u ",
		fl & SEL_INC ? " inc" : "", p->pid, y + 11, p->pid);
	gctx_html_esc(c->out, p->comm, sizeof(p->comm));
	fprintf(c->out,
		"</text><rect class=\"bar%s\" x=\"%u\" y=\"%u\" width=\"%u\" height=\"12\"/>",
		fl & SEL_INC   ? " inc"
		: fl & SEL_GPU ? " gpu"
			       : "",
		a, y, b > a ? b - a : 1);
	if (fl & SEL_GPU)
		holds(t, w->idx, y);
	if (p->signal && in_axis(t, p->exit_ns))
		fprintf(c->out, "<path class=\"x\" d=\"M%u %uL%u %uM%u %uL%u %u\"/>", b - 5, y + 1,
			b + 5, y + 11, b - 5, y + 11, b + 5, y + 1);
	fputs("</g>\n", c->out);
}

/* The folded processes in one row: how many started in each interval, as bars. */
static void folded_row(struct tl *t, __u32 y)
{
	struct html_host_ctx *c = t->c;
	__u32 n[FOLD_BINS] = {0}, max = 0;

	for (__u32 i = 0; i < c->sel.nprocs; i++) {
		const struct gctx_proc *p = gctx_model__proc(c->m, i);
		__u32 b;

		if (!p || !p->pid || (c->sel.flag[i] & SEL_SHOWN) || !in_axis(t, p->start_ns))
			continue;
		b = (xt(t, p->start_ns) - LABEL_W) * FOLD_BINS / (PLOT_W + 1);
		if (++n[b] > max)
			max = n[b];
	}
	fprintf(c->out,
		"<g class=\"tlfolded\"><text class=\"fold\" x=\"4\" y=\"%u\">+%u folded"
		"</text><title>processes folded (no GPU state, or past the first members "
		"of an incident): how many were forked in each interval, the most %u</title>",
		y + 11, c->sel.nfolded, max);
	for (__u32 b = 0; b < FOLD_BINS; b++) {
		__u32 h = n[b] ? 1 + n[b] * 11 / max : 0;

		if (h)
			fprintf(c->out,
				"<rect class=\"foldbar\" x=\"%u\" y=\"%u\" width=\"%u\" "
				"height=\"%u\"/>",
				LABEL_W + b * PLOT_W / FOLD_BINS, y + 12 - h, PLOT_W / FOLD_BINS,
				h);
	}
	fputs("</g>\n", c->out);
}

static void file_rows(struct tl *t, __u32 y0)
{
	struct html_host_ctx *c = t->c;

	for (__u32 i = 0; i < t->nfiles; i++) {
		const struct gctx_gpu_file *f = gctx_model__file(c->m, i);
		size_t len, from;
		__u32 y = y0 + ROW_H * i, a = xt(t, f->open_ns),
		      b = f->closed && f->close_ns ? xt(t, f->close_ns) : LABEL_W + PLOT_W;

		fprintf(c->out, "<g class=\"tlfile\" data-file=\"%u\"><text x=\"4\" y=\"%u\">#%u ",
			f->id, y + 11, f->id);
		/* the end of the path says which device it is */
		len = strnlen(f->path, sizeof(f->path));
		from = len > 20 ? len - 20 : 0;
		while (from && from < len && ((unsigned char)f->path[from] & 0xc0) == 0x80)
			from++; /* not inside a UTF-8 sequence */
		if (from)
			fputs("...", c->out);
		gctx_html_esc(c->out, f->path + from, len - from);
		fprintf(c->out,
			"</text><rect class=\"file\" x=\"%u\" y=\"%u\" width=\"%u\" height=\"10\"/>"
			"</g>\n",
			a, y + 1, b > a ? b - a : 1);
	}
}

/* Each incident's moments, lines across every row; its findings as diamonds on their rows. */
static void marks(struct tl *t, const __s32 *rowof)
{
	struct html_host_ctx *c = t->c;
	__u32 nmarks = 0, n = gctx_analysis__nincidents(c->an);

	for (__u32 i = 0; i < n && i < HTML_MAX_INCIDENTS; i++) {
		const struct gctx_incident *in = gctx_analysis__incident(c->an, i);
		const struct {
			__u64 ts;
			const char *what;
		} at[] = {{in->init_ns, "init"}, {in->first_ns, "first"}, {in->last_ns, "last"}};

		fprintf(c->out, "<g class=\"mark\" data-incident=\"%u\">", in->id);
		for (__u32 k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
			__u32 x;

			if (!in_axis(t, at[k].ts) || (k == 2 && in->last_ns == in->first_ns))
				continue;
			x = xt(t, at[k].ts);
			fprintf(
			    c->out,
			    "<line class=\"mark\" data-at=\"%s\" x1=\"%u\" y1=\"%u\" x2=\"%u\" "
			    "y2=\"%u\"/><text class=\"marktext\" x=\"%u\" y=\"%u\">#%u %s</text>",
			    at[k].what, x, TOP - 28, x, t->height, x + 2, TOP - 26 + 10 * k, in->id,
			    at[k].what);
		}
		for (__u32 k = 0; k < in->nfindings && nmarks < HTML_MAX_MARKS; k++) {
			const struct gctx_finding *f =
			    gctx_model__finding(c->m, in->findings[k] - 1);
			__u32 x, y;

			if (!f || f->proc_idx >= c->sel.nprocs || rowof[f->proc_idx] < 0 ||
			    !in_axis(t, f->time_ns))
				continue;
			x = xt(t, f->time_ns);
			y = TOP + ROW_H * rowof[f->proc_idx] + 6;
			fprintf(
			    c->out,
			    "<path class=\"find\" data-finding=\"%u\" d=\"M%u %uL%u %uL%u %uL%u "
			    "%uZ\"/>",
			    f->id, x, y - 6, x + 5, y, x, y + 6, x - 5, y);
			nmarks++;
		}
		fputs("</g>\n", c->out);
	}
}

static void draw(struct html_host_ctx *c, __u64 t0, __u64 t1, const char *zoom, bool legend)
{
	struct html_sel *s = &c->sel;
	struct tl t = {.c = c, .t0 = t0, .t1 = t1};
	__u32 nf = gctx_model__nfiles(c->m), y_files;
	__s32 *rowof = calloc(s->nprocs + 1, sizeof(*rowof));
	char a[32], b[32];

	if (!rowof)
		return;
	for (__u32 i = 0; i < s->nprocs; i++)
		rowof[i] = -1;
	for (__u32 r = 0; r < s->nrows; r++)
		rowof[s->rows[r].idx] = r;
	t.nfiles = nf > HTML_MAX_FILES ? HTML_MAX_FILES : nf;
	y_files = TOP + ROW_H * (s->nrows + (s->nfolded ? 1 : 0)) + (t.nfiles ? ROW_H : 0);
	t.height = y_files + ROW_H * t.nfiles + 4;
	html_time(a, sizeof(a), c, t0);
	html_time(b, sizeof(b), c, t1);
	if (zoom) {
		fprintf(c->out, "<h2 id=\"h%u-zoom\">Timeline around the %s (%s to %s s)</h2>\n",
			c->host, zoom, a, b);
	} else {
		fprintf(c->out, "<h2 id=\"h%u-timeline\">Timeline, the whole run (%s to %s s; %u ",
			c->host, a, b, s->nrows);
		fprintf(c->out, "processes");
		if (s->nfolded)
			fprintf(c->out, ", %u folded", s->nfolded);
		fprintf(c->out, "; %u GPU file%s", nf, nf == 1 ? "" : "s");
		if (nf > t.nfiles)
			fprintf(c->out, ", the first %u shown", t.nfiles);
		fputs(")</h2>\n", c->out);
	}
	if (legend)
		fputs(
		    "<p class=\"legend\"><span><i class=\"sw gpu\"></i>held "
		    "(opened)</span><span><i "
		    "class=\"sw inh\"></i>held (inherited)</span><span><i class=\"sw "
		    "file\"></i>GPU file open</span><span>&#x25c6; finding, dashed: incident</span>"
		    "</p>\n",
		    c->out);
	fprintf(c->out,
		"<div class=\"svgbox\"><svg class=\"timeline%s\" "
		"xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\">\n",
		zoom ? " zoom" : "", LABEL_W + PLOT_W + 40, t.height);
	ticks(&t);
	for (__u32 r = 0; r < s->nrows; r++)
		proc_row(&t, r);
	if (s->nfolded)
		folded_row(&t, TOP + ROW_H * s->nrows);
	if (t.nfiles)
		fprintf(c->out, "<text class=\"fold\" x=\"4\" y=\"%u\">GPU files</text>\n",
			y_files - 4);
	file_rows(&t, y_files);
	marks(&t, rowof);
	fputs("</svg></div>\n", c->out);
	free(rowof);
}

/* The incidents' span, else the GPU files' (0, 0 when neither). */
static void focus(struct html_host_ctx *c, __u64 *lo, __u64 *hi, const char **what)
{
	*lo = ~0ull;
	*hi = 0;
	*what = "incidents";
	for (__u32 i = 0; i < gctx_analysis__nincidents(c->an) && i < HTML_MAX_INCIDENTS; i++) {
		const struct gctx_incident *in = gctx_analysis__incident(c->an, i);
		__u64 a = in->init_ns && in->init_ns < in->first_ns ? in->init_ns : in->first_ns;

		if (a && a < *lo)
			*lo = a;
		if (in->last_ns > *hi)
			*hi = in->last_ns;
	}
	if (*hi)
		return;
	*what = "GPU use";
	for (__u32 i = 0; i < gctx_model__nfiles(c->m); i++) {
		const struct gctx_gpu_file *f = gctx_model__file(c->m, i);
		__u64 e = f && f->closed && f->close_ns ? f->close_ns : f ? f->open_ns : 0;

		if (f && f->open_ns && f->open_ns < *lo)
			*lo = f->open_ns;
		if (e > *hi)
			*hi = e;
	}
}

void html_timeline(struct html_host_ctx *c)
{
	__u64 lo, hi, margin;
	const char *what;
	bool zoomed = false;

	/* what matters often takes milliseconds of a run of minutes: drawn first, closer, then
	 * the whole run */
	focus(c, &lo, &hi, &what);
	if (hi >= lo && hi) {
		margin = (hi - lo) / 10 > 500000 ? (hi - lo) / 10 : 500000;
		lo = lo > c->t0 + margin ? lo - margin : c->t0;
		hi = hi + margin < c->t1 ? hi + margin : c->t1;
		zoomed = hi > lo && (hi - lo) * 5 < c->t1 - c->t0;
		if (zoomed)
			draw(c, lo, hi, what, true);
	}
	draw(c, c->t0, c->t1, NULL, !zoomed);
}
