/* SPDX-License-Identifier: MIT */
/*
 * cuda/ — what the GPU agent (libtrainsample_cuda.so, inside the target)
 * hands to the sampler: a file per process of fixed-size records after a
 * header, appended while the process runs, and the reader for it.
 *
 * Definitions come before their first use in the file: strings (kernel
 * names, Python function and file names, split into pieces when long) and
 * launch stacks (a trie of Python frames, outermost at the root) have ids
 * that later records refer to. A launch names every correlation id its
 * outermost API call produced; an activity (kernel, copy, memset, sync)
 * carries one of them. Times are CLOCK_MONOTONIC nanoseconds, the
 * sampler's clock.
 */
#ifndef TRAINSAMPLE_CUDA_GPU_RECORD_H
#define TRAINSAMPLE_CUDA_GPU_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define GPU_FILE_MAGIC "TSGPUREC"
#define GPU_FILE_VERSION 1
#define GPU_RECORD_SIZE 128
#define GPU_STRING_PIECE 104
#define GPU_LAUNCH_IDS 4

struct gpu_file_header {
	char magic[8];
	uint32_t version;
	uint32_t record_size;
	uint32_t pid;
	uint32_t reserved;
	uint64_t start_ns;
	uint8_t pad[GPU_RECORD_SIZE - 32];
};

enum gpu_record_type {
	GPU_REC_STRING = 1,  /* a piece of string `id` */
	GPU_REC_STACK,       /* a launch stack node: a Python frame under `parent` */
	GPU_REC_LAUNCH,      /* an outermost launch/copy API call on a thread */
	GPU_REC_KERNEL,
	GPU_REC_MEMCPY,
	GPU_REC_MEMSET,
	GPU_REC_SYNC,
	GPU_REC_DEVICE,
	GPU_REC_STATUS,      /* the agent says something the user should read */
	GPU_REC_DROPPED,     /* records lost since the last such record */
	GPU_REC_STREAM,      /* a stream CUPTI saw made: which one is the NULL stream */
	GPU_REC_TYPE_MAX = GPU_REC_STREAM,
};

enum gpu_copy_kind { /* CUPTI's CUpti_ActivityMemcpyKind values */
	GPU_COPY_UNKNOWN = 0,
	GPU_COPY_HTOD = 1,
	GPU_COPY_DTOH = 2,
	GPU_COPY_DTOD = 8,
	GPU_COPY_HTOH = 9,
	GPU_COPY_PTOP = 10,
};

/* CUPTI's CUpti_ActivityMemoryKind values: where a copy reads and writes. */
enum gpu_memory_kind {
	GPU_MEMORY_UNKNOWN = 0,
	GPU_MEMORY_PAGEABLE = 1, /* ordinary host memory: staged, synchronous */
	GPU_MEMORY_PINNED = 2,
	GPU_MEMORY_DEVICE = 3,
	GPU_MEMORY_ARRAY = 4,
	GPU_MEMORY_MANAGED = 5,
	GPU_MEMORY_DEVICE_STATIC = 6,
	GPU_MEMORY_MANAGED_STATIC = 7,
};

#define GPU_COPY_FLAG_ASYNC 1u /* CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC */

/* CUPTI's CUpti_ActivityStreamFlag: NULL is the legacy default stream. */
#define GPU_STREAM_FLAG_NULL 3u

enum gpu_status {
	GPU_STATUS_STARTED = 1,   /* collecting */
	GPU_STATUS_NO_CUPTI,      /* no libcupti to load: text says where it looked */
	GPU_STATUS_TAKEN,         /* another CUPTI subscriber: text names it if known */
	GPU_STATUS_FAILED,        /* CUPTI refused: text has its error */
	GPU_STATUS_STOPPED,
};

struct gpu_rec_string {
	uint32_t id;        /* > 0 */
	uint32_t total;     /* the whole string's length */
	uint32_t offset;    /* of this piece */
	uint16_t len;       /* of this piece */
	uint16_t pad;
	char text[GPU_STRING_PIECE];
};

struct gpu_rec_stack {
	uint32_t id;        /* > 0 */
	uint32_t parent;    /* 0: the root */
	uint32_t name;      /* string ids */
	uint32_t file;
	uint32_t line;
};

struct gpu_rec_launch {
	uint64_t start_ns, end_ns; /* the API call */
	uint32_t tid;
	uint32_t stack;            /* 0: no Python frames */
	uint32_t api;              /* string id: the outermost API's name */
	uint32_t thread_name;      /* string id when stack is 0, else 0 */
	uint32_t nids;
	uint32_t ids[GPU_LAUNCH_IDS]; /* correlation ids, runtime and driver */
	uint32_t graph;            /* a graph launch: several kernels per id */
};

struct gpu_rec_activity {
	uint64_t start_ns, end_ns;
	uint32_t device, context, stream, correlation;
	uint32_t name;             /* kernel: string id */
	uint32_t copy_kind;        /* memcpy: enum gpu_copy_kind; sync: CUPTI's type */
	uint64_t bytes;            /* memcpy, memset */
	int32_t grid[3], block[3]; /* kernel */
	uint32_t shared_bytes;     /* kernel: static + dynamic shared memory */
	uint8_t src_kind, dst_kind; /* memcpy: enum gpu_memory_kind */
	uint8_t copy_flags;        /* memcpy: GPU_COPY_FLAG_* */
	uint8_t pad;
};

struct gpu_rec_stream {
	uint32_t context, stream;
	uint32_t flag;             /* CUPTI's stream flag: GPU_STREAM_FLAG_NULL */
};

struct gpu_rec_device {
	uint32_t id;
	uint32_t name;             /* string id */
	uint32_t cc_major, cc_minor;
	uint32_t multiprocessors;
	uint64_t global_memory;
	uint8_t uuid[16];          /* NVML knows the device by it */
};

struct gpu_rec_status {
	uint32_t status;           /* enum gpu_status */
	uint32_t text;             /* string id, 0 none */
};

struct gpu_rec_dropped {
	uint64_t records;
};

struct gpu_record {
	uint32_t type;             /* enum gpu_record_type */
	uint32_t pad;
	union {
		struct gpu_rec_string string;
		struct gpu_rec_stack stack;
		struct gpu_rec_launch launch;
		struct gpu_rec_activity activity;
		struct gpu_rec_device device;
		struct gpu_rec_status status;
		struct gpu_rec_dropped dropped;
		struct gpu_rec_stream stream;
		uint8_t bytes[GPU_RECORD_SIZE - 8];
	} u;
};

_Static_assert(sizeof(struct gpu_record) == GPU_RECORD_SIZE, "records are fixed-size");
_Static_assert(sizeof(struct gpu_file_header) == GPU_RECORD_SIZE, "the header is one record");

/* ---- reading (gpu_reader.c) ---- */

/*
 * What the reader hands on, in file order. Strings come whole (pieces
 * joined); a string or stack id used before its definition is an error
 * the reader reports once and skips.
 */
struct gpu_reader_ops {
	void (*string)(void *ctx, uint32_t id, const char *text);
	void (*record)(void *ctx, const struct gpu_record *r);
};

struct gpu_reader;

int gpu_reader_open(struct gpu_reader **out, const char *path);
/* Reads the records appended since the last call; a partial record at the
 * end waits for the next. The number of records read, or a negative errno
 * (-EPROTO: not a record file, or a version this build does not read). */
int gpu_reader_poll(struct gpu_reader *r, const struct gpu_reader_ops *ops, void *ctx);
uint32_t gpu_reader_pid(const struct gpu_reader *r);
void gpu_reader_close(struct gpu_reader *r);

#endif
