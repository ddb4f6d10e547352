// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the trace file writer and reader (user/tracefile.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "trace/tracefile.h"
#include "gpuctx_events.h"

#define HEADER_LEN (16 + sizeof(struct gctx_trace_meta))

static void make_meta(struct gctx_trace_meta *m)
{
	memset(m, 0, sizeof(*m));
	m->start_wall_ns = 1700000000123456789ull;
	m->start_mono_ns = 98765432101234ull;
	m->start_boot_ns = 98765432101234ull + 3600000000000ull; /* an hour suspended */
	strcpy(m->hostname, "node-17");
	strcpy(m->kernel, "6.8.0-45-generic");
	strcpy(m->version, "0.1.0");
	strcpy(m->cmdline, "-- python train.py --epochs 3");
}

static void tmp_path(char *path, size_t len)
{
	int fd;

	snprintf(path, len, "/tmp/gpuctx-test-trace-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
}

/* Deterministic payload byte i of record n. */
static unsigned char pbyte(unsigned int n, size_t i)
{
	return (unsigned char)(n * 131u + i * 7u + (i >> 8));
}

static void fill_payload(unsigned char *buf, unsigned int n, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pbyte(n, i);
}

static void check_payload(const void *data, unsigned int n, size_t len)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i] != pbyte(n, i))
			fail_msg("record %u byte %zu: %02x != %02x", n, i, p[i], pbyte(n, i));
	}
}

static unsigned char *read_file(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size + 16); /* room for callers to append a few bytes */
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/* The record lengths used by the small files: several records, one empty. */
static const __u32 small_lens[] = {5, 0, 17, 64, 3, 9};
#define NSMALL (sizeof(small_lens) / sizeof(small_lens[0]))

static void write_small(const char *path)
{
	struct gctx_trace_meta meta;
	struct gctx_trace_writer *w;
	unsigned char buf[64];
	unsigned int i;
	int err = 1;

	make_meta(&meta);
	w = gctx_trace_writer__new(path, &meta, &err);
	assert_non_null(w);
	assert_int_equal(err, 0);
	for (i = 0; i < NSMALL; i++) {
		fill_payload(buf, i, small_lens[i]);
		assert_int_equal(gctx_trace_writer__append(w, 100 + i, buf, small_lens[i]), 0);
	}
	assert_int_equal(gctx_trace_writer__free(w), 0);
}

/* File offset of the end of small record i. */
static size_t small_end(unsigned int i)
{
	size_t off = HEADER_LEN;
	unsigned int k;

	for (k = 0; k <= i; k++)
		off += 12 + small_lens[k];
	return off;
}

static void test_round_trip(void **state)
{
	/* Around the 64 KiB write buffer, and the largest record allowed. */
	static const __u32 special[] = {
	    0, 1, 65535 - 12, 65536 - 12, 65536 - 11, 65536, 70000, 200000, GCTX_TRACE_MAX_RECORD,
	};
	const unsigned int nrec = 3000;
	struct gctx_trace_meta meta;
	struct gctx_trace_writer *w;
	struct gctx_trace_reader *r;
	const struct gctx_trace_meta *rm;
	unsigned char *buf;
	__u32 *lens;
	__u64 bytes = HEADER_LEN;
	char path[64], err[256];
	unsigned int i;
	int e;

	(void)state;
	tmp_path(path, sizeof(path));
	make_meta(&meta);
	buf = malloc(GCTX_TRACE_MAX_RECORD);
	lens = calloc(nrec, sizeof(*lens));
	assert_non_null(buf);
	assert_non_null(lens);
	srand(12345);
	for (i = 0; i < nrec; i++) {
		if (i % 100 < sizeof(special) / sizeof(special[0]))
			lens[i] = special[i % 100];
		else
			lens[i] = rand() % 3000;
	}

	w = gctx_trace_writer__new(path, &meta, &e);
	assert_non_null(w);
	assert_int_equal(gctx_trace_writer__bytes(w), HEADER_LEN);
	for (i = 0; i < nrec; i++) {
		fill_payload(buf, i, lens[i]);
		assert_int_equal(gctx_trace_writer__append(w, i ^ 0xa5a5, buf, lens[i]), 0);
		bytes += 12 + lens[i];
		if (i % 777 == 0)
			assert_int_equal(gctx_trace_writer__flush(w), 0);
	}
	/* Too large for the format: refused, and not sticky. */
	assert_int_equal(gctx_trace_writer__append(w, 1, buf, GCTX_TRACE_MAX_RECORD + 1), -EINVAL);
	assert_int_equal(gctx_trace_writer__records(w), nrec);
	assert_int_equal(gctx_trace_writer__bytes(w), bytes);
	assert_int_equal(gctx_trace_writer__free(w), 0);

	r = gctx_trace_reader__open(path, err, sizeof(err));
	assert_non_null(r);
	rm = gctx_trace_reader__meta(r);
	assert_memory_equal(rm, &meta, sizeof(meta));
	assert_int_equal(gctx_trace_reader__offset(r), HEADER_LEN);
	for (i = 0; i < nrec; i++) {
		const void *data = NULL;
		__u32 type = 0, len = 0;

		assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 1);
		assert_int_equal(type, i ^ 0xa5a5);
		assert_int_equal(len, lens[i]);
		if (len)
			assert_int_equal((uintptr_t)data % 8, 0);
		check_payload(data, i, len);
	}
	assert_int_equal(gctx_trace_reader__next(r, NULL, NULL, NULL), 0);
	assert_false(gctx_trace_reader__truncated(r));
	assert_int_equal(gctx_trace_reader__offset(r), bytes);
	assert_string_equal(gctx_trace_reader__error(r), "");
	assert_int_equal(gctx_trace_reader__next(r, NULL, NULL, NULL), 0);
	gctx_trace_reader__free(r);

	free(lens);
	free(buf);
	unlink(path);
}

