// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The record a tracepoint hands its program is laid out by the kernel's TRACE_EVENT (or
 * SYSCALL_DEFINE) macros, described in its format file; the program reads it through a C
 * struct. A struct for another tracepoint compiles, loads and reads the wrong bytes (issue 26:
 * raw_syscalls' "long id" over syscalls:*'s "int __syscall_nr" and its padding). The collector
 * checks each program's struct, from the object's BTF, against the format before attaching.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "collect/tpformat.h"

/* "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;": name, offset, size. The name is
 * the last identifier before ';' or '[' (char comm[16]). */
static int parse_field(const char *line, char *name, size_t namelen, unsigned int *off,
		       unsigned int *size)
{
	const char *decl = strstr(line, "field:"), *end, *p, *o, *s;
	size_t len;

	if (!decl)
		return -1;
	end = strchr(decl, ';');
	o = strstr(line, "offset:");
	s = strstr(line, "size:");
	if (!end || !o || !s || sscanf(o, "offset:%u", off) != 1 || sscanf(s, "size:%u", size) != 1)
		return -1;
	p = memchr(decl, '[', end - decl);
	if (p)
		end = p;
	while (end > decl && end[-1] == ' ')
		end--;
	p = end;
	while (p > decl && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
			    (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9')))
		p--;
	len = end - p;
	if (!len || len >= namelen)
		return -1;
	memcpy(name, p, len);
	name[len] = 0;
	return 0;
}

/* The field called name: 0 with its offset and size, -1 when the format has none. *common_end:
 * where the common_* fields end. */
static int find_field(const char *format, const char *want, unsigned int *off, unsigned int *size,
		      unsigned int *common_end)
{
	int found = -1;

	*common_end = 0;
	for (const char *l = format; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char name[64];
		unsigned int o, s;

		if (parse_field(l, name, sizeof(name), &o, &s))
			continue;
		if (!strncmp(name, "common_", 7) && o + s > *common_end)
			*common_end = o + s;
		if (found && !strcmp(name, want)) {
			*off = o;
			*size = s;
			found = 0;
		}
	}
	return found;
}

int gctx_tpformat__match(const char *format, const struct gctx_tp_member *m, size_t n, char *err,
			 size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		unsigned int off = 0, size = 0, common_end;
		const char *name = m[i].name ? m[i].name : "";

		if (!*name || !m[i].size || !strncmp(name, "__pad", 5))
			continue;
		if (find_field(format, name, &off, &size, &common_end)) {
			if (!strcmp(name, "ent") && m[i].off == 0 && m[i].size == common_end &&
			    common_end)
				continue;
			snprintf(err, errlen,
				 "it reads a field '%s' (offset %u, %u bytes) that the "
				 "tracepoint's format does not have",
				 name, m[i].off, m[i].size);
			return -1;
		}
		if (off != m[i].off || size != m[i].size) {
			snprintf(err, errlen,
				 "it reads '%s' at offset %u (%u bytes), the format has "
				 "it at %u (%u bytes)",
				 name, m[i].off, m[i].size, off, size);
			return -1;
		}
	}
	return 0;
}

int gctx_tpformat__read(const char *cat, const char *name, char *buf, size_t len)
{
	static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	int ret = -ENOENT;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char path[256];
		ssize_t got, at = 0;
		int fd;

		snprintf(path, sizeof(path), "%s/events/%s/%s/format", roots[i], cat, name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		while (at < (ssize_t)len - 1 && (got = read(fd, buf + at, len - 1 - at)) > 0)
			at += got;
		close(fd);
		buf[at] = 0;
		return 0;
	}
	return ret;
}
