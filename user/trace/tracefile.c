// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Trace file writer and reader (layout in tracefile.h).
 *
 * The writer buffers whole records and hands them to write(2) on flush, when the buffer
 * fills, or directly for records larger than the buffer, so the file only ever grows by
 * complete records plus, at worst, one record cut short by a crash.
 *
 * The reader streams through a bounded buffer (64 KiB, grown on demand up to one record of
 * GCTX_TRACE_MAX_RECORD), so memory stays flat whatever the size of the file.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/crc32.h"
#include "lib/infile.h"
#include "trace/tracefile.h"
#include "gpuctx_events.h"

#define GCTX_TRACE_MAGIC      "GPUCTX\r\n"
#define GCTX_TRACE_MAGIC_LEN  8
#define GCTX_TRACE_FIXED_LEN  16 /* magic, version, header_len, header_crc */
#define GCTX_TRACE_HEADER_LEN (GCTX_TRACE_FIXED_LEN + sizeof(struct gctx_trace_meta))
#define GCTX_REC_HDR_LEN      8 /* len, type */
#define GCTX_REC_CRC_LEN      4
#define GCTX_REC_OVERHEAD     (GCTX_REC_HDR_LEN + GCTX_REC_CRC_LEN)
#define GCTX_WBUF_SIZE	      (64 * 1024)
#define GCTX_RBUF_SIZE	      (64 * 1024)
#define GCTX_ERR_LEN	      512
#define GCTX_MAX_SKIPS	      32   /* skipped spans remembered (all are counted) */
#define GCTX_CLOSE_ROOM	      1024 /* kept allocated past the trace for its closing records */
#define GCTX_FALLOC_MIN	      (64 * 1024)	/* allocated ahead: an eighth of the trace, */
#define GCTX_FALLOC_MAX	      (4 * 1024 * 1024) /* within these bounds */
#define GCTX_RESYNC_MAX_LEN   (64 * 1024)	/* a frame found by resync is at most this long */
#define GCTX_RESYNC_MAX_TYPE  127		/* and its type is 1..127 */
#define GCTX_RESYNC_BUDGET    (256ull << 20)	/* bytes checksummed per file at most, in all */

_Static_assert(sizeof(struct gctx_trace_meta) == 720, "trace meta layout changed");
_Static_assert(offsetof(struct gctx_trace_meta, start_boot_ns) == GCTX_TRACE_META_MIN_LEN,
	       "fields are appended to the meta, never inserted");
_Static_assert(GCTX_TRACE_HEADER_LEN <= 0xffff, "header_len is a u16");

struct gctx_trace_writer {
	int fd;
	int err;	 /* first write error (-errno), sticky */
	__u64 err_ns;	 /* when it happened (CLOCK_MONOTONIC) */
	__u64 committed; /* bytes known to be in the file, whole records only */
	__u64 reserved;	 /* the file's space is allocated up to here (0: nothing known) */
	__u64 records;	 /* records appended and not lost */
	__u64 lost;	 /* records that could not be written */
	__u32 buffered;	 /* records in buf */
	bool no_falloc;	 /* the file system cannot preallocate */
	size_t used;
	unsigned char buf[GCTX_WBUF_SIZE];
};

struct skip_span {
	__u64 off, len;
};

struct gctx_trace_reader {
	int fd;
	int state; /* RD_OK, RD_END, RD_FAILED */
	bool truncated;
	__u64 offset; /* file offset of buf[start] */
	unsigned char *buf;
	size_t cap, start, end;
	struct gctx_trace_meta meta;
	char *path;
	char err[GCTX_ERR_LEN];
	struct skip_span skips[GCTX_MAX_SKIPS]; /* corrupt spans skipped by resync */
	__u32 nskips;
	__u64 skipped; /* bytes */
	__u64 checked; /* bytes checksummed (bounds the work of resynchronising) */
};

enum { RD_OK, RD_END, RD_FAILED };