static void test_empty_trace(void **state)
{
	struct gctx_trace_reader *r;
	char path[64], err[256];

	(void)state;
	tmp_path(path, sizeof(path));
	/* NULL meta is all zeroes. */
	assert_int_equal(gctx_trace_writer__free(gctx_trace_writer__new(path, NULL, NULL)), 0);
	r = gctx_trace_reader__open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(gctx_trace_reader__meta(r)->start_wall_ns, 0);
	assert_string_equal(gctx_trace_reader__meta(r)->hostname, "");
	assert_int_equal(gctx_trace_reader__next(r, NULL, NULL, NULL), 0);
	assert_false(gctx_trace_reader__truncated(r));
	gctx_trace_reader__free(r);
	unlink(path);
}

/*
 * Cut the file at every byte offset. Inside the header: open fails with "truncated header".
 * After it: the complete records come back, then 0, with truncated() true unless the cut is
 * exactly at a record boundary (the header's end counts as one).
 */
static void test_truncate_everywhere(void **state)
{
	char path[64], cut[64], err[256];
	unsigned char *file;
	size_t size, n;

	(void)state;
	tmp_path(path, sizeof(path));
	tmp_path(cut, sizeof(cut));
	write_small(path);
	file = read_file(path, &size);
	assert_int_equal(size, small_end(NSMALL - 1));

	for (n = 0; n <= size; n++) {
		struct gctx_trace_reader *r;
		size_t boundary = HEADER_LEN;
		unsigned int i, complete = 0;
		const void *data;
		__u32 type, len;

		write_file(cut, file, n);
		r = gctx_trace_reader__open(cut, err, sizeof(err));
		if (n < HEADER_LEN) {
			assert_null(r);
			assert_non_null(strstr(err, "truncated header"));
			assert_memory_equal(err, cut, strlen(cut));
			assert_null(strchr(err, '\n'));
			continue;
		}
		assert_non_null(r);
		while (complete < NSMALL && small_end(complete) <= n)
			boundary = small_end(complete++);
		for (i = 0; i < complete; i++) {
			assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 1);
			assert_int_equal(type, 100 + i);
			assert_int_equal(len, small_lens[i]);
			check_payload(data, i, len);
		}
		assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 0);
		if (gctx_trace_reader__truncated(r) != (n != boundary))
			fail_msg("cut at %zu: truncated() = %d", n,
				 gctx_trace_reader__truncated(r));
		assert_int_equal(gctx_trace_reader__offset(r), boundary);
		assert_string_equal(gctx_trace_reader__error(r), "");
		assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 0);
		gctx_trace_reader__free(r);
	}
	free(file);
	unlink(cut);
	unlink(path);
}

