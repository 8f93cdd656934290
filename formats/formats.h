/* SPDX-License-Identifier: MIT */
/*
 * formats/ — the profile model and every serialization of it.
 *
 * The model interns strings, frames and stacks (a trie: each stack is one
 * frame called from a parent stack) and aggregates samples per (pid, tid,
 * stack, flags). Samples themselves are not kept: a .tsprof writer attached
 * to the profile streams every definition and sample as it is added, so
 * memory stays bounded by the number of distinct stacks on long runs.
 *
 * Ids are dense and start at 0. String 0 is "" and stack 0 is the empty
 * stack (the trie's root); frame ids have no reserved value.
 *
 * Every function returns 0 or a negative errno; details go to the caller's
 * error buffer where one is taken.
 */
#ifndef TRAINSAMPLE_FORMATS_H
#define TRAINSAMPLE_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum frame_kind {
	FRAME_NATIVE = 0,
	FRAME_PYTHON = 1,
	FRAME_IDLE = 2, /* leaf of a blocked thread: "[idle: futex]" */
	FRAME_GPU = 3,
	FRAME_KIND_MAX = FRAME_GPU,
};

struct frame {
	uint32_t kind;   /* enum frame_kind */
	uint32_t name;   /* string id: function, or "0xADDR (module)" */
	uint32_t module; /* string id: module (native), file (python, or native
			  * with a line: --native-lines); 0 none */
	uint32_t line;   /* 0 when unknown */
};

struct stack_node {
	uint32_t parent; /* stack id of the caller's stack; root's parent is 0 */
	uint32_t frame;  /* innermost frame of this stack (unused for root) */
	uint32_t depth;  /* frames in this stack; 0 for the root */
};

enum sample_flag {
	SAMPLE_IDLE = 1u << 0,      /* blocked thread, not on CPU */
	SAMPLE_TRUNCATED = 1u << 1, /* unwinding stopped short of the outermost frame */
	SAMPLE_GIL = 1u << 2,       /* the thread held Python's GIL */
	SAMPLE_GPU = 1u << 3,       /* GPU time on the stack that launched it,
				     * not a CPU sample (profile_add_gpu_activity) */
	SAMPLE_CPU_WAIT = 1u << 4,  /* runnable but waiting for a CPU: its run-queue
				     * wait grew by half the time since the last read */
	SAMPLE_BEFORE_STEPS = 1u << 31, /* rendering only, never stored: the part
					 * of a row before its thread's first
					 * step (render_for_each_row) */
	SAMPLE_CLASS_SET = 1u << 30,    /* rendering only: a part of a row whose
					 * class, told by time, is in the bits
					 * at SAMPLE_CLASS_SHIFT */
};
#define SAMPLE_CLASS_SHIFT 24
#define SAMPLE_CLASS_MAX 0x3f

struct sample {
	uint64_t time_ns;   /* CLOCK_MONOTONIC */
	uint32_t pid;
	uint32_t tid;
	uint32_t stack;     /* stack id, outermost frame at the root */
	uint64_t weight_ns; /* the interval this sample stands for */
	uint32_t flags;     /* enum sample_flag */
};

/* One row of the per-(pid, tid, stack, flags) aggregate. */
struct profile_aggregate {
	uint32_t pid;
	uint32_t tid;
	uint32_t stack;
	uint32_t flags;
	uint64_t weight_ns;
	uint64_t count;
};

struct profile;

struct profile *profile_new(void);
void profile_free(struct profile *p);

int profile_intern_string(struct profile *p, const char *s, uint32_t *id);
int profile_intern_frame(struct profile *p, const struct frame *f, uint32_t *id);
/* The stack that is `frame` called from stack `parent`. */
int profile_intern_stack(struct profile *p, uint32_t parent, uint32_t frame,
			 uint32_t *id);
