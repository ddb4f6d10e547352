/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Private to the HTML page (html_*.c): one host's state while its part of the page is written,
 * and the processes the pictures show (html_sel.c).
 */
#ifndef __GPUCTX_HTML_PRIV_H
#define __GPUCTX_HTML_PRIV_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "model/analysis.h"
#include "model/model.h"
#include "output/html/html.h"
#include "output/html/html_esc.h"

/* Bounds that keep the page readable and its size bounded at any trace size: what is past
 * them is folded, and the page says how many. */
#define HTML_MAX_ROWS	   300 /* processes in the tree and the timeline */
#define HTML_MAX_INCIDENTS 20  /* incidents in full, their sources always shown, marked */
#define HTML_MAX_INC_LINES 200 /* incidents past those: one line each */
#define HTML_MAX_MEMBERS   40  /* members of one incident shown (crashed ones always) */
#define HTML_MAX_FILES	   60  /* GPU files on the timeline */
#define HTML_MAX_MARKS	   400 /* finding marks on the timeline */
#define HTML_MAX_STACKS	   6   /* stacks shown per incident */
#define HTML_MAX_PIDS	   48  /* pids and finding ids listed per incident */
#define HTML_MAX_HOLDS_TAG 3   /* GPU files named per process in the tree */

/* Per-process flags of the selection. */
enum {
	SEL_GPU = 1u << 0,   /* holds or held GPU state, or used the GPU */
	SEL_INC = 1u << 1,   /* a member or the source of an incident */
	SEL_SRC = 1u << 2,   /* the source of an incident */
	SEL_CRASH = 1u << 3, /* killed by a signal */
	SEL_SHOWN = 1u << 4, /* a row of the tree and the timeline */
};

struct html_row {
	__u32 idx;    /* process index */
	__u32 depth;  /* in the shown tree */
	__u32 folded; /* processes under it not shown */
};

struct html_sel {
	__u32 nprocs;
	__u8 *flag; /* SEL_* per process */
	__u32 *inc; /* first incident id per process, 0 none */
	struct html_row *rows;
	__u32 nrows;
	__u32 nfolded;	   /* processes not shown */
	__u32 nfolded_top; /* of which in trees with no shown process */
	__u32 nfolded_inc; /* incident members not shown */
};

/* One host while its section is written. */
struct html_host_ctx {
	FILE *out;
	__u32 host; /* index: ids of its elements are unique on the page */
	const struct gctx_model *m;
	const struct gctx_trace_meta *meta;
	struct gctx_analysis *an;
	__u64 start;  /* the trace's start (times on the page are seconds since it) */
	__u64 t0, t1; /* the timeline's axis, the host's clock */
	struct html_sel sel;
};

/* html_sel.c: 0 or -ENOMEM */
int html_sel__build(struct html_sel *s, const struct gctx_model *m, const struct gctx_analysis *an);
void html_sel__free(struct html_sel *s);

/* html_incidents.c: the verdict and each incident */
void html_verdict(struct html_host_ctx *c);
/* html_tree.c: the process tree (SVG) */
void html_tree(struct html_host_ctx *c);
/* html_timeline.c: processes and GPU files over time (SVG) */
void html_timeline(struct html_host_ctx *c);

/* html_page.c: seconds since the trace's start, "1.234" ("?" when unknown) */
void html_time(char *dst, size_t len, const struct html_host_ctx *c, __u64 ts);
/* A process's label (gctx_proc_label), escaped */
void html_proc_label(struct html_host_ctx *c, __u32 idx);

#endif /* __GPUCTX_HTML_PRIV_H */
