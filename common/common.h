/* SPDX-License-Identifier: MIT */
/*
 * common/ — the few stateless helpers every folder needs: the caller's
 * error buffer, the monotonic clock, array growth, a hash table, number
 * parsing, output files put in place whole, a JSON emitter. It
 * depends on nothing else in the tree, so the GPU agent compiles it too.
 */
#ifndef TRAINSAMPLE_COMMON_H
#define TRAINSAMPLE_COMMON_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

/* Formats one line into err (when err is non-NULL and errlen non-zero)
 * and returns `code`, so callers can write `return errbuf_set(...)`. */
int errbuf_set(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* CLOCK_MONOTONIC in ns: the clock of ticks, samples and GPU records. */
static inline uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Room for at least `need` items of `size` bytes in *items, whose
 * capacity is *cap items: grown to the larger of need, twice *cap and
 * `least`. 0, or -ENOMEM (overflow included) with both left as they were.
 */
int array_reserve(void **items, size_t *cap, size_t need, size_t size, size_t least);

/* array_reserve for an array of any type whose capacity is any unsigned
 * integer (a capacity its type cannot hold is -ENOMEM). */
#define ARRAY_RESERVE(items, cap, need, least) __extension__({		\
	void *items_ = (items);						\
	size_t cap_ = (cap);						\
	int ret_ = 0;							\
	if ((size_t)(need) > cap_) {					\
		ret_ = array_reserve(&items_, &cap_, (need),		\
				     sizeof(*(items)), (least));	\
		if (!ret_ && (__typeof__(cap))cap_ != cap_)		\
			ret_ = -ENOMEM;					\
		if (!ret_) {						\
			(items) = items_;				\
			(cap) = (__typeof__(cap))cap_;			\
		}							\
	}								\
	ret_;								\
})

/* ARRAY_RESERVE, with the items it adds zeroed: for tables indexed by id. */
#define ARRAY_RESERVE_ZEROED(items, cap, need, least) __extension__({	\
	size_t old_ = (cap);						\
	int zret_ = ARRAY_RESERVE(items, cap, need, least);		\
	if (!zret_ && (size_t)(cap) > old_)				\
		memset((items) + old_, 0,				\
		       ((size_t)(cap) - old_) * sizeof(*(items)));	\
	zret_;								\
})

/* qsort, but of nothing too: qsort(NULL, 0, ...) is undefined (UBSan
 * stops there), and an empty array is often NULL. */
static inline void array_sort(void *v, size_t n, size_t size,
			      int (*cmp)(const void *, const void *))
{
	if (n)
		qsort(v, n, size, cmp);
}

/*
 * Open-addressing index from a key to a dense id (common/hash_table.c).
 * The table stores only ids and hashes; the items live in the caller's
 * own arrays, so a lookup asks the caller whether item `id` is the key.
 * A zeroed struct hash_table is empty; hash_table_free leaves it so.
 */
struct hash_slot {
	uint32_t hash;
	uint32_t ref; /* id + 1; 0 marks an empty slot */
};

struct hash_table {
	struct hash_slot *slots;
	uint32_t mask; /* capacity - 1; the capacity is a power of two */
	uint32_t used;
};

void hash_table_free(struct hash_table *t);
/* Makes room for one more id; call before hash_table_find when the key
 * may be inserted, since growing moves the slots. 0 or -ENOMEM. */
int hash_table_reserve(struct hash_table *t);
/* The slot holding the key, or the empty slot where it belongs. The table
 * must have been reserved at least once. Inline, so the caller's `same`
 * is inlined into the probe loop: the sampler looks up every frame's code
 * object here, and a call per probe measured a third slower. */
static inline struct hash_slot *
hash_table_find(const struct hash_table *t, uint32_t hash,
		bool (*same)(const void *key, uint32_t id), const void *key)
{
	for (uint32_t i = hash & t->mask;; i = (i + 1) & t->mask) {
		struct hash_slot *s = &t->slots[i];

		if (!s->ref || (s->hash == hash && same(key, s->ref - 1)))
			return s;
	}
}
void hash_table_fill(struct hash_table *t, struct hash_slot *slot, uint32_t hash, uint32_t id);
/* Empties a slot hash_table_find returned holding a key (the slots after
 * it may move). */
void hash_table_remove(struct hash_table *t, struct hash_slot *slot);

