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
#include <unistd.h>
#include <zlib.h>

#include "trace/tracefile.h"

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

_Static_assert(sizeof(struct gctx_trace_meta) == 696, "trace meta layout changed");
_Static_assert(offsetof(struct gctx_trace_meta, start_boot_ns) == GCTX_TRACE_META_MIN_LEN,
	       "fields are appended to the meta, never inserted");
_Static_assert(GCTX_TRACE_HEADER_LEN <= 0xffff, "header_len is a u16");

struct gctx_trace_writer {
	int fd;
	int err;     /* first write error (-errno), sticky */
	__u64 bytes; /* header plus every record appended, buffered or not */
	__u64 records;
	size_t used;
	unsigned char buf[GCTX_WBUF_SIZE];
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
	uLong crc = crc32(0L, Z_NULL, 0);

	crc = crc32(crc, type_le, 4);
	if (len)
		crc = crc32(crc, data, len);
	return (__u32)crc;
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

struct gctx_trace_writer *gctx_trace_writer__new(const char *path,
						 const struct gctx_trace_meta *meta, int *err)
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
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		ret = -errno;
		goto fail;
	}

	meta_to_file(&fmeta, meta);
	memcpy(hdr, GCTX_TRACE_MAGIC, GCTX_TRACE_MAGIC_LEN);
	put_le16(hdr + 8, GCTX_TRACE_VERSION);
	put_le16(hdr + 10, GCTX_TRACE_HEADER_LEN);
	memcpy(hdr + GCTX_TRACE_FIXED_LEN, &fmeta, sizeof(fmeta));
	put_le32(hdr + 12,
		 (__u32)crc32(crc32(0L, Z_NULL, 0), hdr + GCTX_TRACE_FIXED_LEN, sizeof(fmeta)));
	ret = write_all(w->fd, hdr, sizeof(hdr));
	if (ret)
		goto fail;
	w->bytes = sizeof(hdr);
	if (err)
		*err = 0;
	return w;

fail:
	if (w && w->fd >= 0)
		close(w->fd);
	free(w);
	if (err)
		*err = ret;
	return NULL;
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
	ret = write_all(w->fd, w->buf, w->used);
	w->used = 0;
	if (ret)
		w->err = ret;
	return ret;
}

int gctx_trace_writer__append(struct gctx_trace_writer *w, __u32 type, const void *data, __u32 len)
{
	unsigned char hdr[GCTX_REC_HDR_LEN], crc[GCTX_REC_CRC_LEN];
	size_t total = (size_t)len + GCTX_REC_OVERHEAD;
	int ret;

	if (!w || (len && !data) || len > GCTX_TRACE_MAX_RECORD)
		return -EINVAL;
	if (w->err)
		return w->err;

	put_le32(hdr, len);
	put_le32(hdr + 4, type);
	put_le32(crc, record_crc(hdr + 4, data, len));

	if (w->used + total > sizeof(w->buf)) {
		ret = gctx_trace_writer__flush(w);
		if (ret)
			return ret;
	}
	if (total > sizeof(w->buf)) {
		/* Larger than the buffer (which is now empty): straight to the file. */
		ret = write_all(w->fd, hdr, sizeof(hdr));
		if (!ret)
			ret = write_all(w->fd, data, len);
		if (!ret)
			ret = write_all(w->fd, crc, sizeof(crc));
		if (ret) {
			w->err = ret;
			return ret;
		}
	} else {
		memcpy(w->buf + w->used, hdr, sizeof(hdr));
		if (len)
			memcpy(w->buf + w->used + sizeof(hdr), data, len);
		memcpy(w->buf + w->used + sizeof(hdr) + len, crc, sizeof(crc));
		w->used += total;
	}
	w->bytes += total;
	w->records++;
	return 0;
}

__u64 gctx_trace_writer__bytes(const struct gctx_trace_writer *w)
{
	return w ? w->bytes : 0;
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
	if (close(w->fd) && !ret)
		ret = -errno;
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
	if ((__u32)crc32(crc32(0L, Z_NULL, 0), h + GCTX_TRACE_FIXED_LEN,
			 hlen - GCTX_TRACE_FIXED_LEN) != crc) {
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
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		format_err(errbuf, errlen, "cannot open %s: %s", path, strerror(errno));
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

int gctx_trace_reader__next(struct gctx_trace_reader *r, __u32 *type, const void **data, __u32 *len)
{
	unsigned char *rec, *payload;
	__u32 rlen, rtype, crc;
	size_t total;
	ssize_t got;

	if (!r)
		return -1;
	if (r->state == RD_END)
		return 0;
	if (r->state == RD_FAILED)
		return -1;

	got = reader_fill(r, GCTX_REC_HDR_LEN);
	if (got < 0)
		goto read_error;
	if (got == 0) {
		r->state = RD_END;
		return 0;
	}
	if (got < GCTX_REC_HDR_LEN)
		return reader_truncated(r);

	rec = r->buf + r->start;
	rlen = get_le32(rec);
	if (rlen > GCTX_TRACE_MAX_RECORD)
		return reader_fail(r, "corrupt record at offset %llu (length %u exceeds %u)",
				   (unsigned long long)r->offset, rlen, GCTX_TRACE_MAX_RECORD);
	total = (size_t)rlen + GCTX_REC_OVERHEAD;
	got = reader_fill(r, total);
	if (got < 0)
		goto read_error;
	if ((size_t)got < total)
		return reader_truncated(r);

	rec = r->buf + r->start;
	rtype = get_le32(rec + 4);
	payload = rec + GCTX_REC_HDR_LEN;
	crc = get_le32(payload + rlen);
	if (record_crc(rec + 4, payload, rlen) != crc) {
		/* A bad last record is a torn write; anywhere else the file is corrupt. */
		got = reader_fill(r, total + 1);
		if (got < 0)
			goto read_error;
		if ((size_t)got == total)
			return reader_truncated(r);
		return reader_fail(r, "corrupt record at offset %llu (checksum)",
				   (unsigned long long)r->offset);
	}

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
