// SPDX-License-Identifier: MIT
/*
 * NVML, where the driver has it (libnvidia-ml.so.1, loaded at run time;
 * there is no header on the build machines, so the few calls used are
 * declared here from NVML's documented API): each GPU's utilization,
 * memory in use and power, ten times a second, as counters in the profile,
 * and its energy over the run for the summary. No NVML is a quiet no-op.
 * Devices are named as CUDA numbers them, matched by UUID with what the
 * agent saw, else by NVML's index.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"
#include "cuda/gpu.h"

#define NVML_SUCCESS 0
#define MAX_DEVICES 16
#define PERIOD_NS 100000000ull

typedef int nvml_return;
typedef struct nvml_device *nvml_device;
struct nvml_utilization {
	unsigned int gpu, memory;
};
struct nvml_memory {
	unsigned long long total, free, used;
};
/* The first form's `used` counts memory the driver reserves (480 MiB on an
 * H100 with driver 580): nvidia-smi reports the second form's. */
struct nvml_memory_v2 {
	unsigned int version;
	unsigned long long total, reserved, free, used;
};
#define NVML_MEMORY_V2 ((unsigned int)sizeof(struct nvml_memory_v2) | (2u << 24))

struct nvml_api {
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	nvml_return (*count)(unsigned int *n);
	nvml_return (*handle)(unsigned int index, nvml_device *d);
	nvml_return (*uuid)(nvml_device d, char *uuid, unsigned int len);
	nvml_return (*utilization)(nvml_device d, struct nvml_utilization *u);
	nvml_return (*memory)(nvml_device d, struct nvml_memory *m);
	nvml_return (*memory_v2)(nvml_device d, struct nvml_memory_v2 *m);
	nvml_return (*power)(nvml_device d, unsigned int *milliwatts);
	nvml_return (*energy)(nvml_device d, unsigned long long *millijoules);
};

struct nvml_gpu {
	nvml_device handle;
	char uuid[96];
	uint64_t samples, utilization_sum;
	unsigned long long memory_peak, energy_first, energy_last;
	bool have_energy;
};

struct nvml_sampler {
	void *lib;
	struct nvml_api api;
	struct profile *profile;
	struct nvml_gpu gpus[MAX_DEVICES];
	unsigned int ngpus;
	uint64_t last_ns;
};

static bool look_up(struct nvml_sampler *n)
{
	void *h = n->lib;

	*(void **)&n->api.init = dlsym(h, "nvmlInit_v2");
	*(void **)&n->api.shutdown = dlsym(h, "nvmlShutdown");
	*(void **)&n->api.count = dlsym(h, "nvmlDeviceGetCount_v2");
	*(void **)&n->api.handle = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&n->api.uuid = dlsym(h, "nvmlDeviceGetUUID");
	*(void **)&n->api.utilization = dlsym(h, "nvmlDeviceGetUtilizationRates");
	*(void **)&n->api.memory = dlsym(h, "nvmlDeviceGetMemoryInfo");
	*(void **)&n->api.memory_v2 = dlsym(h, "nvmlDeviceGetMemoryInfo_v2");
	*(void **)&n->api.power = dlsym(h, "nvmlDeviceGetPowerUsage");
	*(void **)&n->api.energy = dlsym(h, "nvmlDeviceGetTotalEnergyConsumption");
	return n->api.init && n->api.shutdown && n->api.count && n->api.handle && n->api.uuid &&
	       n->api.utilization && n->api.memory;
}

/* Memory in use as nvidia-smi counts it, where the driver has the form. */
static nvml_return memory_used(struct nvml_sampler *n, nvml_device d, unsigned long long *used)
{
	struct nvml_memory_v2 m2 = { .version = NVML_MEMORY_V2 };
	struct nvml_memory m;
	nvml_return ret;

	if (n->api.memory_v2 && n->api.memory_v2(d, &m2) == NVML_SUCCESS) {
		*used = m2.used;
		return NVML_SUCCESS;
	}
	ret = n->api.memory(d, &m);
	*used = m.used;
	return ret;
}

