/* SPDX-License-Identifier: MIT */
/*
 * The GPU agent's insides, shared by the files of cuda/ that build
 * libtrainsample_cuda.so. CUPTI's buffer and timestamp callbacks and the
 * driver's InitializeInjection take no user data, so the agent keeps its
 * state in one process-wide structure, `agent`, and nowhere else (each
 * thread's launch in progress is in `agent_thread`, its per-thread part).
 */
#ifndef TRAINSAMPLE_CUDA_AGENT_H
#define TRAINSAMPLE_CUDA_AGENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <cupti.h>

#include "common/common.h"
#include "cuda/gpu_record.h"
#include "symbolize/python/python.h"

/* The CUPTI functions the agent calls: looked up in the libcupti the
 * process already has, or loads, never linked. */
struct cupti_api {
	CUptiResult (*get_version)(uint32_t *version);
	CUptiResult (*get_result_string)(CUptiResult result, const char **str);
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *s, CUpti_CallbackFunc fn, void *data);
	CUptiResult (*subscribe_v2)(CUpti_SubscriberHandle *s, CUpti_CallbackFunc fn, void *data,
				    CUpti_SubscriberParams *params); /* NULL: older CUPTI */
	CUptiResult (*unsubscribe)(CUpti_SubscriberHandle s);
	CUptiResult (*enable_callback)(uint32_t enable, CUpti_SubscriberHandle s,
				       CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
	CUptiResult (*get_callback_name)(CUpti_CallbackDomain domain, uint32_t cbid,
					 const char **name);
	CUptiResult (*activity_enable)(CUpti_ActivityKind kind);
	CUptiResult (*activity_disable)(CUpti_ActivityKind kind);
	CUptiResult (*activity_register_callbacks)(CUpti_BuffersCallbackRequestFunc request,
						   CUpti_BuffersCallbackCompleteFunc complete);
	CUptiResult (*activity_register_timestamp)(CUpti_TimestampCallbackFunc fn);
	CUptiResult (*activity_get_next_record)(uint8_t *buffer, size_t valid,
						CUpti_Activity **record);
	CUptiResult (*activity_get_num_dropped)(CUcontext ctx, uint32_t stream, size_t *dropped);
	CUptiResult (*activity_flush_all)(uint32_t flag);
};

/* Strings and launch stacks interned, so each is written once. */
struct agent_intern {
	uint64_t *keys;        /* hash of the key; 0 empty */
	uint32_t *ids;
	char **texts;          /* strings: the text, to tell collisions apart */
	uint64_t *stack_keys;  /* stacks: (parent, name, file, line) packed */
	uint32_t cap, count;
};

/* Lines of (code object, instruction), direct-mapped: a line table is
 * decoded once per place, not once per launch. */
#define AGENT_LINE_CACHE 4096
struct agent_line {
	uint64_t code, instr, sig; /* sig: the code object's header, folded */
	uint32_t line;
};

struct agent_python {
	bool ready;
	struct agent_line lines[AGENT_LINE_CACHE];
	struct py_target target;
	struct py_code_cache *codes;
	struct py_walk_scratch scratch;
	void *(*this_thread_state)(void); /* PyGILState_GetThisThreadState */
};

/* Mappings of the process that may be read, for the Python walk's reads
 * of its own memory: a wrong pointer is refused, never dereferenced. */
struct agent_maps {
	uint64_t (*ranges)[2];
	uint32_t count, cap;
	uint64_t read_ns;      /* when they were read */
};

/*
 * Fields read by threads that do not hold the lock that guards their
 * writes are atomic: `collecting` and `generation` (written under
 * control_lock, read by every application thread's launch callback and by
 * the flusher), `exiting`, and the flusher's handshake with at_exit.
 */
struct agent_state {
	bool initialized;
	atomic_bool collecting;
	char dir[256];                 /* where the record file is */
	struct cupti_api cupti;
	void *cupti_lib;
	CUpti_SubscriberHandle subscriber;
	int fd;                        /* the record file; -1 none */

