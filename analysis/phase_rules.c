// SPDX-License-Identifier: MIT
/*
 * Which frames mean which training phase. A rule names a function (a
 * Python qualified name, or a native symbol) and optionally its file, both
 * as shell patterns, or a thread name. The built-in rules follow the
 * functions the libraries themselves call (their qualified names and
 * files), so no code of the program needs to change.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/phase_impl.h"
#include "common/common.h"

#define TORCH "*/torch/"
#define DATA_DIR TORCH "utils/data/"
#define OPTIM TORCH "optim/*.py"
#define HF "*/transformers/"
#define ACC "*/accelerate/"
#define PL "*/lightning/pytorch/"
#define PL_OLD "*/pytorch_lightning/"
#define C10D TORCH "distributed/distributed_c10d.py"
#define FSDP TORCH "distributed/fsdp/"

/* A rule: phase, whether func names a thread, func and file patterns. */
#define R(ph, thr, fn, fl) { .phase = (ph), .thread = (thr), .func = (fn), .file = (fl) }

static const struct phase_rule builtin[] = {
	/* Data: the loader's iterator and everything below it (its queue
	 * waits, collate, pin memory), a worker process's loop, and the
	 * frameworks' fetchers. */
	R(PHASE_DATA, false, "_BaseDataLoaderIter.__next__", DATA_DIR "dataloader.py"),
	R(PHASE_DATA, false, "DataLoader.__iter__", DATA_DIR "dataloader.py"),
	R(PHASE_DATA, false, "*._shutdown_workers", DATA_DIR "dataloader.py"),
	R(PHASE_DATA, false, "*.__del__", DATA_DIR "dataloader.py"),
	R(PHASE_DATA, false, "_worker_loop", DATA_DIR "_utils/worker.py"),
	R(PHASE_DATA, false, "_pin_memory_loop", DATA_DIR "_utils/pin_memory.py"),
	R(PHASE_DATA, false, "default_collate", DATA_DIR "_utils/collate.py"),
	R(PHASE_DATA, false, "Trainer.get_batch_samples", HF "trainer.py"),
	R(PHASE_DATA, false, "DataLoaderShard.__iter__", ACC "data_loader.py"),
	R(PHASE_DATA, false, "_*DataFetcher.__next__", PL "loops/fetchers.py"),
	R(PHASE_DATA, false, "_*DataFetcher.__next__", PL_OLD "loops/fetchers.py"),
	R(PHASE_DATA, true, "pt_data_worker*", NULL),
	/* Backward: the call, autograd's entry points, and its engine's
	 * threads (one per device). */
	R(PHASE_BACKWARD, false, "Tensor.backward", TORCH "_tensor.py"),
	R(PHASE_BACKWARD, false, "backward", TORCH "autograd/__init__.py"),
	R(PHASE_BACKWARD, false, "_engine_run_backward", TORCH "autograd/graph.py"),
	R(PHASE_BACKWARD, false, "Accelerator.backward", ACC "accelerator.py"),
	R(PHASE_BACKWARD, false, "*.backward", PL "core/module.py"),
	R(PHASE_BACKWARD, false, "torch::autograd::Engine::*", NULL),
	R(PHASE_BACKWARD, true, "pt_autograd_*", NULL),
	/* Optimizer: any optimizer's step and zero_grad, the hooks that
	 * wrap them, LR schedulers, gradient clipping. */
	R(PHASE_OPTIMIZER, false, "*.step", OPTIM),
	R(PHASE_OPTIMIZER, false, "*.zero_grad", OPTIM),
	R(PHASE_OPTIMIZER, false, "*wrapper", TORCH "optim/optimizer.py"),
	R(PHASE_OPTIMIZER, false, "clip_grad_norm_", TORCH "nn/utils/clip_grad.py"),
	R(PHASE_OPTIMIZER, false, "_clip_grads_with_norm_", TORCH "nn/utils/clip_grad.py"),
	R(PHASE_OPTIMIZER, false, "AcceleratedOptimizer.step", ACC "optimizer.py"),
	R(PHASE_OPTIMIZER, false, "AcceleratedOptimizer.zero_grad", ACC "optimizer.py"),
	R(PHASE_OPTIMIZER, false, "Accelerator.clip_grad_norm_", ACC "accelerator.py"),
	R(PHASE_OPTIMIZER, false, "_AutomaticOptimization._optimizer_step", PL "loops/optimization/automatic.py"),
	/* Lightning runs the whole training step (forward, backward) in the
	 * optimizer's closure: what the closure does is not the optimizer's. */
	{ .barrier = true, .func = "Closure.__call__", .file = PL "loops/optimization/automatic.py" },
	{ .barrier = true, .func = "Closure.__call__", .file = PL_OLD "loops/optimization/automatic.py" },
	/* Sync: waiting for the GPU (native frames, --native). */
	R(PHASE_SYNC, false, "synchronize", TORCH "cuda/__init__.py"),
	R(PHASE_SYNC, false, "*.synchronize", TORCH "cuda/streams.py"),
	R(PHASE_SYNC, false, "at::native::_local_scalar_dense*", NULL),
	R(PHASE_SYNC, false, "cudaDeviceSynchronize", NULL),
	R(PHASE_SYNC, false, "cudaStreamSynchronize", NULL),
	R(PHASE_SYNC, false, "cudaEventSynchronize", NULL),
	R(PHASE_SYNC, false, "cuCtxSynchronize", NULL),
	R(PHASE_SYNC, false, "cuStreamSynchronize", NULL),
	R(PHASE_SYNC, false, "cuEventSynchronize", NULL),
	/* Communication: torch.distributed's collectives and point-to-point
	 * calls (accelerate's and Lightning's reductions call them too),
	 * DDP's buffer syncs, FSDP's all-gathers and reduce-scatters, a
	 * torch Future's wait; with --native, c10d's and gloo's and NCCL's
	 * frames (the Reducer's wait for the gradients' allreduce at the end
	 * of backward), and NCCL's GPU kernels. */
	R(PHASE_COMM, false, "all_reduce*", C10D),
	R(PHASE_COMM, false, "all_gather*", C10D),
	R(PHASE_COMM, false, "_all_gather_base", C10D),
	R(PHASE_COMM, false, "reduce", C10D),
	R(PHASE_COMM, false, "reduce_scatter*", C10D),
	R(PHASE_COMM, false, "_reduce_scatter_base", C10D),
	R(PHASE_COMM, false, "broadcast*", C10D),
	R(PHASE_COMM, false, "*barrier", C10D),
	R(PHASE_COMM, false, "*send", C10D),
	R(PHASE_COMM, false, "*recv", C10D),
	R(PHASE_COMM, false, "*_object_list", C10D),
	R(PHASE_COMM, false, "batch_isend_irecv", C10D),
	R(PHASE_COMM, false, "all_to_all*", C10D),
	R(PHASE_COMM, false, "gather*", C10D),
	R(PHASE_COMM, false, "scatter*", C10D),
	R(PHASE_COMM, false, "*", TORCH "distributed/_functional_collectives.py"),
	R(PHASE_COMM, false, "DistributedDataParallel._*sync*buffers", TORCH "nn/parallel/distributed.py"),
	R(PHASE_COMM, false, "FlatParamHandle._all_gather_flat_param", FSDP "_flat_param.py"),
	R(PHASE_COMM, false, "_reduce_grad*", FSDP "_runtime_utils.py"),
	R(PHASE_COMM, false, "foreach_all_gather*", FSDP "_fully_shard/_fsdp_collectives.py"),
	R(PHASE_COMM, false, "foreach_reduce*", FSDP "_fully_shard/_fsdp_collectives.py"),
	R(PHASE_COMM, false, "Future.wait", TORCH "futures/__init__.py"),
	R(PHASE_COMM, false, "c10d::Reducer::finalize_backward*", NULL),
	R(PHASE_COMM, false, "c10d::*Work*::wait*", NULL),
	R(PHASE_COMM, false, "c10d::*Work*::synchronize*", NULL),
	R(PHASE_COMM, false, "c10d::ProcessGroup*", NULL),
	R(PHASE_COMM, false, "c10d::ops::*", NULL),
	R(PHASE_COMM, false, "gloo::*", NULL),
	R(PHASE_COMM, false, "nccl*", NULL),
	R(PHASE_COMM, false, "\\[kernel\\] nccl*", NULL),
	/* Checkpoints. */
	R(PHASE_CHECKPOINT, false, "save", TORCH "serialization.py"),
	R(PHASE_CHECKPOINT, false, "PreTrainedModel.save_pretrained", HF "modeling_utils.py"),
	R(PHASE_CHECKPOINT, false, "Trainer._save_checkpoint", HF "trainer.py"),
	R(PHASE_CHECKPOINT, false, "ModelCheckpoint.*", PL "callbacks/model_checkpoint.py"),
	/* Evaluation loops. */
	R(PHASE_EVAL, false, "Trainer.evaluate", HF "trainer.py"),
	R(PHASE_EVAL, false, "Trainer.evaluation_loop", HF "trainer.py"),
	R(PHASE_EVAL, false, "Trainer.predict", HF "trainer.py"),
	R(PHASE_EVAL, false, "_EvaluationLoop.run", PL "loops/evaluation_loop.py"),
	R(PHASE_EVAL, false, "_EvaluationLoop.run", PL_OLD "loops/evaluation_loop.py"),
	/* Logging: the logging module's handlers, trackers' clients. */
	R(PHASE_LOGGING, false, "Logger._log", "*/logging/__init__.py"),
	R(PHASE_LOGGING, false, "Logger.handle", "*/logging/__init__.py"),
	R(PHASE_LOGGING, false, "Trainer.log", HF "trainer.py"),
	R(PHASE_LOGGING, false, "Run.log", "*/wandb/sdk/wandb_run.py"),
	R(PHASE_LOGGING, false, "SummaryWriter.add_*", TORCH "utils/tensorboard/writer.py"),
	R(PHASE_LOGGING, false, "*.log", PL "core/module.py"),
	/* Forward: any module's call (the weakest: see phase_of_row). */
	R(PHASE_FORWARD, false, "Module._call_impl", TORCH "nn/modules/module.py"),
	R(PHASE_FORWARD, false, "Module._wrapped_call_impl", TORCH "nn/modules/module.py"),
};

