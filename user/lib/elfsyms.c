// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Validated .dynsym and .symtab reader (interface in elfsyms.h). */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/elfsyms.h"

/* Bounds far above any real library (libcuda: ~100 sections, ~2k dynamic symbols). */
#define MAX_PHDRS  256
#define MAX_SHDRS  4096
#define MAX_SYMS   (1u << 20)
#define MAX_STRTAB (64u << 20)
#define SYM_CHUNK  512

/* [off, off + len) lies inside a file of size bytes, without overflow. */
static bool in_file(__u64 off, __u64 len, __u64 size)
{
	return off <= size && len <= size - off;
}

static int src_read(const struct gctx_elf_src *s, void *dst, __u64 len, __u64 off)
{
	if (!in_file(off, len, s->size))
		return -ERANGE;
	return s->read(s->ctx, dst, (size_t)len, off);
}

/* Virtual address -> file offset through a file-backed part of a PT_LOAD. */
static bool va_to_off(const Elf64_Phdr *ph, __u32 nph, __u64 va, __u64 size, __u64 *off)
{
	for (__u32 i = 0; i < nph; i++) {
		__u64 d;

		if (ph[i].p_type != PT_LOAD || va < ph[i].p_vaddr)
			continue;
		d = va - ph[i].p_vaddr;
		if (d >= ph[i].p_filesz || d >= ph[i].p_memsz)
			continue;
		if (ph[i].p_offset > size || d >= size - ph[i].p_offset)
			continue;
		*off = ph[i].p_offset + d;
		return true;
	}
	return false;
}

/* Walk the symbol table of section type type (SHT_DYNSYM or SHT_SYMTAB). A missing table is
 * an error only when required. */
static int walk_syms(const struct gctx_elf_src *src, __u32 type, bool required, gctx_elf_sym_fn fn,
		     void *ctx, char *err, size_t errlen)
{
	Elf64_Phdr *ph = NULL;
	Elf64_Shdr *sh = NULL, *dyn = NULL, *str;
	Elf64_Sym *syms = NULL;
	char *strtab = NULL;
	const char *why = NULL;
	Elf64_Ehdr eh;
	__u64 nsyms;
	int n = 0;

	if (src_read(src, &eh, sizeof(eh), 0)) {
		why = "too short for an ELF header";
		goto out;
	}
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64) {
		why = "not an x86-64 ELF file";
		goto out;
	}
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > MAX_PHDRS ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum > MAX_SHDRS || !eh.e_shnum) {
		why = "bad program or section header table";
		goto out;
	}
	ph = calloc(eh.e_phnum ? eh.e_phnum : 1, sizeof(*ph));
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!ph || !sh) {
		why = "out of memory";
		goto out;
	}
	if (src_read(src, ph, (__u64)eh.e_phnum * sizeof(*ph), eh.e_phoff) ||
	    src_read(src, sh, (__u64)eh.e_shnum * sizeof(*sh), eh.e_shoff)) {
		why = "header table outside the file";
		goto out;
	}
	for (__u32 i = 0; i < eh.e_shnum && !dyn; i++)
		if (sh[i].sh_type == type)
			dyn = &sh[i];
	if (!dyn) {
		why = required ? "no .dynsym" : NULL;
		goto out;
	}
	/* the checks whose absence once divided by zero or read out of bounds */
	if (dyn->sh_entsize != sizeof(Elf64_Sym) || dyn->sh_size % sizeof(Elf64_Sym) ||
	    !in_file(dyn->sh_offset, dyn->sh_size, src->size) || dyn->sh_link >= eh.e_shnum) {
		why = type == SHT_DYNSYM ? "bad .dynsym section" : "bad .symtab section";
		goto out;
	}
	str = &sh[dyn->sh_link];
	if (str->sh_type != SHT_STRTAB || !str->sh_size || str->sh_size > MAX_STRTAB ||
	    !in_file(str->sh_offset, str->sh_size, src->size)) {
		why = type == SHT_DYNSYM ? "bad .dynstr section" : "bad .strtab section";
		goto out;
	}
	nsyms = dyn->sh_size / sizeof(Elf64_Sym);
	if (nsyms > MAX_SYMS) {
		why = "too many symbols";
		goto out;
	}
	strtab = malloc(str->sh_size + 1);
	syms = calloc(SYM_CHUNK, sizeof(*syms));
	if (!strtab || !syms) {
		why = "out of memory";
		goto out;
	}
	if (src_read(src, strtab, str->sh_size, str->sh_offset)) {
		why = "cannot read a symbol string table";
		goto out;
	}
	strtab[str->sh_size] = '\0'; /* a name running off the end stops here */
	for (__u64 base = 0; base < nsyms; base += SYM_CHUNK) {
		__u64 k = nsyms - base < SYM_CHUNK ? nsyms - base : SYM_CHUNK;

		if (src_read(src, syms, k * sizeof(*syms), dyn->sh_offset + base * sizeof(*syms))) {
			why = "cannot read a symbol table";
			goto out;
		}
		for (__u64 i = 0; i < k; i++) {
			const Elf64_Sym *s = &syms[i];
			__u64 off;

			if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF ||
			    !s->st_value || s->st_name >= str->sh_size || !strtab[s->st_name])
				continue;
			if (!va_to_off(ph, eh.e_phnum, s->st_value, src->size, &off))
				continue;
			fn(ctx, strtab + s->st_name, off);
			n++;
		}
	}
