// SPDX-License-Identifier: MIT
/*
 * The nameless cold part of a function in a stripped file. GCC moves a
 * function's rarely run blocks into .text.unlikely as a part of its own
 * (NAME.cold in a full symbol table), entered only by jumps from the
 * function. With profile feedback that can be most of it: Debian's
 * python3.14 and python3.15 keep about 1 KiB under
 * _PyEval_EvalFrameDefault and run the interpreter's loop in an 84 KiB
 * part that .dynsym does not name, so their evaluator frames were
 * nameless and --native could not tell them.
 *
 * The jumps name the part: the function's rel32 jumps that land outside
 * it, in a range of the .eh_frame_hdr table where no symbol starts. Bytes
 * are scanned, not decoded, so a range is taken only when two jumps land
 * in it (a single match could be bytes of another instruction); its end
 * is the FDE's own, read once its start is checked against the table.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <string.h>

#include "symbolize/internal.h"

#define MAX_TARGETS 64
#define MAX_FUNCTION_BYTES (1u << 20)

/* len bytes at a file address, from the section that holds them; NULL
 * where no section with contents does. */
static const uint8_t *bytes_at(Elf *elf, uint64_t vaddr, uint64_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    vaddr < sh.sh_addr || vaddr - sh.sh_addr > sh.sh_size ||
		    len > sh.sh_size - (vaddr - sh.sh_addr))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			return NULL;
		return (const uint8_t *)d->d_buf + (vaddr - sh.sh_addr);
	}
	return NULL;
}

static int32_t s32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The .eh_frame_hdr table with the encodings every x86-64 linker writes
 * (pcrel|sdata4, udata4, datarel|sdata4); others are not searched. */
struct eh_index {
	uint64_t hdr;           /* the section's address: the table's base */
	const uint8_t *table;   /* (initial location, FDE) pairs, sorted */
	uint32_t count;
};

static int eh_index_open(Elf *elf, struct eh_index *ix)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		const uint8_t *b;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".eh_frame_hdr"))
			continue;
		b = bytes_at(elf, sh.sh_addr, sh.sh_size);
		if (!b || sh.sh_size < 12 || b[0] != 1 || b[1] != 0x1b || b[2] != 0x03 ||
		    b[3] != 0x3b)
			return -ENOTSUP;
		ix->hdr = sh.sh_addr;
		ix->table = b + 12;
		memcpy(&ix->count, b + 8, sizeof(ix->count));
		if ((uint64_t)ix->count * 8 > sh.sh_size - 12)
			return -ENOEXEC;
		return 0;
	}
	return -ENOENT;
}

/* The FDE range [*lo, *hi) holding vaddr; -ENOENT where none does. */
static int eh_index_find(Elf *elf, const struct eh_index *ix, uint64_t vaddr,
			 uint64_t *lo, uint64_t *hi)
{
	uint32_t a = 0, b = ix->count;
	uint64_t start, fde;
	const uint8_t *f;

	while (a < b) {
		uint32_t mid = a + (b - a) / 2;

		if (ix->hdr + (int64_t)s32(ix->table + 8 * (size_t)mid) <= vaddr)
			a = mid + 1;
		else
			b = mid;
	}
	if (!a)
		return -ENOENT;
	start = ix->hdr + (int64_t)s32(ix->table + 8 * (size_t)(a - 1));
	fde = ix->hdr + (int64_t)s32(ix->table + 8 * (size_t)(a - 1) + 4);
	/* length, CIE pointer, pc_begin (pcrel sdata4), pc_range: the start
	 * read here must be the table's, else the encoding is another. */
	f = bytes_at(elf, fde, 16);
	if (!f || fde + 8 + (int64_t)s32(f + 8) != start)
		return -ENOENT;
	*lo = start;
	*hi = start + (uint32_t)s32(f + 12);
	return vaddr < *hi ? 0 : -ENOENT;
}

int sym_cold_part(Elf *elf, uint64_t addr, uint64_t size,
		  bool (*named)(void *ctx, uint64_t lo, uint64_t hi), void *ctx,
		  uint64_t *lo, uint64_t *hi)
{
	struct range { uint64_t lo, hi; int hits; } seen[MAX_TARGETS];
	struct eh_index ix;
	const uint8_t *code;
	int nseen = 0, ret;

	if (!size || size > MAX_FUNCTION_BYTES || !(code = bytes_at(elf, addr, size)))
		return -ENOENT;
	ret = eh_index_open(elf, &ix);
	if (ret < 0)
		return ret;
	for (uint64_t i = 0; i + 5 <= size; i++) {
		uint64_t target, flo, fhi;
		int k;

		if (code[i] == 0x0f && (code[i + 1] & 0xf0) == 0x80 && i + 6 <= size)
			target = addr + i + 6 + (int64_t)s32(code + i + 2);   /* jcc rel32 */
		else if (code[i] == 0xe9)
			target = addr + i + 5 + (int64_t)s32(code + i + 1);   /* jmp rel32 */
		else
			continue;
		if (target - addr < size || eh_index_find(elf, &ix, target, &flo, &fhi) < 0 ||
		    (addr >= flo && addr < fhi))
			continue;
		for (k = 0; k < nseen && seen[k].lo != flo; k++)
			;
		if (k == nseen) {
			if (nseen == MAX_TARGETS || named(ctx, flo, fhi))
				continue;
			seen[nseen++] = (struct range){ flo, fhi, 0 };
		}
		if (++seen[k].hits == 2) {
			*lo = flo;
			*hi = fhi;
			return 0;
		}
	}
	return -ENOENT;
}
