// SPDX-License-Identifier: MIT
/* Training phases (analysis/): each built-in rule, the precedence between
 * nested matches, thread rules, and rules from a file. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "analysis/phase_impl.h"
#include "model_helpers.h"

#define SP "/usr/lib/python3/dist-packages/"

struct case_frame {
	const char *func, *file;
};

/* The phase of a stack of Python frames, outermost first, in thread tid. */
static enum phase classify(const struct phase_rules *r, const struct case_frame *f, int n,
			   const char *thread)
{
	struct profile *p = profile_new();
	struct phase_map *m;
	uint32_t ids[16];
	struct profile_aggregate row = { .pid = 100, .tid = 101, .weight_ns = 1, .count = 1 };
	enum phase ph;

	cr_assert(p);
	for (int i = 0; i < n; i++)
		ids[i] = frame(p, FRAME_PYTHON, f[i].func, f[i].file ? f[i].file : "", 1);
	row.stack = stack(p, ids, n);
	if (thread)
		cr_assert_eq(profile_set_thread(p, 100, 101, thread), 0);
	cr_assert_eq(phase_map_new(r, p, &m), 0);
	ph = phase_of_row(m, &row);
	/* Asked again: the cached answer is the same. */
	cr_assert_eq(phase_of_row(m, &row), ph);
	phase_map_free(m);
	profile_free(p);
	return ph;
}

static struct phase_rules *builtin(void)
{
	struct phase_rules *r;

	cr_assert_eq(phase_rules_new(&r), 0);
	return r;
}

#define LOOP { "train", "/home/u/train.py" }

