// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Job attribution from a cgroup path (jobattr.h). The path is split into its components once;
 * each scheduler's rule then looks for its own components. Only characters that may appear in
 * the ids are copied: anything else ends the id, so a strange cgroup name never reaches a
 * report unescaped.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "model/jobattr.h"

#define MAX_COMPS 48
#define COMP_MAX  255 /* a cgroup name is a file name */

struct comps {
	const char *s[MAX_COMPS];
	size_t len[MAX_COMPS];
	int n;
};

static void split(const char *path, struct comps *c)
{
	const char *p = path;

	c->n = 0;
	while (*p && c->n < MAX_COMPS) {
		const char *e;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		if (!e)
			e = p + strlen(p);
		if ((size_t)(e - p) <= COMP_MAX) {
			c->s[c->n] = p;
			c->len[c->n++] = e - p;
		}
		p = e;
	}
}

static bool has_prefix(const char *s, size_t len, const char *pre)
{
	size_t n = strlen(pre);

	return len >= n && !memcmp(s, pre, n);
}

static bool has_suffix(const char *s, size_t len, const char *suf)
{
	size_t n = strlen(suf);

	return len >= n && !memcmp(s + len - n, suf, n);
}

static bool id_char(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       ch == '-' || ch == '_' || ch == '.' || ch == '@' || ch == ':';
}

/* Copy the id characters of s[0..len) (stopping at the first other one) into dst. */
static size_t copy_id(char *dst, size_t size, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && i + 1 < size && id_char(s[i]); i++)
		dst[i] = s[i];
	dst[i] = '\0';
	return i;
}

