// SPDX-License-Identifier: GPL-2.0
/*
 * How much work the verifier does to load a BPF object: the instructions it processed for
 * each program (log level 4 prints "processed N insns"), which is most of gpuctx's start-up
 * time and, unlike a timing, the same on every run of one kernel.
 *
 * Usage: load_cost [--max N] OBJECT.bpf.o
 * Prints one line per program and the total; with --max, exits 1 when the total is above N.
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

static bool skipped(const char *name)
{
	return strstr(name, "_raw") || !strcmp(name, "gpu_file_iter");
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, args) : 0;
}

int main(int argc, char **argv)
{
	static char logs[MAX_PROGS][LOG_SIZE];
	struct bpf_program *p;
	struct bpf_object *obj;
	long total = 0, max = -1;
	const char *path;
	int i = 0, err;

	if (argc == 4 && !strcmp(argv[1], "--max")) {
		max = atol(argv[2]);
		path = argv[3];
	} else if (argc == 2) {
		path = argv[1];
	} else {
		fprintf(stderr, "usage: load_cost [--max N] OBJECT.bpf.o\n");
		return 2;
	}
	libbpf_set_print(quiet);
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
	i = 0;
	bpf_object__for_each_program (p, obj) {
		const char *s;
		long n;

		if (!bpf_program__autoload(p))
			continue;
		s = strstr(logs[i++], "processed ");
		n = s ? atol(s + strlen("processed ")) : 0;
		total += n;
		printf("%-20s %8ld\n", bpf_program__name(p), n);
	}
	printf("%-20s %8ld\n", "total", total);
	bpf_object__close(obj);
	if (max >= 0 && total > max) {
		fprintf(stderr,
			"load_cost: %s: the verifier processed %ld instructions, over %ld\n", path,
			total, max);
		return 1;
	}
	return 0;
}