static void open_expect_error(const char *path, const char *what)
{
	struct gctx_trace_reader *r;
	char err[256];

	memset(err, 'x', sizeof(err));
	r = gctx_trace_reader__open(path, err, sizeof(err));
	assert_null(r);
	if (!strstr(err, what))
		fail_msg("error \"%s\" does not say \"%s\"", err, what);
	assert_null(strchr(err, '\n'));
}

static void test_bad_header(void **state)
{
	char path[64], bad[64], msg[128];
	unsigned char *file;
	size_t size;

	(void)state;
	tmp_path(path, sizeof(path));
	tmp_path(bad, sizeof(bad));
	write_small(path);
	file = read_file(path, &size);

	/* Magic. */
	file[3] ^= 0x20;
	write_file(bad, file, size);
	open_expect_error(bad, "not a gpuctx trace (bad magic)");
	write_file(bad, file, 5); /* a short file that is not a trace either */
	open_expect_error(bad, "bad magic");
	file[3] ^= 0x20;

	/* Version. */
	file[8] = 9;
	write_file(bad, file, size);
	snprintf(msg, sizeof(msg), "%s: unsupported version 9", bad);
	open_expect_error(bad, msg);
	file[8] = 0;
	write_file(bad, file, size);
	open_expect_error(bad, "unsupported version 0");
	file[8] = GCTX_TRACE_VERSION;

	/* Header checksum, and a meta byte under it. */
	file[13] ^= 1;
	write_file(bad, file, size);
	snprintf(msg, sizeof(msg), "%s: corrupt header (checksum)", bad);
	open_expect_error(bad, msg);
	file[13] ^= 1;
	file[16 + 20] ^= 0x40;
	write_file(bad, file, size);
	open_expect_error(bad, msg);
	file[16 + 20] ^= 0x40;

	/* Header length below the version 1 meta. */
	file[10] = 16;
	file[11] = 0;
	write_file(bad, file, size);
	open_expect_error(bad, "corrupt header (length 16");
	file[10] = HEADER_LEN & 0xff;
	file[11] = HEADER_LEN >> 8;

	/* Short header. */
	write_file(bad, file, 12);
	snprintf(msg, sizeof(msg), "%s: truncated header", bad);
	open_expect_error(bad, msg);
	write_file(bad, file, 0);
	open_expect_error(bad, msg);
	write_file(bad, file, HEADER_LEN - 1);
	open_expect_error(bad, msg);

	/* The unmodified file still reads. */
	write_file(bad, file, size);
	gctx_trace_reader__free(gctx_trace_reader__open(bad, NULL, 0));

	/* A path that does not exist. */
	unlink(bad);
	snprintf(msg, sizeof(msg), "cannot open %s: %s", bad, strerror(ENOENT));
	open_expect_error(bad, msg);

	free(file);
	unlink(path);
}

/* A later minor revision may append fields to the header: they are skipped. */
static void test_larger_header(void **state)
{
	const size_t extra = 40;
	struct gctx_trace_reader *r;
	struct gctx_trace_meta meta;
	unsigned char *file, *big;
	char path[64], err[256];
	const void *data;
	__u32 type, len, crc;
	size_t size, i;

	(void)state;
	tmp_path(path, sizeof(path));
	write_small(path);
	file = read_file(path, &size);
	big = malloc(size + extra);
	assert_non_null(big);
	memcpy(big, file, HEADER_LEN);
	memset(big + HEADER_LEN, 0x5a, extra);
	memcpy(big + HEADER_LEN + extra, file + HEADER_LEN, size - HEADER_LEN);
	big[10] = (HEADER_LEN + extra) & 0xff;
	big[11] = (HEADER_LEN + extra) >> 8;
	crc = crc32(0, big + 16, HEADER_LEN + extra - 16);
	put32(big + 12, crc);
	write_file(path, big, size + extra);

	r = gctx_trace_reader__open(path, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	make_meta(&meta);
	assert_memory_equal(gctx_trace_reader__meta(r), &meta, sizeof(meta));
	assert_int_equal(gctx_trace_reader__offset(r), HEADER_LEN + extra);
	for (i = 0; i < NSMALL; i++) {
		assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 1);
		assert_int_equal(type, 100 + i);
		check_payload(data, i, len);
	}
	assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 0);
	assert_false(gctx_trace_reader__truncated(r));
	gctx_trace_reader__free(r);
	free(big);
	free(file);
	unlink(path);
}