static const struct {
	struct case_frame leaf;
	enum phase want;
} leaves[] = {
	{ { "_BaseDataLoaderIter.__next__", SP "torch/utils/data/dataloader.py" }, PHASE_DATA },
	{ { "DataLoader.__iter__", SP "torch/utils/data/dataloader.py" }, PHASE_DATA },
	{ { "_worker_loop", SP "torch/utils/data/_utils/worker.py" }, PHASE_DATA },
	{ { "default_collate", SP "torch/utils/data/_utils/collate.py" }, PHASE_DATA },
	{ { "Trainer.get_batch_samples", SP "transformers/trainer.py" }, PHASE_DATA },
	{ { "_PrefetchDataFetcher.__next__", SP "lightning/pytorch/loops/fetchers.py" }, PHASE_DATA },
	{ { "Module._call_impl", SP "torch/nn/modules/module.py" }, PHASE_FORWARD },
	{ { "Module._wrapped_call_impl", SP "torch/nn/modules/module.py" }, PHASE_FORWARD },
	{ { "Tensor.backward", SP "torch/_tensor.py" }, PHASE_BACKWARD },
	{ { "backward", SP "torch/autograd/__init__.py" }, PHASE_BACKWARD },
	{ { "_engine_run_backward", SP "torch/autograd/graph.py" }, PHASE_BACKWARD },
	{ { "Accelerator.backward", SP "accelerate/accelerator.py" }, PHASE_BACKWARD },
	{ { "SGD.step", SP "torch/optim/sgd.py" }, PHASE_OPTIMIZER },
	{ { "AdamW.step", SP "torch/optim/adamw.py" }, PHASE_OPTIMIZER },
	{ { "Optimizer.zero_grad", SP "torch/optim/optimizer.py" }, PHASE_OPTIMIZER },
	{ { "LRScheduler.step", SP "torch/optim/lr_scheduler.py" }, PHASE_OPTIMIZER },
	{ { "clip_grad_norm_", SP "torch/nn/utils/clip_grad.py" }, PHASE_OPTIMIZER },
	{ { "AcceleratedOptimizer.step", SP "accelerate/optimizer.py" }, PHASE_OPTIMIZER },
	{ { "synchronize", SP "torch/cuda/__init__.py" }, PHASE_SYNC },
	{ { "Event.synchronize", SP "torch/cuda/streams.py" }, PHASE_SYNC },
	{ { "save", SP "torch/serialization.py" }, PHASE_CHECKPOINT },
	{ { "PreTrainedModel.save_pretrained", SP "transformers/modeling_utils.py" }, PHASE_CHECKPOINT },
	{ { "Trainer.evaluate", SP "transformers/trainer.py" }, PHASE_EVAL },
	{ { "_EvaluationLoop.run", SP "lightning/pytorch/loops/evaluation_loop.py" }, PHASE_EVAL },
	{ { "Logger._log", "/usr/lib/python3.14/logging/__init__.py" }, PHASE_LOGGING },
	{ { "Run.log", SP "wandb/sdk/wandb_run.py" }, PHASE_LOGGING },
	{ { "SummaryWriter.add_scalar", SP "torch/utils/tensorboard/writer.py" }, PHASE_LOGGING },
	{ { "all_reduce", SP "torch/distributed/distributed_c10d.py" }, PHASE_COMM },
	{ { "all_gather_into_tensor", SP "torch/distributed/distributed_c10d.py" }, PHASE_COMM },
	{ { "reduce_scatter_tensor", SP "torch/distributed/distributed_c10d.py" }, PHASE_COMM },
	{ { "barrier", SP "torch/distributed/distributed_c10d.py" }, PHASE_COMM },
	{ { "irecv", SP "torch/distributed/distributed_c10d.py" }, PHASE_COMM },
	{ { "broadcast_object_list", SP "torch/distributed/distributed_c10d.py" }, PHASE_COMM },
	{ { "DistributedDataParallel._sync_buffers", SP "torch/nn/parallel/distributed.py" }, PHASE_COMM },
	{ { "FlatParamHandle._all_gather_flat_param", SP "torch/distributed/fsdp/_flat_param.py" }, PHASE_COMM },
	{ { "foreach_reduce", SP "torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py" }, PHASE_COMM },
	{ { "Future.wait", SP "torch/futures/__init__.py" }, PHASE_COMM },
	/* Not every function of torch.distributed communicates. */
	{ { "get_rank", SP "torch/distributed/distributed_c10d.py" }, PHASE_OTHER },
	{ { "init_process_group", SP "torch/distributed/distributed_c10d.py" }, PHASE_OTHER },
	{ { "DistributedDataParallel.forward", SP "torch/nn/parallel/distributed.py" }, PHASE_OTHER },
	/* A file's import is not its functions' work: torch.optim's first
	 * step imports torch._dynamo, which imports _functional_collectives
	 * (1% "comm" in a one-process script before). */
	{ { "all_reduce", SP "torch/distributed/_functional_collectives.py" }, PHASE_COMM },
	{ { "<module>", SP "torch/distributed/_functional_collectives.py" }, PHASE_OTHER },
	/* Python 3.8-3.10 name a method without its class: the method's
	 * name in the rule's file is enough; a qualified name must match
	 * whole; another file is no match. */
	{ { "__next__", SP "torch/utils/data/dataloader.py" }, PHASE_DATA },
	{ { "__iter__", SP "torch/utils/data/dataloader.py" }, PHASE_DATA },
	{ { "step", SP "torch/optim/sgd.py" }, PHASE_OPTIMIZER },
	{ { "backward", SP "torch/_tensor.py" }, PHASE_BACKWARD },
	{ { "_call_impl", SP "torch/nn/modules/module.py" }, PHASE_FORWARD },
	{ { "Sampler.__next__", SP "torch/utils/data/dataloader.py" }, PHASE_OTHER },
	{ { "__next__", "/home/u/myloader.py" }, PHASE_OTHER },
	/* A name alone is not enough: the library's file is asked too. */
	{ { "Tensor.backward", "/home/u/mytensor.py" }, PHASE_OTHER },
	{ { "SGD.step", "/home/u/sgd.py" }, PHASE_OTHER },
	{ { "train", "/home/u/train.py" }, PHASE_OTHER },
};

