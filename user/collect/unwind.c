// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Native unwinding and symbols with libdw (interface in unwind_priv.h). This runs in the
 * sandboxed symboliser process (symsrv.c), never in gpuctx itself: libdw maps and parses
 * files the traced user controls.
 */
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
#include <dwarf.h>

#include "collect/unwind_priv.h"
#include "lib/grow.h"
#include "lib/str.h"

#define MAX_INLINE 16 /* inlined calls expanded at one pc */

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

/* A function's name as the file has it (mangled), into name (UW_NAME_MAX) and, cut, into the
 * frame: the caller demangles it (outside this process, lib/demangle.h). */
static void set_name(struct gctx_rec_frame *f, char *name, const char *raw)
{
	size_t n = strnlen(raw, UW_NAME_MAX);

	gctx_copy_str(name, UW_NAME_MAX, raw, n);
	gctx_copy_str(f->function, sizeof(f->function), raw, n);
}

static void symbolise(Dwfl *dwfl, Dwarf_Addr pc, bool activation, struct gctx_rec_frame *f,
		      char *fname)
{
	Dwarf_Addr look = activation || !pc ? pc : pc - 1, low = 0;
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, look);
	const char *name, *mainfile = NULL, *src;
	GElf_Off off = 0;
	GElf_Sym sym;
	Dwfl_Line *line;
	int ln = 0;

	memset(f, 0, sizeof(*f));
	fname[0] = 0;
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
		set_name(f, fname, name);
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

/* Name of a function DIE, or of the function an inlined instance comes from: the linkage
 * name when there is one (C++, demangled), else its name. */
static void die_function(Dwarf_Die *die, struct gctx_rec_frame *f, char *fname)
{
	Dwarf_Attribute a;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));

	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	if (name)
		set_name(f, fname, name);
}

/* Where an inlined instance was called: file (from the CU's file table) and line. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *inl, struct gctx_rec_frame *f)
{
	Dwarf_Attribute a;
	Dwarf_Word file = 0, line = 0;
	Dwarf_Files *files;
	const char *src = NULL;
	size_t nfiles = 0;

	f->file[0] = 0;
	f->line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &line) || !line ||
	    line > UINT32_MAX)
		return;
	if (!dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &file) &&
	    !dwarf_getsrcfiles(cu, &files, &nfiles) && file < nfiles)
		src = dwarf_filesrc(files, file, NULL, NULL);
	if (!src)
		return;
	gctx_copy_str(f->file, sizeof(f->file), src, strlen(src));
	f->line = line;
}

/*
 * One frame per function at pc, innermost first, as perf and gdb show them: the functions
 * inlined there (GCTX_FRAME_INLINE, at the pc's line for the innermost, at the call site of
 * the inner one for the others), then the function the code belongs to, at the call site of
 * the outermost inlined one. Returns the number of frames written (at least 1 if max > 0).
 */
static int symbolise_inlines(Dwfl *dwfl, Dwarf_Addr pc, bool activation, struct gctx_rec_frame *out,
			     char (*names)[UW_NAME_MAX], int max)
{
	Dwarf_Addr look = activation || !pc ? pc : pc - 1, bias = 0;
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, look);
	Dwarf_Die *cu = mod ? dwfl_module_addrdie(mod, look, &bias) : NULL, *scopes = NULL;
	Dwarf_Die *inl[MAX_INLINE];
	int ns, k = 0, n = 0;

	if (max <= 0)
		return 0;
	ns = cu ? dwarf_getscopes(cu, look - bias, &scopes) : 0;
	for (int i = 0; i < ns && k < MAX_INLINE && k < max - 1; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram)
			break;
		if (tag == DW_TAG_inlined_subroutine)
			inl[k++] = &scopes[i];
	}
	for (int i = 0; i < k; i++) {
		struct gctx_rec_frame *f = &out[n];
		char *fname = names[n++];

		symbolise(dwfl, pc, activation, f, fname);
		f->kind = GCTX_FRAME_INLINE;
		f->function[0] = 0;
		fname[0] = 0;
		die_function(inl[i], f, fname);
		if (i)
			call_site(cu, inl[i - 1], f);
	}
	symbolise(dwfl, pc, activation, &out[n], names[n]);
	if (k)
		call_site(cu, inl[k - 1], &out[n]);
	free(scopes);
	return n + 1;
}

