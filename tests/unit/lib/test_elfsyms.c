// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests of the .dynsym reader on hand-made ELF files, sound and crafted. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "lib/elfsyms.h"

/* Layout: ELF header | PT_LOAD | .dynstr | .dynsym (3 symbols) | 3 section headers | code */
struct tiny {
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	char str[32];
	Elf64_Sym sym[4];
	Elf64_Shdr sh[3];
	unsigned char code[64];
};

#define OFF(f)	offsetof(struct tiny, f)
#define LOAD_VA 0x400000

static void make_tiny(struct tiny *t)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->eh.e_ident, ELFMAG, SELFMAG);
	t->eh.e_ident[EI_CLASS] = ELFCLASS64;
	t->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	t->eh.e_machine = EM_X86_64;
	t->eh.e_phoff = OFF(ph);
	t->eh.e_phentsize = sizeof(Elf64_Phdr);
	t->eh.e_phnum = 1;
	t->eh.e_shoff = OFF(sh);
	t->eh.e_shentsize = sizeof(Elf64_Shdr);
	t->eh.e_shnum = 3;
	/* the whole file is loaded at LOAD_VA */
	t->ph.p_type = PT_LOAD;
	t->ph.p_vaddr = LOAD_VA;
	t->ph.p_filesz = t->ph.p_memsz = sizeof(*t);
	memcpy(t->str, "\0cuInit\0cuCtxCreate\0data\0", 26);
	/* [0] null, [1] cuInit (func), [2] cuCtxCreate (func), [3] data (object) */
	t->sym[1] = (Elf64_Sym){.st_name = 1,
				.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				.st_shndx = 1,
				.st_value = LOAD_VA + OFF(code)};
	t->sym[2] = (Elf64_Sym){.st_name = 8,
				.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				.st_shndx = 1,
				.st_value = LOAD_VA + OFF(code) + 16};
	t->sym[3] = (Elf64_Sym){.st_name = 20,
				.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT),
				.st_shndx = 1,
				.st_value = LOAD_VA + OFF(code) + 32};
	t->sh[1] = (Elf64_Shdr){.sh_type = SHT_DYNSYM,
				.sh_offset = OFF(sym),
				.sh_size = sizeof(t->sym),
				.sh_entsize = sizeof(Elf64_Sym),
				.sh_link = 2};
	t->sh[2] =
	    (Elf64_Shdr){.sh_type = SHT_STRTAB, .sh_offset = OFF(str), .sh_size = sizeof(t->str)};
}

struct seen {
	char names[8][32];
	__u64 offs[8];
	int n;
};

static void on_sym(void *ctx, const char *name, __u64 off)
{
	struct seen *s = ctx;

	assert_true(s->n < 8);
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
	s->offs[s->n++] = off;
}

static int run(const struct tiny *t, size_t len, struct seen *s, char *err)
{
	memset(s, 0, sizeof(*s));
	return gctx_elf_dynsyms_mem(t, len, on_sym, s, err, 128);
}

/* The functions and their file offsets; not the data symbol. */
static void test_sound(void **state)
{
	struct tiny t;
	struct seen s;
	char err[128];

	(void)state;
	make_tiny(&t);
	assert_int_equal(run(&t, sizeof(t), &s, err), 2);
	assert_string_equal(s.names[0], "cuInit");
	assert_int_equal(s.offs[0], OFF(code));
	assert_string_equal(s.names[1], "cuCtxCreate");
	assert_int_equal(s.offs[1], OFF(code) + 16);
}

/* What once divided by zero, and every other field a crafted file could lie in. */
static void test_crafted(void **state)
{
	struct tiny t;
	struct seen s;
	char err[128];

	(void)state;
	make_tiny(&t);
	t.sh[1].sh_entsize = 0;
	assert_int_equal(run(&t, sizeof(t), &s, err), -1);
	assert_string_equal(err, "bad .dynsym section");

	make_tiny(&t);
	t.sh[1].sh_size = ~0ull - 7; /* offset + size wraps */
	assert_int_equal(run(&t, sizeof(t), &s, err), -1);

	make_tiny(&t);
	t.sh[1].sh_link = 77;
	assert_int_equal(run(&t, sizeof(t), &s, err), -1);

	make_tiny(&t);
	t.sh[2].sh_offset = sizeof(t) - 4;
	assert_int_equal(run(&t, sizeof(t), &s, err), -1);
	assert_string_equal(err, "bad .dynstr section");

	make_tiny(&t);
	t.eh.e_shentsize = 12;
	assert_int_equal(run(&t, sizeof(t), &s, err), -1);

	make_tiny(&t);
	t.eh.e_shoff = ~0ull - 16;
	assert_int_equal(run(&t, sizeof(t), &s, err), -1);

	/* a name index past the string table, a value outside any PT_LOAD: that symbol only */
	make_tiny(&t);
	t.sym[1].st_name = 1000;
	t.sym[2].st_value = 0x10;
	assert_int_equal(run(&t, sizeof(t), &s, err), 0);

	/* a PT_LOAD claiming more file than there is */
	make_tiny(&t);
	t.ph.p_offset = 1ull << 62;
	assert_int_equal(run(&t, sizeof(t), &s, err), 0);

	/* a string table whose last name is not terminated: cut at the table's end */
	make_tiny(&t);
	memset(t.str + 20, 'x', sizeof(t.str) - 20);
	t.sym[3].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	assert_int_equal(run(&t, sizeof(t), &s, err), 3);
	assert_int_equal(strlen(s.names[2]), sizeof(t.str) - 20);

	make_tiny(&t);
	t.eh.e_ident[EI_CLASS] = ELFCLASS32;
	assert_int_equal(run(&t, sizeof(t), &s, err), -1);
	assert_string_equal(err, "not an x86-64 ELF file");
}

/* Cut anywhere: an error or fewer symbols, never a read past the end (ASan checks). */
static void test_truncated_everywhere(void **state)
{
	struct tiny t;
	struct seen s;
	char err[128];

	(void)state;
	make_tiny(&t);
	for (size_t n = 0; n < sizeof(t); n++)
		assert_true(run(&t, n, &s, err) <= 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sound),
	    cmocka_unit_test(test_crafted),
	    cmocka_unit_test(test_truncated_everywhere),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
