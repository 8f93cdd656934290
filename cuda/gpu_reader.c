// SPDX-License-Identifier: MIT
/*
 * Reading a GPU record file while the agent still appends to it: whole
 * records only, a partial one left for the next poll; strings joined from
 * their pieces. Nothing read is trusted: types, lengths and offsets are
 * checked, and a bad record is skipped, not followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuda/gpu_record.h"

#define BATCH 256

struct gpu_reader {
	int fd;
	off_t at;              /* next byte to read */
	off_t punched;         /* given back up to here */
	uint32_t pid;
	bool header_read;
	char *text;            /* the string being joined */
	uint32_t text_id, text_total, text_have;
};

int gpu_reader_open(struct gpu_reader **out, const char *path)
{
	struct gpu_reader *r = calloc(1, sizeof(*r));
	struct stat st;

	if (!r)
		return -ENOMEM;
	/* Read-write where allowed, to give back what was read (below); never
	 * through a link, never blocking on something that is not a file. */
	r->fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (r->fd < 0)
		r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (r->fd < 0 || fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int ret = r->fd < 0 ? -errno : -EPROTO;

		if (r->fd >= 0)
			close(r->fd);
		free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void gpu_reader_close(struct gpu_reader *r)
{
	if (!r)
		return;
	close(r->fd);
	free(r->text);
	free(r);
}

uint32_t gpu_reader_pid(const struct gpu_reader *r)
{
	return r->pid;
}

static int read_header(struct gpu_reader *r)
{
	struct gpu_file_header h;
	ssize_t n = pread(r->fd, &h, sizeof(h), 0);

	if (n < 0)
		return -errno;
	if ((size_t)n < sizeof(h))
		return -EAGAIN;
	if (memcmp(h.magic, GPU_FILE_MAGIC, sizeof(h.magic)) || h.version != GPU_FILE_VERSION ||
	    h.record_size != GPU_RECORD_SIZE)
		return -EPROTO;
	r->pid = h.pid;
	r->at = sizeof(h);
	r->header_read = true;
	return 0;
}

/* A piece of a string: joined in order, handed on when whole. */
static void string_piece(struct gpu_reader *r, const struct gpu_rec_string *s,
			 const struct gpu_reader_ops *ops, void *ctx)
{
	if (!s->id || s->len > GPU_STRING_PIECE || s->total > (1u << 20) ||
	    (uint64_t)s->offset + s->len > s->total)
		return;
	if (s->offset == 0) {
		char *t = realloc(r->text, (size_t)s->total + 1);

		if (!t)
			return;
		r->text = t;
		r->text_id = s->id;
		r->text_total = s->total;
		r->text_have = 0;
	}
	if (!r->text || s->id != r->text_id || s->offset != r->text_have ||
	    s->total != r->text_total)
		return;
	memcpy(r->text + s->offset, s->text, s->len);
	r->text_have += s->len;
	if (r->text_have == r->text_total) {
		r->text[r->text_total] = 0;
		if (ops->string)
			ops->string(ctx, s->id, r->text);
		r->text_id = 0;
	}
}

/* The records read are not needed again: their blocks go back to the file
 * system (the file keeps its size, so offsets hold), so a long run on a
 * tmpfs /tmp does not pile up memory. Where punching holes is not
 * possible, the file just keeps them. */
static void give_back(struct gpu_reader *r)
{
	off_t end = r->at & ~(off_t)4095;

	if (end > r->punched + (1 << 20) &&
	    fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, end - 4096) == 0)
		r->punched = end;
}

int gpu_reader_poll(struct gpu_reader *r, const struct gpu_reader_ops *ops, void *ctx)
{
	struct gpu_record batch[BATCH];
	int total = 0, ret;

	if (!r->header_read) {
		ret = read_header(r);
		if (ret == -EAGAIN)
			return 0;
		if (ret < 0)
			return ret;
	}
	for (;;) {
		ssize_t n = pread(r->fd, batch, sizeof(batch), r->at);
		size_t whole;

		if (n < 0)
			return -errno;
		whole = (size_t)n / GPU_RECORD_SIZE;
		for (size_t i = 0; i < whole; i++) {
			const struct gpu_record *rec = &batch[i];

			if (rec->type == GPU_REC_STRING)
				string_piece(r, &rec->u.string, ops, ctx);
			else if (rec->type > GPU_REC_STRING && rec->type <= GPU_REC_TYPE_MAX &&
				 ops->record)
				ops->record(ctx, rec);
		}
		r->at += (off_t)(whole * GPU_RECORD_SIZE);
		total += (int)whole;
		if (whole < BATCH)
			break;
	}
	give_back(r);
	return total;
}
