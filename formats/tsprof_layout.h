/* SPDX-License-Identifier: MIT */
/*
 * The .tsprof layout, shared by its writer and reader.
 *
 *   file    = header chunk* [end chunk]
 *   header  = magic[8] "\x89TSPROF\n", u32 version, u32 reserved (0)
 *   chunk   = u8 kind, u8 flags, u16 reserved (0), u32 stored length,
 *             u32 raw length, payload[stored length], u32 CRC-32
 *
 * Fixed-size integers are little-endian. The CRC (zlib's crc32) covers the
 * chunk head and the payload. With TSPROF_CHUNK_ZLIB the payload is the
 * zlib stream of `raw length` bytes of records; without it the two lengths
 * are equal. A records chunk holds whole records only. The end chunk (empty)
 * says the recording was closed.
 *
 * A record is a tag and its fields, each an unsigned LEB128 varint; text is
 * a length and that many bytes (no NUL). Definitions carry their id, which
 * is always the next one, and precede every use.
 *
 *   STRING    id, len, bytes
 *   FRAME     id, kind, name, module, line
 *   STACK     id, parent, frame
 *   THREAD    pid, tid, name (a string id; a later record renames)
 *   META      key len, key, value len, value (a later record replaces)
 *   SAMPLE    time delta (zigzag, from the previous sample), pid, tid,
 *             stack, weight_ns, flags
 *   AGGREGATE pid, tid, stack, flags, weight_ns, count (what a profile had
 *             aggregated before the writer opened)
 *   GPU       kind, start delta (zigzag, from the previous GPU record's
 *             start), duration, device, stream, correlation, name, copy
 *             (TSPROF_GPU_COPY_*: CUPTI's kind, the memory kinds, flags), bytes, grid x y z, block x y z, pid, tid, stack, launch
 *             start (zigzag from start, + 1; 0: unknown), launch duration,
 *             api
 *   COUNTER   track (string id), time delta (zigzag, from the previous
 *             counter's), value in thousandths (zigzag)
 */
#ifndef TRAINSAMPLE_FORMATS_TSPROF_LAYOUT_H
#define TRAINSAMPLE_FORMATS_TSPROF_LAYOUT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* The high byte and the newline catch files mangled as text. */
#define TSPROF_MAGIC "\x89TSPROF\n"
#define TSPROF_MAGIC_LEN 8
#define TSPROF_VERSION 1
#define TSPROF_HEADER_LEN 16
#define TSPROF_CHUNK_HEAD_LEN 12
#define TSPROF_CHUNK_TAIL_LEN 4
/* Neither length of a chunk may exceed this; the writer stays far below. */
#define TSPROF_CHUNK_MAX (64u << 20)
/* The writer starts a chunk once this many record bytes are pending. */
#define TSPROF_FLUSH_BYTES (256u << 10)
/* The most bytes a record other than STRING or META takes. */
#define TSPROF_RECORD_MAX (1 + 7 * 10)
#define TSPROF_VARINT_MAX 10

enum tsprof_chunk_kind {
	TSPROF_CHUNK_RECORDS = 1,
	TSPROF_CHUNK_END = 2,
};

enum tsprof_chunk_flag {
	TSPROF_CHUNK_ZLIB = 1u << 0,
};

enum tsprof_record_tag {
	TSPROF_REC_STRING = 1,
	TSPROF_REC_FRAME = 2,
	TSPROF_REC_STACK = 3,
	TSPROF_REC_THREAD = 4,
	TSPROF_REC_META = 5,
	TSPROF_REC_SAMPLE = 6,
	TSPROF_REC_AGGREGATE = 7,
	TSPROF_REC_GPU = 8,
	TSPROF_REC_COUNTER = 9,
	TSPROF_REC_LAST = TSPROF_REC_COUNTER,
};

#define TSPROF_GPU_FIELDS 21

/* A GPU record's copy field: CUPTI's copy kind in the low byte, then the
 * source's and destination's memory kinds; files before them hold 0 there,
 * "unknown". */
#define TSPROF_GPU_COPY_SRC_SHIFT 8
#define TSPROF_GPU_COPY_DST_SHIFT 16
#define TSPROF_GPU_COPY_ASYNC (1u << 24)
#define TSPROF_GPU_COPY_NULL_STREAM (1u << 25)

static inline void tsprof_put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t tsprof_get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Writes v as LEB128 (at most TSPROF_VARINT_MAX bytes); returns the end. */
static inline uint8_t *tsprof_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/*
 * Reads one LEB128 varint from [*p, end) and advances *p. -EBADMSG when
 * the bytes end inside it, -EOVERFLOW when it does not fit 64 bits.
 */
static inline int tsprof_get_varint(const uint8_t **p, const uint8_t *end,
				    uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t out = 0;

	for (unsigned shift = 0;; shift += 7) {
		uint8_t b;

		if (q == end)
			return -EBADMSG;
		b = *q++;
		/* The tenth byte holds bit 63 only. */
		if (shift == 63 && b > 1)
			return -EOVERFLOW;
		out |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	*p = q;
	*v = out;
	return 0;
}

static inline uint64_t tsprof_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t tsprof_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif
