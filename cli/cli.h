/* SPDX-License-Identifier: MIT */
/* Shared between the files of cli/ only. */
#ifndef TRAINSAMPLE_CLI_H
#define TRAINSAMPLE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "formats/formats.h"

#define MAX_OUTPUTS 16

struct output {
	const char *path;  /* "-" is stdout */
	const struct output_writer *writer; /* its format's row (outputs_resolve) */
	FILE *file;        /* opened before sampling, so a bad path fails early */
	struct file_stage *stage; /* staged beside path, renamed onto it when complete */
	bool gpu;          /* the GPU variant (--gpu-flamegraph, or named gpu.svg) */
};

enum cli_gpu {
	CLI_GPU_AUTO = 0, /* the agent loads with CUDA, collects if CUDA starts */
	CLI_GPU_ON,       /* the same, and say so when it cannot */
	CLI_GPU_OFF,
};

#define MAX_TIMES 16

/* The commands that take options, as bits of cli_option.commands. */
enum cli_command {
	CLI_RECORD = 1u << 0,
	CLI_ATTACH = 1u << 1,
	CLI_TOP = 1u << 2,
	CLI_REPORT = 1u << 3,
	CLI_DIFF = 1u << 4,
	CLI_DUMP = 1u << 5,
};
/* Those that sample, and those that render recordings. */
#define CLI_SAMPLING (CLI_RECORD | CLI_ATTACH | CLI_TOP)
#define CLI_RENDERING (CLI_REPORT | CLI_DIFF)

struct cli_options {
	struct output outputs[MAX_OUTPUTS];
	int noutputs;
	unsigned owned_paths; /* bit i: outputs[i].path was allocated */
	const char *format;   /* -f: for outputs whose name says nothing */
	double rate_hz;
	double duration_s;
	size_t stack_bytes;
	size_t queue_copies;  /* --unwind-queue */
	bool threads;
	bool idle;
	bool idle_given;      /* -i or --no-idle was on the command line */
	bool stats;
	bool native_lines;
	bool native;          /* Python and native frames merged */
	bool native_all;      /* ... with the interpreter's frames between Python's */
	bool gil_only;        /* -g: only samples of the GIL holder */
	bool nonblocking;     /* --nonblocking: never stop the GIL holder */
	bool by_function;     /* --function */
	bool full_filenames;
	bool inverted;        /* --inverted: an icicle flamegraph */
	uint64_t trace_max_slices; /* --trace-max-slices; 0: no limit */
	/* report's filters */
	pid_t tid;
	const char *thread;
	const char *process;  /* --process LABEL */
	const char *phase;    /* --phase NAME: one training phase's samples */
	const char *group_by; /* --group-by phase */
	const char *phases_file; /* --phases FILE: rules added to the built-in */
	bool summary;         /* report --summary: the lines record ends with */
	bool findings;        /* report --findings: every finding */
	bool ranks;           /* report --ranks: the ranks side by side */
	bool live;            /* top: a live view, no outputs */
	const char *times[MAX_TIMES]; /* --time FUNC: its calls' durations */
	int ntimes;
	double from_s, to_s;  /* to_s < 0: to the end */
	uint64_t steps_from, steps_to; /* --steps A:B (B 0: the last); 0: all */
	bool quiet;
	int subprocesses;     /* -s 1, --no-subprocesses 0; -1: record's
			       * command on, a running process off */
	pid_t pid;            /* record --pid / attach */
	char **command;       /* record -- CMD ARGS, NULL-terminated */
	const char *input;    /* report IN.tsprof; diff's newer recording */
	char **inputs;        /* report's recordings, input the first; */
	int ninputs;          /* ... merged into one profile */
	const char *baseline; /* diff's older recording */
	unsigned top;         /* diff --top: rows of the table */
	bool lines;           /* diff --lines: Python frames by line */
	enum cli_gpu gpu;     /* record --gpu */
	bool json;            /* dump --json */
	bool locals;          /* dump --locals */
	unsigned parsing;     /* the CLI_* bit being parsed (for its --help) */
};

/*
 * option_table.c: every option of every command, one row each; the parser
 * (getopt's arrays are made from it), each command's --help and
 * docs/options.md (--help-markdown) come from it.
 */
enum cli_arg {
	CLI_ARG_NONE,
	CLI_ARG_REQUIRED,
	CLI_ARG_OPTIONAL, /* --name=VALUE only */
};

struct cli_option {
	const char *name;     /* the long name, without "--" */
	char short_name;      /* 0: none */
	enum cli_arg arg;
	const char *arg_name; /* in help: "FILE", "HZ" */
	unsigned commands;    /* the CLI_* bits of the commands that take it */
	const char *help;     /* --help's text, plain */
	const char *doc;      /* docs/options.md's, Markdown; NULL: help */
	/* Instead of help and doc: a text made from another table (-o and -f
	 * from the writers'). */
	void (*describe)(FILE *f, bool markdown);
	/* Applies the option: 0, 1 when it printed help or the version (the
	 * command is done), -EINVAL after saying why. NULL: no argument sets
	 * the bool at field true; an argument is kept, a const char *, at field. */
	int (*apply)(struct cli_options *o, const char *arg);
	size_t field;         /* offsetof(struct cli_options, ...) without apply */
};