out:
	if (why)
		snprintf(err, errlen, "%s", why);
	free(ph);
	free(sh);
	free(syms);
	free(strtab);
	return why ? -1 : n;
}

int gctx_elf_dynsyms(const struct gctx_elf_src *src, gctx_elf_sym_fn fn, void *ctx, char *err,
		     size_t errlen)
{
	return walk_syms(src, SHT_DYNSYM, true, fn, ctx, err, errlen);
}

/*
 * The function starts .eh_frame_hdr lists (PT_GNU_EH_FRAME): its binary search table has one
 * entry per FDE, each the first address of a function (or of a function's split-off part), so
 * a stripped library still tells where its functions begin. Only the encoding the linkers
 * write (table of datarel|sdata4 pairs, count udata4) is read; any other yields nothing.
 */
#define EH_PE_UDATA4	     0x03
#define EH_PE_PCREL_SDATA4   0x1b
#define EH_PE_DATAREL_SDATA4 0x3b
#define MAX_FDES	     (1u << 22)

static int walk_eh_frame_hdr(const struct gctx_elf_src *src, gctx_elf_sym_fn fn, void *ctx)
{
	Elf64_Phdr ph[MAX_PHDRS];
	const Elf64_Phdr *hp = NULL;
	__s32 pair[2 * 256];
	__u8 hdr[12];
	Elf64_Ehdr eh;
	__u32 count;
	int n = 0;

	if (src_read(src, &eh, sizeof(eh), 0) || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum > MAX_PHDRS ||
	    src_read(src, ph, (__u64)eh.e_phnum * sizeof(*ph), eh.e_phoff))
		return 0;
	for (__u32 i = 0; i < eh.e_phnum && !hp; i++)
		if (ph[i].p_type == PT_GNU_EH_FRAME)
			hp = &ph[i];
	if (!hp || hp->p_filesz < sizeof(hdr) || src_read(src, hdr, sizeof(hdr), hp->p_offset) ||
	    hdr[0] != 1 || hdr[1] != EH_PE_PCREL_SDATA4 || hdr[2] != EH_PE_UDATA4 ||
	    hdr[3] != EH_PE_DATAREL_SDATA4)
		return 0;
	memcpy(&count, hdr + 8, sizeof(count));
	if (count > MAX_FDES || (__u64)count * 8 > hp->p_filesz - sizeof(hdr))
		return 0;
	for (__u32 base = 0; base < count; base += 256) {
		__u32 k = count - base < 256 ? count - base : 256;

		if (src_read(src, pair, (__u64)k * 8, hp->p_offset + sizeof(hdr) + (__u64)base * 8))
			return n;
		for (__u32 i = 0; i < k; i++) {
			__u64 va = hp->p_vaddr + (__u64)(__s64)pair[2 * i], off;

			if (va_to_off(ph, eh.e_phnum, va, src->size, &off)) {
				fn(ctx, "", off);
				n++;
			}
		}
	}
	return n;
}

int gctx_elf_funcs(const struct gctx_elf_src *src, gctx_elf_sym_fn fn, void *ctx, char *err,
		   size_t errlen)
{
	int a = walk_syms(src, SHT_DYNSYM, false, fn, ctx, err, errlen), b;

	if (a < 0)
		return a;
	b = walk_syms(src, SHT_SYMTAB, false, fn, ctx, err, errlen);
	if (b < 0)
		return b;
	return a + b + walk_eh_frame_hdr(src, fn, ctx);
}

static int fd_read(void *ctx, void *dst, size_t len, __u64 off)
{
	int fd = *(int *)ctx;
	size_t got = 0;

	while (got < len) {
		ssize_t r = pread(fd, (char *)dst + got, len - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		got += (size_t)r;
	}
	return 0;
}

int gctx_elf_dynsyms_fd(int fd, __u64 size, gctx_elf_sym_fn fn, void *ctx, char *err, size_t errlen)
{
	struct gctx_elf_src src = {.read = fd_read, .ctx = &fd, .size = size};

	return gctx_elf_dynsyms(&src, fn, ctx, err, errlen);
}

int gctx_elf_funcs_fd(int fd, __u64 size, gctx_elf_sym_fn fn, void *ctx, char *err, size_t errlen)
{
	struct gctx_elf_src src = {.read = fd_read, .ctx = &fd, .size = size};

	return gctx_elf_funcs(&src, fn, ctx, err, errlen);
}

static int mem_read(void *ctx, void *dst, size_t len, __u64 off)
{
	memcpy(dst, (const char *)ctx + off, len); /* bounds checked by src_read */
	return 0;
}

int gctx_elf_dynsyms_mem(const void *buf, size_t len, gctx_elf_sym_fn fn, void *ctx, char *err,
			 size_t errlen)
{
	struct gctx_elf_src src = {.read = mem_read, .ctx = (void *)buf, .size = len};

	return gctx_elf_dynsyms(&src, fn, ctx, err, errlen);
}

int gctx_elf_funcs_mem(const void *buf, size_t len, gctx_elf_sym_fn fn, void *ctx, char *err,
		       size_t errlen)
{
	struct gctx_elf_src src = {.read = mem_read, .ctx = (void *)buf, .size = len};

	return gctx_elf_funcs(&src, fn, ctx, err, errlen);
}