/* Records (or renames) a thread; the latest name wins. */
int profile_set_thread(struct profile *p, uint32_t pid, uint32_t tid,
		       const char *name);
/* Key/value metadata; setting a key again replaces its value. */
int profile_set_meta(struct profile *p, const char *key, const char *value);
int profile_add_sample(struct profile *p, const struct sample *s);

uint32_t profile_string_count(const struct profile *p);
const char *profile_string(const struct profile *p, uint32_t id);
uint32_t profile_frame_count(const struct profile *p);
const struct frame *profile_frame(const struct profile *p, uint32_t id);
uint32_t profile_stack_count(const struct profile *p);
const struct stack_node *profile_stack(const struct profile *p, uint32_t id);
/* NULL when absent. */
const char *profile_meta(const struct profile *p, const char *key);
const char *profile_thread_name(const struct profile *p, uint32_t pid,
				uint32_t tid);
uint64_t profile_sample_count(const struct profile *p);

/* Calls fn for every aggregate row, in no particular order; stops at and
 * returns fn's first non-zero result. */
int profile_for_each_aggregate(const struct profile *p,
			       int (*fn)(const struct profile_aggregate *row,
					 void *ctx),
			       void *ctx);

/* ---- GPU activities ---- */

enum gpu_activity_kind {
	GPU_ACTIVITY_KERNEL = 1,
	GPU_ACTIVITY_MEMCPY,
	GPU_ACTIVITY_MEMSET,
	GPU_ACTIVITY_SYNC,     /* the CPU waited for the GPU */
	GPU_ACTIVITY_KIND_MAX = GPU_ACTIVITY_SYNC,
};

/* CUPTI's values, as the agent records them. */
#define GPU_COPY_KIND_HTOD 1
#define GPU_COPY_KIND_DTOH 2
#define GPU_MEMORY_KIND_PAGEABLE 1
#define GPU_MEMORY_KIND_PINNED 2

/* What the GPU did, and which thread and stack asked for it. */
struct gpu_activity {
	uint32_t kind;              /* enum gpu_activity_kind */
	uint32_t device, stream, correlation;
	uint64_t start_ns, end_ns;  /* CLOCK_MONOTONIC, as samples */
	uint32_t name;              /* string id: the kernel (demangled); 0 */
	uint32_t copy_kind;         /* memcpy: CUPTI's kind (1 HtoD, 2 DtoH, 8 DtoD, 10 peer) */
	uint8_t src_kind, dst_kind; /* memcpy: CUPTI's memory kinds (1 pageable, 2 pinned, 3 device) */
	bool async;                 /* memcpy: CUPTI saw it asynchronous for the host */
	bool null_stream;           /* on the legacy default (NULL) stream, as CUPTI named it */
	uint64_t bytes;
	int32_t grid[3], block[3];
	uint32_t pid, tid;          /* the launching thread; tid 0: unknown */
	uint32_t stack;             /* its stack at the launch; 0 unknown */
	uint32_t api;               /* string id: the API called; 0 */
	uint64_t launch_start_ns, launch_end_ns; /* the API call; 0 unknown */
};

/*
 * Adds what the GPU did. Kernels, copies and memsets also weigh their
 * duration onto the launching stack with a leaf of their own ("[kernel]
 * NAME", "[memcpy HtoD]", "[memset]"): an aggregate row flagged SAMPLE_GPU,
 * which the CPU pictures leave out and the GPU flamegraph keeps. With the
 * timeline kept, the activity itself is kept too (for the trace).
 */
int profile_add_gpu_activity(struct profile *p, const struct gpu_activity *a);
/* Keeps the activities from now on without the whole timeline (speedscope
 * draws GPU streams, not threads, in time). */
void profile_keep_gpu_activities(struct profile *p);
/* In the order they were added; nothing unless kept (the timeline, or
 * profile_keep_gpu_activities). Kept ones wait in a temporary file, so
 * memory does not grow with them. */
