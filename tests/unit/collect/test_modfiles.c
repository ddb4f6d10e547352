// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Module files stick to the mapping: a process maps a library, the library is replaced on
 * disk and the process exits before its stack is symbolised. The kept file gives the right
 * symbol; without it, a file at the path that is not the one mapped gives no symbols and a
 * note, a copy with the same build-id included (issue 27.3: only the mapped inode is
 * opened). Needs /proc/PID/map_files (root). A process that exits while its maps are read gives a
 * whole list or an error, never a list cut short.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <limits.h>
#include <time.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <zlib.h>

#include "collect/unwind.h"

static char dir[64], lib[96];

/* cp SRC DST (through a temporary name, renamed over DST: a new inode at the path) */
static void install(const char *src, const char *dst)
{
	char tmp[128], buf[65536];
	int in = open(src, O_RDONLY), out;
	ssize_t n;

	snprintf(tmp, sizeof(tmp), "%s.new", dst);
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, n), n);
	close(in);
	close(out);
	assert_int_equal(rename(tmp, dst), 0);
}

static const char *path_of(const void *sym)
{
	Dl_info di;

	assert_true(dladdr(sym, &di) && di.dli_fname);
	return di.dli_fname;
}

/* fork() with a pipe from the child: *fd is its write end there, its read end here. */
static pid_t fork_piped(int *fd)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	close(p[pid ? 1 : 0]);
	*fd = p[pid ? 0 : 1];
	return pid;
}

/* A child that maps lib and says where its zlibVersion is, then waits to be killed. */
static pid_t spawn_mapper(uint64_t *addr)
{
	int fd;
	pid_t pid = fork_piped(&fd);

	if (!pid) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		uint64_t a = h ? (uint64_t)(uintptr_t)dlsym(h, "zlibVersion") : 0;

		if (write(fd, &a, sizeof(a)) != sizeof(a))
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(fd, addr, sizeof(*addr)), sizeof(*addr));
	close(fd);
	assert_true(*addr != 0);
	return pid;
}

/* Symbolise pc as a stack of the (gone) process pid, through the mappings read earlier. */
static int resolve(const struct gctx_maps *maps, pid_t pid, uint64_t pc, struct gctx_rec_frame *out)
{
	struct gctx_ev_stack *s = calloc(1, sizeof(*s));
	const char *how = NULL;
	int n;

	assert_non_null(s);
	s->hdr.tgid = s->hdr.tid = pid;
	s->flags = GCTX_STK_REGS_OK;
	s->regs[16] = pc;
	n = gctx_unwind(s, GCTX_EV_STACK_HDR_LEN, maps, out, 4, &how);
	free(s);
	return n;
}

static void test_replaced(void **state)
{
	struct gctx_rec_frame out[4];
	struct gctx_maps maps = {0};
	char other[128], copy[128], fn[96];
	const char *zlib = path_of((const void *)zlibVersion);
	uint64_t addr;
	pid_t pid;
	int fd, held;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gctx-modfiles.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(lib, sizeof(lib), "%s/libmod.so", dir);
	install(zlib, lib);
	pid = spawn_mapper(&addr);
	snprintf(fn, sizeof(fn), "/proc/%d/map_files", (int)pid);
	fd = open(fn, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || access(fn, R_OK)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		skip(); /* map_files needs CAP_SYS_ADMIN */
	}
	close(fd);
	assert_int_equal(gctx_maps__read(&maps, pid), 0);
	/* held open, the mapped inode is not freed and reused for the copy installed below */
	held = open(lib, O_RDONLY);
	assert_true(held >= 0);
	/* the library is replaced by another one, and the process exits */
	snprintf(other, sizeof(other), "%s", path_of((const void *)_cmocka_run_group_tests));
	install(other, lib);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	/* the file kept while it lived */
	assert_true(resolve(&maps, pid, addr, out) >= 1);
	assert_string_equal(out[0].function, "zlibVersion");
	assert_string_equal(gctx_unwind_note(), "");

	/* none kept: the file at the path is not the one mapped */
	gctx_unwind_cache_clear();
	assert_true(resolve(&maps, pid, addr, out) >= 1);
	assert_string_equal(out[0].function, "");
	assert_string_equal(out[0].module, lib);
	assert_true(out[0].offset > 0);
	assert_non_null(strstr(gctx_unwind_note(),
			       "libmod.so changed since the process mapped it: no symbols"));

	/* a copy of the file mapped (another inode, the same build-id) is not the file mapped:
	 * gpuctx, as root, opens by path only the very file the process could read */
	gctx_unwind_cache_clear();
	install(zlib, lib);
	assert_true(resolve(&maps, pid, addr, out) >= 1);
	assert_string_equal(out[0].function, "");

	gctx_unwind_cache_clear();
	gctx_maps__clear(&maps);
	close(held);
	unlink(lib);
	snprintf(copy, sizeof(copy), "%s", dir);
	rmdir(copy);
}