	pthread_mutex_t write_lock;    /* taken before lock: the file and spare */
	struct gpu_record *spare;      /* the stage being written */
	char path[320];                /* the record file */

	pthread_mutex_t lock;          /* everything below */
	struct gpu_record *staged;
	uint32_t nstaged, capstaged;
	uint64_t dropped;              /* records lost, not yet reported */
	uint32_t next_string, next_stack;
	struct agent_intern strings, stacks;
	struct agent_python py;
	struct agent_maps maps;
	uint32_t thread_names[64][2];  /* (tid, string id) of threads without Python */

	uint32_t definitions;          /* bumped when ids are forgotten: caches of them go stale */
	pthread_cond_t flush_now;      /* with lock: the stage is half full, or stop */

	pthread_t flusher;
	atomic_bool flusher_started;
	atomic_bool stop_flusher, flusher_done, exiting;
	atomic_bool exit_hooked;       /* at_exit registered again after the runtime's teardown */
	atomic_bool exit_done;
	atomic_uint forks;             /* cached tids are the parent's after a fork */
	pthread_mutex_t control_lock;  /* start and stop, one at a time */
	atomic_uint generation;        /* of collecting: launches across a restart are dropped */
	int sampler_pidfd;             /* record: trainsample, to notice it gone; -1 */
	uint64_t written;              /* bytes in the record file */
	uint64_t size_limit;           /* RLIMIT_FSIZE: never reached (SIGXFSZ) */
	bool definitions_lost;         /* a string or stack record was dropped */
	bool timestamp_registered;     /* once per process: again corrupts records */
	bool py_tried;

	int control_fd;                /* the dormant agent's socket; -1 none */
	char control_path[108];
	pthread_t control;
};

extern struct agent_state agent;

/* One thread's outermost launch API call in progress, and what it looked
 * up last time: its tid, and the API name's string id (CUPTI passes the
 * same name pointer for a callback id every time). */
struct agent_thread {
	int depth;
	uint32_t generation;
	struct gpu_rec_launch launch;
	uint32_t tid, tid_forks;
	const char *api_name;
	uint32_t api_id, api_definitions;
};

extern _Thread_local struct agent_thread agent_thread;

/* agent.c: collecting into dir's record file for a sampler (its pid, to
 * stop if it dies; 0 none), and stopping. */
int agent_collect_start(const char *dir, pid_t sampler, char *why, size_t len);
void agent_collect_stop(void);
/* Registers the exit handler once more from a launch callback, when the
 * CUDA runtime has registered its own teardown: exit handlers run last
 * registered first, and CUPTI must be flushed before that teardown. */
void agent_exit_hook(void);
/* A thread of the agent's own: every signal blocked. */
int agent_thread_start(pthread_t *t, void *(*fn)(void *), const char *name);

/* control.c: the dormant agent's socket, for attach. */
void agent_control_start(void);
void agent_control_stop(void);

/* cupti.c */
int agent_cupti_load(char *why, size_t len);

/* out.c: records staged under agent.lock, written by agent_flush. */
int agent_out_open(const char *dir);
void agent_stage(const struct gpu_record *r);          /* lock held */
uint32_t agent_string(const char *text);               /* lock held; 0 on failure */
uint32_t agent_stack_node(uint32_t parent, uint32_t name, uint32_t file, uint32_t line);
void agent_status(enum gpu_status status, const char *text);
void agent_flush(void);
void agent_out_close(void);
/* Removes the record file (no one will read it), and its folder when empty. */
void agent_out_unlink(void);

/* activity.c */
int agent_activity_start(char *why, size_t len);
void agent_activity_stop(void);
void agent_activity_flush(void);

/* launch.c */
int agent_launch_start(char *why, size_t len);
void agent_launch_stop(void);

/* python.c */
void agent_python_init(void);
/* The calling thread's Python stack as a stack id (lock held); 0 none. */
uint32_t agent_python_stack(void);

#endif
