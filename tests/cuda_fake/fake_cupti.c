// SPDX-License-Identifier: MIT
/*
 * A fake libcupti for machines without a GPU: the CUPTI functions the
 * agent calls, built from the real headers (the real record structs,
 * callback ids, error codes), with CUPTI's buffer semantics: buffers come
 * from the client's request callback, go back full or on a flush through
 * its complete callback, and are walked with cuptiActivityGetNextRecord.
 *
 * A test program drives it through fake_cuda_*: fake_cuda_init plays
 * cuInit (loads CUDA_INJECTION64_PATH, calls InitializeInjection); each
 * launch calls the subscriber back on the calling thread, a runtime call
 * with a nested driver call as CUDA's runtime does, and queues the
 * activity record the GPU would produce, carrying the runtime call's
 * correlation id. The "GPU" runs each stream's work back to back.
 *
 * Like a program with the CUDA runtime linked in statically (nvcc's
 * default), fake_cuda_init registers the runtime's teardown with atexit
 * after InitializeInjection returns: at exit it runs before any handler
 * the agent registered in InitializeInjection, destroys the context
 * (records still in CUPTI's buffers are lost) and any CUPTI call after it
 * aborts, as it crashes on a real GPU.
 * A forced flush delivers kernels still running with no timestamps, as
 * incomplete records.
 *   FAKE_CUPTI_TAKEN=NAME  cuptiSubscribe fails: NAME holds CUPTI
 *   FAKE_CUPTI_DROPPED=N   the first buffer reports N records dropped
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

#define EXPORT __attribute__((visibility("default")))
#define BUFFER_SLACK 4096
/* The legacy default stream's id in real CUPTI records (see docs/gpu-h100). */
#define FAKE_NULL_STREAM 7

static struct {
	pthread_mutex_t lock;
	CUpti_CallbackFunc callback;
	void *userdata;
	bool subscribed;
	unsigned char enabled[2][1024];     /* [runtime/driver][cbid] */
	uint64_t kinds;                     /* bit per CUpti_ActivityKind enabled */
	CUpti_BuffersCallbackRequestFunc request;
	CUpti_BuffersCallbackCompleteFunc complete;
	CUpti_TimestampCallbackFunc timestamp;
	int timestamp_registrations;
	uint8_t *buffer;
	size_t size, used;
	uint32_t next_correlation;
	uint64_t stream_free[64];
	bool dropped_reported;
	bool device_reported;
	bool torn_down;
} fake = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void after_teardown(const char *what)
{
	if (!fake.torn_down)
		return;
	fprintf(stderr, "fake_cupti: %s called after the CUDA runtime's teardown\n", what);
	abort();
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now(void)
{
	return fake.timestamp ? fake.timestamp() : realtime_ns();
}

EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	switch (result) {
	case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		*str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
		break;
	default: *str = "CUPTI_ERROR_UNKNOWN"; break;
	}
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
	*timestamp = now();
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc fn, void *data,
				     CUpti_SubscriberParams *params)
{
	const char *taken = getenv("FAKE_CUPTI_TAKEN");

	if (taken || fake.subscribed) {
		if (params && params->oldSubscriberName && params->oldSubscriberSize)
			snprintf(params->oldSubscriberName, params->oldSubscriberSize, "CUPTI for %s",
				 taken ? taken : "an earlier subscriber");
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	fake.callback = fn;
	fake.userdata = data;
	fake.subscribed = true;
	*s = (CUpti_SubscriberHandle)&fake;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc fn, void *data)
{
	return cuptiSubscribe_v2(s, fn, data, NULL);
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
	after_teardown(__func__);
	(void)s;
	fake.subscribed = false;
	fake.callback = NULL;
	return CUPTI_SUCCESS;
}

static const struct {
	int domain; /* 0 runtime, 1 driver */
	uint32_t cbid;
	const char *name;
} names[] = {
	{ 0, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, "__cudaLaunchKernel" },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel" },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, "cudaMemcpyAsync" },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy" },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch" },
	{ 0, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, "cudaDeviceSynchronize" },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel" },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, "cuMemcpyAsync" },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuMemcpy, "cuMemcpy" },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch" },
	{ 1, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize" },
};

EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
					const char **name)
{
	int d = domain == CUPTI_CB_DOMAIN_DRIVER_API;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].domain == d && names[i].cbid == cbid) {
			*name = names[i].name;
			return CUPTI_SUCCESS;
		}
	}
	*name = d ? "cuSomethingElse" : "cudaSomethingElse";
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle s,
				       CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	(void)s;
	if (cbid >= 1024 || (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API))
		return CUPTI_ERROR_INVALID_PARAMETER;
	fake.enabled[domain == CUPTI_CB_DOMAIN_DRIVER_API][cbid] = (unsigned char)enable;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if (!fake.subscribed && getenv("FAKE_CUPTI_TAKEN"))
		return CUPTI_ERROR_UNKNOWN;
	fake.kinds |= 1ull << kind;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	after_teardown(__func__);
	fake.kinds &= ~(1ull << kind);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
						  CUpti_BuffersCallbackCompleteFunc complete)
{
	fake.request = request;
	fake.complete = complete;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
	fake.timestamp = fn;
	fake.timestamp_registrations++;
	return CUPTI_SUCCESS;
}

static size_t record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
	case CUPTI_ACTIVITY_KIND_STREAM: return sizeof(CUpti_ActivityStream);
	default: return 0;
	}
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	size_t at = 0;

	if (*record)
		at = (size_t)((uint8_t *)*record - buffer) + ((record_size((*record)->kind) + 7) & ~7ul);
	if (at + sizeof(CUpti_Activity) > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)(buffer + at);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped)
{
	after_teardown(__func__);
	const char *n = getenv("FAKE_CUPTI_DROPPED");

	(void)ctx, (void)stream;
	*dropped = 0;
	if (n && !fake.dropped_reported) {
		*dropped = strtoul(n, NULL, 10);
		fake.dropped_reported = true;
	}
	return CUPTI_SUCCESS;
}

/* Hands the buffer back (lock held; the callback runs without it). */
static void complete_buffer(void)
{
	uint8_t *buffer = fake.buffer;
	size_t size = fake.size, used = fake.used;

	if (!buffer)
		return;
	fake.buffer = NULL;
	fake.used = fake.size = 0;
	pthread_mutex_unlock(&fake.lock);
	fake.complete(NULL, 0, buffer, size, used);
	pthread_mutex_lock(&fake.lock);
}

/* Kernels the GPU has not finished (lock held): an unforced flush keeps
 * a buffer that holds one, a forced flush hands them over as incomplete
 * records, without timestamps. Returns how many there are. */