Test(phases, each_builtin_rule)
{
	struct phase_rules *r = builtin();

	for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
		struct case_frame f[3] = { { "<module>", "/home/u/train.py" }, LOOP, leaves[i].leaf };
		enum phase got = classify(r, f, 3, NULL);

		cr_expect_eq(got, leaves[i].want, "%s (%s): %s, not %s", leaves[i].leaf.func,
			     leaves[i].leaf.file, phase_name(got), phase_name(leaves[i].want));
	}
	phase_rules_free(r);
}

/* A name a shell pattern matches: a leading "*" + "/" is a folder of
 * packages, any other '*' or '?' an 'x', '\\' the next character. */
static void instance(const char *pattern, char *buf, size_t len)
{
	size_t n = 0;

	if (!strncmp(pattern, "*/", 2)) {
		n = (size_t)snprintf(buf, len, "%s", "/usr/lib/python3/dist-packages");
		pattern++;
	}
	for (; *pattern && n + 1 < len; pattern++) {
		if (*pattern == '\\' && pattern[1])
			pattern++; /* an escaped character is itself */
		else if (*pattern == '*' || *pattern == '?') {
			buf[n++] = 'x';
			continue;
		}
		buf[n++] = *pattern;
	}
	buf[n] = 0;
}

/* Every built-in rule, by a frame (or thread) made from its patterns. */
Test(phases, every_builtin_rule_by_its_patterns)
{
	struct phase_rules *r = builtin();
	const struct phase_rule *rule;
	size_t i;

	for (i = 0; (rule = phase_rules_builtin(i)); i++) {
		char func[256], file[256];
		struct case_frame f[3] = { { "<module>", "/home/u/train.py" }, LOOP, { func, file } };
		enum phase got;

		instance(rule->func, func, sizeof(func));
		instance(rule->file ? rule->file : "", file, sizeof(file));
		if (rule->thread)
			got = classify(r, f, 2, func);
		else
			got = classify(r, f, 3, NULL);
		cr_expect_eq(got, rule->phase, "rule %zu (%s%s %s): %s, not %s", i,
			     rule->thread ? "thread:" : "", rule->func, rule->file ? rule->file : "",
			     phase_name(got), phase_name(rule->phase));
	}
	cr_expect_gt(i, 50);
	phase_rules_free(r);
}

Test(phases, innermost_first_and_what_contains_what)
{
	struct phase_rules *r = builtin();
	struct case_frame fwd = { "Module._call_impl", SP "torch/nn/modules/module.py" };
	struct case_frame bwd = { "Tensor.backward", SP "torch/_tensor.py" };
	struct case_frame opt = { "SGD.step", SP "torch/optim/sgd.py" };
	struct case_frame eval = { "Trainer.evaluate", SP "transformers/trainer.py" };
	struct case_frame data = { "_BaseDataLoaderIter.__next__", SP "torch/utils/data/dataloader.py" };
	struct case_frame log = { "Logger._log", "/usr/lib/python3.14/logging/__init__.py" };
	struct case_frame sync = { "synchronize", SP "torch/cuda/__init__.py" };

	/* A module called under backward (recomputation), in an optimizer's
	 * closure, or in an evaluation is theirs. */
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, bwd, fwd }, 3, NULL), PHASE_BACKWARD);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, opt, fwd }, 3, NULL), PHASE_OPTIMIZER);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, eval, fwd }, 3, NULL), PHASE_EVAL);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, eval, data }, 3, NULL), PHASE_EVAL);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, eval, sync }, 3, NULL), PHASE_EVAL);
	/* Otherwise the innermost match: a log call inside forward is
	 * logging, a sync inside forward is sync, data fetched by a module
	 * is data. */
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, fwd, log }, 3, NULL), PHASE_LOGGING);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, fwd, sync }, 3, NULL), PHASE_SYNC);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, fwd, data }, 3, NULL), PHASE_DATA);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, bwd, log }, 3, NULL), PHASE_LOGGING);
	/* Communication inside forward (DDP's buffers), backward (FSDP's
	 * reduce-scatter in its post-backward hook) or the optimizer is
	 * comm; inside an evaluation, the evaluation's. */
	struct case_frame sync_buffers = { "DistributedDataParallel._sync_buffers",
					   SP "torch/nn/parallel/distributed.py" };
	struct case_frame reduce_grad = { "_reduce_grad", SP "torch/distributed/fsdp/_runtime_utils.py" };
	struct case_frame all_reduce = { "all_reduce", SP "torch/distributed/distributed_c10d.py" };

	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, fwd, sync_buffers }, 3, NULL), PHASE_COMM);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, bwd, reduce_grad }, 3, NULL), PHASE_COMM);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, opt, all_reduce }, 3, NULL), PHASE_COMM);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, eval, all_reduce }, 3, NULL), PHASE_EVAL);
	phase_rules_free(r);
}