int profile_for_each_gpu_activity(const struct profile *p,
				  int (*fn)(const struct gpu_activity *a, void *ctx), void *ctx);
/* The same in cmp's order (qsort's comparator of two struct gpu_activity),
 * sorted on disk in a few MiB of memory. */
int profile_for_each_gpu_activity_sorted(const struct profile *p,
					 int (*cmp)(const void *a, const void *b),
					 int (*fn)(const struct gpu_activity *a, void *ctx),
					 void *ctx);
/* "HtoD", "DtoH", "DtoD", "HtoH", "PtoP" or "copy". */
const char *gpu_copy_kind_name(uint32_t copy_kind);
/* How an activity reads: "[kernel] NAME" ("NAME" without the kind, where
 * the track says it already), "[memcpy HtoD]", "[memset]", "[synchronize]". */
void gpu_activity_label(const struct profile *p, const struct gpu_activity *a, bool kind,
			char *buf, size_t len);
/* qsort order of activities: by device, process, stream, start (stream
 * ids are a process's own). */
int gpu_activity_by_stream(const void *a, const void *b);

/* ---- counters: values over time (a GPU's utilization, memory, power) ---- */

/* Track names are "gpu.DEVICE.WHAT" for a device's, so pictures can place
 * them; the unit is in WHAT ("utilization %", "memory used MiB", "power W"). */
struct counter_sample {
	uint64_t time_ns;  /* CLOCK_MONOTONIC */
	uint32_t track;    /* string id */
	double value;      /* kept to a thousandth in a .tsprof */
};

int profile_add_counter(struct profile *p, const struct counter_sample *c);
/* In the order they were added. */
int profile_for_each_counter(const struct profile *p,
			     int (*fn)(const struct counter_sample *c, void *ctx), void *ctx);

/* ---- timeline: when each thread was in which stack ---- */

/* Consecutive samples of one thread with one stack and flags. A sample
 * stands for the interval that ends at its time. */
struct profile_span {
	uint64_t start_ns; /* CLOCK_MONOTONIC: first sample's time less its weight */
	uint64_t end_ns;   /* last sample's time */
	uint32_t pid, tid, stack, flags;
	uint64_t count;    /* samples */
};

/*
 * From now on the profile also keeps spans: one open span per thread in
 * memory, the closed ones in a temporary file (common's spill), so memory
 * does not grow with the run; -EBUSY once samples were added. Rows merged as
 * aggregates (profile_merge_aggregate) have no time and no span.
 */
int profile_keep_timeline(struct profile *p);
bool profile_keeps_timeline(const struct profile *p);
/* Spans in the order they began per thread (threads interleaved in the
 * order their spans ended); stops at fn's first non-zero result. Nothing
 * when the timeline is not kept. */
int profile_for_each_span(const struct profile *p,
			  int (*fn)(const struct profile_span *span, void *ctx), void *ctx);
/* The earliest span's start; UINT64_MAX when there is none. */
uint64_t profile_timeline_start_ns(const struct profile *p);

/* ---- outputs: one table, a row per format (output_writers.c) ---- */

enum output_format {
	OUTPUT_UNKNOWN = 0,
	OUTPUT_FOLDED,
	OUTPUT_TSPROF,
	OUTPUT_SVG,     /* flamegraph */
	OUTPUT_SPEEDSCOPE,
	OUTPUT_PPROF,
	OUTPUT_TRACE,   /* Chrome/Perfetto trace: needs the timeline */
	OUTPUT_SUMMARY, /* summary.json: phases, steps, figures */
};

struct render_options;

/* What a writer renders, and where. */
struct output_job {
	const struct profile *profile;
	const struct profile *baseline; /* diff's older recording; NULL but in diff */
	FILE *file;
	const struct render_options *options;
};

#define OUTPUT_NAMES_MAX 4
#define OUTPUT_EXTENSIONS_MAX 3

