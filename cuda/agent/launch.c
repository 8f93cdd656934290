// SPDX-License-Identifier: MIT
/*
 * Who launched what: callbacks on the launch, copy and memset APIs of the
 * runtime and driver domains. A runtime call runs driver calls inside it,
 * each with its own correlation id, and the GPU's record carries one of
 * them; so at the outermost call on a thread the agent notes the time, the
 * OS tid and the thread's Python stack, collects every id the call and its
 * nested calls produce, and writes one launch record when it returns.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cuda/agent/agent.h"

_Thread_local struct agent_thread agent_thread;

static bool wanted(const char *name)
{
	/* Host functions run on the CPU: nothing on the GPU to pair with. */
	if (strstr(name, "HostFunc"))
		return false;
	static const char *const prefixes[] = {
		"cudaLaunch", "__cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset",
		"cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static bool is_graph_launch(const char *name)
{
	return name && (strstr(name, "GraphLaunch") != NULL);
}

/* A thread without Python frames (autograd's device threads) by its name. */
static uint32_t thread_name(uint32_t tid)
{
	char path[64], comm[32] = "";
	FILE *f;
	uint32_t id, slot = tid % 64;

	if (agent.thread_names[slot][0] == tid)
		return agent.thread_names[slot][1];
	snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
	}
	comm[strcspn(comm, "\n")] = 0;
	id = agent_string(comm[0] ? comm : "thread");
	agent.thread_names[slot][0] = tid;
	agent.thread_names[slot][1] = id;
	return id;
}

static void begin(struct agent_thread *t, const CUpti_CallbackData *cb)
{
	memset(&t->launch, 0, sizeof(t->launch));
	t->launch.start_ns = monotonic_ns();
	if (!t->tid || t->tid_forks != agent.forks) {
		t->tid = (uint32_t)syscall(SYS_gettid);
		t->tid_forks = agent.forks;
	}
	t->launch.tid = t->tid;
	t->launch.ids[0] = cb->correlationId;
	t->launch.nids = 1;
	t->launch.graph = is_graph_launch(cb->functionName);
	pthread_mutex_lock(&agent.lock);
	t->launch.stack = agent_python_stack();
	if (!t->launch.stack)
		t->launch.thread_name = thread_name(t->launch.tid);
	if (t->api_name != cb->functionName || t->api_definitions != agent.definitions || !t->api_id) {
		t->api_name = cb->functionName;
		t->api_id = agent_string(cb->functionName ? cb->functionName : "?");
		t->api_definitions = agent.definitions;
	}
	t->launch.api = t->api_id;
	pthread_mutex_unlock(&agent.lock);
	agent_exit_hook();
}

static void CUPTIAPI on_api(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			    const void *data)
{
	const CUpti_CallbackData *cb = data;
	struct agent_thread *t = &agent_thread;
	struct gpu_record r = { .type = GPU_REC_LAUNCH };

	(void)userdata, (void)domain, (void)cbid;
	/* A call that began before a stop and start belongs to neither. */
	if (t->generation != agent.generation) {
		t->generation = agent.generation;
		t->depth = 0;
		t->launch.nids = 0;
		if (cb->callbackSite != CUPTI_API_ENTER)
			return;
	}
	if (cb->callbackSite == CUPTI_API_ENTER) {
		if (t->depth++ == 0) {
			if (agent.collecting)
				begin(t, cb);
			else
				t->launch.nids = 0;
		} else if (t->launch.nids && t->launch.nids < GPU_LAUNCH_IDS) {
			t->launch.ids[t->launch.nids++] = cb->correlationId;
			t->launch.graph |= is_graph_launch(cb->functionName);
		}
		return;
	}
	if (t->depth <= 0 || --t->depth > 0 || !t->launch.nids)
		return;
	t->launch.end_ns = monotonic_ns();
	r.u.launch = t->launch;
	pthread_mutex_lock(&agent.lock);
	agent_stage(&r);
	pthread_mutex_unlock(&agent.lock);
}

static int subscribe(char *why, size_t len)
{
	char holder[128] = "";
	CUptiResult res;

	if (agent.cupti.subscribe_v2) {
		CUpti_SubscriberParams params = {
			.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
			.subscriberName = "trainsample",
			.oldSubscriberName = holder,
			.oldSubscriberSize = sizeof(holder),
		};

		res = agent.cupti.subscribe_v2(&agent.subscriber, on_api, NULL, &params);
	} else {
		res = agent.cupti.subscribe(&agent.subscriber, on_api, NULL);
	}
	if (res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		holder[sizeof(holder) - 1] = 0;
		snprintf(why, len, "CUPTI is already in use by %s (one subscriber per process); "
			 "no GPU data for this process", holder[0] ? holder : "another tool "
			 "(torch.profiler, Nsight or cuda-gdb?)");
		return -EBUSY;
	}
	if (res != CUPTI_SUCCESS) {
		const char *s = NULL;

		agent.cupti.get_result_string(res, &s);
		snprintf(why, len, "cuptiSubscribe failed: %s (%d)", s ? s : "unknown error", (int)res);
		return -EIO;
	}
	return 0;
}

/* Without cuptiGetCallbackName (older CUPTIs): the launch APIs by id. */
static const uint32_t runtime_launches[] = { 31, 41, 49, 51, 211, 214, 311, 312, 430, 431, 505, 506 };
static const uint32_t driver_launches[] = { 276, 306, 307, 442, 477, 478, 480, 514, 515, 652, 653 };

static void enable_domain(CUpti_CallbackDomain domain, uint32_t size, const uint32_t *known,
			  size_t nknown)
{
	const char *name;

	if (!agent.cupti.get_callback_name) {
		for (size_t i = 0; i < nknown; i++)
			agent.cupti.enable_callback(1, agent.subscriber, domain, known[i]);
		return;
	}
	for (uint32_t cbid = 1; cbid < size; cbid++)
		if (agent.cupti.get_callback_name(domain, cbid, &name) == CUPTI_SUCCESS && name &&
		    wanted(name))
			agent.cupti.enable_callback(1, agent.subscriber, domain, cbid);
}

int agent_launch_start(char *why, size_t len)
{
	int ret = subscribe(why, len);

	if (ret < 0)
		return ret;
	enable_domain(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, runtime_launches,
		      sizeof(runtime_launches) / sizeof(runtime_launches[0]));
	enable_domain(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, driver_launches,
		      sizeof(driver_launches) / sizeof(driver_launches[0]));
	return 0;
}

void agent_launch_stop(void)
{
	if (agent.subscriber)
		agent.cupti.unsubscribe(agent.subscriber);
	agent.subscriber = NULL;
}
