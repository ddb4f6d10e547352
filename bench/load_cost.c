// SPDX-License-Identifier: GPL-2.0
/*
 * How much work the verifier does to load a BPF object: the instructions it processed for
 * each program (log level 4 prints "processed N insns"), which is most of gpuctx's start-up
 * time and, unlike a timing, the same on every run of one kernel. Not the same on every
 * kernel: one object can cost twice as much on another build of the same version (state
 * pruning changes between builds), so a budget compares two objects on one kernel.
 *
 * Usage: load_cost [--max N] OBJECT.bpf.o
 *        load_cost --against BASE.bpf.o [--slack PCT] OBJECT.bpf.o
 * Prints one line per program and the total (instructions, and the verifier's time in µs,
 * which unlike the count varies with the machine's load); with --max, exits 1 when the total is
 * above N. With --against, loads both objects here and prints each program's count in both; exits 1
 * when OBJECT's total is more than PCT percent (default 5) above BASE's.
 * Programs gpuctx loads only as fallbacks (raw_tp lineage) or on demand (the fd iterator) are
 * left out. Needs root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#define MAX_PROGS 64
#define LOG_SIZE  (1 << 16)
#define NAME_LEN  64

struct cost {
	int n;
	long total;
	char name[MAX_PROGS][NAME_LEN];
	long insns[MAX_PROGS];
	long usec[MAX_PROGS]; /* the verifier's own time: varies with the machine's load */
	long total_usec;
};

static bool skipped(const char *name)
{
	return strstr(name, "_raw") || !strcmp(name, "gpu_file_iter");
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, args) : 0;
}

/* Loads path with log level 4 and fills c; returns 0, or 2 with a message. */
static int measure(const char *path, struct cost *c)
{
	static char logs[MAX_PROGS][LOG_SIZE];
	struct bpf_program *p;
	struct bpf_object *obj;
	int i = 0, err;

	memset(c, 0, sizeof(*c));
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		fprintf(stderr, "load_cost: cannot open %s: %s\n", path, strerror(errno));
		return 2;
	}
	bpf_object__for_each_program (p, obj) {
		if (skipped(bpf_program__name(p)) || i >= MAX_PROGS) {
			bpf_program__set_autoload(p, false);
			continue;
		}
		bpf_program__set_log_level(p, 4);
		bpf_program__set_log_buf(p, logs[i++], LOG_SIZE);
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "load_cost: cannot load %s: %s\n", path, strerror(-err));
		bpf_object__close(obj);
		return 2;
	}
	bpf_object__for_each_program (p, obj) {
		const char *s;

		if (!bpf_program__autoload(p))
			continue;
		s = strstr(logs[c->n], "processed ");
		c->insns[c->n] = s ? atol(s + strlen("processed ")) : 0;
		s = strstr(logs[c->n], "verification time ");
		c->usec[c->n] = s ? atol(s + strlen("verification time ")) : 0;
		c->total_usec += c->usec[c->n];
		snprintf(c->name[c->n], NAME_LEN, "%s", bpf_program__name(p));
		c->total += c->insns[c->n++];
	}
	bpf_object__close(obj);
	return 0;
}

static long base_of(const struct cost *base, const char *name)
{
	for (int i = 0; i < base->n; i++)
		if (!strcmp(base->name[i], name))
			return base->insns[i];
	return -1;
}

/* Each program of now beside its count in base; a program base lacks shows "new". */
static int compare(const char *base_path, const char *path, long slack)
{
	static struct cost base, now;
	long limit;
	int err;

	err = measure(base_path, &base);
	if (!err)
		err = measure(path, &now);
	if (err)
		return err;
	printf("%-20s %8s %8s %8s\n", "program", "base", "now", "change");
	for (int i = 0; i < now.n; i++) {
		long b = base_of(&base, now.name[i]);

		if (b < 0)
			printf("%-20s %8s %8ld %8s\n", now.name[i], "new", now.insns[i], "");
		else
			printf("%-20s %8ld %8ld %+8ld\n", now.name[i], b, now.insns[i],
			       now.insns[i] - b);
	}
	for (int i = 0; i < base.n; i++)
		if (base_of(&now, base.name[i]) < 0)
			printf("%-20s %8ld %8s\n", base.name[i], base.insns[i], "gone");
	printf("%-20s %8ld %8ld %+8ld\n", "total", base.total, now.total, now.total - base.total);
	limit = base.total + base.total * slack / 100;
	if (now.total > limit) {
		fprintf(stderr,
			"load_cost: %s: the verifier processed %ld instructions, over %ld (%s's "
			"%ld + %ld%%)\n",
			path, now.total, limit, base_path, base.total, slack);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct cost c;
	const char *base = NULL, *path;
	long max = -1, slack = 5;
	int i, err;

	libbpf_set_print(quiet);
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--max"))
			max = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--against"))
			base = argv[i + 1];
		else if (!strcmp(argv[i], "--slack"))
			slack = atol(argv[i + 1]);
		else
			break;
	}
	if (i != argc - 1 || (base && max >= 0) || slack < 0) {
		fprintf(stderr,
			"usage: load_cost [--max N] OBJECT.bpf.o\n"
			"       load_cost --against BASE.bpf.o [--slack PCT] OBJECT.bpf.o\n");
		return 2;
	}
	path = argv[i];
	if (base)
		return compare(base, path, slack);
	err = measure(path, &c);
	if (err)
		return err;
	printf("%-20s %8s %8s\n", "program", "insns", "usec");
	for (i = 0; i < c.n; i++)
		printf("%-20s %8ld %8ld\n", c.name[i], c.insns[i], c.usec[i]);
	printf("%-20s %8ld %8ld\n", "total", c.total, c.total_usec);
	if (max >= 0 && c.total > max) {
		fprintf(stderr,
			"load_cost: %s: the verifier processed %ld instructions, over %ld\n", path,
			c.total, max);
		return 1;
	}
	return 0;
}