/* FNV-1a of bytes, and a multiply-xorshift mix of words (nearby ids
 * spread over the table), both folded to 32 bits. */
uint32_t hash_of_bytes(const void *data, size_t len);
uint32_t hash_of_words(const uint32_t *words, size_t n);

/*
 * An output file, written where no other user can turn the name into
 * something else. Its folder is reached once, a name at a time, never
 * through a link another user could have put there (refused, in err), and
 * held open: every later step works in it (openat, renameat), never by
 * the path again. A regular file (or nothing) at the name is staged: made
 * new beside it (O_EXCL, or with no name at all, O_TMPFILE) and renamed
 * over the name when complete, so no reader sees half of it and a link at
 * the name is replaced, never followed (another user's is refused). A
 * FIFO or a device at the name is written in place: what is opened is
 * what was checked (the same inode, never through a link, opened without
 * blocking where it can), and in a folder another user owns only that
 * user's FIFO is. The process's own descriptors (/dev/stdout, /dev/fd/N)
 * are written as they are.
 *
 * Opening, publishing and closing are separate calls, so the caller
 * chooses when a rename happens (never while it holds a target stopped).
 * A zeroed struct holds nothing.
 */
struct file_stage {
	bool open;                 /* dir is held */
	bool in_place;             /* a FIFO, a device, one's own descriptor */
	bool published;            /* renamed onto the name */
	int dir;                   /* the output's folder */
	int fd;                    /* the file written (the caller's, closed by it) */
	dev_t dev;                 /* what fd is, to know its name again */
	ino_t ino;
	char leaf[256];            /* the output's name in dir (NAME_MAX + 1) */
	char staged[256];          /* its name meanwhile; "" while it has none */
};

/* Opens the output at path into *s: the fd to write, or -errno with err
 * set (one line), s then holding nothing. Close s with file_stage_close. */
int file_stage_open(struct file_stage *s, const char *path, char *err, size_t errlen);
/* Renames the finished file onto its name (nothing when written in place);
 * call it before closing the fd. path is the name it was opened with, or
 * one filled in since in the same folder: only its last part is used, in
 * the folder held. On failure the staged file is removed. 0 or -errno with
 * err set. */
int file_stage_publish(struct file_stage *s, const char *path, char *err, size_t errlen);
/* Removes the published file, if its name still is that file. */
void file_stage_remove(struct file_stage *s);
/* Removes a staged file never published and lets go of the folder. */
void file_stage_close(struct file_stage *s);

/*
 * The folder at path, reached as file_stage_open reaches an output's: an
 * O_PATH descriptor, or -errno with err set. *trusted (when non-NULL)
 * tells whether no other user can change any name on the way: every
 * folder passed is this user's or root's and open to others' writing only
 * with the sticky bit (/tmp), so the path may be handed on as a string.
 */
int file_folder_open(const char *path, bool *trusted, char *err, size_t errlen);

/* A process or thread id written in decimal: 0, or -EINVAL for anything
 * else (trailing text, 0 or less, implausibly large). */
int pid_parse(const char *text, pid_t *out);
/* 1 when every live thread of pid is in a job-control stop (state 'T':
 * SIGSTOP, Ctrl-Z; not 't', a tracer's stop), 0 if not, -errno. */
int proc_job_stopped(pid_t pid);
/* The ids of pid's threads, from /proc/PID/task, into *tids (the caller
 * frees it). 0 or -errno. */
int proc_tids(pid_t pid, pid_t **tids, size_t *n);
/* The value of "Field:" in /proc/PID/status, trimmed, into buf. 0,
 * -ENOENT when there is no such line, or -errno. */
int proc_status_field(pid_t pid, const char *field, char *buf, size_t len);
/* pid's command line, its arguments joined by spaces and the program's
 * directory left out ("python3 train.py"); -errno when unreadable. */
int proc_command_line(pid_t pid, char *buf, size_t len);
/*
 * The id thread tid of process pid has in its own (innermost) PID
 * namespace, from the "NSpid:" line of /proc/PID/task/TID/status, and how
 * many namespaces that line lists (1: ours, no container). A kernel
 * without the line (before 4.1) gives tid and 1. 0 or -errno.
 */
int proc_ns_tid(pid_t pid, pid_t tid, pid_t *inner, int *levels);

/*
 * Fixed-size records kept in an anonymous temporary file ($TMPDIR, else
 * /tmp) behind one buffer, so what grows with a run's length (a timeline)
 * costs disk, not memory. Read back in the order appended.
 */
