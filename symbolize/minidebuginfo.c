// SPDX-License-Identifier: MIT
/*
 * MiniDebugInfo (Fedora and its kin): a stripped file that ships no debug
 * file may still carry, in its .gnu_debugdata section, an xz-compressed
 * ELF whose .symtab holds the functions .dynsym lacks. Decompressed with
 * liblzma, bounded, into memory that libelf then reads.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/internal.h"

#define DEBUGDATA_SECTION ".gnu_debugdata"
/* A symbol table is a few MiB even for large libraries. */
#define IMAGE_MAX (64ULL << 20)
/* The decoder's own memory: xz -9 needs 65 MiB. */
#define DECODER_MEMLIMIT (128ULL << 20)

static Elf_Data *find_debugdata(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, DEBUGDATA_SECTION))
			return elf_rawdata(scn, NULL);
	}
	return NULL;
}

static int decoder_error(lzma_ret r)
{
	switch (r) {
	case LZMA_MEM_ERROR:
		return -ENOMEM;
	case LZMA_MEMLIMIT_ERROR:
		return -E2BIG;
	default:
		return -EBADMSG;
	}
}

/* The whole xz stream in in, into a buffer of at most IMAGE_MAX bytes. */
static int decompress(const uint8_t *in, size_t in_len, uint8_t **out,
		      size_t *out_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = in_len * 4 < 65536 ? 65536 : in_len * 4;
	uint8_t *buf = NULL;
	lzma_ret r;
	int ret = 0;

	r = lzma_stream_decoder(&strm, DECODER_MEMLIMIT, 0);
	if (r != LZMA_OK)
		return decoder_error(r);
	strm.next_in = in;
	strm.avail_in = in_len;
	do {
		uint8_t *bigger;

		if (cap > IMAGE_MAX)
			cap = IMAGE_MAX;
		if (buf && strm.total_out == cap) {
			if (cap == IMAGE_MAX) {
				ret = -EFBIG;
				break;
			}
			cap *= 2;
			continue;
		}
		bigger = realloc(buf, cap);
		if (!bigger) {
			ret = -ENOMEM;
			break;
		}
		buf = bigger;
		strm.next_out = buf + strm.total_out;
		strm.avail_out = cap - strm.total_out;
		r = lzma_code(&strm, LZMA_FINISH);
	} while (r == LZMA_OK || (r == LZMA_BUF_ERROR && strm.avail_out == 0));
	if (!ret && r != LZMA_STREAM_END)
		ret = decoder_error(r);
	*out_len = strm.total_out;
	lzma_end(&strm);
	if (ret) {
		free(buf);
		return ret;
	}
	*out = buf;
	return 0;
}

int sym_minidebuginfo_open(Elf *elf, Elf **out, void **image)
{
	Elf_Data *data = find_debugdata(elf);
	uint8_t *buf;
	size_t len;
	Elf *mini;
	int ret;

	if (!data || !data->d_buf || !data->d_size)
		return -ENOENT;
	ret = decompress(data->d_buf, data->d_size, &buf, &len);
	if (ret)
		return ret;
	mini = elf_memory((char *)buf, len);
	if (!mini || elf_kind(mini) != ELF_K_ELF) {
		elf_end(mini);
		free(buf);
		return -ENOEXEC;
	}
	*out = mini;
	*image = buf;
	return 0;
}