static int unfinished(bool mark)
{
	CUpti_Activity *rec = NULL;
	uint64_t t = now();
	int n = 0;

	while (fake.buffer && cuptiActivityGetNextRecord(fake.buffer, fake.used, &rec) == CUPTI_SUCCESS)
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)rec;

			if (k->end > t) {
				n++;
				if (mark)
					k->start = k->end = 0;
			}
		}
	return n;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	after_teardown(__func__);
	pthread_mutex_lock(&fake.lock);
	if (unfinished(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == 0 ||
	    (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED))
		complete_buffer();
	pthread_mutex_unlock(&fake.lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiFinalize(void)
{
	return CUPTI_SUCCESS;
}

/* Room for a record of `kind` in the current buffer (lock held). */
static void *record_slot(CUpti_ActivityKind kind)
{
	size_t need = (record_size(kind) + 7) & ~7ul;
	size_t max = 0;
	void *at;

	if (!(fake.kinds & (1ull << kind)) || !fake.request)
		return NULL;
	if (fake.buffer && fake.used + need > fake.size)
		complete_buffer();
	if (!fake.buffer) {
		fake.request(&fake.buffer, &fake.size, &max);
		fake.used = 0;
		if (!fake.buffer || fake.size < need + BUFFER_SLACK)
			return NULL;
	}
	at = fake.buffer + fake.used;
	memset(at, 0, need);
	fake.used += need;
	return at;
}

static void call_back(int driver, uint32_t cbid, CUpti_ApiCallbackSite site, uint32_t correlation)
{
	CUpti_CallbackData cb = { .callbackSite = site, .correlationId = correlation };
	const char *name = "?";

	if (!fake.callback || !fake.enabled[driver][cbid])
		return;
	cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid,
			     &name);
	cb.functionName = name;
	fake.callback(fake.userdata, driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
		      cbid, &cb);
}

/* An API call: the runtime one (unless rt_cbid is 0) around the driver
 * one. Returns the correlation id the activity carries. */
static uint32_t api_call(uint32_t rt_cbid, uint32_t drv_cbid)
{
	uint32_t rt = 0, drv;

	pthread_mutex_lock(&fake.lock);
	if (rt_cbid)
		rt = ++fake.next_correlation;
	drv = ++fake.next_correlation;
	pthread_mutex_unlock(&fake.lock);
	if (rt_cbid)
		call_back(0, rt_cbid, CUPTI_API_ENTER, rt);
	call_back(1, drv_cbid, CUPTI_API_ENTER, drv);
	call_back(1, drv_cbid, CUPTI_API_EXIT, drv);
	if (rt_cbid)
		call_back(0, rt_cbid, CUPTI_API_EXIT, rt);
	return rt_cbid ? rt : drv;
}

/* When the stream is next free, and its new end (lock held). */
static uint64_t schedule(int stream, uint64_t duration, uint64_t *end)
{
	uint64_t t = now(), *free_at = &fake.stream_free[stream & 63];
	uint64_t start = *free_at > t ? *free_at : t;

	*end = start + duration;
	*free_at = *end;
	return start;
}

/* The context's NULL stream, recorded with the device, before any work. */
static void null_stream_record(void)
{
	CUpti_ActivityStream *st = record_slot(CUPTI_ACTIVITY_KIND_STREAM);

	if (!st)
		return;
	st->kind = CUPTI_ACTIVITY_KIND_STREAM;
	st->contextId = 1;
	st->streamId = FAKE_NULL_STREAM;
	st->flag = CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL;
}

static void device_record(void)
{
	CUpti_ActivityDevice5 *d;

	if (fake.device_reported)
		return;
	null_stream_record();
	if (!(d = record_slot(CUPTI_ACTIVITY_KIND_DEVICE)))
		return;
	d->kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d->id = 0;
	d->name = "Fake GPU 9000";
	d->computeCapabilityMajor = 9;
	d->numMultiprocessors = 132;
	d->globalMemorySize = 80ull << 30;
	for (int i = 0; i < 16; i++) /* GPU-00010203-0405-0607-0809-0a0b0c0d0e0f */
		d->uuid.bytes[i] = (char)i;
	fake.device_reported = true;
}

/* cuInit's part: the driver loads the injection library. 1 when loaded. */
static void runtime_teardown(void)
{
	pthread_mutex_lock(&fake.lock);
	fake.torn_down = true;
	free(fake.buffer); /* the context's records go with it */
	fake.buffer = NULL;
	fake.used = fake.size = 0;
	pthread_mutex_unlock(&fake.lock);
}

EXPORT int fake_cuda_init(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	int (*init)(void), ret;
	void *h;

	if (!path || !(h = dlopen(path, RTLD_NOW)))
		return 0;
	*(void **)&init = dlsym(h, "InitializeInjection");
	if (!init)
		return 0;
	ret = init();
	atexit(runtime_teardown);
	return ret;
}

static void kernel_on(uint32_t correlation, const char *name, int device, int stream,
		      uint64_t duration, int grid)
{
	CUpti_ActivityKernel10 *k;

	device_record();
	k = record_slot(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (!k)
		return;
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->start = schedule(stream, duration, &k->end);
	k->deviceId = (uint32_t)device;
	k->contextId = 1;
	k->streamId = (uint32_t)stream;
	k->gridX = grid, k->gridY = 1, k->gridZ = 1;
	k->blockX = 256, k->blockY = 1, k->blockZ = 1;
	k->correlationId = correlation;
	k->name = strdup(name); /* CUPTI keeps names for the process's life */
}

/* A <<<>>> launch: __cudaLaunchKernel around cuLaunchKernel, or the
 * driver call alone (via_runtime 0). */
EXPORT void fake_cuda_launch(const char *name, int device, int stream, long long duration_ns,
			     int via_runtime)
{
	uint32_t id = api_call(via_runtime ? CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 : 0,
			       CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);

	pthread_mutex_lock(&fake.lock);
	kernel_on(id, name, device, stream, (uint64_t)duration_ns, 1024);
	pthread_mutex_unlock(&fake.lock);
}

struct native_launch {
	const char *thread, *name;
	int device, stream;
	long long duration_ns;
};

static void *native_launch_main(void *arg)
{
	struct native_launch *l = arg;

	pthread_setname_np(pthread_self(), l->thread);
	fake_cuda_launch(l->name, l->device, l->stream, l->duration_ns, 1);
	return NULL;
}

/* A launch from a thread with no Python frames (autograd's device
 * threads are such), named `thread`. */
EXPORT void fake_cuda_launch_from_native_thread(const char *thread, const char *name, int device,
						int stream, long long duration_ns)
{
	struct native_launch l = { thread, name, device, stream, duration_ns };
	pthread_t t;

	if (pthread_create(&t, NULL, native_launch_main, &l) == 0)
		pthread_join(t, NULL);
}

/* A graph of n kernels, all carrying the graph launch's id. */
EXPORT void fake_cuda_graph_launch(const char *name, int n, int device, int stream,
				   long long duration_ns)
{
	uint32_t id = api_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
			       CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch);

	pthread_mutex_lock(&fake.lock);
	for (int i = 0; i < n; i++)
		kernel_on(id, name, device, stream, (uint64_t)duration_ns, 64);
	pthread_mutex_unlock(&fake.lock);
}

/* A copy between memory kinds (CUPTI's: 1 pageable, 2 pinned, 3 device):
 * cudaMemcpyAsync when async, else cudaMemcpy, which the host waits for. */
EXPORT void fake_cuda_memcpy_kinds(int device, int stream, long long bytes, int copy_kind,
				   int src_kind, int dst_kind, int async, long long duration_ns)
{
	uint32_t id = async ? api_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
				       CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync)
			    : api_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
				       CUPTI_DRIVER_TRACE_CBID_cuMemcpy);
	CUpti_ActivityMemcpy6 *m;
	uint64_t end = 0;

	pthread_mutex_lock(&fake.lock);
	device_record();
	m = record_slot(CUPTI_ACTIVITY_KIND_MEMCPY);
	if (m) {
		m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		m->copyKind = (uint8_t)copy_kind;
		m->srcKind = (uint8_t)src_kind;
		m->dstKind = (uint8_t)dst_kind;
		m->flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
		m->bytes = (uint64_t)bytes;
		m->start = schedule(stream, (uint64_t)duration_ns, &m->end);
		m->deviceId = (uint32_t)device;
		m->contextId = 1;
		m->streamId = (uint32_t)stream;
		m->correlationId = id;
		end = m->end;
	}
	pthread_mutex_unlock(&fake.lock);
	while (!async && now() < end) { /* the host waits for a synchronous copy */
		struct timespec ts = { 0, 200000 };

		nanosleep(&ts, NULL);
	}
}

/* cudaMemcpyAsync between pinned host memory and the device. */
EXPORT void fake_cuda_memcpy(int device, int stream, long long bytes, int copy_kind,
			     long long duration_ns)
{
	int host = CUPTI_ACTIVITY_MEMORY_KIND_PINNED, dev = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;

	fake_cuda_memcpy_kinds(device, stream, bytes, copy_kind,
			       copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? host : dev,
			       copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? host : dev, 1, duration_ns);
}

/* cudaDeviceSynchronize: waits for every stream, a sync record. */
/* A wait for one stream (0..63) or, stream -1, for the whole context: its
 * record spans the wait, so a stream's covers the work it waited for, as
 * a real one does. Returns when that work is done. */
static void synchronize(int stream)
{
	uint32_t id = stream < 0 ? api_call(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
					    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize)
				 : api_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
					    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize);
	CUpti_ActivitySynchronization2 *s;
	uint64_t last = 0, t;

	pthread_mutex_lock(&fake.lock);
	for (int i = 0; i < 64; i++)
		if ((stream < 0 || i == stream) && fake.stream_free[i] > last)
			last = fake.stream_free[i];
	t = now();
	s = record_slot(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
	if (s) {
		s->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
		s->type = stream < 0 ? CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE
				     : CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
		s->start = t;
		s->end = last > t ? last : t;
		s->correlationId = id;
		s->contextId = 1;
		s->streamId = stream < 0 ? (uint32_t)-1 : (uint32_t)stream;
	}
	pthread_mutex_unlock(&fake.lock);
	while (now() < last) {
		struct timespec ts = { 0, 200000 };

		nanosleep(&ts, NULL);
	}
}

EXPORT void fake_cuda_synchronize(void)
{
	synchronize(-1);
}

EXPORT void fake_cuda_stream_synchronize(int stream)
{
	synchronize(stream & 63);
}

/* What the agent asked for, for the tests: enabled kinds as a bit mask,
 * how often it registered a timestamp callback. */
EXPORT unsigned long long fake_cupti_kinds(void)
{
	return fake.kinds;
}

EXPORT int fake_cupti_timestamp_registrations(void)
{
	return fake.timestamp_registrations;
}

/* Whether a subscriber holds the fake CUPTI now (1) or not (0). */
EXPORT int fake_cupti_subscribed(void)
{
	return fake.subscribed;
}
