// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Native unwinding and symbols with libdw (interface in unwind.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>

#include "collect/unwind.h"
#include "lib/grow.h"
#include "lib/str.h"

#define MAX_MAPS 4096 /* a hostile process cannot make us hold more */

void gctx_maps__clear(struct gctx_maps *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}

int gctx_maps__read(struct gctx_maps *m, __u32 pid)
{
	char fn[64], line[640];
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%u/maps", pid);
	f = fopen(fn, "re");
	if (!f)
		return -errno;
	m->n = 0;
	m->pid = pid;
	while (fgets(line, sizeof(line), f) && m->n < MAX_MAPS) {
		unsigned long long s, e, off;
		char perms[8], path[512];
		int n = 0;

		path[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &n) < 4)
			continue;
		if (perms[2] != 'x' || line[n] != '/')
			continue;
		gctx_copy_str(path, sizeof(path), line + n, strcspn(line + n, "\n"));
		if (gctx_grow(&m->v, &m->cap, m->n + 1, sizeof(*m->v))) {
			fclose(f);
			return -ENOMEM;
		}
		m->v[m->n].start = s;
		m->v[m->n].end = e;
		m->v[m->n].pgoff = off;
		gctx_copy_str(m->v[m->n].perms, sizeof(m->v[m->n].perms), perms, 4);
		gctx_copy_str(m->v[m->n].path, sizeof(m->v[m->n].path), path, strlen(path));
		m->n++;
	}
	fclose(f);
	return 0;
}

/* Open a mapped file: the exact mapped file while the process lives (map_files), else the
 * path inside its mount namespace, else the path here. Regular files only, never blocks. */
int gctx_map_open(const struct gctx_maps *maps, const struct gctx_map *mp)
{
	char fn[600];
	struct stat st;
	int fd;

	snprintf(fn, sizeof(fn), "/proc/%u/map_files/%llx-%llx", maps->pid,
		 (unsigned long long)mp->start, (unsigned long long)mp->end);
	fd = open(fn, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		snprintf(fn, sizeof(fn), "/proc/%u/root%s", maps->pid, mp->path);
		fd = open(fn, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	}
	if (fd < 0)
		fd = open(mp->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Load bias of an ET_DYN file mapped at mp: start minus the vaddr its page offset holds. */
bool gctx_map_bias(int fd, const struct gctx_map *mp, __u64 *bias, bool *is_exec)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t n = 0;
	bool ok = false;

	if (!e)
		return false;
	if (!gelf_getehdr(e, &eh) || elf_getphdrnum(e, &n))
		goto out;
	*is_exec = eh.e_type == ET_EXEC;
	*bias = 0;
	if (*is_exec) {
		ok = true;
		goto out;
	}
	for (size_t i = 0; i < n && i < 256; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (mp->pgoff + 4096 > ph.p_offset && mp->pgoff < ph.p_offset + ph.p_filesz) {
			*bias = mp->start - (ph.p_vaddr - ph.p_offset + mp->pgoff);
			ok = true;
			break;
		}
	}
out:
	elf_end(e);
	return ok;
}

struct uw {
	const struct gctx_ev_stack *s;
	__u64 sp;
	size_t stack_len;
	Dwarf_Addr pcs[GCTX_STACK_MAX_FRAMES];
	bool act[GCTX_STACK_MAX_FRAMES];
	int n, max;
};

static pid_t uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct uw *u = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->s->hdr.tid ? u->s->hdr.tid : 1;
}

static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct uw *u = arg;

	if (addr < u->sp || addr - u->sp + sizeof(*result) > u->stack_len)
		return false;
	memcpy(result, u->s->stack + (addr - u->sp), sizeof(*result));
	return true;
}

static bool uw_set_regs(Dwfl_Thread *thread, void *arg)
{
	struct uw *u = arg;
	Dwarf_Word regs[GCTX_STACK_NREGS];

	for (int i = 0; i < GCTX_STACK_NREGS; i++)
		regs[i] = u->s->regs[i];
	return dwfl_thread_state_registers(thread, 0, GCTX_STACK_NREGS, regs);
}

static const Dwfl_Thread_Callbacks uw_thread_cbs = {
    .next_thread = uw_next_thread,
    .memory_read = uw_memory_read,
    .set_initial_registers = uw_set_regs,
};

