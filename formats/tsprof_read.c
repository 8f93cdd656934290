// SPDX-License-Identifier: MIT
/*
 * The .tsprof reader: checks the file header, then reads chunk after chunk,
 * each checked (lengths, CRC, decompressed size) before its records are
 * replayed. A recording cut short by a crash ends in a torn chunk: reading
 * stops cleanly before it and says so, since everything before it is good.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/common.h"
#include "formats/tsprof_layout.h"
#include "formats/tsprof_replay.h"

struct chunk {
	uint8_t kind;
	uint8_t flags;
	uint32_t stored;
	uint32_t raw;
	const uint8_t *payload; /* raw bytes, decompressed when stored so */
};

struct chunk_reader {
	int fd;
	uint64_t offset; /* where the next chunk starts */
	uint8_t *buf;    /* head, stored payload, tail */
	size_t cap;
	uint8_t *raw;    /* decompressed payload */
	size_t raw_cap;
};

enum chunk_result {
	CHUNK_OK = 0,
	CHUNK_EOF = 1, /* the file ends where a chunk would start */
};

/* Reads up to len bytes; fewer only at the end of the file. */
static ssize_t read_full(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static int parse_head(const uint8_t *h, struct chunk *c, char *why,
		      size_t len)
{
	c->kind = h[0];
	c->flags = h[1];
	c->stored = tsprof_get_u32(h + 4);
	c->raw = tsprof_get_u32(h + 8);
	if (c->flags & ~TSPROF_CHUNK_ZLIB || h[2] || h[3])
		return errbuf_set(why, len, -EBADMSG,
				  "is corrupt: unknown flags 0x%02x%02x%02x",
				  h[1], h[2], h[3]);
	if (c->stored > TSPROF_CHUNK_MAX || c->raw > TSPROF_CHUNK_MAX)
		return errbuf_set(why, len, -EBADMSG,
				  "is corrupt: it claims %" PRIu32 " bytes (%"
				  PRIu32 " raw), over the %u MiB limit",
				  c->stored, c->raw, TSPROF_CHUNK_MAX >> 20);
	if (!(c->flags & TSPROF_CHUNK_ZLIB) && c->stored != c->raw)
		return errbuf_set(why, len, -EBADMSG,
				  "is corrupt: stored length %" PRIu32
				  " differs from raw length %" PRIu32,
				  c->stored, c->raw);
	return 0;
}

static int inflate_payload(struct chunk_reader *cr, struct chunk *c,
			   char *why, size_t len)
{
	uLongf out = c->raw;
	int zerr;

	if (ARRAY_RESERVE(cr->raw, cr->raw_cap, c->raw ? c->raw : 1, 0))
		return -ENOMEM;
	zerr = uncompress(cr->raw, &out, c->payload, c->stored);
	if (zerr == Z_MEM_ERROR)
		return -ENOMEM;
	if (zerr == Z_BUF_ERROR)
		return errbuf_set(why, len, -EBADMSG,
				  "is corrupt: it decompresses to more than %"
				  PRIu32 " bytes", c->raw);
	if (zerr != Z_OK)
		return errbuf_set(why, len, -EBADMSG,
				  "is corrupt: zlib error %d", zerr);
	if (out != c->raw)
		return errbuf_set(why, len, -EBADMSG,
				  "is corrupt: it decompresses to %lu bytes, "
				  "not %" PRIu32, (unsigned long)out, c->raw);
	c->payload = cr->raw;
	return 0;
}

/*
 * The next chunk, checked whole: CHUNK_OK, CHUNK_EOF, -EBADMSG with `why`
 * (truncated or corrupt), or another negative errno when reading fails.
 */
static int read_chunk(struct chunk_reader *cr, struct chunk *c, char *why,
		      size_t len)
{
	size_t body, total;
	uint32_t want, crc;
	ssize_t got;
	int err;

	if (ARRAY_RESERVE(cr->buf, cr->cap, TSPROF_CHUNK_HEAD_LEN, 0))
		return -ENOMEM;
	got = read_full(cr->fd, cr->buf, TSPROF_CHUNK_HEAD_LEN);
	if (got < 0)
		return (int)got;
	if (got == 0)
		return CHUNK_EOF;
	if (got < TSPROF_CHUNK_HEAD_LEN)
		return errbuf_set(why, len, -EBADMSG,
				  "is truncated (file ends %zd bytes into it)",
				  got);
	err = parse_head(cr->buf, c, why, len);
	if (err)
		return err;
	body = TSPROF_CHUNK_HEAD_LEN + c->stored;
	total = body + TSPROF_CHUNK_TAIL_LEN;
	if (ARRAY_RESERVE(cr->buf, cr->cap, total, 0))
		return -ENOMEM;
	got = read_full(cr->fd, cr->buf + TSPROF_CHUNK_HEAD_LEN,
			total - TSPROF_CHUNK_HEAD_LEN);
	if (got < 0)
		return (int)got;
	if ((size_t)got < total - TSPROF_CHUNK_HEAD_LEN)
		return errbuf_set(why, len, -EBADMSG,
				  "is truncated (file ends %zu bytes into it)",
				  TSPROF_CHUNK_HEAD_LEN + (size_t)got);
	want = tsprof_get_u32(cr->buf + body);
	crc = (uint32_t)crc32(0, cr->buf, (uInt)body);
	if (crc != want)
		return errbuf_set(why, len, -EBADMSG,
				  "is corrupt: CRC 0x%08" PRIx32
				  " does not match the stored 0x%08" PRIx32,
				  crc, want);
	c->payload = cr->buf + TSPROF_CHUNK_HEAD_LEN;
	if (c->flags & TSPROF_CHUNK_ZLIB && c->kind == TSPROF_CHUNK_RECORDS) {
		err = inflate_payload(cr, c, why, len);
		if (err)
			return err;
	}
	cr->offset += total;
	return CHUNK_OK;
}

static int read_header(int fd, const char *path, char *err, size_t errlen)
{
	uint8_t head[TSPROF_HEADER_LEN];
	uint32_t version;
	ssize_t got;

	got = read_full(fd, head, sizeof(head));
	if (got < 0)
		return errbuf_set(err, errlen, (int)got, "cannot read %s: %s",
				  path, strerror((int)-got));
	if (got == 0)
		return errbuf_set(err, errlen, -EINVAL, "%s is empty", path);
	if (got < TSPROF_HEADER_LEN ||
	    memcmp(head, TSPROF_MAGIC, TSPROF_MAGIC_LEN))
		return errbuf_set(err, errlen, -EINVAL,
				  "%s is not a .tsprof recording", path);
	version = tsprof_get_u32(head + 8);
	if (version != TSPROF_VERSION)
		return errbuf_set(err, errlen, -ENOTSUP,
				  "%s is .tsprof version %" PRIu32
				  "; this build reads version %d", path,
				  version, TSPROF_VERSION);
	return 0;
}

static void set_note(struct tsprof_read_info *info, uint64_t chunk,
		     uint64_t offset, const char *why)
{
	snprintf(info->note, sizeof(info->note),
		 "chunk %" PRIu64 " at byte %" PRIu64 " %.140s; read %" PRIu64
		 " samples before it", chunk, offset, why, info->samples);
}

static void note_missing_end(struct tsprof_read_info *info, uint64_t at)
{
	info->damaged = true;
	snprintf(info->note, sizeof(info->note),
		 "no end chunk: the file ends at byte %" PRIu64 " after %"
		 PRIu64 " chunks (the recording was not closed); read %" PRIu64
		 " samples", at, info->chunks, info->samples);
}

static int replay(struct tsprof_replay *rp, const struct chunk *c,
		  struct tsprof_read_info *info, char *why, size_t len)
{
	char reason[180];
	int ret;

	ret = tsprof_replay_chunk(rp, c->payload, c->raw, reason,
				  sizeof(reason));
	info->samples = rp->samples;
	info->first_sample_ns = rp->first_ns;
	if (ret == -EBADMSG)
		snprintf(why, len, "is corrupt: %s", reason);
	else if (ret == -EFBIG)
		snprintf(why, len, "%s", reason);
	return ret;
}

/* Replays chunks until the end chunk, the end of the file or a bad chunk. */
static int read_chunks(struct chunk_reader *cr, struct tsprof_replay *rp,
		       struct tsprof_read_info *info, char *why, size_t whylen)
{
	int ret;

	for (;;) {
		uint64_t at = cr->offset;
		struct chunk c = { 0 };

		ret = read_chunk(cr, &c, why, whylen);
		if (ret == CHUNK_EOF) {
			note_missing_end(info, at);
			return 0;
		}
		if (ret == CHUNK_OK && c.kind == TSPROF_CHUNK_RECORDS)
			ret = replay(rp, &c, info, why, whylen);
		if (ret == -EBADMSG) {
			info->damaged = true;
			set_note(info, info->chunks, at, why);
			return 0;
		}
		if (ret)
			return ret;
		/* Chunks of kinds this version does not know are skipped. */
		info->chunks++;
		if (c.kind == TSPROF_CHUNK_END) {
			info->complete = true;
			return 0;
		}
	}
}

static bool is_fresh(const struct profile *p)
{
	return profile_string_count(p) == 1 && profile_frame_count(p) == 0 &&
	       profile_stack_count(p) == 1 && profile_sample_count(p) == 0;
}

int tsprof_read(const char *path, struct profile *into,
		struct tsprof_read_info *info, char *err, size_t errlen)
{
	return tsprof_read_window(path, into, 0, UINT64_MAX, info, err, errlen);
}

int tsprof_read_window(const char *path, struct profile *into, uint64_t from_ns,
		       uint64_t to_ns, struct tsprof_read_info *info, char *err,
		       size_t errlen)
{
	if (into && !is_fresh(into))
		return errbuf_set(err, errlen, -EINVAL,
				  "tsprof_read: the profile to read into is "
				  "not empty");
	return tsprof_read_merge(path, into, 0, from_ns, to_ns, info, err, errlen);
}

int tsprof_read_merge(const char *path, struct profile *into, uint32_t index,
		      uint64_t from_ns, uint64_t to_ns, struct tsprof_read_info *info,
		      char *err, size_t errlen)
{
	struct chunk_reader cr = { .fd = -1, .offset = TSPROF_HEADER_LEN };
	struct tsprof_replay rp = {
		.profile = into,
		.windowed = from_ns > 0 || to_ns < UINT64_MAX,
		.from_ns = from_ns,
		.to_ns = to_ns,
	};
	struct tsprof_read_info unused;
	const char *first_host;
	char host[256];
	struct stat st;
	int ret;

	if (!path || !into)
		return errbuf_set(err, errlen, -EINVAL,
				  "tsprof_read: bad arguments");
	/* A copy: the profile's metadata may move as the merge adds to it. */
	first_host = profile_meta(into, "hostname");
	snprintf(host, sizeof(host), "%s", first_host ? first_host : "");
	rp.first_host = host[0] ? host : NULL;
	if (tsprof_replay_begin(&rp, index) < 0) {
		tsprof_replay_release(&rp);
		return errbuf_set(err, errlen, -ENOMEM, "out of memory");
	}
	if (!info)
		info = &unused;
	memset(info, 0, sizeof(*info));
	/* Non-blocking first: a FIFO with no writer would hang the open. */
	cr.fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (cr.fd < 0) {
		ret = -errno;
		tsprof_replay_release(&rp);
		return errbuf_set(err, errlen, ret, "cannot open %s: %s", path,
				  strerror(-ret));
	}
	if (fstat(cr.fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    fcntl(cr.fd, F_SETFL, fcntl(cr.fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		close(cr.fd);
		tsprof_replay_release(&rp);
		return errbuf_set(err, errlen, -EINVAL, "%s is not a regular file: a recording "
				  "is a .tsprof file", path);
	}
	tsprof_replay_limits(&rp, (uint64_t)st.st_size);
	ret = read_header(cr.fd, path, err, errlen);
	if (!ret) {
		char why[240] = "";

		ret = read_chunks(&cr, &rp, info, why, sizeof(why));
		if (!ret)
			ret = tsprof_replay_end(&rp);
		if (ret == -EFBIG)
			errbuf_set(err, errlen, ret, "%s is refused: %s", path, why);
		else if (ret)
			errbuf_set(err, errlen, ret, "cannot read %s: %s", path,
				   strerror(-ret));
	}
	close(cr.fd);
	free(cr.buf);
	free(cr.raw);
	tsprof_replay_release(&rp);
	return ret;
}