int phase_rules_new(struct phase_rules **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void phase_rules_free(struct phase_rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nuser; i++) {
		free((char *)r->user[i].func);
		free((char *)r->user[i].file);
	}
	free(r->user);
	free(r);
}

static char *next_word(char **at)
{
	char *s = *at, *w;

	while (*s && isspace((unsigned char)*s))
		s++;
	if (!*s || *s == '#')
		return NULL;
	w = s;
	while (*s && !isspace((unsigned char)*s))
		s++;
	if (*s)
		*s++ = '\0';
	*at = s;
	return w;
}

static int add_line(struct phase_rules *r, char *line, const char *path, int lineno,
		    char *err, size_t errlen)
{
	char *at = line, *ph = next_word(&at), *func, *file, *extra;
	struct phase_rule rule = { 0 };
	enum phase phase;

	if (!ph)
		return 0;
	func = next_word(&at);
	file = func ? next_word(&at) : NULL;
	extra = file ? next_word(&at) : NULL;
	if (phase_by_name(ph, &phase) < 0)
		return errbuf_set(err, errlen, -EINVAL, "%s:%d: '%s' is not a phase (%s)", path,
				  lineno, ph, "data, forward, backward, optimizer, sync, checkpoint, "
				  "eval, logging, comm, other");
	if (!func || extra || (!strncmp(func, "thread:", 7) && (file || !func[7])))
		return errbuf_set(err, errlen, -EINVAL,
				  "%s:%d: a rule is PHASE FUNCTION [FILE] or PHASE thread:NAME", path,
				  lineno);
	rule.phase = phase;
	rule.thread = !strncmp(func, "thread:", 7);
	rule.func = strdup(rule.thread ? func + 7 : func);
	rule.file = file ? strdup(file) : NULL;
	if (!rule.func || (file && !rule.file) ||
	    ARRAY_RESERVE(r->user, r->cap_user, r->nuser + 1, 16) < 0) {
		free((char *)rule.func);
		free((char *)rule.file);
		return errbuf_set(err, errlen, -ENOMEM, "out of memory");
	}
	r->user[r->nuser++] = rule;
	return 0;
}

int phase_rules_load(struct phase_rules *r, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char line[1024];
	int lineno = 0, ret = 0;

	if (!f)
		return errbuf_set(err, errlen, -errno, "%s: %s", path, strerror(errno));
	while (!ret && fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		ret = add_line(r, line, path, lineno, err, errlen);
	}
	fclose(f);
	return ret;
}

/*
 * Python before 3.11 names a method without its class ("__next__"): a
 * rule for "Class.method" in a file then matches the method's name alone
 * in that file (the file keeps it specific).
 */
static bool rule_matches(const struct phase_rule *rule, const char *func, const char *file)
{
	const char *method = strrchr(rule->func, '.');

	if (rule->thread)
		return false;
	/* A file run as it is imported does its module's setup, not the
	 * work a pattern for the file's functions means. */
	if (!strcmp(func, "<module>") && strcmp(rule->func, "<module>"))
		return false;
	if (fnmatch(rule->func, func, 0) &&
	    (!method || !rule->file || strchr(func, '.') || fnmatch(method + 1, func, 0)))
		return false;
	return !rule->file || (file && !fnmatch(rule->file, file, 0));
}

int phase_rules_frame(const struct phase_rules *r, const char *func, const char *file)
{
	for (size_t i = 0; i < r->nuser; i++)
		if (rule_matches(&r->user[i], func, file))
			return (int)r->user[i].phase;
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (rule_matches(&builtin[i], func, file))
			return builtin[i].barrier ? PHASE_BARRIER : (int)builtin[i].phase;
	return -1;
}

int phase_rules_thread(const struct phase_rules *r, const char *name)
{
	if (!name || !*name)
		return -1;
	for (size_t i = 0; i < r->nuser; i++)
		if (r->user[i].thread && !fnmatch(r->user[i].func, name, 0))
			return (int)r->user[i].phase;
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (builtin[i].thread && !fnmatch(builtin[i].func, name, 0))
			return (int)builtin[i].phase;
	return -1;
}

const struct phase_rule *phase_rules_builtin(size_t i)
{
	return i < sizeof(builtin) / sizeof(builtin[0]) ? &builtin[i] : NULL;
}