/*
 * An output format as the command line knows it: how -f and file names
 * pick it, how it is written, and what it asks of the recording. The
 * command line's parsing, usage and messages come from these rows, so a
 * new output is one more row.
 */
struct output_writer {
	enum output_format format;
	const char *name;     /* in messages: "wrote FILE (flamegraph, ...)" */
	/* -f's names, any case; the first is the one usage and errors list. */
	const char *names[OUTPUT_NAMES_MAX];
	/* Without the leading dot, maybe in two parts ("pb.gz"); the first
	 * names default files. */
	const char *extensions[OUTPUT_EXTENSIONS_MAX];
	const char *contents; /* usage, after the extensions: "flamegraph"; NULL */
	/* Renders the profile once it is complete; NULL when streamed. */
	int (*write)(const struct output_job *job, char *err, size_t errlen);
	bool streams;         /* a tsprof_writer writes it as samples come: a
			       * named file, one per run, opened by the caller */
	bool needs_timeline;  /* profile_keep_timeline before the first sample */
	bool needs_gpu_activities; /* profile_keep_gpu_activities, likewise */
	bool gpu_variant;     /* --gpu-flamegraph, or a file named gpu.EXT: GPU
			       * time on launching stacks (render_options.gpu) */
	bool diffs;           /* write draws job->baseline too: diff's output */
	bool record_default;  /* written when record names no output */
	bool stdout_default;  /* what '-' gets without -f */
	bool names_files;     /* a name that ends in its first extension is of
			       * it, no dot needed: "summary.json" */
};

/* The table's rows, in the order usage lists them; NULL past the last. */
const struct output_writer *output_writer_at(size_t i);
/* The row of a format; NULL for OUTPUT_UNKNOWN. */
const struct output_writer *output_writer_of(enum output_format f);
/* The first row that match accepts; NULL when none does. */
const struct output_writer *output_writer_find(bool (*match)(const struct output_writer *w));
/* By a -f name, any case; NULL when no row has it. */
const struct output_writer *output_writer_by_name(const char *name);
/* By a file name's extension, any case, the longest that fits
 * ("a.speedscope.json"); something must come before it. NULL if none. */
const struct output_writer *output_writer_by_path(const char *path);
/*
 * Every row's first -f name, or every extension with its dot, in table
 * order, joined by sep and before the last by last (", " and " or "), into
 * buf. The length of the whole list, as snprintf.
 */
size_t output_writers_list(char *buf, size_t len, bool extensions, const char *sep,
			   const char *last);

/* ---- .tsprof: the raw, streamed recording ---- */

/*
 * Opening a writer attaches it to the profile: everything the profile holds
 * now and everything added later is appended, definitions before their
 * first use. Records are buffered and written (one write per chunk, each
 * with its length and CRC) when tsprof_writer_tick finds the buffer a
 * second old or large, on tsprof_writer_flush, and on close.
 */
struct tsprof_writer;

int tsprof_writer_open(struct tsprof_writer **out, const char *path,
		       struct profile *p, char *err, size_t errlen);
int tsprof_writer_flush(struct tsprof_writer *w);
int tsprof_writer_tick(struct tsprof_writer *w, uint64_t now_ns);
/* Flushes, writes the end chunk, detaches from the profile and frees w,
 * whatever the result. */
int tsprof_writer_close(struct tsprof_writer *w);
/* Closes and removes what w wrote (a run that never started), frees w. */
void tsprof_writer_discard(struct tsprof_writer *w);

struct tsprof_read_info {
	uint64_t chunks;      /* valid chunks read */
	uint64_t samples;     /* samples replayed */
	uint64_t first_sample_ns; /* the first sample's time: where a
				   * window's from_ns and to_ns count from */
	bool complete;        /* the end chunk was reached */
	bool damaged;         /* stopped early at a truncated or corrupt chunk */
	char note[256];       /* why it stopped early, for the user */
};

