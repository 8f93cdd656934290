// SPDX-License-Identifier: MIT
/*
 * A module's file, for unwinding: libunwind reads .eh_frame_hdr and
 * .eh_frame a word at a time through our access_mem, and those words are
 * served from here by file address, never read from the target.
 *
 * The file is read with pread into a small cache of pages, not mapped:
 * libunwind blocks every signal while it holds its cache lock, so a read of
 * a mapped file that shrank meanwhile (a library rewritten in place) would
 * raise a SIGBUS nothing could catch. pread just comes back short.
 * Nothing from the file is trusted: every offset is bounded.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/internal.h"

/* .eh_frame_hdr as libunwind's search expects it: version 1, eh_frame_ptr
 * pcrel|sdata4, fde_count udata4, table datarel|sdata4. Any other encoding
 * makes dwarf_search_unwind_table return wrong entries (or abort). */
static const unsigned char EH_HDR_EXPECTED[4] = { 1, 0x1b, 0x03, 0x3b };

#define PAGE_SIZE_ 4096u
#define PAGE_SLOTS 32u /* direct-mapped: 128 KiB per module at most */

struct image_load {
	uint64_t vaddr;
	uint64_t offset;
	uint64_t filesz;
	bool exec;
};

struct image_page {
	uint64_t index;  /* page number + 1; 0 marks an empty slot */
	uint32_t len;    /* bytes read (short at the end of the file) */
	uint8_t *data;
};

struct sym_image {
	int fd;               /* -1 for an image in memory */
	const uint8_t *mem;   /* the image in memory (the vdso) */
	uint64_t size;
	struct image_page *pages;
	struct image_load *loads;
	size_t nloads;
	struct sym_eh_table eh;
	uint64_t entry; /* e_entry: where the process or ld.so starts; 0 for none */
};

static struct image_page *page_of(struct sym_image *img, uint64_t index)
{
	struct image_page *pg = &img->pages[index % PAGE_SLOTS];
	ssize_t n;

	if (pg->index == index + 1)
		return pg;
	if (!pg->data && !(pg->data = malloc(PAGE_SIZE_)))
		return NULL;
	n = pread(img->fd, pg->data, PAGE_SIZE_, (off_t)(index * PAGE_SIZE_));
	if (n <= 0) {
		pg->index = 0;
		return NULL;
	}
	pg->index = index + 1;
	pg->len = (uint32_t)n;
	return pg;
}

/* len bytes at file offset off; fails past the end of the file. */
static int read_file(struct sym_image *img, uint64_t off, void *buf, size_t len)
{
	uint8_t *out = buf;

	if (off > img->size || len > img->size - off)
		return -EFAULT;
	if (img->mem) {
		memcpy(buf, img->mem + off, len);
		return 0;
	}
	while (len) {
		uint64_t in_page = off % PAGE_SIZE_;
		struct image_page *pg = page_of(img, off / PAGE_SIZE_);
		size_t n = PAGE_SIZE_ - in_page < len ? PAGE_SIZE_ - in_page : len;

		if (!pg || in_page + n > pg->len)
			return -EFAULT;
		memcpy(out, pg->data + in_page, n);
		out += n;
		off += n;
		len -= n;
	}
	return 0;
}

static int read_loads(struct sym_image *img, const Elf64_Ehdr *eh, uint64_t *eh_hdr_vaddr,
		      uint64_t *eh_hdr_size)
{
	uint64_t n = eh->e_phnum;

	if (eh->e_phentsize != sizeof(Elf64_Phdr) || n > 4096)
		return -ENOEXEC;
	img->loads = calloc(n ? n : 1, sizeof(*img->loads));
	if (!img->loads)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		Elf64_Phdr ph;

		if (read_file(img, eh->e_phoff + i * sizeof(ph), &ph, sizeof(ph)) < 0)
			return -ENOEXEC;
		if (ph.p_type == PT_GNU_EH_FRAME) {
			*eh_hdr_vaddr = ph.p_vaddr;
			*eh_hdr_size = ph.p_filesz;
		}
		if (ph.p_type != PT_LOAD || ph.p_offset > img->size || ph.p_filesz > img->size - ph.p_offset)
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

	if (read_file(img, 0, &eh, sizeof(eh)) < 0)
		return -ENOEXEC;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	ret = read_loads(img, &eh, &hdr_vaddr, &hdr_size);
	if (ret)
		return ret;
	img->entry = eh.e_entry;
	if (hdr_size)
		read_eh_table(img, hdr_vaddr, hdr_size);
	return 0;
}

static int image_new(struct sym_image **out, int fd, const uint8_t *mem, uint64_t size)
{
	struct sym_image *img = calloc(1, sizeof(*img));
	int ret;

	if (!img)
		return -ENOMEM;
	img->fd = fd;
	img->mem = mem;
	img->size = size;
	img->pages = fd >= 0 ? calloc(PAGE_SLOTS, sizeof(*img->pages)) : NULL;
	ret = fd >= 0 && !img->pages ? -ENOMEM : parse(img);
	if (ret) {
		img->fd = -1; /* the caller still owns fd */
		sym_image_free(img);
		return ret;
	}
	*out = img;
	return 0;
}

/* Keeps one descriptor per module for its lifetime. */
int sym_image_open(const char *path, struct sym_image **out)
{
	struct stat st;
	int fd = sym_open_regular(path), ret;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_size <= 0) {
		close(fd);
		return -ENOEXEC;
	}
	ret = image_new(out, fd, NULL, (uint64_t)st.st_size);
	if (ret)
		close(fd);
	return ret;
}

int sym_image_open_memory(const uint8_t *data, size_t len, struct sym_image **out)
{
	return image_new(out, -1, data, len);
}

void sym_image_free(struct sym_image *img)
{
	if (!img)
		return;
	if (img->fd >= 0)
		close(img->fd);
	for (size_t i = 0; img->pages && i < PAGE_SLOTS; i++)
		free(img->pages[i].data);
	free(img->pages);
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
		/* The page cache is the image's own state, not its contents. */
		return read_file((struct sym_image *)img, l->offset + off, buf, len);
	}
	return -EFAULT;
}

const struct sym_eh_table *sym_image_eh_table(const struct sym_image *img)
{
	return img && img->eh.valid ? &img->eh : NULL;
}

/*
 * ld.so's _start (no CFI, no symbol in Debian's glibc) calls _dl_start at
 * its second instruction: a return address a few bytes past the entry is
 * the process's first frame, where every start-up stack ends.
 */
#define ENTRY_CODE_BYTES 32

bool sym_image_at_entry(const struct sym_image *img, uint64_t vaddr, uint64_t *offset)
{
	if (!img || !img->entry || vaddr < img->entry || vaddr - img->entry >= ENTRY_CODE_BYTES)
		return false;
	if (offset)
		*offset = vaddr - img->entry;
	return true;
}
