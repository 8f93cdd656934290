// SPDX-License-Identifier: MIT
/*
 * A fake libnvidia-ml.so.1 for machines without a driver: one device, the
 * fake CUPTI's (same UUID), whose utilization reads 37%, whose memory in
 * use grows by 1 MiB and whose energy counter by 25 J at every reading.
 * As driver 580 on an H100 does, the first form of the memory call counts
 * 480 MiB the driver reserves as used; the second (what nvidia-smi shows)
 * does not.
 * Only the calls trainsample makes, with NVML's documented signatures.
 */
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

struct utilization {
	unsigned int gpu, memory;
};

struct memory {
	unsigned long long total, free, used;
};

static int device;
static unsigned long long readings;

EXPORT int nvmlInit_v2(void) { return 0; }
EXPORT int nvmlShutdown(void) { return 0; }

EXPORT int nvmlDeviceGetCount_v2(unsigned int *n)
{
	*n = 1;
	return 0;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **d)
{
	if (index)
		return 2; /* NVML_ERROR_INVALID_ARGUMENT */
	*d = &device;
	return 0;
}

EXPORT int nvmlDeviceGetUUID(void *d, char *uuid, unsigned int len)
{
	(void)d;
	snprintf(uuid, len, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
	return 0;
}

EXPORT int nvmlDeviceGetUtilizationRates(void *d, struct utilization *u)
{
	(void)d;
	u->gpu = 37;
	u->memory = 12;
	return 0;
}

EXPORT int nvmlDeviceGetMemoryInfo(void *d, struct memory *m)
{
	(void)d;
	readings++;
	m->total = 80ull << 30;
	m->used = (1000 + 480 + readings) << 20;
	m->free = m->total - m->used;
	return 0;
}

struct memory_v2 {
	unsigned int version;
	unsigned long long total, reserved, free, used;
};

EXPORT int nvmlDeviceGetMemoryInfo_v2(void *d, struct memory_v2 *m)
{
	(void)d;
	if (m->version != ((unsigned int)sizeof(*m) | (2u << 24)))
		return 3; /* NVML_ERROR_INVALID_ARGUMENT: as the driver checks it */
	readings++;
	m->total = 80ull << 30;
	m->reserved = 480ull << 20;
	m->used = (1000 + readings) << 20;
	m->free = m->total - m->reserved - m->used;
	return 0;
}

EXPORT int nvmlDeviceGetPowerUsage(void *d, unsigned int *mw)
{
	(void)d;
	*mw = 250000;
	return 0;
}

EXPORT int nvmlDeviceGetTotalEnergyConsumption(void *d, unsigned long long *mj)
{
	(void)d;
	*mj = 1000000 + readings * 25000;
	return 0;
}