struct spill;

/* An unnamed file, read-write, in $TMPDIR (else /tmp): the fd, or -errno. */
int temp_file_open(void);

int spill_new(struct spill **out, size_t record_size);
int spill_append(struct spill *s, const void *record);
uint64_t spill_count(const struct spill *s);
/* Stops at and returns fn's first non-zero result, or -errno. */
int spill_for_each(const struct spill *s, int (*fn)(const void *record, void *ctx), void *ctx);
/* The same, sorted by cmp (as qsort's; equal records in no set order),
 * through a temporary file and a few MiB of memory. */
int spill_for_each_sorted(const struct spill *s, int (*cmp)(const void *a, const void *b),
			  int (*fn)(const void *record, void *ctx), void *ctx);
void spill_free(struct spill *s);

/*
 * JSON written as it goes (common/json.c), for every JSON output: the
 * caller says what comes next, the emitter writes the commas, colons,
 * quotes and escapes. Strings are escaped ('"', '\\', control characters
 * as \u00xx), valid UTF-8 kept, and a byte that starts no UTF-8 character
 * written as U+FFFD, so the file always parses. Compact (",", ":") or
 * spaced (", ", ": "); json_break puts the next item, or the closer, of
 * the current object or array on a new line, `indent` spaces in.
 *
 * Each call returns 0 or the first error, which sticks: -EINVAL for a
 * misuse (a value where a key is due, a key without its value, a closer
 * that does not match, nesting deeper than JSON_MAX_DEPTH), after which
 * nothing more is written. json_end checks that one whole value was
 * written and returns that error, or -EIO when the stream has one. The
 * stream is written with stdio's unlocked calls: one thread writes it.
 */
#define JSON_MAX_DEPTH 32

struct json_level {
	bool object;    /* else an array */
	uint32_t items; /* keys or values written in it so far */
};

struct json_out {
	FILE *f;
	bool spaced;
	bool key_open;  /* a key written, its value not yet */
	bool complete;  /* the top-level value begun */
	int indent;     /* json_break's, for the next token; -1: none */
	int err;
	unsigned depth;
	struct json_level level[JSON_MAX_DEPTH];
};

void json_init(struct json_out *j, FILE *f, bool spaced);
int json_begin_object(struct json_out *j);
int json_end_object(struct json_out *j);
int json_begin_array(struct json_out *j);
int json_end_array(struct json_out *j);
/* A member's name; its value is the next thing written. */
int json_key(struct json_out *j, const char *name);
/* s quoted and escaped; NULL is null. */
int json_string(struct json_out *j, const char *s);
int json_int(struct json_out *j, int64_t v);
int json_uint(struct json_out *j, uint64_t v);
/* v with `decimals` digits after the point ("%.*f"), or with `digits`
 * significant ones ("%.*g"); NaN and the infinities are null. */
int json_double(struct json_out *j, double v, int decimals);
int json_double_g(struct json_out *j, double v, int digits);
/* v / 10^decimals, exactly: 1234567 with 3 decimals is 1234.567. */
int json_decimal(struct json_out *j, uint64_t v, int decimals);
int json_bool(struct json_out *j, bool v);
int json_null(struct json_out *j);
/* A value already formatted (a number the caller wrote exactly), as is. */
int json_raw(struct json_out *j, const char *text);
/* A value written elsewhere (by another json_out into a temporary file):
 * from's bytes from its position to its end, as one value. */
int json_raw_file(struct json_out *j, FILE *from);
void json_break(struct json_out *j, int indent);
/* A key and its value at once. */
int json_key_string(struct json_out *j, const char *key, const char *s);
int json_key_int(struct json_out *j, const char *key, int64_t v);
int json_key_uint(struct json_out *j, const char *key, uint64_t v);
int json_key_double(struct json_out *j, const char *key, double v, int decimals);
int json_key_bool(struct json_out *j, const char *key, bool v);
int json_key_decimal(struct json_out *j, const char *key, uint64_t v, int decimals);
/* 0 when one whole value was written without error; else the error. */
int json_end(struct json_out *j);
/* The length of the valid UTF-8 character at s (at most n bytes, n > 0),
 * 0 when none starts there (overlong forms and surrogates included). */
size_t utf8_char_len(const unsigned char *s, size_t n);

#endif