static void put_le16(unsigned char *p, __u16 v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static void put_le32(unsigned char *p, __u32 v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static __u16 get_le16(const unsigned char *p)
{
	__u16 v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static __u32 get_le32(const unsigned char *p)
{
	__u32 v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static __u32 record_crc(const unsigned char *type_le, const void *data, __u32 len)
{
	return gctx_crc32(gctx_crc32(0, type_le, 4), data, len);
}

/* Meta with its integers in file (little-endian) order and its strings NUL-terminated. */
static void meta_to_file(struct gctx_trace_meta *dst, const struct gctx_trace_meta *src)
{
	if (src)
		*dst = *src;
	else
		memset(dst, 0, sizeof(*dst));
	dst->start_wall_ns = htole64(dst->start_wall_ns);
	dst->start_mono_ns = htole64(dst->start_mono_ns);
	dst->start_boot_ns = htole64(dst->start_boot_ns);
	dst->clock_state = htole32(dst->clock_state);
	dst->clock_esterror_us = htole64(dst->clock_esterror_us);
	dst->clock_maxerror_us = htole64(dst->clock_maxerror_us);
	dst->hostname[sizeof(dst->hostname) - 1] = '\0';
	dst->kernel[sizeof(dst->kernel) - 1] = '\0';
	dst->version[sizeof(dst->version) - 1] = '\0';
	dst->cmdline[sizeof(dst->cmdline) - 1] = '\0';
}

/* len: the meta bytes in the file; an older, shorter meta leaves the fields after it 0 */
static void meta_from_file(struct gctx_trace_meta *dst, const unsigned char *src, size_t len)
{
	memset(dst, 0, sizeof(*dst));
	memcpy(dst, src, len < sizeof(*dst) ? len : sizeof(*dst));
	dst->start_wall_ns = le64toh(dst->start_wall_ns);
	dst->start_mono_ns = le64toh(dst->start_mono_ns);
	dst->start_boot_ns = le64toh(dst->start_boot_ns);
	dst->clock_state = le32toh(dst->clock_state);
	dst->clock_esterror_us = le64toh(dst->clock_esterror_us);
	dst->clock_maxerror_us = le64toh(dst->clock_maxerror_us);
	dst->hostname[sizeof(dst->hostname) - 1] = '\0';
	dst->kernel[sizeof(dst->kernel) - 1] = '\0';
	dst->version[sizeof(dst->version) - 1] = '\0';
	dst->cmdline[sizeof(dst->cmdline) - 1] = '\0';
}

static int write_all(int fd, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int reserve_space(struct gctx_trace_writer *w, size_t len);

struct gctx_trace_writer *gctx_trace_writer__new(const char *path,
						 const struct gctx_trace_meta *meta, int *err)
{
	/* never through a symlink; private: a trace holds command lines and paths */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0) {
		if (err)
			*err = -errno;
		return NULL;
	}
	return gctx_trace_writer__new_fd(fd, meta, err);
}

struct gctx_trace_writer *gctx_trace_writer__new_fd(int fd, const struct gctx_trace_meta *meta,
						    int *err)
{
	unsigned char hdr[GCTX_TRACE_HEADER_LEN];
	struct gctx_trace_meta fmeta;
	struct gctx_trace_writer *w;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w) {
		ret = -ENOMEM;
		goto fail;
	}
	w->fd = fd;

	meta_to_file(&fmeta, meta);
	memcpy(hdr, GCTX_TRACE_MAGIC, GCTX_TRACE_MAGIC_LEN);
	put_le16(hdr + 8, GCTX_TRACE_VERSION);
	put_le16(hdr + 10, GCTX_TRACE_HEADER_LEN);
	memcpy(hdr + GCTX_TRACE_FIXED_LEN, &fmeta, sizeof(fmeta));
	put_le32(hdr + 12, gctx_crc32(0, hdr + GCTX_TRACE_FIXED_LEN, sizeof(fmeta)));
	ret = write_all(w->fd, hdr, sizeof(hdr));
	if (ret)
		goto fail;
	w->committed = sizeof(hdr);
	reserve_space(w, 0);
	if (err)
		*err = 0;
	return w;

fail:
	close(fd);
	free(w);
	if (err)
		*err = ret;
	return NULL;
}

static __u64 now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/*
 * Allocate the space for len more bytes plus room for the closing records (loss count, end)
 * before writing them: when the disk is full the buffer is refused whole, and the room left
 * from the previous call still takes the closing records. The allocation runs ahead of the
 * trace (an eighth of it, 64 KiB to 4 MiB): an fallocate per flush was a fifth of the
 * collector's CPU in a process storm. What is left past the end when the trace is closed is
 * given back (gctx_trace_writer__free). 0, or -ENOSPC/-EDQUOT.
 */
static int reserve_space(struct gctx_trace_writer *w, size_t len)
{
	__u64 need = w->committed + len + GCTX_CLOSE_ROOM, ahead = w->committed / 8, end;

	if (w->no_falloc || need <= w->reserved)
		return 0;
	if (ahead < GCTX_FALLOC_MIN)
		ahead = GCTX_FALLOC_MIN;
	if (ahead > GCTX_FALLOC_MAX)
		ahead = GCTX_FALLOC_MAX;
	/* the step ahead, then, short of room for it, the exact need */
	for (end = need + ahead;; end = need) {
		if (!fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)w->committed,
			       (off_t)(end - w->committed))) {
			w->reserved = end;
			return 0;
		}
		if (errno != ENOSPC && errno != EDQUOT)
			break;
		if (end == need)
			return -errno;
	}
	w->no_falloc = true; /* not supported here: plain writes, cut back on failure */
	return 0;
}

/* Cut the file back to its last whole record after a failed write. */
static void cut_back(struct gctx_trace_writer *w)
{
	struct stat st;

	w->reserved = 0; /* a cut may free the space allocated past it */
	if (!fstat(w->fd, &st) && (__u64)st.st_size > w->committed &&
	    ftruncate(w->fd, (off_t)w->committed))
		return;
	lseek(w->fd, (off_t)w->committed, SEEK_SET);
}

/* One framed record straight to the file at the committed end; on failure the file is cut
 * back to its last whole record, so what it holds stays readable. */
static int write_frame(struct gctx_trace_writer *w, __u32 type, const void *data, __u32 len)
{
	unsigned char hdr[GCTX_REC_HDR_LEN], crc[GCTX_REC_CRC_LEN];
	int ret;

	put_le32(hdr, len);
	put_le32(hdr + 4, type);
	put_le32(crc, record_crc(hdr + 4, data, len));
	ret = write_all(w->fd, hdr, sizeof(hdr));
	if (!ret && len)
		ret = write_all(w->fd, data, len);
	if (!ret)
		ret = write_all(w->fd, crc, sizeof(crc));
	if (ret) {
		cut_back(w);
		return ret;
	}
	w->committed += (__u64)len + GCTX_REC_OVERHEAD;
	return 0;
}

/* The first failed write: count what it lost, cut the file back to whole records and say
 * in the file itself, if there is room, where and why it stops. */
static void writer_failed(struct gctx_trace_writer *w, int err, __u32 nlost)
{
	w->err = err;
	w->err_ns = now_mono();
	w->lost += nlost;
	w->records -= nlost;
	cut_back(w);
	gctx_trace_writer__append_final(w, GCTX_REC_WRITE_LOSS, NULL, 0);
}

int gctx_trace_writer__flush(struct gctx_trace_writer *w)
{
	int ret;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (!w->used)
		return 0;
	ret = reserve_space(w, w->used);
	if (!ret)
		ret = write_all(w->fd, w->buf, w->used);
	if (ret) {
		__u32 n = w->buffered;

		w->used = 0;
		w->buffered = 0;
		writer_failed(w, ret, n);
		return ret;
	}
	w->committed += w->used;
	w->used = 0;
	w->buffered = 0;
	return 0;
}

int gctx_trace_writer__append(struct gctx_trace_writer *w, __u32 type, const void *data, __u32 len)
{
	unsigned char hdr[GCTX_REC_HDR_LEN], crc[GCTX_REC_CRC_LEN];
	size_t total = (size_t)len + GCTX_REC_OVERHEAD;
	int ret;

	if (!w || (len && !data) || len > GCTX_TRACE_MAX_RECORD)
		return -EINVAL;
	if (w->err) {
		w->lost++;
		return w->err;
	}

	if (w->used + total > sizeof(w->buf)) {
		ret = gctx_trace_writer__flush(w);
		if (ret) {
			w->lost++;
			return ret;
		}
	}
	w->records++;
	if (total > sizeof(w->buf)) {
		/* Larger than the buffer (which is now empty): straight to the file. */
		ret = reserve_space(w, total);
		if (!ret)
			ret = write_frame(w, type, data, len);
		if (ret)
			writer_failed(w, ret, 1);
		return ret;
	}
	put_le32(hdr, len);
	put_le32(hdr + 4, type);
	memcpy(w->buf + w->used, hdr, sizeof(hdr));
	if (len)
		memcpy(w->buf + w->used + sizeof(hdr), data, len);
	/* type and payload lie together in the buffer: one pass of the checksum over both
	 * (the same value as record_crc's two) */
	put_le32(crc, gctx_crc32(0, w->buf + w->used + 4, 4 + len));
	memcpy(w->buf + w->used + sizeof(hdr) + len, crc, sizeof(crc));
	w->used += total;
	w->buffered++;
	return 0;
}

int gctx_trace_writer__append_final(struct gctx_trace_writer *w, __u32 type, const void *data,
				    __u32 len)
{
	struct gctx_rec_write_loss wl;
	int ret;

	if (!w)
		return -EINVAL;
	if (type == GCTX_REC_WRITE_LOSS) {
		/* the writer fills it in: it alone knows */
		if (!w->err)
			return 0;
		wl = (struct gctx_rec_write_loss){
		    .ts_ns = w->err_ns, .lost = w->lost, .written = w->records, .err = w->err};
		data = &wl;
		len = sizeof(wl);
	}
	if (!w->err)
		return gctx_trace_writer__append(w, type, data, len);
	if (len > GCTX_TRACE_MAX_RECORD || (len && !data))
		return -EINVAL;
	ret = write_frame(w, type, data, len);
	if (ret && type != GCTX_REC_WRITE_LOSS)
		w->lost++;
	return ret;
}

int gctx_trace_writer__error(const struct gctx_trace_writer *w)
{
	return w ? w->err : 0;
}

__u64 gctx_trace_writer__lost(const struct gctx_trace_writer *w)
{
	return w ? w->lost : 0;
}

__u64 gctx_trace_writer__error_ns(const struct gctx_trace_writer *w)
{
	return w ? w->err_ns : 0;
}

__u64 gctx_trace_writer__bytes(const struct gctx_trace_writer *w)
{
	return w ? w->committed + w->used : 0;
}

__u64 gctx_trace_writer__records(const struct gctx_trace_writer *w)
{
	return w ? w->records : 0;
}

int gctx_trace_writer__free(struct gctx_trace_writer *w)
{
	int ret;

	if (!w)
		return 0;
	ret = gctx_trace_writer__flush(w);
	/* give back the space allocated ahead: a truncate to the same size frees the blocks past
	 * the end (ext4, xfs, tmpfs); only after a clean run, whose end is the committed one */
	if (!ret && !w->err && w->reserved > w->committed)
		(void)!ftruncate(w->fd, (off_t)w->committed);
	if (close(w->fd) && !ret && !w->err)
		ret = -errno;
	if (!ret)
		ret = w->err;
	free(w);
	return ret;
}

/* Format a one-line message (control characters in the path become '?'). */
static void format_err(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	size_t i;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	for (i = 0; buf[i]; i++) {
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	}
}

/*
 * Make at least n bytes available from buf[start] when the file has them. Returns the number
 * of bytes available (less than n only at the end of the file), or -errno on a read error.
 */
static ssize_t reader_fill(struct gctx_trace_reader *r, size_t n)
{
	size_t avail = r->end - r->start;

	if (avail >= n)
		return (ssize_t)avail;
	if (r->start + n > r->cap) {
		if (avail && r->start)
			memmove(r->buf, r->buf + r->start, avail);
		r->start = 0;
		r->end = avail;
		if (n > r->cap) {
			size_t cap = (n + GCTX_RBUF_SIZE - 1) / GCTX_RBUF_SIZE * GCTX_RBUF_SIZE;
			unsigned char *buf = realloc(r->buf, cap);

			if (!buf)
				return -ENOMEM;
			r->buf = buf;
			r->cap = cap;
		}
	}
	while (r->end - r->start < n) {
		ssize_t got = read(r->fd, r->buf + r->end, r->cap - r->end);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (got == 0)
			break;
		r->end += (size_t)got;
	}
	return (ssize_t)(r->end - r->start);
}

static void reader_consume(struct gctx_trace_reader *r, size_t n)
{
	r->start += n;
	r->offset += n;
}

static int reader_header(struct gctx_trace_reader *r, char *errbuf, size_t errlen)
{
	const char *path = r->path;
	unsigned char *h;
	__u32 hlen, crc;
	__u16 version;
	ssize_t got;

	got = reader_fill(r, GCTX_TRACE_FIXED_LEN);
	if (got < 0) {
		format_err(errbuf, errlen, "%s: read error: %s", path, strerror((int)-got));
		return -1;
	}
	h = r->buf + r->start;
	if (memcmp(h, GCTX_TRACE_MAGIC,
		   (size_t)got < GCTX_TRACE_MAGIC_LEN ? (size_t)got : GCTX_TRACE_MAGIC_LEN)) {
		format_err(errbuf, errlen, "%s: not a gpuctx trace (bad magic)", path);
		return -1;
	}
	if (got < GCTX_TRACE_FIXED_LEN) {
		format_err(errbuf, errlen, "%s: truncated header (%zd bytes)", path, got);
		return -1;
	}
	version = get_le16(h + 8);
	hlen = get_le16(h + 10);
	crc = get_le32(h + 12);
	if (version < GCTX_TRACE_MIN_VERSION || version > GCTX_TRACE_VERSION) {
		format_err(errbuf, errlen,
			   "%s: unsupported version %u (this gpuctx reads versions %d to %d)", path,
			   version, GCTX_TRACE_MIN_VERSION, GCTX_TRACE_VERSION);
		return -1;
	}
	if (hlen < GCTX_TRACE_FIXED_LEN + GCTX_TRACE_META_MIN_LEN) {
		format_err(errbuf, errlen, "%s: corrupt header (length %u, expected at least %d)",
			   path, hlen, GCTX_TRACE_FIXED_LEN + GCTX_TRACE_META_MIN_LEN);
		return -1;
	}
	got = reader_fill(r, hlen);
	if (got < 0) {
		format_err(errbuf, errlen, "%s: read error: %s", path, strerror((int)-got));
		return -1;
	}
	if ((size_t)got < hlen) {
		format_err(errbuf, errlen, "%s: truncated header (%zd of %u bytes)", path, got,
			   hlen);
		return -1;
	}
	h = r->buf + r->start;
	if (gctx_crc32(0, h + GCTX_TRACE_FIXED_LEN, hlen - GCTX_TRACE_FIXED_LEN) != crc) {
		format_err(errbuf, errlen, "%s: corrupt header (checksum)", path);
		return -1;
	}
	/* Fields a later minor revision appends after the meta are skipped. */
	meta_from_file(&r->meta, h + GCTX_TRACE_FIXED_LEN, hlen - GCTX_TRACE_FIXED_LEN);
	reader_consume(r, hlen);
	return 0;
}

struct gctx_trace_reader *gctx_trace_reader__open(const char *path, char *errbuf, size_t errlen)
{
	struct gctx_trace_reader *r;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	r = calloc(1, sizeof(*r));
	if (!r)
		goto nomem;
	r->fd = -1;
	r->path = strdup(path);
	r->buf = malloc(GCTX_RBUF_SIZE);
	if (!r->path || !r->buf)
		goto nomem;
	r->cap = GCTX_RBUF_SIZE;
	/* a regular file only, not through a symlink as root (lib/infile.h) */
	r->fd = gctx_infile_open(path, r->err, sizeof(r->err));
	if (r->fd < 0) {
		format_err(errbuf, errlen, "%s", r->err);
		goto fail;
	}
	posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (reader_header(r, errbuf, errlen))
		goto fail;
	return r;

nomem:
	format_err(errbuf, errlen, "%s: %s", path, strerror(ENOMEM));
fail:
	gctx_trace_reader__free(r);
	return NULL;
}

const struct gctx_trace_meta *gctx_trace_reader__meta(const struct gctx_trace_reader *r)
{
	return r ? &r->meta : NULL;
}

static int reader_fail(struct gctx_trace_reader *r, const char *fmt, ...)
{
	char msg[GCTX_ERR_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	format_err(r->err, sizeof(r->err), "%s: %s", r->path, msg);
	r->state = RD_FAILED;
	return -1;
}

static int reader_truncated(struct gctx_trace_reader *r)
{
	r->truncated = true;
	r->state = RD_END;
	return 0;
}

/* Is a whole, checksummed frame at buf[start] (of a type up to max_type, 0: any)? 1 yes,
 * 0 no, 2 the file ends inside it. */
static int frame_at(struct gctx_trace_reader *r, __u32 max_len, __u32 max_type, ssize_t *got)
{
	unsigned char *rec;
	__u32 rlen;
	size_t total;

	*got = reader_fill(r, GCTX_REC_HDR_LEN);
	if (*got < 0)
		return 0;
	if (*got < GCTX_REC_HDR_LEN)
		return 2;
	rlen = get_le32(r->buf + r->start);
	if (rlen > max_len || (max_type && get_le32(r->buf + r->start + 4) - 1 >= max_type))
		return 0;
	if (max_type)
		r->checked += rlen;
	total = (size_t)rlen + GCTX_REC_OVERHEAD;
	*got = reader_fill(r, total);
	if (*got < 0)
		return 0;
	if ((size_t)*got < total)
		return 2;
	rec = r->buf + r->start;
	return record_crc(rec + 4, rec + GCTX_REC_HDR_LEN, rlen) ==
	       get_le32(rec + GCTX_REC_HDR_LEN + rlen);
}

/*
 * Bad data at the current offset: move on byte by byte to the next whole frame of a known
 * record type with a good checksum, and remember the span skipped. Returns 1 when a frame is
 * next, 0 at the end of the file, -1 on a read error.
 */
static int reader_resync(struct gctx_trace_reader *r)
{
	__u64 from = r->offset;
	int ret = 0;
	ssize_t got;

	reader_consume(r, 1);
	for (;;) {
		int f;

		if (r->checked > GCTX_RESYNC_BUDGET) {
			/* bounded work on a hostile file: past the budget, the rest is skipped */
			do
				reader_consume(r, r->end - r->start);
			while ((got = reader_fill(r, 1)) > 0);
			ret = got < 0 ? -1 : 0;
			break;
		}
		/* record types are small numbers: any other is taken for garbage */
		f = frame_at(r, GCTX_RESYNC_MAX_LEN, GCTX_RESYNC_MAX_TYPE, &got);
		if (got < 0) {
			ret = -1;
			break;
		}
		if (f == 1) {
			ret = 1;
			break;
		}
		if (got == 0)
			break;
		reader_consume(r, 1);
	}
	if (ret == 0) /* nothing readable up to the end: skip what is left */
		reader_consume(r, r->end - r->start);
	if (r->nskips < GCTX_MAX_SKIPS)
		r->skips[r->nskips] = (struct skip_span){from, r->offset - from};
	r->nskips++;
	r->skipped += r->offset - from;
	return ret;
}

/*
 * Bad data at the current offset. A frame that runs to the end of the file, with nothing
 * readable after it, is a torn last write (recording killed): the trace simply ends there.
 * Anything else is corruption: skip to the next good frame. -1 on a read error.
 */
static int skip_bad(struct gctx_trace_reader *r, bool runs_past_end)
{
	__u64 at = r->offset, total = 0;
	__u32 nskips = r->nskips;
	ssize_t avail = (ssize_t)(r->end - r->start);
	int rs;

	if (avail >= GCTX_REC_HDR_LEN)
		total = (__u64)get_le32(r->buf + r->start) + GCTX_REC_OVERHEAD;
	rs = reader_resync(r);
	if (rs < 0)
		return -1;
	if (rs == 0 && (runs_past_end || (total <= GCTX_TRACE_MAX_RECORD + GCTX_REC_OVERHEAD &&
					  at + total == r->offset))) {
		r->nskips = nskips;
		r->skipped -= r->offset - at;
		r->offset = at; /* what was read ends before the torn frame */
		reader_truncated(r);
	}
	return 0;
}

int gctx_trace_reader__next(struct gctx_trace_reader *r, __u32 *type, const void **data, __u32 *len)
{
	unsigned char *rec, *payload;
	__u32 rlen, rtype;
	size_t total;
	ssize_t got;
	int f;

	if (!r)
		return -1;
	if (r->state == RD_END)
		return 0;
	if (r->state == RD_FAILED)
		return -1;

	for (;;) {
		f = frame_at(r, GCTX_TRACE_MAX_RECORD, 0, &got);
		if (got < 0)
			goto read_error;
		if (f == 1)
			break;
		if (got == 0) {
			r->state = RD_END;
			return 0;
		}
		if (skip_bad(r, f == 2) < 0) {
			got = -EIO;
			goto read_error;
		}
		if (r->state == RD_END)
			return 0;
	}

	rec = r->buf + r->start;
	rlen = get_le32(rec);
	rtype = get_le32(rec + 4);
	payload = rec + GCTX_REC_HDR_LEN;
	total = (size_t)rlen + GCTX_REC_OVERHEAD;

	/* Hand out 8-byte aligned payloads: slide it back over this record's own header. */
	if (rlen && ((uintptr_t)payload & 7)) {
		unsigned char *aligned = payload - ((uintptr_t)payload & 7);

		memmove(aligned, payload, rlen);
		payload = aligned;
	}
	reader_consume(r, total);
	if (type)
		*type = rtype;
	if (data)
		*data = payload;
	if (len)
		*len = rlen;
	return 1;

read_error:
	return reader_fail(r, "read error at offset %llu: %s", (unsigned long long)r->offset,
			   strerror((int)-got));
}

__u64 gctx_trace_reader__skipped(const struct gctx_trace_reader *r, __u32 *nspans)
{
	if (nspans)
		*nspans = r ? r->nskips : 0;
	return r ? r->skipped : 0;
}

void gctx_trace_reader__describe_skips(const struct gctx_trace_reader *r, char *buf, size_t len)
{
	if (!r || !r->nskips) {
		format_err(buf, len, "%s", "");
		return;
	}
	if (r->nskips == 1)
		format_err(buf, len, "%s: %llu bytes skipped at offset %llu (corrupt data)",
			   r->path, (unsigned long long)r->skipped,
			   (unsigned long long)r->skips[0].off);
	else
		format_err(buf, len,
			   "%s: %llu bytes skipped in %u places (corrupt data), the first at "
			   "offset %llu",
			   r->path, (unsigned long long)r->skipped, r->nskips,
			   (unsigned long long)r->skips[0].off);
}

bool gctx_trace_reader__truncated(const struct gctx_trace_reader *r)
{
	return r ? r->truncated : false;
}

__u64 gctx_trace_reader__offset(const struct gctx_trace_reader *r)
{
	return r ? r->offset : 0;
}

const char *gctx_trace_reader__error(const struct gctx_trace_reader *r)
{
	return r ? r->err : "";
}

void gctx_trace_reader__free(struct gctx_trace_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	free(r->path);
	free(r);
}