static bool all_digits(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static bool all_hex(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool comp_is(const struct comps *c, int i, const char *name)
{
	return i < c->n && c->len[i] == strlen(name) && !memcmp(c->s[i], name, c->len[i]);
}

/*
 * Where slurmd puts a job, and nowhere else: a user may make any cgroup tree below the part
 * systemd delegates to them (.../user@UID.service/...), so a job_N there is their own name.
 *   cgroup v2: /system.slice/[NODE_]slurmstepd.scope/job_N/... (or, in a cgroup namespace
 *              rooted at the node's system.slice, /[NODE_]slurmstepd.scope/job_N/...)
 *   cgroup v1: /slurm[_NODE]/uid_N/job_N/... (gpuctx's own slurm_gpuctx_CLUSTER: no uid_N)
 * Returns the index of the job_N component, -1 when the path is not one of these.
 */
static int slurm_job_at(const struct comps *c)
{
	int i = 0;

	if (comp_is(c, 0, "system.slice") && c->n > 1 &&
	    has_suffix(c->s[1], c->len[1], "slurmstepd.scope"))
		i = 2;
	else if (c->n > 0 && has_suffix(c->s[0], c->len[0], "slurmstepd.scope"))
		i = 1;
	else if (c->n > 0 && ((c->len[0] == 5 && has_prefix(c->s[0], c->len[0], "slurm")) ||
			      has_prefix(c->s[0], c->len[0], "slurm_"))) {
		i = 1;
		if (i < c->n && has_prefix(c->s[i], c->len[i], "uid_") &&
		    all_digits(c->s[i] + 4, c->len[i] - 4))
			i++;
	} else {
		return -1;
	}
	if (i >= c->n || !has_prefix(c->s[i], c->len[i], "job_") ||
	    !all_digits(c->s[i] + 4, c->len[i] - 4))
		return -1;
	return i;
}

static bool try_slurm(const struct comps *c, struct gctx_job_attr *a)
{
	int i = slurm_job_at(c);

	if (i < 0)
		return false;
	a->kind = GCTX_JOB_SLURM;
	copy_id(a->id, sizeof(a->id), c->s[i] + 4, c->len[i] - 4);
	/* step_M right below the job, task_N anywhere below the step (v2: .../user/task_N) */
	if (i + 1 < c->n && has_prefix(c->s[i + 1], c->len[i + 1], "step_"))
		copy_id(a->step, sizeof(a->step), c->s[i + 1] + 5, c->len[i + 1] - 5);
	for (int k = i + 2; a->step[0] && k < c->n; k++)
		if (has_prefix(c->s[k], c->len[k], "task_")) {
			copy_id(a->task, sizeof(a->task), c->s[k] + 5, c->len[k] - 5);
			break;
		}
	return true;
}

/* A container's component: cri-containerd-ID.scope, crio-ID.scope, crio-conmon-ID.scope,
 * docker-ID.scope (systemd driver), or a bare hex id (cgroupfs driver). */
static bool container_comp(const char *s, size_t len, struct gctx_job_attr *a)
{
	static const struct {
		const char *prefix, *runtime;
	} rt[] = {
	    {"cri-containerd-", "containerd"},
	    {"crio-conmon-", "cri-o"},
	    {"crio-", "cri-o"},
	    {"docker-", "docker"},
	};

	for (size_t r = 0; r < sizeof(rt) / sizeof(rt[0]); r++) {
		size_t n = strlen(rt[r].prefix);

		if (!has_prefix(s, len, rt[r].prefix) || !has_suffix(s, len, ".scope"))
			continue;
		if (!all_hex(s + n, len - n - 6))
			return false;
		copy_id(a->container, sizeof(a->container), s + n, len - n - 6);
		snprintf(a->runtime, sizeof(a->runtime), "%s", rt[r].runtime);
		return true;
	}
	if (len >= 12 && all_hex(s, len)) {
		copy_id(a->container, sizeof(a->container), s, len);
		return true;
	}
	return false;
}

/* The pod's component: kubepods[-QOS]-pod<uid with _>.slice, or pod<uid>. Copies the uid
 * with '-' between its groups, as the API server writes it (kind prefixes kubelet-). */
static bool pod_comp(const char *s, size_t len, struct gctx_job_attr *a)
{
	const char *p = NULL;
	size_t n = 0, i;

	if (has_suffix(s, len, ".slice")) {
		const char *m = memmem(s, len, "-pod", 4);

		if (m) {
			p = m + 4;
			n = (size_t)(s + len - 6 - p);
		}
	} else if (has_prefix(s, len, "pod")) {
		p = s + 3;
		n = len - 3;
	}
	if (!p || n < 8 || n >= sizeof(a->id))
		return false;
	for (i = 0; i < n; i++) {
		char ch = p[i] == '_' ? '-' : p[i];

		if (!(ch == '-' || (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return false;
		a->id[i] = ch;
	}
	a->id[i] = '\0';
	return true;
}

static void k8s_qos(const char *s, size_t len, struct gctx_job_attr *a)
{
	static const char *const q[] = {"burstable", "besteffort"};

	for (size_t i = 0; i < 2; i++)
		if (memmem(s, len, q[i], strlen(q[i])))
			snprintf(a->qos, sizeof(a->qos), "%s", q[i]);
}

/*
 * Where the kubelet puts pods: /kubepods.slice/... (systemd driver), /kubepods/... (cgroupfs),
 * /kubelet.slice/kubelet-kubepods.slice/... (kind: a kubelet in a node container, seen from
 * the host below /system.slice/docker-ID.scope). The pod's component comes right after it,
 * or after its QoS class's. Returns the index of the component after the root, -1 when the
 * path starts elsewhere.
 */
static int kubepods_at(const struct comps *c)
{
	struct gctx_job_attr scratch = {};
	int b = 0;

	if (comp_is(c, 0, "system.slice") && c->n > 1 &&
	    has_prefix(c->s[1], c->len[1], "docker-") &&
	    container_comp(c->s[1], c->len[1], &scratch))
		b = 2;
	if (comp_is(c, b, "kubepods") || comp_is(c, b, "kubepods.slice"))
		return b + 1;
	if (comp_is(c, b, "kubelet.slice") && comp_is(c, b + 1, "kubelet-kubepods.slice"))
		return b + 2;
	return -1;
}

static bool try_k8s(const struct comps *c, struct gctx_job_attr *a)
{
	int i = kubepods_at(c);

	if (i < 0 || i >= c->n)
		return false;
	if (!pod_comp(c->s[i], c->len[i], a)) {
		/* the QoS class's: burstable, besteffort (cgroupfs), kubepods-QOS.slice */
		k8s_qos(c->s[i], c->len[i], a);
		if (!a->qos[0] || ++i >= c->n || !pod_comp(c->s[i], c->len[i], a)) {
			a->qos[0] = '\0';
			a->id[0] = '\0';
			return false;
		}
	}
	a->kind = GCTX_JOB_K8S;
	if (!a->qos[0])
		snprintf(a->qos, sizeof(a->qos), "guaranteed");
	if (i + 1 < c->n)
		container_comp(c->s[i + 1], c->len[i + 1], a);
	return true;
}

static bool try_systemd(const struct comps *c, struct gctx_job_attr *a)
{
	for (int i = c->n - 1; i >= 0; i--) {
		if (!has_suffix(c->s[i], c->len[i], ".service") &&
		    !has_suffix(c->s[i], c->len[i], ".scope"))
			continue;
		if (copy_id(a->id, sizeof(a->id), c->s[i], c->len[i]) != c->len[i])
			continue; /* a name we would have to cut or clean: not one to show */
		a->kind = GCTX_JOB_SYSTEMD;
		container_comp(c->s[i], c->len[i], a); /* docker-ID.scope outside Kubernetes */
		return true;
	}
	return false;
}

enum gctx_job_kind gctx_job_attr_parse(const char *path, struct gctx_job_attr *a)
{
	struct comps c;

	memset(a, 0, sizeof(*a));
	if (!path)
		return GCTX_JOB_NONE;
	split(path, &c);
	if (try_slurm(&c, a) || try_k8s(&c, a) || try_systemd(&c, a))
		return a->kind;
	memset(a, 0, sizeof(*a));
	return GCTX_JOB_NONE;
}

size_t gctx_job_cgroup_pick(const char *text, size_t len, char *path, size_t size)
{
	const char *p = text, *end = text + len;
	const char *first = NULL, *v2 = NULL, *attributed = NULL;
	size_t first_len = 0, v2_len = 0, attr_len = 0, n;

	if (!size)
		return 0;
	path[0] = '\0';
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *c1, *c2;
		size_t linelen = (nl ? nl : end) - p;

		c1 = memchr(p, ':', linelen);
		c2 = c1 ? memchr(c1 + 1, ':', p + linelen - c1 - 1) : NULL;
		if (c2 && c2[1] == '/') {
			const char *cp = c2 + 1;
			size_t cl = p + linelen - cp;
			char tmp[1024];
			struct gctx_job_attr a;

			if (!first) {
				first = cp;
				first_len = cl;
			}
			if (c1 == p + 1 && p[0] == '0' && c2 == c1 + 1) {
				v2 = cp;
				v2_len = cl;
			}
			if (!attributed && cl < sizeof(tmp)) {
				memcpy(tmp, cp, cl);
				tmp[cl] = '\0';
				if (gctx_job_attr_parse(tmp, &a) != GCTX_JOB_NONE) {
					attributed = cp;
					attr_len = cl;
				}
			}
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	/* the v2 path when it names a job; a v1 hierarchy's when only that one does (hybrid
	 * setups keep Slurm's or the kubelet's groups in v1 controllers) */
	if (v2 && (attributed == v2 || !attributed)) {
		attributed = v2;
		attr_len = v2_len;
	}
	if (!attributed) {
		attributed = first;
		attr_len = first_len;
	}
	if (!attributed)
		return 0;
	n = attr_len < size - 1 ? attr_len : size - 1;
	memcpy(path, attributed, n);
	path[n] = '\0';
	return n;
}

const char *gctx_job_kind_name(enum gctx_job_kind k)
{
	switch (k) {
	case GCTX_JOB_SLURM:
		return "slurm";
	case GCTX_JOB_K8S:
		return "k8s";
	case GCTX_JOB_SYSTEMD:
		return "systemd";
	default:
		return "none";
	}
}

void gctx_job_attr_format(const struct gctx_job_attr *a, char *buf, size_t size)
{
	size_t off = 0;

	if (!size)
		return;
	buf[0] = '\0';
	switch (a->kind) {
	case GCTX_JOB_SLURM:
		off = snprintf(buf, size, "slurm job %s", a->id);
		if (a->step[0] && off < size)
			off += snprintf(buf + off, size - off, " step %s", a->step);
		if (a->task[0] && off < size)
			snprintf(buf + off, size - off, " task %s", a->task);
		break;
	case GCTX_JOB_K8S:
		off = snprintf(buf, size, "k8s pod %s", a->id);
		if (a->container[0] && off < size)
			snprintf(buf + off, size - off, " container %.12s%s%s%s", a->container,
				 a->runtime[0] ? " (" : "", a->runtime, a->runtime[0] ? ")" : "");
		break;
	case GCTX_JOB_SYSTEMD:
		snprintf(buf, size, "systemd unit %s", a->id);
		break;
	default:
		break;
	}
}
