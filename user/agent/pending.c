// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's pending trees, bounded per owner (pending.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/pending.h"
#include "lib/grow.h"

bool pending_open(const struct pending *p)
{
	return !p->written || p->due_ns;
}

void pending_remove(struct pend_table *t, __u32 i)
{
	t->v[i] = t->v[--t->n];
}

void pending_free(struct pend_table *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

static __u32 open_of(const struct pend_table *t, const char *owner)
{
	__u32 n = 0;

	for (__u32 i = 0; i < t->n; i++)
		n += pending_open(&t->v[i]) && !strcmp(t->v[i].owner, owner);
	return n;
}

/* The newest open tree of the owner with the most open trees, if that owner has more than
 * floor of them; -1 otherwise. */
static int newest_of_biggest(const struct pend_table *t, __u32 floor)
{
	__u32 most = floor;
	int pick = -1;

	for (__u32 i = 0; i < t->n; i++) {
		__u32 n;

		if (!pending_open(&t->v[i]))
			continue;
		n = open_of(t, t->v[i].owner);
		if (n > most ||
		    (n == most && pick >= 0 && !strcmp(t->v[i].owner, t->v[pick].owner) &&
		     t->v[i].first_ns > t->v[pick].first_ns)) {
			most = n;
			pick = i;
		}
	}
	return pick;
}

struct pending *pending_admit(struct pend_table *t, const char *owner, __u64 now)
{
	__u32 per_owner = t->per_owner ? t->per_owner : AGENT_PEND_PER_OWNER;
	__u32 open_max = t->open_max ? t->open_max : AGENT_PEND_OPEN_MAX;
	__u32 watch_max = t->watch_max ? t->watch_max : AGENT_PEND_WATCH_MAX;
	__u32 open = 0, watched = 0, mine = open_of(t, owner);
	struct pending *p;
	int oldest = -1;

	for (__u32 i = 0; i < t->n; i++) {
		if (pending_open(&t->v[i])) {
			open++;
		} else {
			watched++;
			if (oldest < 0 || t->v[i].first_ns < t->v[oldest].first_ns)
				oldest = i;
		}
	}
	if (mine >= per_owner) {
		t->dropped++;
		return NULL;
	}
	if (open >= open_max) {
		/* an owner with at least two more than this one would then have gives one up */
		int give = newest_of_biggest(t, mine + 1);

		t->dropped++; /* this one, or the one given up */
		if (give < 0)
			return NULL;
		pending_remove(t, give);
	}
	if (watched >= watch_max && oldest >= 0) {
		/* recomputed: a removal above may have moved it */
		oldest = -1;
		for (__u32 i = 0; i < t->n; i++)
			if (!pending_open(&t->v[i]) &&
			    (oldest < 0 || t->v[i].first_ns < t->v[oldest].first_ns))
				oldest = i;
		if (oldest >= 0) {
			pending_remove(t, oldest);
			t->forgotten++;
		}
	}
	if (gctx_grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v))) {
		t->dropped++;
		return NULL;
	}
	p = &t->v[t->n++];
	memset(p, 0, sizeof(*p));
	snprintf(p->owner, sizeof(p->owner), "%s", owner);
	p->first_ns = now;
	return p;
}