/* A file written before start_boot_ns was appended to the meta (688 bytes): read, with
 * start_boot_ns 0 and everything else as written. */
static void test_older_meta(void **state)
{
	const size_t cut = sizeof(struct gctx_trace_meta) - GCTX_TRACE_META_MIN_LEN;
	struct gctx_trace_reader *r;
	struct gctx_trace_meta meta;
	unsigned char *file, *old;
	char path[64], err[256];
	const void *data;
	__u32 type, len;
	size_t size, i;

	(void)state;
	assert_int_equal(cut, 32); /* start_boot_ns, and version 3's clock error */
	tmp_path(path, sizeof(path));
	write_small(path);
	file = read_file(path, &size);
	old = malloc(size - cut);
	assert_non_null(old);
	memcpy(old, file, HEADER_LEN - cut);
	memcpy(old + HEADER_LEN - cut, file + HEADER_LEN, size - HEADER_LEN);
	old[10] = (HEADER_LEN - cut) & 0xff;
	old[11] = (HEADER_LEN - cut) >> 8;
	put32(old + 12, crc32(0, old + 16, HEADER_LEN - cut - 16));
	write_file(path, old, size - cut);

	r = gctx_trace_reader__open(path, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	make_meta(&meta);
	meta.start_boot_ns = 0;
	assert_memory_equal(gctx_trace_reader__meta(r), &meta, sizeof(meta));
	for (i = 0; i < NSMALL; i++) {
		assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 1);
		check_payload(data, i, len);
	}
	assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 0);
	gctx_trace_reader__free(r);
	free(old);
	free(file);
	unlink(path);
}

/* Read the small file at path: expect records [0, good), then next() == ret. */
static struct gctx_trace_reader *read_until(const char *path, unsigned int good, int ret)
{
	struct gctx_trace_reader *r;
	char err[256];
	const void *data;
	__u32 type, len;
	unsigned int i;

	r = gctx_trace_reader__open(path, err, sizeof(err));
	assert_non_null(r);
	for (i = 0; i < good; i++) {
		assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 1);
		assert_int_equal(type, 100 + i);
		check_payload(data, i, len);
	}
	assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), ret);
	assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), ret); /* sticky */
	return r;
}

/* Read all of path: the types read in order, and what was skipped. */
static unsigned int read_types(const char *path, __u32 *types, __u64 *skipped, __u32 *spans)
{
	struct gctx_trace_reader *r;
	unsigned int n = 0;
	char err[256];
	const void *data;
	__u32 type, len;

	r = gctx_trace_reader__open(path, err, sizeof(err));
	assert_non_null(r);
	while (gctx_trace_reader__next(r, &type, &data, &len) == 1) {
		assert_true(n < 16);
		types[n++] = type;
		if (type >= 100 && type < 100 + NSMALL)
			check_payload(data, type - 100, len);
	}
	assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 0); /* sticky end */
	assert_string_equal(gctx_trace_reader__error(r), "");
	*skipped = gctx_trace_reader__skipped(r, spans);
	gctx_trace_reader__free(r);
	return n;
}

/* Records 100..105 except those in the mask were read, and one span of skip bytes. */
static void expect_skip(const char *path, unsigned int lost_mask, __u64 skip)
{
	__u32 types[16], spans;
	unsigned int n, k = 0;
	__u64 skipped;

	n = read_types(path, types, &skipped, &spans);
	for (unsigned int i = 0; i < NSMALL; i++) {
		if (lost_mask & (1u << i))
			continue;
		assert_true(k < n);
		assert_int_equal(types[k++], 100 + i);
	}
	assert_int_equal(k, n);
	assert_int_equal(skipped, skip);
	assert_int_equal(spans, skip ? 1 : 0);
}