/*
 * Replays a recording into `into` (a fresh profile). A file that is not a
 * .tsprof, or cannot be read, is an error. A truncated or corrupt chunk is
 * not: reading stops cleanly before it, info->damaged is set and
 * info->note says where and why.
 */
int tsprof_read(const char *path, struct profile *into,
		struct tsprof_read_info *info, char *err, size_t errlen);
/*
 * tsprof_read keeping only the samples from from_ns to to_ns after the
 * recording's first sample. Rows stored already aggregated (a recording
 * re-encoded by report) have no time: they are left out of a window.
 */
int tsprof_read_window(const char *path, struct profile *into, uint64_t from_ns,
		       uint64_t to_ns, struct tsprof_read_info *info, char *err,
		       size_t errlen);
/*
 * tsprof_read_window of recording number `index` (0 the first, into a
 * fresh profile) of several merged into one profile: their strings,
 * frames and stacks shared, the PIDs of one from another host than the
 * first's moved past 2^22 (index << 22), its times onto the first's clock
 * (where both carry clock_offset_ns), the first's metadata kept. The
 * window is each recording's own, from its first sample.
 */
int tsprof_read_merge(const char *path, struct profile *into, uint32_t index,
		      uint64_t from_ns, uint64_t to_ns, struct tsprof_read_info *info,
		      char *err, size_t errlen);

/* ---- processes' labels (labels.c) ---- */

/* A process's label: "rank R", else its command; " on HOST" when host. */
void process_label(const char *command, const char *rank, const char *host, char *buf,
		   size_t len);
/* The label kept for pid (metadata "process.PID"), NULL if none. */
const char *process_label_of(const struct profile *p, uint32_t pid);

/* ---- threads' busy shares (thread_shares.c) ---- */

struct thread_share {
	uint32_t pid, tid;
	uint64_t busy_ns, all_ns; /* CPU samples' weights: on a CPU, in all */
};

struct thread_shares {
	struct thread_share *v; /* by pid, tid */
	size_t n, cap;
};

int thread_shares_find(const struct profile *p, struct thread_shares *out);
/* NULL when the thread has no CPU sample (or s is NULL). */
const struct thread_share *thread_shares_get(const struct thread_shares *s, uint32_t pid,
					     uint32_t tid);
void thread_shares_free(struct thread_shares *s);

/* ---- folded stacks ---- */

struct thread_ref {
	uint32_t pid, tid;
};

struct render_options {
	bool threads;      /* a "thread TID (name)" root frame per thread */
	bool processes;    /* a "process PID (label)" root frame per process
			    * (set where a profile holds several) */
	bool include_idle; /* keep SAMPLE_IDLE samples */
	bool gil_only;     /* keep only SAMPLE_GIL samples */
	bool by_function;  /* Python frames without their line: one per function */
	bool full_filenames; /* Python files as recorded, not shortened */
	bool inverted;     /* flamegraph: an icicle, callers on top */
	bool gpu;          /* GPU time on launching stacks instead of CPU samples */
	uint32_t pid, tid; /* only this process / thread; 0: any */
	const char *thread;/* only threads of this name; NULL: any */
	const char *process; /* only processes of this label, or whose label
			      * goes on after it with a space ("rank 0",
			      * "DataLoader worker"); NULL: any */
	uint64_t max_slices; /* trace: the most CPU slices, shorter ones left
			      * out past it; 0: no limit */
	/* Each row's class (cli/ sets it from analysis/'s phases; NULL:
	 * none): keep_class keeps one (class + 1; 0 any), class_root puts a
	 * "[KIND: NAME]" root under the thread's. */
	int (*row_class)(void *ctx, const struct profile_aggregate *row);
	/* ... and a timed span's, where time tells more (a validation pass
	 * inside a loop); NULL: its row's. */
	int (*span_class)(void *ctx, const struct profile_span *span);
	void *row_class_ctx;
	const char *const *class_names;
	const char *class_kind;
	int keep_class;
	bool class_root;
	/* summary.json: analysis/'s summary, which formats/ cannot call,
	 * written through cli/'s hook; NULL refuses the format. */
	int (*summary)(void *ctx, FILE *out);
	void *summary_ctx;
	/* Each thread's busy share (NULL: not known); busy_roots has the
	 * flamegraph's thread roots say "busy N%". */
	const struct thread_shares *thread_busy;
	bool busy_roots;
	/* Whose waits the picture keeps (cli/ finds them with analysis/: the
	 * training loops' threads, their step time; else each process's main
	 * thread), sorted by pid, tid: with idle_kept_only, the SAMPLE_IDLE
	 * samples of every other thread (helper threads, idle DataLoader
	 * workers, a launcher waiting on its ranks) are left out. */
	const struct thread_ref *idle_keep;
	size_t nidle_keep;
	bool idle_kept_only;
	/* speedscope: the thread whose profile opens first (0: the busiest). */
	uint32_t open_pid, open_tid;
	/* diff: the older profile's own (its threads' idle_keep, pid, tid);
	 * NULL: these. */
	const struct render_options *baseline;
	/* trace: the training loops' step starts (cli/ finds them with
	 * analysis/), marked on their threads' phase tracks. */
	const struct step_mark *step_marks;
	size_t nstep_marks;
};