/* The rows in help's order; NULL past the last. Two rows may share a name
 * where their commands do not meet (help says what each command does with
 * it); they then parse alike. */
const struct cli_option *cli_option_at(size_t i);

struct cli_command_info {
	unsigned bit;         /* CLI_*; 0: a command without options (env) */
	const char *name;
	const char *synopsis; /* usage lines after "trainsample ", '\n' between */
	const char *what;     /* one line: what it does */
};
/* The commands in help's order; NULL past the last. */
const struct cli_command_info *cli_command_at(size_t i);

/* Parsing: 0 to go on, 1 when help or version was printed, -1 on error.
 * record's command is CLI_RECORD, CLI_ATTACH or CLI_TOP; attach: the PID
 * is the argument (attach, and top PID). */
int options_parse_record(int argc, char **argv, unsigned command, bool attach,
			 struct cli_options *o);
int options_parse_report(int argc, char **argv, struct cli_options *o);
int options_parse_diff(int argc, char **argv, struct cli_options *o);
int options_parse_dump(int argc, char **argv, struct cli_options *o);
/* Shared by the parser and the table: a PID, or -1 after saying why. */
int options_parse_pid(const char *s, pid_t *out);
/* phases.c: training phases (analysis/) in the outputs */
struct phase_rules;
struct phase_map;
struct render_options;
struct cli_phases {
	struct phase_rules *rules;
	struct phase_map *map;
	struct step_mark *marks; /* phases_find_steps: the trace's step marks */
	size_t nmarks, cap_marks;
	/* phases_find_loops: each process's training loop thread (the
	 * summary's: where its steps were counted, else the thread that
	 * computes), the busiest process's first; nloops 0 where none is. */
	struct thread_ref *loops;
	size_t nloops;
};
/* --phase, --group-by and --phases FILE checked, said; -1 when wrong. */
int phases_check_options(const struct cli_options *o);
int phases_open(const struct cli_options *o, const struct profile *p, struct cli_phases *cp);
/* The loops' step starts, for the trace (a timeline needed). */
int phases_find_steps(struct cli_phases *cp);
/* The loops' threads into cp->loops (a timeline needed). */
int phases_find_loops(struct cli_phases *cp);
/* Whose waits the pictures keep by default: the training loops' threads
 * (cp->loops), else (no loop anywhere) each process's main thread; sorted
 * (render_options.idle_keep). The caller frees *out. */
int phases_idle_keep(const struct cli_phases *cp, const struct profile *p,
		     struct thread_ref **out, size_t *n);
/* Sets fo's class callbacks (filters where --phase or --group-by asks),
 * the summary's hook and the step marks. */
void phases_render_options(const struct cli_options *o, struct cli_phases *cp,
			   struct render_options *fo);
/* The summary's lines (text): per process, its threads, phases, steps,
 * ...; gpu adds a line per GPU; then the costliest `findings`. */
int phases_summary(struct cli_phases *cp, bool gpu, size_t findings, bool text, FILE *out);
/* report --ranks: the ranks' table on out, or a line on stderr saying
 * there are none. */
int phases_ranks(struct cli_phases *cp, FILE *out);
void phases_close(struct cli_phases *cp);
/* --steps A:B: the window of a recording (its first sample's time the
 * origin) that holds those steps of its main loop; said unless -q. */
int phases_steps_window(const struct cli_options *o, const char *path, uint64_t *from_ns,
			uint64_t *to_ns);
/* diff's table of the two runs' main loops: phases and steps. */
int phases_diff(const struct cli_options *o, const struct profile *older, const struct profile *newer,
		FILE *out);
/* A line per --time FUNC: its calls' count and durations. */
void call_times_print(const struct cli_options *o, const struct profile *p, FILE *out);

/* Fills in {pid}, {rank} and {host} in output names (output_names.c);
 * pid 0: a command not started yet, whose {pid} stays. -EINVAL said. */
int output_names_expand(struct cli_options *o, pid_t pid);
bool output_name_wants_pid(const char *path);
struct sampler_stats;

/* record_meta.c: a recording's metadata at its start and its end, and a
 * followed process's (its label from its launch rank, its command line or
 * the DataLoader worker it is: worker >= 0; its rank; the fork whose
 * parent's line it kept). */
void record_meta_process(struct profile *p, pid_t pid, int worker, int spawn_rank);
/* ... and how it ended: "exit.PID" "status N" or "signal N", "exit_ns.PID"
 * the time (CLOCK_MONOTONIC, as the samples'). */
void record_meta_exit(struct profile *p, pid_t pid, int status, uint64_t ns);
void record_meta_start(struct profile *p, const struct cli_options *o, bool attach,
		       const char *what);
void record_meta_end(struct profile *p, pid_t pid, const struct sampler_stats *st,
		     const char *why);