#define NMAPS 256

/* A child that maps file NMAPS times (separate mappings: each at page offset 0), says so, then
 * spins for spin_us and exits. */
static pid_t spawn_exiter(const char *file, int spin_us)
{
	int fd;
	pid_t pid = fork_piped(&fd);

	if (!pid) {
		int ffd = open(file, O_RDONLY);
		struct timespec t0, t;
		char c = 1;

		for (int i = 0; i < NMAPS; i++)
			if (ffd < 0 || mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, ffd,
					    0) == MAP_FAILED)
				_exit(1);
		if (write(fd, &c, 1) != 1)
			_exit(1);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 <
		       spin_us);
		_exit(0);
	}
	assert_int_equal(read(fd, &(char){0}, 1), 1);
	close(fd);
	return pid;
}

/* Reads of the maps of a process that exits meanwhile: each one whole, or an error. A cut list
 * would lose the modules past the cut (a call site in them would resolve to no module). */
static void test_exit_during_read(void **state)
{
	char file[PATH_MAX];
	struct gctx_maps maps = {0};
	int whole = 0;

	(void)state;
	assert_non_null(realpath("/bin/true", file));
	for (int round = 0; round < 60; round++) {
		pid_t pid = spawn_exiter(file, (round % 20) * 200);

		for (;;) {
			int n = 0;

			if (gctx_maps__read(&maps, pid) || !maps.n)
				break;
			for (__u32 i = 0; i < maps.n; i++)
				n += !strcmp(maps.v[i].path, file);
			assert_int_equal(n, NMAPS);
			whole++;
		}
		waitpid(pid, NULL, 0);
	}
	assert_true(whole > 0);
	gctx_maps__clear(&maps);
}

/* A path long enough to run past a short line buffer, whose tail reads as a maps line of its
 * own naming a root file (issue 27.3): the reader takes whole lines only, so no such mapping
 * is ever listed (and no file of it opened). The split point is set by renaming directories
 * of the mapped file's path once the line's prefix length is known. */
#define FORGED "7f0000000000-7f0000100000 r-xp 00000000 08:01 4242 "
static void test_forged_line(void **state)
{
	char d[300], a[512], a2[1024], b[2048], b2[2048], f[4096];
	char line[8192], pad[256];
	struct gctx_maps maps = {0};
	size_t prefix = 0, want;
	void *map;
	FILE *mf;
	int fd;

	(void)state;
	/* a long directory name of its own leaves less to pad below */
	memset(pad, 'p', sizeof(pad));
	snprintf(d, sizeof(d), "/tmp/gctx-forge-%.200s.XXXXXX", pad);
	assert_non_null(mkdtemp(d));
	snprintf(a, sizeof(a), "%s/a", d);
	snprintf(b, sizeof(b), "%s/b", a);
	snprintf(f, sizeof(f), "%s/" FORGED, b);
	assert_int_equal(mkdir(a, 0755), 0);
	assert_int_equal(mkdir(b, 0755), 0);
	assert_int_equal(mkdir(f, 0755), 0);
	strcat(f, "/etc");
	assert_int_equal(mkdir(f, 0755), 0);
	strcat(f, "/passwd");
	install(path_of((const void *)zlibVersion), f);
	fd = open(f, O_RDONLY);
	assert_true(fd >= 0);
	map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(map != MAP_FAILED);
	close(fd);
	mf = fopen("/proc/self/maps", "r");
	while (mf && fgets(line, sizeof(line), mf))
		if (strstr(line, FORGED "/etc/passwd"))
			prefix = strchr(line, '/') - line;
	fclose(mf);
	assert_true(prefix > 0);
	/* the old reader's 640-byte buffer ends a line after 639 bytes: make the forged text
	 * start there, with the two directories a and b padded */
	want = 639 - prefix - strlen(d) - 3;
	assert_true(want > 2 && want < 2 * 250);
	snprintf(a2, sizeof(a2), "%s/%.*s", d, (int)(want / 2), pad);
	assert_int_equal(rename(a, a2), 0);
	snprintf(b, sizeof(b), "%s/b", a2);
	snprintf(b2, sizeof(b2), "%s/%.*s", a2, (int)(want - want / 2), pad);
	assert_int_equal(rename(b, b2), 0);

	assert_int_equal(gctx_maps__read(&maps, getpid()), 0);
	for (__u32 i = 0; i < maps.n; i++) {
		assert_false(maps.v[i].start == 0x7f0000000000ull && maps.v[i].ino == 4242);
		assert_string_not_equal(maps.v[i].path, "/etc/passwd");
	}
	munmap(map, 4096);
	gctx_maps__clear(&maps);
	snprintf(f, sizeof(f), "rm -rf '%s'", d);
	assert_int_equal(system(f), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_replaced),
	    cmocka_unit_test(test_exit_during_read),
	    cmocka_unit_test(test_forged_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