struct step_mark {
	uint32_t pid, tid;
	uint64_t time_ns; /* the step's start, CLOCK_MONOTONIC */
	uint64_t step;    /* from 1 */
};

/* Whether o keeps this thread's waits (idle_keep). */
bool render_keeps_idle_of(const struct render_options *o, uint32_t pid, uint32_t tid);

/*
 * The rows a picture draws: profile_for_each_aggregate's, except that
 * under class roots (--group-by) or a kept class (--phase), with a
 * timeline, a loop thread's samples before its first step are rows of
 * their own, flagged SAMPLE_BEFORE_STEPS (their class: "startup"), and
 * spans whose span_class is not their row's (a validation pass) rows of
 * that class.
 */
int render_for_each_row(const struct profile *p, const struct render_options *o,
			int (*fn)(const struct profile_aggregate *row, void *ctx), void *ctx);
/* A row's class as render_for_each_row gave it: -1 before the first step
 * (or no class), else the class index. */
int render_row_class(const struct render_options *o, const struct profile_aggregate *row);

/* "[KIND: NAME]" of a row's class into buf ("[KIND: startup]" before the
 * first step); 0 when it has none. */
size_t class_root_label(const struct render_options *o, const struct profile_aggregate *row,
			char *buf, size_t len);

/*
 * The frames of a stack, outermost first, into *path (grown as needed,
 * *cap its size; the caller frees it). Returns the depth, or -ENOMEM.
 */
int profile_stack_frames(const struct profile *p, uint32_t stack, uint32_t **path,
			 uint32_t *cap);

/* Whether a writer keeps an aggregate row under o's filters. */
bool render_keeps(const struct profile *p, const struct render_options *o,
		  const struct profile_aggregate *row);

/*
 * A Python file as people read it: what follows site-packages/ or
 * dist-packages/, the standard library's path below lib/python3.X/, or the
 * path below the script's directory (meta "python_script_dir"); else as it
 * is. Returns a pointer into path.
 */
const char *python_file_short(const char *path, const char *script_dir);

#define LABEL_MAX 4096
/* A frame as outputs print it: "name", or "name (file:LINE)" for Python
 * frames and native ones with a line; ';' and line breaks replaced. The
 * label's length (cut to len - 1). */
size_t frame_label(const struct profile *p, uint32_t id, const struct render_options *o,
		   const char *script_dir, char *buf, size_t len);
