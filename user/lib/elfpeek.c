// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Build-id, load bias and sections with bounded reads (interface in elfpeek.h). */
#include <elf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/elfpeek.h"

#define MAX_PHDRS     256
#define MAX_SHDRS     4096
#define MAX_NOTES_LEN 4096 /* bytes of PT_NOTE read per segment (the build-id is early) */

static bool rd(const struct gctx_elf_src *src, void *dst, size_t len, __u64 off)
{
	return off <= src->size && len <= src->size - off && !src->read(src->ctx, dst, len, off);
}

static bool ehdr(const struct gctx_elf_src *src, Elf64_Ehdr *eh)
{
	return rd(src, eh, sizeof(*eh), 0) && !memcmp(eh->e_ident, ELFMAG, SELFMAG) &&
	       eh->e_ident[EI_CLASS] == ELFCLASS64 && eh->e_ident[EI_DATA] == ELFDATA2LSB;
}

static bool phdr(const struct gctx_elf_src *src, const Elf64_Ehdr *eh, unsigned int i,
		 Elf64_Phdr *ph)
{
	return eh->e_phentsize == sizeof(*ph) && i < eh->e_phnum && i < MAX_PHDRS &&
	       rd(src, ph, sizeof(*ph), eh->e_phoff + (__u64)i * sizeof(*ph));
}

static __u32 le32(const __u8 *p)
{
	__u32 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int gctx_elfpeek_build_id(const struct gctx_elf_src *src, __u8 *out, size_t max)
{
	__u8 notes[MAX_NOTES_LEN];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (!ehdr(src, &eh))
		return 0;
	for (unsigned int i = 0; phdr(src, &eh, i, &ph); i++) {
		size_t len = ph.p_filesz < sizeof(notes) ? ph.p_filesz : sizeof(notes);
		size_t align = ph.p_align == 8 ? 8 : 4, o = 0;

		if (ph.p_type != PT_NOTE || !rd(src, notes, len, ph.p_offset))
			continue;
		while (len - o >= 12) {
			__u32 namesz = le32(notes + o), descsz = le32(notes + o + 4),
			      type = le32(notes + o + 8);
			size_t name = o + 12, desc = name + ((namesz + align - 1) & ~(align - 1));

			if (namesz > len || descsz > len || desc > len || descsz > len - desc)
				break;
			if (type == NT_GNU_BUILD_ID && namesz == 4 &&
			    !memcmp(notes + name, "GNU", 4)) {
				if (!descsz || descsz > max)
					return 0;
				memcpy(out, notes + desc, descsz);
				return descsz;
			}
			o = desc + ((descsz + align - 1) & ~(align - 1));
		}
	}
	return 0;
}

bool gctx_elfpeek_bias(const struct gctx_elf_src *src, __u64 pgoff, __u64 start, __u64 *bias,
		       bool *is_exec)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (!ehdr(src, &eh))
		return false;
	*is_exec = eh.e_type == ET_EXEC;
	*bias = 0;
	if (*is_exec)
		return true;
	for (unsigned int i = 0; phdr(src, &eh, i, &ph); i++) {
		if (ph.p_type != PT_LOAD)
			continue;
		if (pgoff + 4096 > ph.p_offset && pgoff < ph.p_offset + ph.p_filesz) {
			*bias = start - (ph.p_vaddr - ph.p_offset + pgoff);
			return true;
		}
	}
	return false;
}

bool gctx_elfpeek_text_vaddr(const struct gctx_elf_src *src, __u64 *vaddr)
{
	bool found = false;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (!ehdr(src, &eh))
		return false;
	for (unsigned int i = 0; phdr(src, &eh, i, &ph); i++) {
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (!found || ph.p_vaddr < *vaddr)
			*vaddr = ph.p_vaddr;
		found = true;
	}
	return found;
}

static bool shdr(const struct gctx_elf_src *src, const Elf64_Ehdr *eh, __u32 i, Elf64_Shdr *sh)
{
	return eh->e_shentsize == sizeof(*sh) && i < MAX_SHDRS &&
	       rd(src, sh, sizeof(*sh), eh->e_shoff + (__u64)i * sizeof(*sh));
}

bool gctx_elfpeek_section(const struct gctx_elf_src *src, const char *name, __u64 *addr, __u64 *off,
			  __u64 *size, __u32 *type)
{
	size_t nlen = strlen(name) + 1;
	Elf64_Shdr sh, strs;
	__u32 nsec, stri;
	Elf64_Ehdr eh;
	char buf[64];

	if (nlen > sizeof(buf) || !ehdr(src, &eh) || !shdr(src, &eh, 0, &sh))
		return false;
	/* more than SHN_LORESERVE sections: the counts live in section 0 */
	nsec = eh.e_shnum ? eh.e_shnum : (sh.sh_size < MAX_SHDRS ? sh.sh_size : MAX_SHDRS);
	stri = eh.e_shstrndx == SHN_XINDEX ? sh.sh_link : eh.e_shstrndx;
	if (stri >= nsec || !shdr(src, &eh, stri, &strs))
		return false;
	for (__u32 i = 1; i < nsec && i < MAX_SHDRS; i++) {
		if (!shdr(src, &eh, i, &sh) || sh.sh_name >= strs.sh_size ||
		    nlen > strs.sh_size - sh.sh_name ||
		    !rd(src, buf, nlen, strs.sh_offset + sh.sh_name) || memcmp(buf, name, nlen))
			continue;
		*addr = sh.sh_addr;
		*off = sh.sh_offset;
		*size = sh.sh_size;
		*type = sh.sh_type;
		return true;
	}
	return false;
}

static int fd_read(void *ctx, void *dst, size_t len, __u64 off)
{
	int fd = (int)(long)ctx;

	for (size_t got = 0; got < len;) {
		ssize_t r = pread(fd, (char *)dst + got, len - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		got += r;
	}
	return 0;
}

bool gctx_elfpeek_fd_src(int fd, struct gctx_elf_src *src)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode))
		return false;
	src->read = fd_read;
	src->ctx = (void *)(long)fd;
	src->size = st.st_size;
	return true;
}
