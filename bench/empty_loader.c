// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * empty_loader: attach one group of the benchmark's reference programs (bench/empty.bpf.c,
 * bench/diag.bpf.c) and keep them attached.
 *
 *   empty_loader MODE [--device PATH]... [--exe PATH --func SYMBOL] [-- CMD [ARG...]]
 *
 * MODE is one of
 *   ioctl         empty programs on syscalls:sys_enter_ioctl and sys_exit_ioctl
 *   sched         empty tp_btf programs on sched_process_fork, _exec and _exit
 *   all           sched + ioctl + empty programs on every other syscall tracepoint gpuctx
 *                 uses (the exits of open, openat, openat2 and mmap, the entry of close)
 *                 and signal_generate and signal_deliver: exactly what gpuctx attaches
 *   uprobe        an empty entry probe on SYMBOL in PATH
 *   uprobe-ret    empty entry + return probes on SYMBOL in PATH
 *   api-event     entry probe stashing a timestamp + return probe emitting an event
 *   filter-core   gpuctx's ioctl filter written with probe reads (diagnostic, no event)
 *   filter-typed  the same filter with typed BTF loads (diagnostic)
 *   filter-cmd    the typed filter behind an ioctl command-type test (diagnostic)
 *   filter-fast   filter-cmd, plus an exit program gated by a global in-flight counter
 * --device registers a file for the filter modes, as gpuctx record --device does.
 *
 * With a command: run it once everything is attached (the filter modes follow it), wait for
 * it and exit with its status. Without: print "ready" on stdout and stay attached until
 * SIGINT or SIGTERM. Ring-buffer events (api-event) are consumed every 10 ms.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "empty.skel.h"
#include "diag.skel.h"

#define MAX_DEVS 8

static volatile sig_atomic_t stop;
static unsigned long long consumed;

static void on_signal(int sig)
{
	stop = sig;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, args) : 0;
}

static int on_event(void *ctx, void *data, size_t size)
{
	consumed++;
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: empty_loader ioctl|sched|all|uprobe|uprobe-ret|api-event|filter-core|"
		     "filter-typed|filter-cmd|filter-fast\n"
		     "                    [--device PATH]... [--exe PATH --func SYMBOL] "
		     "[-- CMD [ARG...]]\n");
}

static struct bpf_link *attach_uprobe(struct bpf_program *prog, const char *exe, const char *func,
				      bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = func, .retprobe = ret);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, -1, exe, 0, &o);

	if (!l)
		fprintf(stderr, "empty_loader: cannot attach %s to %s:%s: %s\n",
			ret ? "uretprobe" : "uprobe", exe, func, strerror(errno));
	return l;
}