/* report and diff: an output name with a field is refused, said. */
int output_names_refuse(const struct cli_options *o, const char *cmd);
/* Variable name of pid's environment as it started (ours for pid 0), into
 * buf; "" when it has none. */
void target_env_value(pid_t pid, const char *name, char *buf, size_t len);
/* Gives every output a format; adds the default outputs when none given. */
int outputs_resolve(struct cli_options *o, const char *stem, bool recording);

int cmd_record(int argc, char **argv, bool attach);
/* top PID, or top -- CMD: record's sampling, a live view for outputs. */
int cmd_top(int argc, char **argv);

/* The live view of top (top.c), drawn from record's periodic turn. */
struct top_view;
struct sampler;
int top_start(struct profile *p, const struct cli_options *o, struct top_view **out);
void top_tick(struct top_view *v, struct sampler *s, uint64_t now);
void top_end(struct top_view *v);
int cmd_report(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_env(int argc, char **argv);

/* Reads a recording into p, cut by --from/--to; a damaged one with a
 * warning. -errno after printing the error. */
int recording_read(const struct cli_options *o, const char *path, struct profile *p);

/* privilege.c: whether cmd is a setuid, setgid or file-capability program
 * that a traced exec runs without its privilege (we lack CAP_SYS_PTRACE);
 * what gets "setuid", "setgid" or "file capability". */
bool command_loses_privilege(const char *cmd, char *what, size_t len);

/* Opens every output but the streamed ones (.tsprof: their writer opens them). */
int outputs_open(struct cli_options *o);
/* Writes and closes them; one line each unless quiet. */
int outputs_write(struct cli_options *o, const struct profile *p);
/* After a writer's `ret`: closes the file and puts it in place, or removes
 * it; says why on failure. */
int outputs_finish(struct output *out, int ret, char *err, size_t errlen);

/* record_report.c: the --stats block; whether PID's stdout or stderr is
 * the terminal our stderr is. */
void record_stats_print(const struct sampler_stats *st);
/* One warning line when over 5% of the ticks were missed, saying what
 * that does to the figures. */
void record_missed_warn(const struct sampler_stats *st, double rate_hz);
bool record_target_shares_terminal(pid_t pid);

/* gpu_socket.c: a connection to PID's dormant agent (user uid), checked to
 * be the process's own; -errno, with why set when something was there but
 * is not trusted. socket_path gets the socket's name. */
int gpu_agent_open(pid_t pid, unsigned uid, char *socket_path, size_t len, char *why,
		   size_t whylen);
/* One line to the agent, one printable line back ("ok" or "error: WHY"),
 * within one deadline of a few seconds. 0 on "ok", else -1. */
int gpu_agent_say(int fd, const char *command, char *answer, size_t len);
/* The writers' options from the command line's. */
void outputs_render_options(const struct cli_options *o, struct render_options *fo);
/* What the outputs need kept as samples come: the timeline (a trace), the
 * GPU activities (speedscope). */
int outputs_keep_timeline(const struct cli_options *o, struct profile *p);
/* "wrote FILE (FORMAT, N samples)" unless quiet; N counts what the file holds. */
void outputs_announce(const struct output *out, uint64_t samples, bool quiet);
/* The samples the filters of fo keep. */
uint64_t outputs_samples_kept(const struct profile *p, const struct render_options *fo);
/* Whether w's output keeps only the loops' waits (the default of the
 * flamegraph and folded stacks; --idle keeps every wait). */
bool outputs_idle_kept_only(const struct cli_options *o, const struct profile *p,
			    const struct output_writer *w);
/* The idle time fo's idle_keep leaves out, and the line that says it. */
uint64_t outputs_idle_left_out(const struct profile *p, const struct render_options *fo);
void outputs_say_idle_left_out(uint64_t weight_ns, bool quiet);
/* -ENOENT, after saying so, when filters leave no sample of p (read from
 * path): nothing should be written then. */
int outputs_check_kept(const struct cli_options *o, const struct profile *p, const char *path);
void outputs_free(struct cli_options *o);

/* ---- the GPU agent (gpu.c) ---- */

struct gpu_run;
/* Before a command starts: where the agent writes, and the variables
 * that load it (CUDA_INJECTION64_PATH, TRAINSAMPLE_GPU_DIR) set for it;
 * attach: the dormant agent switched on. NVML sampled where there is one.
 * NULL in *out when GPU data is off or cannot be had (said unless auto). */
int gpu_run_start(const struct cli_options *o, struct profile *p, struct gpu_run **out);
void gpu_run_poll(struct gpu_run *g, uint64_t now_ns);
/* The last records, and the summary on stderr unless quiet. */
void gpu_run_finish(struct gpu_run *g, bool quiet, uint64_t wall_ns);
void gpu_run_free(struct gpu_run *g);

/* messages.c: "trainsample: error: ..." and "trainsample: warning: ..." lines. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* help.c, from the option table: trainsample --help; a command's --help
 * (a CLI_* bit); docs/options.md (trainsample --help-markdown). */
void usage(FILE *f);
void usage_command(FILE *f, unsigned command);
void usage_markdown(FILE *f);

#endif
