// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The process tree as a picture (SVG): one row per shown process, indented under its fork
 * parent; a red dashed edge for a fork without exec (the child runs its parent's image, GPU
 * state included); what it did with each GPU file (opened, inherited from whom, used); how it
 * ended; the incident's processes highlighted. What html_sel.c folded is counted on the row
 * of the process it descends from.
 */
#include <stdlib.h>
#include <string.h>

#include "output/html/html_priv.h"
#include "output/report/print.h"

#define ROW_H	   20
#define INDENT	   16
#define MAX_INDENT 32 /* deeper rows are drawn at this depth, their depth said */
#define TREE_W	   1400

struct hold_tag {
	__u32 file_id, from_pid;
	enum gctx_hold_how how;
	bool used;
};

struct row_tags {
	struct hold_tag t[HTML_MAX_HOLDS_TAG];
	__u32 n, more;
};

static __u32 x_of(__u32 depth)
{
	return 12 + (depth > MAX_INDENT ? MAX_INDENT : depth) * INDENT;
}

static void tags(struct html_host_ctx *c, const struct gctx_proc *p, const struct row_tags *rt,
		 __u32 folded)
{
	static const char *const how[] = {"opened", "inherited", "received", "present"};
	char sig[32];

	for (__u32 k = 0; k < rt->n; k++) {
		const struct hold_tag *t = &rt->t[k];

		fprintf(c->out, " %s #%u", t->how <= GCTX_HOLD_PRESENT ? how[t->how] : "held",
			t->file_id);
		if (t->how == GCTX_HOLD_INHERITED)
			fprintf(c->out, " from %u", t->from_pid);
		if (t->used)
			fputs(" (used)", c->out);
	}
	if (rt->more)
		fprintf(c->out, " +%u GPU files", rt->more);
	if (gctx_model__api_calls(c->m, p->idx))
		fprintf(c->out, " %llu API calls",
			(unsigned long long)gctx_model__api_calls(c->m, p->idx));
	if (p->signal) {
		gctx_format_signal(sig, sizeof(sig), p->signal);
		fprintf(c->out, " killed by %s%s", sig, p->core_dumped ? " (core dumped)" : "");
	} else if (p->exited && p->exit_code > 0) {
		fprintf(c->out, " exit %d", p->exit_code);
	}
	if (folded)
		fprintf(c->out, " [+%u folded]", folded);
}

static void row(struct html_host_ctx *c, __u32 r, const __s32 *rowof, const struct row_tags *rt)
{
	const struct html_row *w = &c->sel.rows[r];
	const struct gctx_proc *p = gctx_model__proc(c->m, w->idx);
	__u8 fl = c->sel.flag[w->idx];
	__u32 x = x_of(w->depth), y = ROW_H * r + ROW_H;
	bool noexec = p->parent_idx >= 0 && !p->nexecs && !p->present_at_attach;
	__s32 pr =
	    p->parent_idx >= 0 && (__u32)p->parent_idx < c->sel.nprocs ? rowof[p->parent_idx] : -1;
	const char *cls = fl & SEL_INC ? "inc" : fl & SEL_GPU ? "gpu" : "";

	fprintf(c->out, "<g class=\"proc%s%s%s\" data-pid=\"%u\"", fl & SEL_INC ? " inc" : "",
		fl & SEL_GPU ? " gpu" : "", p->signal ? " crashed" : "", p->pid);
	if (c->sel.inc[w->idx])
		fprintf(c->out, " data-incident=\"%u\"", c->sel.inc[w->idx]);
	/* the whole command line, on hover */
	fprintf(c->out, "><title>%u ", p->pid);
	if (p->nexecs) {
		const struct gctx_exec *x = &p->execs[p->nexecs - 1];

		gctx_html_str(c->out, x->filename);
		fputs(": ", c->out);
		gctx_html_argv(c->out, x->args, x->args_len, 400);
	} else {
		gctx_html_str(c->out, p->exe);
		fputs(": ", c->out);
		gctx_html_argv(c->out, p->args, p->args_len, 400);
	}
	fputs("</title>", c->out);
	if (fl & SEL_INC)
		fprintf(c->out, "<rect class=\"hl\" x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\"/>",
			x - 8, y - ROW_H / 2, TREE_W - x, ROW_H);
	if (pr >= 0 && (__u32)pr < r) {
		__u32 px = x_of(c->sel.rows[pr].depth), py = ROW_H * pr + ROW_H;

		fprintf(c->out, "<path class=\"edge%s\" d=\"M%u %uV%uH%u\"/>",
			noexec ? " noexec" : "", px, py + 5, y, x - 5);
	}
	fprintf(c->out, "<circle class=\"dot %s\" cx=\"%u\" cy=\"%u\" r=\"5\"/>", cls, x, y);
	if (p->signal)
		fprintf(c->out, "<path class=\"x\" d=\"M%u %uL%u %uM%u %uL%u %u\"/>", x - 5, y - 5,
			x + 5, y + 5, x - 5, y + 5, x + 5, y - 5);
	fprintf(c->out, "<text x=\"%u\" y=\"%u\">", x + 10, y + 4);
	if (w->depth > MAX_INDENT)
		fprintf(c->out, "[depth %u] ", w->depth);
	fprintf(c->out, "%u ", p->pid);
	html_proc_label(c, w->idx);
	fputs("<tspan class=\"tag\">", c->out);
	if (noexec)
		fputs(" fork, no exec;", c->out);
	tags(c, p, &rt[r], w->folded);
	fputs("</tspan>", c->out);
	if (c->sel.inc[w->idx])
		fprintf(c->out, "<tspan class=\"inctag\"> incident #%u%s</tspan>",
			c->sel.inc[w->idx], fl & SEL_SRC ? " (source)" : "");
	fputs("</text></g>\n", c->out);
}