/* One corrupt record loses only itself: the reader resynchronises on the next good frame. */
static void test_corrupt_records(void **state)
{
	struct gctx_trace_reader *r;
	char path[64], bad[64], msg[256], want[160];
	unsigned char *file;
	const void *data;
	__u32 type, len;
	size_t size;

	(void)state;
	tmp_path(path, sizeof(path));
	tmp_path(bad, sizeof(bad));
	write_small(path);
	file = read_file(path, &size);

	/* A flipped payload byte in record 2 (of 6): 0, 1, 3, 4, 5 are read. */
	file[small_end(1) + 12] ^= 0x01;
	write_file(bad, file, size);
	expect_skip(bad, 1u << 2, small_end(2) - small_end(1));
	r = gctx_trace_reader__open(bad, msg, sizeof(msg));
	while (gctx_trace_reader__next(r, &type, &data, &len) == 1)
		;
	gctx_trace_reader__describe_skips(r, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s: %zu bytes skipped at offset %zu (corrupt data)", bad,
		 small_end(2) - small_end(1), small_end(1));
	assert_string_equal(msg, want);
	assert_false(gctx_trace_reader__truncated(r));
	gctx_trace_reader__free(r);
	file[small_end(1) + 12] ^= 0x01;

	/* A flipped type (covered by the crc) and a flipped crc byte. */
	file[small_end(2) + 4] ^= 0x80;
	write_file(bad, file, size);
	expect_skip(bad, 1u << 3, small_end(3) - small_end(2));
	file[small_end(2) + 4] ^= 0x80;
	file[small_end(3) - 1] ^= 0x10;
	write_file(bad, file, size);
	expect_skip(bad, 1u << 3, small_end(3) - small_end(2));
	file[small_end(3) - 1] ^= 0x10;

	/* An oversized length in the middle. */
	put32(file + small_end(0), GCTX_TRACE_MAX_RECORD + 1);
	write_file(bad, file, size);
	expect_skip(bad, 1u << 1, small_end(1) - small_end(0));
	put32(file + small_end(0), small_lens[1]);

	/* A length within bounds but wrong: the crc catches it. */
	put32(file + small_end(0), small_lens[1] + 12);
	write_file(bad, file, size);
	expect_skip(bad, 1u << 1, small_end(1) - small_end(0));
	put32(file + small_end(0), small_lens[1]);

	/* A bad crc on the last record that ends the file is a torn write: truncated. */
	file[size - 6] ^= 0xff;
	write_file(bad, file, size);
	r = read_until(bad, NSMALL - 1, 0);
	assert_true(gctx_trace_reader__truncated(r));
	assert_string_equal(gctx_trace_reader__error(r), "");
	assert_int_equal(gctx_trace_reader__offset(r), small_end(NSMALL - 2));
	assert_int_equal(gctx_trace_reader__skipped(r, NULL), 0);
	gctx_trace_reader__free(r);

	/* ... but not when anything follows it: that is corruption, skipped. */
	file[size] = 0;
	write_file(bad, file, size + 1);
	expect_skip(bad, 1u << (NSMALL - 1), size + 1 - small_end(NSMALL - 2));
	file[size - 6] ^= 0xff;

	/* Garbage after a clean end: every record is read, the garbage is skipped. */
	file = realloc(file, size + 100);
	assert_non_null(file);
	memset(file + size, 0x5a, 100);
	write_file(bad, file, size + 100);
	expect_skip(bad, 0, 100);

	free(file);
	unlink(bad);
	unlink(path);
}

/* A collector killed with SIGKILL after a flush: what was flushed reads back. */
static void test_killed_writer(void **state)
{
	struct gctx_trace_reader *r;
	char path[64], err[256];
	const void *data;
	__u32 type, len;
	unsigned int i;
	int status;
	pid_t pid;

	(void)state;
	tmp_path(path, sizeof(path));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct gctx_trace_meta meta;
		struct gctx_trace_writer *w;
		unsigned char buf[256];

		make_meta(&meta);
		w = gctx_trace_writer__new(path, &meta, NULL);
		if (!w)
			_exit(2);
		for (i = 0; i < 50; i++) {
			fill_payload(buf, i, i * 5);
			if (gctx_trace_writer__append(w, i, buf, i * 5))
				_exit(3);
		}
		if (gctx_trace_writer__flush(w))
			_exit(4);
		for (; i < 60; i++) { /* buffered, never flushed */
			fill_payload(buf, i, i);
			gctx_trace_writer__append(w, i, buf, i);
		}
		raise(SIGKILL);
		_exit(5);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);

	r = gctx_trace_reader__open(path, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	assert_string_equal(gctx_trace_reader__meta(r)->cmdline, "-- python train.py --epochs 3");
	for (i = 0; i < 50; i++) {
		assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 1);
		assert_int_equal(type, i);
		assert_int_equal(len, i * 5);
		check_payload(data, i, len);
	}
	assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 0);
	assert_false(gctx_trace_reader__truncated(r));
	gctx_trace_reader__free(r);
	unlink(path);
}