static char *debuginfo_path;

/* Symbols: the binaries' own tables and DWARF, and separate debug info by build-id. */
static const Dwfl_Callbacks dwfl_cbs = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

/* Modules of a session whose file changed since they were mapped, for the stack's note. */
static void note_stale(char *note, size_t len, const char *path)
{
	const char *b = strrchr(path, '/');
	size_t o = strlen(note);

	b = b ? b + 1 : path;
	if (!o)
		snprintf(note, len, "%.40s changed since the process mapped it: no symbols", b);
	else if (!strstr(note, "(and more") && o + 16 < len)
		snprintf(note + o, len - o, " (and more modules)");
}

static uw_open_fn open_module;

static int report_modules(Dwfl *dwfl, const struct gctx_maps *maps, char *note, size_t note_len)
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
		fd = open_module(i);
		if (fd == -ESTALE)
			note_stale(note, note_len, mp->path);
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
	char note[96]; /* modules left out of it, "" if none */
} sessions[SESSIONS];
static __u64 session_clock;
static const char *session_note = ""; /* of the session last used */

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
			session_note = sessions[i].note;
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
	sessions[slot].note[0] = 0;
	session_note = sessions[slot].note;
	if (sessions[slot].dwfl &&
	    (report_modules(sessions[slot].dwfl, maps, sessions[slot].note,
			    sizeof(sessions[slot].note)) <= 0 ||
	     !dwfl_attach_state(sessions[slot].dwfl, NULL, 1, &uw_thread_cbs, &uw_state))) {
		dwfl_end(sessions[slot].dwfl);
		sessions[slot].dwfl = NULL;
	}
	return sessions[slot].dwfl;
}

const char *uw_note(void)
{
	return session_note;
}

void uw_frame_from_maps(const struct gctx_maps *maps, struct gctx_rec_frame *f)
{
	for (__u32 i = 0; i < maps->n; i++) {
		const struct gctx_map *mp = &maps->v[i];

		if (f->addr >= mp->start && f->addr < mp->end) {
			gctx_copy_str(f->module, sizeof(f->module), mp->path, strlen(mp->path));
			f->function[0] = 0;
			f->offset = f->addr - mp->start + mp->pgoff;
			return;
		}
	}
}

int uw_unwind(const struct gctx_ev_stack *s, size_t len, const struct gctx_maps *maps,
	      uw_open_fn open, struct gctx_rec_frame *out, char (*names)[UW_NAME_MAX], int max,
	      const char **how)
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
	session_note = "";
	open_module = open;
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
	for (int i = 0; i < u->n && n < max; i++) {
		int k = 1;

		if (dwfl) {
			k = symbolise_inlines(dwfl, u->pcs[i], u->act[i], &out[n], names + n,
					      max - n);
		} else {
			memset(&out[n], 0, sizeof(out[n]));
			names[n][0] = 0;
			out[n].kind = GCTX_FRAME_NATIVE;
			out[n].addr = u->pcs[i];
		}
		if (!out[n + k - 1].module[0])
			uw_frame_from_maps(maps, &out[n + k - 1]);
		n += k;
	}
	return n;
}

int uw_symbolise(const struct gctx_maps *maps, uw_open_fn open, __u64 addr,
		 struct gctx_rec_frame *out, char *name)
{
	Dwfl *dwfl;

	elf_version(EV_CURRENT);
	memset(out, 0, sizeof(*out));
	name[0] = 0;
	out->kind = GCTX_FRAME_NATIVE;
	out->addr = addr;
	open_module = open;
	dwfl = maps && maps->n ? session(maps) : NULL;
	if (!dwfl || !addr || !dwfl_addrmodule(dwfl, addr - 1))
		return -ENOENT;
	/* a return address: the call is the instruction before it */
	symbolise(dwfl, addr, false, out, name);
	return 0;
}
