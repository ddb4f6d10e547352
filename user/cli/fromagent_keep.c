// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's node-wide records a job's trace may carry (fromagent_keep.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cli/fromagent_keep.h"
#include "lib/grow.h"
#include "gpuctx_events.h"

struct held {
	__u32 type, len;
	void *data;
};

struct file_id {
	__u64 ino;
	__u32 dev; /* a mapping's filesystem, or an opened device's rdev */
};

struct fa_keep {
	struct held *held;
	__u32 nheld, cap_held;
	struct file_id *maps, *opens; /* what the job's processes mapped, opened */
	__u32 nmaps, cap_maps, nopens, cap_opens;
	char (*paths)[GCTX_PATH_LEN]; /* GPU files the job's processes held at attach */
	__u32 npaths, cap_paths;
};

struct fa_keep *fa_keep__new(void)
{
	return calloc(1, sizeof(struct fa_keep));
}

void fa_keep__free(struct fa_keep *k)
{
	if (!k)
		return;
	for (__u32 i = 0; i < k->nheld; i++)
		free(k->held[i].data);
	free(k->held);
	free(k->maps);
	free(k->opens);
	free(k->paths);
	free(k);
}

static int note(struct file_id **v, __u32 *n, __u32 *cap, __u32 dev, __u64 ino)
{
	for (__u32 i = 0; i < *n; i++)
		if ((*v)[i].ino == ino && (*v)[i].dev == dev)
			return 0;
	if (gctx_grow(v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = (struct file_id){.ino = ino, .dev = dev};
	return 0;
}

static bool noted(const struct file_id *v, __u32 n, __u32 dev, __u64 ino)
{
	for (__u32 i = 0; i < n; i++)
		if (v[i].ino == ino && v[i].dev == dev)
			return true;
	return false;
}

int fa_keep__take(struct fa_keep *k, __u32 type, const void *data, __u32 len)
{
	if (type == GCTX_REC_PROBE || type == GCTX_REC_DEVICE) {
		struct held h = {.type = type, .len = len, .data = malloc(len ? len : 1)};

		if (!h.data || gctx_grow(&k->held, &k->cap_held, k->nheld + 1, sizeof(h))) {
			free(h.data);
			return -ENOMEM;
		}
		memcpy(h.data, data, len);
		k->held[k->nheld++] = h;
		return 1;
	}
	if (type == GCTX_EV_LIBMAP && len >= sizeof(struct gctx_ev_libmap)) {
		struct gctx_ev_libmap e;

		memcpy(&e, data, sizeof(e));
		return note(&k->maps, &k->nmaps, &k->cap_maps, e.dev, e.ino);
	}
	if (type == GCTX_EV_APIMAP && len >= sizeof(struct gctx_ev_apimap)) {
		struct gctx_ev_apimap e;

		memcpy(&e, data, sizeof(e));
		return note(&k->maps, &k->nmaps, &k->cap_maps, e.dev, e.ino);
	}
	if (type == GCTX_EV_OPEN && len >= sizeof(struct gctx_ev_open)) {
		struct gctx_ev_open e;

		memcpy(&e, data, sizeof(e));
		return note(&k->opens, &k->nopens, &k->cap_opens, e.rdev, e.ino);
	}
	if (type == GCTX_REC_FILE_PRESENT && len >= sizeof(struct gctx_rec_file)) {
		const struct gctx_rec_file *f = data;

		if (gctx_grow(&k->paths, &k->cap_paths, k->npaths + 1, sizeof(*k->paths)))
			return -ENOMEM;
		memcpy(k->paths[k->npaths], f->path, GCTX_PATH_LEN);
		k->paths[k->npaths++][GCTX_PATH_LEN - 1] = '\0';
	}
	return 0;
}

/* Root's file (system software, the node's devices): the path is nobody's private one. */
static bool roots(const char *path, struct stat *st)
{
	return !stat(path, st) && st->st_uid == 0;
}

static bool keep_probe(const struct fa_keep *k, const struct gctx_rec_probe *p)
{
	char lib[GCTX_PATH_LEN];
	struct stat st;

	memcpy(lib, p->lib, sizeof(lib));
	lib[sizeof(lib) - 1] = '\0';
	if (stat(lib, &st))
		return false;
	return noted(k->maps, k->nmaps, (major(st.st_dev) << 20) | minor(st.st_dev), st.st_ino) ||
	       st.st_uid == 0;
}

static bool keep_device(const struct fa_keep *k, const struct gctx_rec_device *d)
{
	char path[GCTX_PATH_LEN];
	struct stat st;

	if (noted(k->opens, k->nopens, d->rdev, d->ino))
		return true;
	memcpy(path, d->path, sizeof(path));
	path[sizeof(path) - 1] = '\0';
	for (__u32 i = 0; i < k->npaths; i++)
		if (!strcmp(k->paths[i], path))
			return true;
	return roots(path, &st);
}

__u32 fa_keep__flush(struct fa_keep *k,
		     void (*cb)(void *ctx, __u32 type, const void *data, __u32 len), void *ctx)
{
	__u32 left = 0;

	for (__u32 i = 0; i < k->nheld; i++) {
		const struct held *h = &k->held[i];
		bool keep = false;

		if (h->type == GCTX_REC_PROBE && h->len >= sizeof(struct gctx_rec_probe))
			keep = keep_probe(k, h->data);
		else if (h->type == GCTX_REC_DEVICE && h->len >= sizeof(struct gctx_rec_device))
			keep = keep_device(k, h->data);
		if (keep)
			cb(ctx, h->type, h->data, h->len);
		else
			left++;
	}
	return left;
}
