// SPDX-License-Identifier: MIT
/*
 * A module's whole file mapped read-only, for unwinding: libunwind reads
 * .eh_frame_hdr and .eh_frame a word at a time through our access_mem, and
 * those words are served from here by file address, never read from the
 * target. Nothing from the file is trusted: every offset is bounded.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/internal.h"

/* .eh_frame_hdr as libunwind's search expects it: version 1, eh_frame_ptr
 * pcrel|sdata4, fde_count udata4, table datarel|sdata4. Any other encoding
 * makes dwarf_search_unwind_table return wrong entries (or abort). */
static const unsigned char EH_HDR_EXPECTED[4] = { 1, 0x1b, 0x03, 0x3b };

struct image_load {
	uint64_t vaddr;
	uint64_t offset;
	uint64_t filesz;
	bool exec;
};

struct sym_image {
	const uint8_t *data;
	size_t size;
	bool mapped;          /* data is our mmap of a file, unmapped on free */
	struct image_load *loads;
	size_t nloads;
	struct sym_eh_table eh;
};

static bool in_file(const struct sym_image *img, uint64_t off, uint64_t len)
{
	return off <= img->size && len <= img->size - off;
}

static int read_loads(struct sym_image *img, const Elf64_Ehdr *eh, uint64_t *eh_hdr_vaddr,
		      uint64_t *eh_hdr_size)
{
	uint64_t phoff = eh->e_phoff, n = eh->e_phnum;

	if (eh->e_phentsize != sizeof(Elf64_Phdr) || !in_file(img, phoff, n * sizeof(Elf64_Phdr)))
		return -ENOEXEC;
	img->loads = calloc(n ? n : 1, sizeof(*img->loads));
	if (!img->loads)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, img->data + phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_GNU_EH_FRAME) {
			*eh_hdr_vaddr = ph.p_vaddr;
			*eh_hdr_size = ph.p_filesz;
		}
		if (ph.p_type != PT_LOAD || !in_file(img, ph.p_offset, ph.p_filesz))
			continue;
		img->loads[img->nloads++] = (struct image_load){
			.vaddr = ph.p_vaddr,
			.offset = ph.p_offset,
			.filesz = ph.p_filesz,
			.exec = ph.p_flags & PF_X,
		};
	}
	return 0;
}

static void read_eh_table(struct sym_image *img, uint64_t hdr_vaddr, uint64_t hdr_size)
{
	unsigned char hdr[12];
	uint32_t count;

	if (hdr_size < sizeof(hdr) || sym_image_read(img, hdr_vaddr, hdr, sizeof(hdr)) < 0)
		return;
	if (memcmp(hdr, EH_HDR_EXPECTED, sizeof(EH_HDR_EXPECTED)))
		return; /* another encoding: "no info", never a wrong entry */
	memcpy(&count, hdr + 8, sizeof(count));
	if (!count || (uint64_t)count * 8 > hdr_size - sizeof(hdr))
		return;
	img->eh.hdr_vaddr = hdr_vaddr;
	img->eh.table_vaddr = hdr_vaddr + sizeof(hdr);
	img->eh.fde_count = count;
	for (size_t i = 0; i < img->nloads; i++) {
		const struct image_load *l = &img->loads[i];

		if (!l->exec)
			continue;
		if (!img->eh.text_end || l->vaddr < img->eh.text_start)
			img->eh.text_start = l->vaddr;
		if (l->vaddr + l->filesz > img->eh.text_end)
			img->eh.text_end = l->vaddr + l->filesz;
	}
	img->eh.valid = img->eh.text_end > img->eh.text_start;
}

static int parse(struct sym_image *img)
{
	Elf64_Ehdr eh;
	uint64_t hdr_vaddr = 0, hdr_size = 0;
	int ret;

	if (img->size < sizeof(eh))
		return -ENOEXEC;
	memcpy(&eh, img->data, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	ret = read_loads(img, &eh, &hdr_vaddr, &hdr_size);
	if (ret)
		return ret;
	if (hdr_size)
		read_eh_table(img, hdr_vaddr, hdr_size);
	return 0;
}

int sym_image_open(const char *path, struct sym_image **out)
{
	struct sym_image *img;
	struct stat st;
	void *data;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return -ENOEXEC;
	}
	/* The mapping keeps the file; the descriptor is not needed. */
	data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (data == MAP_FAILED)
		return -errno;
	img = calloc(1, sizeof(*img));
	if (!img) {
		munmap(data, (size_t)st.st_size);
		return -ENOMEM;
	}
	img->data = data;
	img->size = (size_t)st.st_size;
	img->mapped = true;
	ret = parse(img);
	if (ret) {
		sym_image_free(img);
		return ret;
	}
	*out = img;
	return 0;
}

int sym_image_open_memory(const uint8_t *data, size_t len, struct sym_image **out)
{
	struct sym_image *img = calloc(1, sizeof(*img));
	int ret;

	if (!img)
		return -ENOMEM;
	img->data = data;
	img->size = len;
	ret = parse(img);
	if (ret) {
		sym_image_free(img);
		return ret;
	}
	*out = img;
	return 0;
}

void sym_image_free(struct sym_image *img)
{
	if (!img)
		return;
	if (img->mapped)
		munmap((void *)img->data, img->size);
	free(img->loads);
	free(img);
}

int sym_image_read(const struct sym_image *img, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < img->nloads; i++) {
		const struct image_load *l = &img->loads[i];
		uint64_t off;

		if (vaddr < l->vaddr || vaddr - l->vaddr >= l->filesz)
			continue;
		off = vaddr - l->vaddr;
		if (len > l->filesz - off)
			return -EFAULT;
		memcpy(buf, img->data + l->offset + off, len);
		return 0;
	}
	return -EFAULT;
}

const struct sym_eh_table *sym_image_eh_table(const struct sym_image *img)
{
	return img && img->eh.valid ? &img->eh : NULL;
}