/* Per shown row: what its process did with each GPU file (the first few). */
static void collect(struct html_host_ctx *c, const __s32 *rowof, struct row_tags *rt)
{
	for (__u32 i = 0; i < gctx_model__nfiles(c->m); i++) {
		const struct gctx_gpu_file *f = gctx_model__file(c->m, i);

		for (__u32 k = 0; f && k < f->nholders; k++) {
			const struct gctx_holder *h = &f->holders[k];
			const struct gctx_proc *from = gctx_model__proc(c->m, h->from_proc_idx);
			struct row_tags *t;

			if (h->proc_idx >= c->sel.nprocs || rowof[h->proc_idx] < 0)
				continue;
			t = &rt[rowof[h->proc_idx]];
			if (t->n == HTML_MAX_HOLDS_TAG) {
				t->more++;
				continue;
			}
			t->t[t->n].file_id = f->id;
			t->t[t->n].how = h->how;
			t->t[t->n].from_pid = from ? from->pid : 0;
			t->t[t->n++].used = h->nioctls || h->nmmaps;
		}
	}
}

void html_tree(struct html_host_ctx *c)
{
	struct html_sel *s = &c->sel;
	__s32 *rowof = malloc((s->nprocs + 1) * sizeof(*rowof));
	struct row_tags *rt = calloc(s->nrows + 1, sizeof(*rt));

	fprintf(c->out, "<h2 id=\"h%u-tree\">Processes (%u", c->host, gctx_model__nprocs(c->m));
	if (s->nfolded)
		fprintf(c->out, "; %u shown, %u folded: no GPU state%s", s->nrows, s->nfolded,
			s->nfolded_inc ? ", or past the first members of an incident" : "");
	fputs(")</h2>\n<p class=\"legend\"><span><i class=\"sw gpu\"></i>GPU state</span>"
	      "<span><i class=\"sw inc\"></i>incident</span><span><i class=\"sw noexec\"></i>fork "
	      "without exec</span><span>&#x2716; killed by a signal</span></p>\n",
	      c->out);
	if (!rowof || !rt) {
		fputs("<p class=\"note\">Out of memory: no tree.</p>\n", c->out);
		goto out;
	}
	for (__u32 i = 0; i < s->nprocs; i++)
		rowof[i] = -1;
	for (__u32 r = 0; r < s->nrows; r++)
		rowof[s->rows[r].idx] = r;
	collect(c, rowof, rt);
	fprintf(c->out,
		"<div class=\"svgbox\"><svg class=\"tree\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%u\" height=\"%u\">\n",
		TREE_W, ROW_H * (s->nrows + 1) + (s->nfolded_top ? ROW_H : 0));
	for (__u32 r = 0; r < s->nrows; r++)
		row(c, r, rowof, rt);
	if (s->nfolded_top)
		fprintf(c->out,
			"<text class=\"fold\" x=\"12\" y=\"%u\">+%u processes folded in "
			"other trees (no GPU state)</text>\n",
			ROW_H * (s->nrows + 1) + 4, s->nfolded_top);
	fputs("</svg></div>\n", c->out);
out:
	free(rowof);
	free(rt);
}