/* A reader opened while the writer is still alive sees what was flushed. */
static void test_live_writer(void **state)
{
	struct gctx_trace_writer *w;
	struct gctx_trace_reader *r;
	char path[64];
	const void *data;
	__u32 type, len;

	(void)state;
	tmp_path(path, sizeof(path));
	w = gctx_trace_writer__new(path, NULL, NULL);
	assert_non_null(w);
	assert_int_equal(gctx_trace_writer__append(w, 7, "abc", 3), 0);
	assert_int_equal(gctx_trace_writer__flush(w), 0);
	assert_int_equal(gctx_trace_writer__append(w, 8, "def", 3), 0);

	r = gctx_trace_reader__open(path, NULL, 0);
	assert_non_null(r);
	assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 1);
	assert_int_equal(type, 7);
	assert_memory_equal(data, "abc", 3);
	assert_int_equal(gctx_trace_reader__next(r, &type, &data, &len), 0);
	assert_false(gctx_trace_reader__truncated(r));
	gctx_trace_reader__free(r);

	assert_int_equal(gctx_trace_writer__free(w), 0);
	unlink(path);
}

static void test_writer_errors(void **state)
{
	struct gctx_trace_writer *w;
	char dir[64], path[128];
	int err = 0;

	(void)state;
	w = gctx_trace_writer__new("/nonexistent-gpuctx-dir/trace.gctx", NULL, &err);
	assert_null(w);
	assert_int_equal(err, -ENOENT);

	snprintf(dir, sizeof(dir), "/tmp/gpuctx-test-dir-XXXXXX");
	assert_non_null(mkdtemp(dir));
	w = gctx_trace_writer__new(dir, NULL, &err);
	assert_null(w);
	assert_int_equal(err, -EISDIR);

	if (geteuid() != 0) { /* root ignores the mode */
		snprintf(path, sizeof(path), "%s/trace.gctx", dir);
		assert_int_equal(chmod(dir, 0500), 0);
		err = 0;
		w = gctx_trace_writer__new(path, NULL, &err);
		assert_null(w);
		assert_int_equal(err, -EACCES);
		chmod(dir, 0700);
	}
	assert_int_equal(rmdir(dir), 0);

	w = gctx_trace_writer__new("/dev/full", NULL, &err);
	assert_null(w);
	assert_int_equal(err, -ENOSPC);

	assert_int_equal(gctx_trace_writer__free(NULL), 0);
	gctx_trace_reader__free(NULL);
}

/* Space is allocated ahead of the trace while it is written (a full disk then refuses a
 * buffer whole), and what is left past its end is given back when it is closed: a finished
 * trace takes no more disk than its bytes. */
static void test_writer_gives_back_room(void **state)
{
	struct gctx_trace_writer *w;
	struct gctx_trace_reader *r;
	unsigned char buf[1000];
	const void *data;
	__u32 type, len, n = 0;
	struct stat st;
	char path[64];

	(void)state;
	tmp_path(path, sizeof(path));
	memset(buf, 0x5a, sizeof(buf));
	w = gctx_trace_writer__new(path, NULL, NULL);
	assert_non_null(w);
	for (unsigned int i = 0; i < 3000; i++)
		assert_int_equal(gctx_trace_writer__append(w, 1, buf, sizeof(buf)), 0);
	assert_int_equal(gctx_trace_writer__flush(w), 0);
	assert_int_equal(stat(path, &st), 0);
	/* ext4 and xfs keep FALLOC_FL_KEEP_SIZE blocks past the end; tmpfs too */
	assert_true((__u64)st.st_blocks * 512 > (__u64)st.st_size + 64 * 1024);
	assert_int_equal(gctx_trace_writer__free(w), 0);

	assert_int_equal(stat(path, &st), 0);
	assert_true((__u64)st.st_blocks * 512 <= (__u64)st.st_size + 16 * 1024);
	r = gctx_trace_reader__open(path, NULL, 0);
	assert_non_null(r);
	while (gctx_trace_reader__next(r, &type, &data, &len) == 1) {
		assert_int_equal(len, sizeof(buf));
		n++;
	}
	assert_int_equal(n, 3000);
	assert_false(gctx_trace_reader__truncated(r));
	gctx_trace_reader__free(r);
	unlink(path);
}