static int uw_frame(Dwfl_Frame *frame, void *arg)
{
	struct uw *u = arg;
	Dwarf_Addr pc;
	bool act = false;

	if (u->n >= u->max || !dwfl_frame_pc(frame, &pc, &act))
		return DWARF_CB_ABORT;
	/* a pc of 0 or a repeat of the same frame ends a walk through garbage */
	if (!pc || (u->n && u->pcs[u->n - 1] == pc && u->n > 64))
		return DWARF_CB_ABORT;
	u->pcs[u->n] = pc;
	u->act[u->n] = act;
	u->n++;
	return DWARF_CB_OK;
}

static void symbolise(Dwfl *dwfl, Dwarf_Addr pc, bool activation, struct gctx_rec_frame *f)
{
	Dwarf_Addr look = activation || !pc ? pc : pc - 1, low = 0;
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, look);
	const char *name, *mainfile = NULL, *src;
	GElf_Off off = 0;
	GElf_Sym sym;
	Dwfl_Line *line;
	int ln = 0;

	memset(f, 0, sizeof(*f));
	f->kind = GCTX_FRAME_NATIVE;
	f->addr = pc;
	if (!mod) {
		snprintf(f->function, sizeof(f->function), "0x%" PRIx64, (uint64_t)pc);
		return;
	}
	dwfl_module_info(mod, NULL, &low, NULL, NULL, NULL, &mainfile, NULL);
	if (mainfile)
		gctx_copy_str(f->module, sizeof(f->module), mainfile, strlen(mainfile));
	name = dwfl_module_addrinfo(mod, look, &off, &sym, NULL, NULL, NULL);
	if (name) {
		gctx_copy_str(f->function, sizeof(f->function), name, strlen(name));
		f->offset = off + (pc - look);
	} else {
		f->offset = pc - low; /* no symbol: module-relative */
	}
	line = dwfl_module_getsrc(mod, look);
	if (line) {
		src = dwfl_lineinfo(line, NULL, &ln, NULL, NULL, NULL);
		if (src && ln > 0) {
			gctx_copy_str(f->file, sizeof(f->file), src, strlen(src));
			f->line = ln;
		}
	}
}

static char *debuginfo_path;

/* Symbols: the binaries' own tables and DWARF, and separate debug info by build-id. */
static const Dwfl_Callbacks dwfl_cbs = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

static int report_modules(Dwfl *dwfl, const struct gctx_maps *maps)
{
	int n = 0;

	dwfl_report_begin(dwfl);
	for (__u32 i = 0; i < maps->n; i++) {
		const struct gctx_map *mp = &maps->v[i];
		bool seen = false, is_exec = false;
		__u64 bias = 0;
		int fd;

		for (__u32 j = 0; j < i && !seen; j++)
			seen = !strcmp(maps->v[j].path, mp->path);
		if (seen)
			continue;
		fd = gctx_map_open(maps, mp);
		if (fd < 0)
			continue;
		if (!gctx_map_bias(fd, mp, &bias, &is_exec) ||
		    !dwfl_report_elf(dwfl, mp->path, mp->path, fd, bias, false)) {
			close(fd);
			continue;
		}
		n++;
	}
	dwfl_report_end(dwfl, NULL, NULL);
	return n;
}

/*
 * libdw sessions, kept by address-space layout: a forked child has its parent's layout, so the
 * modules, CFI and debug info libdw parsed for one stack (libc's separate DWARF alone takes
 * ~100 ms) serve the next ones. Each session is attached once to the one unwinding state
 * (uw_state), whose registers and stack copy change with each stack: libdw asks for the
 * initial registers again at each walk. A few layouts, the least recently used dropped.
 */
#define SESSIONS 4

static struct uw uw_state;

static struct {
	__u64 sig;
	Dwfl *dwfl;
	__u64 used;
} sessions[SESSIONS];
static __u64 session_clock;

static __u64 maps_sig(const struct gctx_maps *maps)
{
	__u64 h = 1469598103934665603ull;

	for (__u32 i = 0; i < maps->n; i++) {
		const unsigned char *p = (const unsigned char *)maps->v[i].path;

		h = (h ^ maps->v[i].start) * 1099511628211ull;
		h = (h ^ maps->v[i].pgoff) * 1099511628211ull;
		while (*p)
			h = (h ^ *p++) * 1099511628211ull;
	}
	return h ? h : 1;
}