/* Lightning runs the training step in the optimizer's closure: forward and
 * backward there are theirs, the closure's own work neither; a closure of
 * the user's (LBFGS) stays the optimizer's. */
Test(phases, a_closure_barrier)
{
	struct phase_rules *r = builtin();
	struct case_frame run = { "_AutomaticOptimization._optimizer_step",
				  SP "lightning/pytorch/loops/optimization/automatic.py" };
	struct case_frame sgd = { "SGD.step", SP "torch/optim/sgd.py" };
	struct case_frame closure = { "Closure.__call__",
				      SP "lightning/pytorch/loops/optimization/automatic.py" };
	struct case_frame step = { "Lit.training_step", "/home/u/lit.py" };
	struct case_frame fwd = { "Module._call_impl", SP "torch/nn/modules/module.py" };
	struct case_frame bwd = { "Tensor.backward", SP "torch/_tensor.py" };
	struct case_frame mine = { "closure", "/home/u/train.py" };

	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, run, sgd, closure, step, fwd }, 6, NULL),
		     PHASE_FORWARD);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, run, sgd, closure, bwd }, 5, NULL),
		     PHASE_BACKWARD);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, run, sgd, closure, step }, 5, NULL),
		     PHASE_OTHER);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, run, sgd }, 3, NULL), PHASE_OPTIMIZER);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, sgd, mine, fwd }, 4, NULL),
		     PHASE_OPTIMIZER);
	phase_rules_free(r);
}

Test(phases, threads_by_name)
{
	struct phase_rules *r = builtin();
	struct case_frame f[] = { { "start_thread", NULL } };

	cr_expect_eq(classify(r, f, 1, "pt_autograd_0"), PHASE_BACKWARD);
	cr_expect_eq(classify(r, f, 1, "loader"), PHASE_OTHER);
	phase_rules_free(r);
}

static char *rules_file(const char *text)
{
	char *path = strdup("/tmp/trainsample-phases.XXXXXX");
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

Test(phases, rules_from_a_file_come_first)
{
	struct phase_rules *r = builtin();
	char *path = rules_file("# my loop\n"
				"data  load_batch\n"
				"forward  Net.run  */mynet.py   # the model\n"
				"logging  Tensor.backward  */torch/_tensor.py\n"
				"backward thread:grad-*\n");
	char err[256] = "";

	cr_assert_eq(phase_rules_load(r, path, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, { "load_batch", "/x/a.py" } }, 2, NULL),
		     PHASE_DATA);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, { "Net.run", "/x/mynet.py" } }, 2, NULL),
		     PHASE_FORWARD);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, { "Net.run", "/x/other.py" } }, 2, NULL),
		     PHASE_OTHER);
	/* Overrides the built-in rule for the same frame. */
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP, { "Tensor.backward", SP "torch/_tensor.py" } },
			      2, NULL), PHASE_LOGGING);
	cr_expect_eq(classify(r, (struct case_frame[]){ LOOP }, 1, "grad-3"), PHASE_BACKWARD);
	unlink(path);
	free(path);
	phase_rules_free(r);
}

