// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fix hints: which change to suggest for an incident, chosen from what the trace shows of the
 * user's stack (Python? torch DataLoader workers? workers re-created every epoch? a parent that
 * initialised the GPU without using it?), and the sentence for each.
 */
#include <stdio.h>
#include <string.h>

#include "model/analysis.h"

__u32 gctx_hints__choose(const struct gctx_hint_evidence *ev)
{
	__u32 f = 0;

	switch (ev->kind) {
	case GCTX_INC_POISON_FORK:
	case GCTX_INC_FORK_INHERIT:
		if (ev->python) {
			/* a DataLoader cannot be told from another pool without its worker names:
			 * both fixes, the proven one first */
			f |= GCTX_FIX_MP_START_METHOD | GCTX_FIX_DL_CONTEXT;
			if (ev->generations > 1)
				f |= GCTX_FIX_PERSISTENT;
		} else {
			f |= GCTX_FIX_EXEC_CHILD;
		}
		f |= GCTX_FIX_INIT_AFTER_FORK;
		if (ev->init_unused)
			f |= GCTX_FIX_IMPORT_INIT;
		break;
	case GCTX_INC_SPAWN_STARTUP:
		f |= GCTX_FIX_MAIN_GUARD;
		break;
	case GCTX_INC_FD_ACROSS_EXEC:
		f |= GCTX_FIX_CLOEXEC;
		break;
	case GCTX_INC_FOREIGN_USE:
		f |= GCTX_FIX_FD_PASSING;
		break;
	case GCTX_INC_API_ERRORS:
	default:
		f |= GCTX_FIX_API_CHECK;
		break;
	}
	return f;
}

struct hint_text {
	__u32 bit;
	const char *text;
};

/* In the order they are printed; %s is the API ("CUDA", "HIP"). */
static const struct hint_text hint_texts[] = {
    {GCTX_FIX_DL_CONTEXT,
     "create the DataLoader with multiprocessing_context=\"spawn\" (or \"forkserver\") so "
     "its workers start without the parent's %s state"},
    {GCTX_FIX_MP_START_METHOD,
     "call multiprocessing.set_start_method(\"spawn\") (or \"forkserver\") once, before any "
     "worker starts, under `if __name__ == \"__main__\":`"},
    {GCTX_FIX_DL_CONTEXT,
     "for a torch DataLoader, multiprocessing_context=\"spawn\" does the same for its "
     "workers"},
    {GCTX_FIX_EXEC_CHILD,
     "exec a new program in the child (posix_spawn, or fork then exec) so it starts with no "
     "%s state"},
    {GCTX_FIX_INIT_AFTER_FORK,
     "or initialise %s only after the workers have started, and never use it in a forked "
     "child"},
    {GCTX_FIX_PERSISTENT,
     "the workers are forked again every epoch: DataLoader(persistent_workers=True) starts "
     "them once"},
    {GCTX_FIX_IMPORT_INIT,
     "the parent initialised %s but allocated nothing before forking: an import or a library "
     "at start-up did it; delay that import, or the first GPU call, until after the fork"},
    {GCTX_FIX_MAIN_GUARD,
     "spawned workers re-run the main script: put its top-level code under `if __name__ == "
     "\"__main__\":` so a worker only imports it"},
    {GCTX_FIX_CLOEXEC,
     "open GPU device files with O_CLOEXEC (or set FD_CLOEXEC with fcntl) so exec closes "
     "them"},
    {GCTX_FIX_FD_PASSING,
     "do not pass GPU file descriptors between processes (SCM_RIGHTS, pidfd_getfd): each "
     "process opens the device itself"},
    {GCTX_FIX_API_CHECK,
     "look at the failing calls and their codes below; they are not caused by a fork"},
};

void gctx_hints__text(__u32 fixes, const struct gctx_hint_evidence *ev, char *buf, size_t len)
{
	const char *api = ev->hip ? "HIP" : ev->no_api ? "GPU" : "CUDA";
	size_t off = 0;
	int n = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(hint_texts) / sizeof(hint_texts[0]); i++) {
		char one[320];
		int w;

		if (!(fixes & hint_texts[i].bit))
			continue;
		/* the DataLoader fix leads when its workers were seen, else follows */
		if (hint_texts[i].bit == GCTX_FIX_DL_CONTEXT && (i == 0) != ev->dataloader)
			continue;
		snprintf(one, sizeof(one), hint_texts[i].text, api);
		/* "or initialise ..." only reads as an alternative after another fix */
		if (!n && !strncmp(one, "or ", 3))
			memmove(one, one + 3, strlen(one + 3) + 1);
		w = snprintf(buf + off, len - off, "%s%s", n ? "; " : "", one);
		if (w < 0 || (size_t)w >= len - off)
			break;
		off += w;
		n++;
	}
	if (n && off + 1 < len) {
		buf[0] = (char)(buf[0] >= 'a' && buf[0] <= 'z' ? buf[0] - 'a' + 'A' : buf[0]);
		buf[off++] = '.';
		buf[off] = '\0';
	}
}