static Dwfl *session(const struct gctx_maps *maps)
{
	__u64 sig = maps_sig(maps);
	int slot = 0;

	for (int i = 0; i < SESSIONS; i++) {
		if (sessions[i].dwfl && sessions[i].sig == sig) {
			sessions[i].used = ++session_clock;
			return sessions[i].dwfl;
		}
		if (sessions[i].used < sessions[slot].used)
			slot = i;
	}
	if (sessions[slot].dwfl)
		dwfl_end(sessions[slot].dwfl);
	sessions[slot].sig = sig;
	sessions[slot].used = ++session_clock;
	sessions[slot].dwfl = dwfl_begin(&dwfl_cbs);
	if (sessions[slot].dwfl &&
	    (report_modules(sessions[slot].dwfl, maps) <= 0 ||
	     !dwfl_attach_state(sessions[slot].dwfl, NULL, 1, &uw_thread_cbs, &uw_state))) {
		dwfl_end(sessions[slot].dwfl);
		sessions[slot].dwfl = NULL;
	}
	return sessions[slot].dwfl;
}

void gctx_unwind_cache_clear(void)
{
	for (int i = 0; i < SESSIONS; i++) {
		if (sessions[i].dwfl)
			dwfl_end(sessions[i].dwfl);
		memset(&sessions[i], 0, sizeof(sessions[i]));
	}
}

int gctx_unwind(const struct gctx_ev_stack *s, size_t len, const struct gctx_maps *maps,
		struct gctx_rec_frame *out, int max, const char **how)
{
	struct uw *u = &uw_state;
	Dwfl *dwfl;
	int n = 0;

	*how = "no registers";
	if (!(s->flags & GCTX_STK_REGS_OK) || max <= 0)
		return 0;
	if (max > GCTX_STACK_MAX_FRAMES)
		max = GCTX_STACK_MAX_FRAMES;
	elf_version(EV_CURRENT);
	memset(u, 0, sizeof(*u));
	u->s = s;
	u->sp = s->regs[7];
	u->stack_len = s->stack_len;
	if (len < GCTX_EV_STACK_HDR_LEN + u->stack_len)
		u->stack_len = len > GCTX_EV_STACK_HDR_LEN ? len - GCTX_EV_STACK_HDR_LEN : 0;
	u->max = max;
	dwfl = session(maps);
	*how = "no module could be read";
	if (dwfl) {
		dwfl_getthread_frames(dwfl, s->hdr.tid ? s->hdr.tid : 1, uw_frame, u);
		*how = "dwarf";
	}
	/* Frame pointers reached further (e.g. code with frame pointers but no CFI). */
	if (u->n < 2 && s->nips > (__u32)u->n) {
		__u32 k = s->nips < GCTX_STACK_MAX_IPS ? s->nips : GCTX_STACK_MAX_IPS;

		u->n = 0;
		for (__u32 i = 0; i < k && u->n < max; i++) {
			u->pcs[u->n] = s->ips[i];
			u->act[u->n] = i == 0;
			u->n++;
		}
		*how = "frame pointers";
	}
	if (!u->n) {
		u->pcs[0] = s->regs[16];
		u->act[0] = true;
		u->n = 1;
		*how = "no unwind info";
	}
	for (int i = 0; i < u->n; i++) {
		if (dwfl) {
			symbolise(dwfl, u->pcs[i], u->act[i], &out[n++]);
		} else {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].kind = GCTX_FRAME_NATIVE;
			out[n++].addr = u->pcs[i];
		}
	}
	return n;
}

/* One return address (a call site) to module, function and offset, through the libdw session
 * of this address space (kept for the next ones). 0, or -ENOENT when no module holds it:
 * out then has the address alone. */
int gctx_unwind_symbolise(const struct gctx_maps *maps, __u64 addr, struct gctx_rec_frame *out)
{
	Dwfl *dwfl;

	elf_version(EV_CURRENT);
	memset(out, 0, sizeof(*out));
	out->kind = GCTX_FRAME_NATIVE;
	out->addr = addr;
	dwfl = maps && maps->n ? session(maps) : NULL;
	if (!dwfl || !addr || !dwfl_addrmodule(dwfl, addr - 1))
		return -ENOENT;
	/* a return address: the call is the instruction before it */
	symbolise(dwfl, addr, false, out);
	return 0;
}