/* A write error (file size limit) is returned by every later call. */
static void test_sticky_write_error(void **state)
{
	struct rlimit old, lim;
	struct gctx_trace_writer *w;
	void (*old_handler)(int);
	unsigned char buf[1000];
	char path[64];
	unsigned int i;
	int ret = 0;

	(void)state;
	tmp_path(path, sizeof(path));
	memset(buf, 0x33, sizeof(buf));
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	old_handler = signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = 4096;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

	w = gctx_trace_writer__new(path, NULL, NULL);
	for (i = 0; w && i < 10 && !ret; i++)
		ret = gctx_trace_writer__append(w, 1, buf, sizeof(buf));
	if (w && !ret)
		ret = gctx_trace_writer__flush(w);

	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, old_handler);

	assert_non_null(w);
	assert_int_equal(ret, -EFBIG);
	assert_int_equal(gctx_trace_writer__append(w, 1, buf, 10), -EFBIG);
	assert_int_equal(gctx_trace_writer__flush(w), -EFBIG);
	assert_int_equal(gctx_trace_writer__free(w), -EFBIG);
	unlink(path);
}

/* A write error (the disk full): whole records before it stay, the lost ones are counted, and
 * the file says where and why writing stopped, with the final count at the end. */
static void test_write_loss(void **state)
{
	struct gctx_rec_write_loss wl;
	struct gctx_trace_writer *w;
	struct gctx_trace_reader *r;
	struct rlimit old, lim;
	void (*old_handler)(int);
	unsigned char buf[1000];
	char path[64], err[256];
	const void *data;
	__u32 type, len, n1 = 0, nloss = 0;
	unsigned int i;

	(void)state;
	tmp_path(path, sizeof(path));
	memset(buf, 0x44, sizeof(buf));
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	old_handler = signal(SIGXFSZ, SIG_IGN);
	lim = old;
	lim.rlim_cur = 4096;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	w = gctx_trace_writer__new(path, NULL, NULL);
	assert_non_null(w);
	for (i = 0; i < 2; i++)
		assert_int_equal(gctx_trace_writer__append(w, 1, buf, sizeof(buf)), 0);
	assert_int_equal(gctx_trace_writer__flush(w), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(gctx_trace_writer__append(w, 1, buf, sizeof(buf)), 0);
	assert_int_equal(gctx_trace_writer__flush(w), -EFBIG);
	assert_int_equal(gctx_trace_writer__lost(w), 5);
	assert_true(gctx_trace_writer__error_ns(w) > 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(gctx_trace_writer__append(w, 1, buf, 10), -EFBIG);
	assert_int_equal(gctx_trace_writer__append_final(w, GCTX_REC_WRITE_LOSS, NULL, 0), 0);
	assert_int_equal(gctx_trace_writer__free(w), -EFBIG);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, old_handler);

	r = gctx_trace_reader__open(path, err, sizeof(err));
	assert_non_null(r);
	while (gctx_trace_reader__next(r, &type, &data, &len) == 1) {
		if (type == 1) {
			assert_int_equal(nloss, 0);
			n1++;
			continue;
		}
		assert_int_equal(type, GCTX_REC_WRITE_LOSS);
		assert_int_equal(len, sizeof(wl));
		memcpy(&wl, data, sizeof(wl));
		assert_int_equal(wl.err, -EFBIG);
		assert_int_equal(wl.written, 2);
		assert_int_equal(wl.lost, nloss ? 8 : 5); /* at the failure, then the final count */
		nloss++;
	}
	assert_int_equal(n1, 2);
	assert_int_equal(nloss, 2);
	assert_false(gctx_trace_reader__truncated(r));
	gctx_trace_reader__free(r);
	unlink(path);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_write_loss),
		cmocka_unit_test(test_empty_trace),
		cmocka_unit_test(test_truncate_everywhere),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_larger_header),
		cmocka_unit_test(test_older_meta),
		cmocka_unit_test(test_corrupt_records),
		cmocka_unit_test(test_killed_writer),
		cmocka_unit_test(test_live_writer),
		cmocka_unit_test(test_writer_errors),
		cmocka_unit_test(test_writer_gives_back_room),
		cmocka_unit_test(test_sticky_write_error),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