Test(phases, a_wrong_rule_names_its_line)
{
	static const char *const bad[] = {
		"data load_batch\nlunch eat\n",          /* no such phase */
		"data\n",                                /* no function */
		"data f file extra\n",                   /* too many words */
		"data thread:\n",                        /* no thread name */
		"data thread:x file\n",                  /* a thread has no file */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct phase_rules *r = builtin();
		char *path = rules_file(bad[i]);
		char err[256] = "";

		cr_expect_lt(phase_rules_load(r, path, err, sizeof(err)), 0, "%s", bad[i]);
		cr_expect(strstr(err, path) && strstr(err, i ? ":1:" : ":2:"), "%s", err);
		unlink(path);
		free(path);
		phase_rules_free(r);
	}
}

Test(phases, names)
{
	enum phase ph;

	for (int i = 0; i < PHASE_KINDS; i++) {
		cr_assert_eq(phase_by_name(phase_names()[i], &ph), 0);
		cr_expect_eq(ph, (enum phase)i);
	}
	cr_expect_lt(phase_by_name("lunch", &ph), 0);
}

/* A row of process 100's thread tid: Python frames (outermost first),
 * then native ones, then an idle leaf when blocked. */
struct comm_case {
	struct profile *p;
	struct phase_map *m;
	uint32_t py[8];
	int n;
};

static uint32_t comm_row(struct comm_case *c, uint32_t tid, const char *native, bool blocked,
			 struct profile_aggregate *row)
{
	uint32_t ids[10];
	int n = c->n;

	memcpy(ids, c->py, (size_t)n * sizeof(ids[0]));
	if (native)
		ids[n++] = frame(c->p, FRAME_NATIVE, native, "libtorch_cpu.so", 0);
	if (blocked)
		ids[n++] = frame(c->p, FRAME_IDLE, "[idle: futex]", "", 0);
	*row = (struct profile_aggregate){ .pid = 100, .tid = tid, .stack = stack(c->p, ids, n),
					   .flags = blocked ? SAMPLE_IDLE : 0, .weight_ns = 1,
					   .count = 1 };
	samples(c->p, tid, row->stack, 1, 1, row->flags);
	return row->stack;
}

/* DDP waits for its gradients' allreduce at the end of backward in C++:
 * with Python frames alone, a blocked sample under backward in a process
 * that uses torch.distributed is comm; running, or in a process that does
 * not, or on a GPU (its autograd device thread), or with native frames
 * that show no c10d, it stays backward. */