int nvml_open(struct nvml_sampler **out, struct profile *p)
{
	const char *path = getenv("TRAINSAMPLE_NVML");
	struct nvml_sampler *n = calloc(1, sizeof(*n));
	unsigned int count = 0;

	*out = NULL;
	if (!n)
		return -ENOMEM;
	n->profile = p;
	n->lib = dlopen(path && path[0] ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib || !look_up(n) || n->api.init() != NVML_SUCCESS) {
		if (n->lib)
			dlclose(n->lib);
		free(n);
		return -ENOENT;
	}
	if (n->api.count(&count) != NVML_SUCCESS)
		count = 0;
	for (unsigned int i = 0; i < count && n->ngpus < MAX_DEVICES; i++) {
		struct nvml_gpu *g = &n->gpus[n->ngpus];

		if (n->api.handle(i, &g->handle) != NVML_SUCCESS)
			continue;
		if (n->api.uuid(g->handle, g->uuid, sizeof(g->uuid)) != NVML_SUCCESS)
			g->uuid[0] = 0;
		n->ngpus++;
	}
	if (!n->ngpus) {
		nvml_close(n);
		return -ENOENT;
	}
	*out = n;
	return 0;
}

/* CUDA's number for an NVML device: the agent's device of the same UUID
 * (meta gpu.N.uuid), else NVML's index. */
static unsigned int cuda_number(const struct nvml_sampler *n, unsigned int index)
{
	char key[32];

	for (unsigned int d = 0; d < 64; d++) {
		const char *uuid;

		snprintf(key, sizeof(key), "gpu.%u.uuid", d);
		uuid = profile_meta(n->profile, key);
		if (uuid && n->gpus[index].uuid[0] && !strcmp(uuid, n->gpus[index].uuid))
			return d;
	}
	return index;
}

static void counter(struct nvml_sampler *n, unsigned int device, const char *what, uint64_t now,
		    double value)
{
	struct counter_sample c = { .time_ns = now, .value = value };
	char track[96];

	snprintf(track, sizeof(track), "gpu.%u.%s", device, what);
	if (profile_intern_string(n->profile, track, &c.track) == 0)
		profile_add_counter(n->profile, &c);
}

void nvml_sample(struct nvml_sampler *n, uint64_t now_ns)
{
	if (!n || (n->last_ns && now_ns - n->last_ns < PERIOD_NS))
		return;
	n->last_ns = now_ns;
	for (unsigned int i = 0; i < n->ngpus; i++) {
		struct nvml_gpu *g = &n->gpus[i];
		unsigned int device = cuda_number(n, i), mw;
		struct nvml_utilization u;
		unsigned long long mj, used;

		if (n->api.utilization(g->handle, &u) == NVML_SUCCESS) {
			counter(n, device, "utilization %", now_ns, u.gpu);
			g->samples++;
			g->utilization_sum += u.gpu;
		}
		if (memory_used(n, g->handle, &used) == NVML_SUCCESS) {
			counter(n, device, "memory used MiB", now_ns, (double)used / (1 << 20));
			if (used > g->memory_peak)
				g->memory_peak = used;
		}
		if (n->api.power && n->api.power(g->handle, &mw) == NVML_SUCCESS)
			counter(n, device, "power W", now_ns, mw / 1000.0);
		if (n->api.energy && n->api.energy(g->handle, &mj) == NVML_SUCCESS) {
			if (!g->have_energy)
				g->energy_first = mj;
			g->energy_last = mj;
			g->have_energy = true;
		}
	}
}

void nvml_summary(const struct nvml_sampler *n, FILE *out)
{
	if (!n)
		return;
	for (unsigned int i = 0; i < n->ngpus; i++) {
		const struct nvml_gpu *g = &n->gpus[i];

		if (!g->samples)
			continue;
		fprintf(out, "  NVML device %u: utilization %.0f%% on average, memory peak %.0f MiB",
			cuda_number(n, i), (double)g->utilization_sum / (double)g->samples,
			(double)g->memory_peak / (1 << 20));
		if (g->have_energy)
			fprintf(out, ", %.1f J", (double)(g->energy_last - g->energy_first) / 1000.0);
		fputc('\n', out);
	}
}

void nvml_close(struct nvml_sampler *n)
{
	if (!n)
		return;
	n->api.shutdown();
	dlclose(n->lib);
	free(n);
}