/* Fork @cmd stopped on a pipe; it execs when the write end is written to. */
static pid_t spawn_stopped(char **cmd, int *go)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		execvp(cmd[0], cmd);
		fprintf(stderr, "empty_loader: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return -1;
	}
	*go = p[1];
	return pid;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"device", required_argument, NULL, 'd'},
	    {"exe", required_argument, NULL, 'e'},
	    {"func", required_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	struct bpf_link *links[2] = {};
	struct empty_bpf *e = NULL;
	struct diag_bpf *d = NULL;
	struct ring_buffer *rb = NULL;
	const char *devs[MAX_DEVS], *exe = NULL, *func = NULL, *mode;
	struct sigaction sa = {.sa_handler = on_signal};
	int ndevs = 0, c, err = 0, ret = 1, go = -1, status;
	pid_t child = 0;
	bool filter, cmd_done = false;

	if (argc < 2 || argv[1][0] == '-') {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	mode = argv[1];
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (ndevs == MAX_DEVS) {
				fprintf(stderr, "empty_loader: too many --device (max %d)\n",
					MAX_DEVS);
				return 2;
			}
			devs[ndevs++] = optarg;
			break;
		case 'e':
			exe = optarg;
			break;
		case 'f':
			func = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	filter = !strncmp(mode, "filter-", 7);
	libbpf_set_print(libbpf_quiet);

	if (!strcmp(mode, "ioctl") || !strcmp(mode, "sched") || !strcmp(mode, "all") ||
	    !strncmp(mode, "uprobe", 6)) {
		bool all = !strcmp(mode, "all");
		bool ioctl = all || !strcmp(mode, "ioctl"), sched = all || !strcmp(mode, "sched");
		bool up = !strcmp(mode, "uprobe"), upr = !strcmp(mode, "uprobe-ret");

		if (!ioctl && !sched && !up && !upr)
			goto bad_mode;
		e = empty_bpf__open();
		if (!e)
			goto open_fail;
		bpf_program__set_autoload(e->progs.empty_ioctl_enter, ioctl);
		bpf_program__set_autoload(e->progs.empty_ioctl_exit, ioctl);
		bpf_program__set_autoload(e->progs.empty_fork, sched);
		bpf_program__set_autoload(e->progs.empty_exec, sched);
		bpf_program__set_autoload(e->progs.empty_exit, sched);
		bpf_program__set_autoload(e->progs.empty_exit_openat, all);
		bpf_program__set_autoload(e->progs.empty_exit_open, all);
		bpf_program__set_autoload(e->progs.empty_exit_openat2, all);
		bpf_program__set_autoload(e->progs.empty_exit_mmap, all);
		bpf_program__set_autoload(e->progs.empty_enter_close, all);
		bpf_program__set_autoload(e->progs.empty_signal_generate, all);
		bpf_program__set_autoload(e->progs.empty_signal_deliver, all);
		bpf_program__set_autoload(e->progs.empty_uprobe, up || upr);
		bpf_program__set_autoload(e->progs.empty_uretprobe, upr);
		bpf_program__set_autoattach(e->progs.empty_uprobe, false);
		bpf_program__set_autoattach(e->progs.empty_uretprobe, false);
		err = empty_bpf__load(e);
		if (!err)
			err = empty_bpf__attach(e);
		if (err)
			goto load_fail;
		if (up || upr) {
			if (!exe || !func) {
				fprintf(stderr, "empty_loader: %s needs --exe PATH --func SYMBOL\n",
					mode);
				goto cleanup;
			}
			links[0] = attach_uprobe(e->progs.empty_uprobe, exe, func, false);
			if (!links[0])
				goto cleanup;
			if (upr) {
				links[1] = attach_uprobe(e->progs.empty_uretprobe, exe, func, true);
				if (!links[1])
					goto cleanup;
			}
		}
	} else if (filter || !strcmp(mode, "api-event")) {
		bool core = !strcmp(mode, "filter-core"), typed = !strcmp(mode, "filter-typed");
		bool cmd = !strcmp(mode, "filter-cmd"), api = !strcmp(mode, "api-event");
		bool fast = !strcmp(mode, "filter-fast");

		if (!core && !typed && !cmd && !fast && !api)
			goto bad_mode;
		d = diag_bpf__open();
		if (!d)
			goto open_fail;
		d->rodata->nr_regdevs = ndevs;
		bpf_program__set_autoload(d->progs.filter_core_enter, core);
		bpf_program__set_autoload(d->progs.filter_typed_enter, typed);
		bpf_program__set_autoload(d->progs.filter_cmd_enter, cmd);
		bpf_program__set_autoload(d->progs.filter_fast_enter, fast);
		bpf_program__set_autoload(d->progs.filter_exit, filter && !fast);
		bpf_program__set_autoload(d->progs.filter_fast_exit, fast);
		bpf_program__set_autoload(d->progs.api_entry, api);
		bpf_program__set_autoload(d->progs.api_return, api);
		bpf_program__set_autoattach(d->progs.api_entry, false);
		bpf_program__set_autoattach(d->progs.api_return, false);
		err = diag_bpf__load(d);
		if (!err)
			err = diag_bpf__attach(d);
		if (err)
			goto load_fail;
		for (int i = 0; i < ndevs; i++) {
			struct {
				__u32 dev;
				__u32 pad;
				__u64 ino;
			} key = {};
			struct stat st;
			__u32 one = 1;

			if (stat(devs[i], &st)) {
				fprintf(stderr, "empty_loader: cannot stat %s: %s\n", devs[i],
					strerror(errno));
				goto cleanup;
			}
			key.dev = major(st.st_dev) << 20 | minor(st.st_dev);
			key.ino = st.st_ino;
			if (bpf_map_update_elem(bpf_map__fd(d->maps.regdevs), &key, &one,
						BPF_ANY)) {
				fprintf(stderr, "empty_loader: cannot register %s: %s\n", devs[i],
					strerror(errno));
				goto cleanup;
			}
		}
		if (api) {
			if (!exe || !func) {
				fprintf(stderr, "empty_loader: %s needs --exe PATH --func SYMBOL\n",
					mode);
				goto cleanup;
			}
			links[0] = attach_uprobe(d->progs.api_entry, exe, func, false);
			links[1] =
			    links[0] ? attach_uprobe(d->progs.api_return, exe, func, true) : NULL;
			if (!links[1])
				goto cleanup;
			rb = ring_buffer__new(bpf_map__fd(d->maps.events), on_event, NULL, NULL);
			if (!rb) {
				fprintf(stderr, "empty_loader: cannot create ring buffer: %s\n",
					strerror(errno));
				goto cleanup;
			}
		}
	} else {
		goto bad_mode;
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (optind < argc) {
		child = spawn_stopped(&argv[optind], &go);
		if (child < 0) {
			fprintf(stderr, "empty_loader: cannot fork: %s\n", strerror(errno));
			goto cleanup;
		}
		if (d) {
			__u32 key = child;
			__u8 one = 1;

			bpf_map_update_elem(bpf_map__fd(d->maps.followed), &key, &one, BPF_ANY);
		}
		if (write(go, "g", 1) != 1)
			fprintf(stderr, "empty_loader: cannot start %s: %s\n", argv[optind],
				strerror(errno));
		close(go);
	} else {
		printf("ready\n");
		fflush(stdout);
	}
	while (!stop) {
		if (rb) {
			ring_buffer__poll(rb, 10);
			ring_buffer__consume(rb);
		} else {
			usleep(10000);
		}
		if (child && waitpid(child, &status, WNOHANG) == child) {
			child = 0;
			cmd_done = true;
			ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			break;
		}
	}
	if (rb)
		ring_buffer__consume(rb);
	if (!cmd_done)
		ret = 0;
	if (d)
		fprintf(stderr,
			"empty_loader: %s: %llu GPU-classified ioctls, %llu events, "
			"%llu dropped\n",
			mode, (unsigned long long)d->bss->hits, consumed,
			(unsigned long long)d->bss->drops);
	goto cleanup;

bad_mode:
	fprintf(stderr, "empty_loader: unknown mode '%s'\n", mode);
	usage(stderr);
	return 2;
open_fail:
	fprintf(stderr, "empty_loader: cannot open BPF object: %s\n", strerror(errno));
	return 1;
load_fail:
	fprintf(stderr, "empty_loader: cannot load or attach %s programs: %s\n", mode,
		strerror(-err));
cleanup:
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	ring_buffer__free(rb);
	bpf_link__destroy(links[1]);
	bpf_link__destroy(links[0]);
	diag_bpf__destroy(d);
	empty_bpf__destroy(e);
	return ret;
}