Test(phases, ddp_wait_under_backward)
{
	struct phase_rules *r = builtin();
	const char *thread[] = { NULL, "pt_autograd_0" };
	bool ddp[] = { true, false };

	for (int gpu = 0; gpu < 2; gpu++)
		for (int d = 0; d < 2; d++) {
			struct comm_case c = { .p = profile_new() };
			struct profile_aggregate wait, run, other, c10d;
			uint32_t ddp_stack[2];
			bool want = ddp[d] && !gpu;

			c.py[c.n++] = frame(c.p, FRAME_PYTHON, "train", "/home/u/train.py", 3);
			c.py[c.n++] = frame(c.p, FRAME_PYTHON, "Tensor.backward", SP "torch/_tensor.py", 1);
			comm_row(&c, 101, NULL, true, &wait);
			comm_row(&c, 101, NULL, false, &run);
			comm_row(&c, 101, "at::native::cpu_kernel", true, &other);
			if (ddp[d]) /* c10d's frames are a process group's */
				comm_row(&c, 101, "c10d::Reducer::finalize_backward()", true, &c10d);
			ddp_stack[0] = c.py[0];
			ddp_stack[1] = frame(c.p, FRAME_PYTHON, ddp[d] ? "DistributedDataParallel.forward" :
					     "Module._call_impl", ddp[d] ? SP "torch/nn/parallel/distributed.py" :
					     SP "torch/nn/modules/module.py", 1);
			samples(c.p, 101, stack(c.p, ddp_stack, 2), 1, 1, 0);
			if (thread[gpu]) {
				cr_assert_eq(profile_set_thread(c.p, 100, 102, thread[gpu]), 0);
				samples(c.p, 102, stack(c.p, ddp_stack, 1), 1, 1, 0);
			}
			cr_assert_eq(phase_map_new(r, c.p, &c.m), 0);
			cr_expect_eq(phase_of_row(c.m, &wait), want ? PHASE_COMM : PHASE_BACKWARD,
				     "ddp %d gpu %d", ddp[d], gpu);
			cr_expect_eq(phase_of_row(c.m, &run), PHASE_BACKWARD);
			cr_expect_eq(phase_of_row(c.m, &other), PHASE_BACKWARD);
			if (ddp[d])
				cr_expect_eq(phase_of_row(c.m, &c10d), PHASE_COMM);
			phase_map_free(c.m);
			profile_free(c.p);
		}
	phase_rules_free(r);
}

/* An async handle's wait is a C++ method: blocked under a line that calls
 * `.wait(` in a process that uses torch.distributed is comm. NCCL's
 * kernels are the GPU's comm. */
Test(phases, handle_waits_and_nccl_kernels)
{
	struct phase_rules *r = builtin();
	char *src = rules_file("work = dist.all_reduce(t, async_op=True)\nwork.wait()\nx.sum()\n");
	struct comm_case c = { .p = profile_new() };
	struct profile_aggregate wait, plain, kernel;
	uint32_t k[3];

	c.py[c.n++] = frame(c.p, FRAME_PYTHON, "train", src, 2);
	comm_row(&c, 101, NULL, true, &wait);
	c.py[0] = frame(c.p, FRAME_PYTHON, "train", src, 3);
	comm_row(&c, 101, NULL, true, &plain);
	c.py[0] = frame(c.p, FRAME_PYTHON, "train", src, 1);
	c.py[c.n++] = frame(c.p, FRAME_PYTHON, "all_reduce",
			    SP "torch/distributed/distributed_c10d.py", 1);
	comm_row(&c, 101, NULL, false, &plain);
	k[0] = c.py[0];
	k[1] = frame(c.p, FRAME_PYTHON, "Tensor.backward", SP "torch/_tensor.py", 1);
	k[2] = frame(c.p, FRAME_GPU, "[kernel] ncclDevKernel_AllReduce_Sum_f32_RING_LL("
		     "ncclDevKernelArgsStorage<4096ul>)", "", 0);
	kernel = (struct profile_aggregate){ .pid = 100, .tid = 101, .stack = stack(c.p, k, 3),
					     .flags = SAMPLE_GPU, .weight_ns = 1, .count = 1 };
	cr_assert_eq(phase_map_new(r, c.p, &c.m), 0);
	cr_expect_eq(phase_of_row(c.m, &wait), PHASE_COMM);
	cr_expect_eq(phase_of_row(c.m, &plain), PHASE_COMM); /* all_reduce's own frame */
	plain.stack = profile_stack(c.p, plain.stack)->parent;
	plain.flags = SAMPLE_IDLE;
	cr_expect_eq(phase_of_row(c.m, &plain), PHASE_OTHER); /* line 1 calls no wait */
	cr_expect_eq(phase_of_row(c.m, &kernel), PHASE_COMM);
	phase_map_free(c.m);
	profile_free(c.p);
	unlink(src);
	free(src);
	phase_rules_free(r);
}