/* "thread TID (name)" */
size_t thread_label(const struct profile *p, uint32_t pid, uint32_t tid, char *buf, size_t len);
/* " (label, pid PID)" after a GPU track's name: whose work it is; the
 * label left out when there is none. */
void gpu_process_suffix(const struct profile *p, uint32_t pid, char *buf, size_t len);
/* "process PID (label)", the label left out when there is none. */
size_t process_root_label(const struct profile *p, uint32_t pid, char *buf, size_t len);
/* How many processes the profile's threads belong to, counted up to max. */
uint32_t profile_process_count(const struct profile *p, uint32_t max);

/*
 * Writes "root;...;leaf COUNT" lines, sorted. Frames print their name,
 * "name (file:line)" for Python frames and native frames with a line. COUNT is the weighted number
 * of samples: the sum of the samples' weights divided by the sampling
 * period (meta "period_ns"), rounded, at least 1; without a period it is the
 * plain sample count. ';' and newlines inside names are replaced.
 */
int folded_write(const struct profile *p, FILE *out,
		 const struct render_options *o, char *err, size_t errlen);

/* ---- text in markup ---- */

/* At most n bytes of text for XML: markup escaped, control characters and
 * bytes that are not UTF-8 replaced. */
void xml_put_escaped(FILE *out, const char *text, size_t n);

/* ---- speedscope ---- */

/*
 * speedscope's JSON: one sampled profile per thread ("PID/NAME (TID)"),
 * each distinct stack a sample weighted in seconds, frames with file and
 * line; activeProfileIndex on the busiest thread.
 */
int speedscope_write(const struct profile *p, FILE *out, const struct render_options *o,
		     char *err, size_t errlen);

/* ---- pprof ---- */

/*
 * gzip-compressed profile.proto: sample types samples/count and
 * wall/nanoseconds, a location per distinct frame label with its function
 * and line, a mapping per native module, labels pid, tid and thread.
 */
int pprof_write(const struct profile *p, FILE *out, const struct render_options *o,
		char *err, size_t errlen);

/* ---- Chrome/Perfetto trace ---- */

/*
 * The Trace Event Format's JSON: per thread, nested complete ("X") slices
 * built from the timeline (a flame chart over time), process and thread
 * names, metadata in otherData, microseconds after the first sample.
 * Frames are compared by function (the line is an argument). -EINVAL when
 * the profile kept no timeline, -ENODATA when its samples carried no time.
 * Memory is bounded by threads and stack depth, not by the run's length.
 * Past o->max_slices, slices shorter than a power of two of ns are left out
 * (otherData says which); then 0 is returned with a note in err.
 */
int trace_write(const struct profile *p, FILE *out, const struct render_options *o,
		char *err, size_t errlen);

/* ---- flamegraph ---- */

/*
 * An interactive flamegraph SVG (click to zoom, search by regular
 * expression, tooltips; the script is embedded, nothing is fetched), the
 * same samples and labels as folded_write. Title: meta "command";
 * subtitle: duration, rate, samples. Frames under 0.1 px are left out.
 */
int flamegraph_write(const struct profile *p, FILE *out, const struct render_options *o,
		     char *err, size_t errlen);

/*
 * The differential flamegraph: `after` drawn as flamegraph_write draws it,
 * each frame coloured by the change in its share of its profile's samples
 * since `before` (the same path of labels there): red grew, blue shrank,
 * the largest change in full colour. Tooltips give both shares.
 */
int flamegraph_diff_write(const struct profile *before, const struct profile *after, FILE *out,
			  const struct render_options *o, char *err, size_t errlen);

/*
 * The top changes between two profiles as a text table: per function
 * (frame label), its share of each profile's samples in total (with its
 * callees, once per stack) and self, and the change in points; the
 * largest changes in total share first, at most `top` rows.
 */
int diff_table_write(const struct profile *before, const struct profile *after, FILE *out,
		     const struct render_options *o, unsigned top, char *err, size_t errlen);

#endif
