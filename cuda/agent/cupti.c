// SPDX-License-Identifier: MIT
/*
 * Finding CUPTI without linking it: the libcupti the process already has
 * (PyTorch wheels bring their own; a second copy would not see the first
 * one's subscriber), else the one beside the CUDA runtime the process
 * loaded, else the toolkit's. Every function is looked up by name.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/agent/agent.h"

struct found {
	const char *prefix;
	char path[512];
};

static int find_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	struct found *f = data;
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (!strncmp(base, f->prefix, strlen(f->prefix))) {
		snprintf(f->path, sizeof(f->path), "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static bool loaded(const char *prefix, char *path, size_t len)
{
	struct found f = { .prefix = prefix };

	if (!dl_iterate_phdr(find_loaded, &f))
		return false;
	snprintf(path, len, "%s", f.path);
	return true;
}

/* Candidates beside the CUDA runtime the process uses: its major version
 * picks libcupti.so.MAJOR, its folder (or the toolkit's extras/) holds it. */
static void *open_matching(char *tried, size_t len)
{
	static const char *const dirs[] = { "", "/usr/local/cuda/lib64/", "/usr/local/cuda/lib/",
					    "/usr/local/cuda/extras/CUPTI/lib64/" };
	char rt[512], name[64], path[640], *slash, *so;
	void *h;

	name[0] = 0;
	if (loaded("libcudart.so", rt, sizeof(rt)) && (so = strstr(rt, ".so.")) != NULL) {
		snprintf(name, sizeof(name), "libcupti.so.%d", atoi(so + 4));
		slash = strrchr(rt, '/');
		if (slash) {
			snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - rt), rt, name);
			if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
				return h;
			snprintf(path, sizeof(path), "%.*s/../extras/CUPTI/lib64/%s", (int)(slash - rt), rt,
				 name);
			if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
				return h;
		}
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", dirs[i], name[0] ? name : "libcupti.so");
		if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
			return h;
	}
	snprintf(tried, len, "%s on the library path and in /usr/local/cuda",
		 name[0] ? name : "libcupti.so");
	return NULL;
}

#define LOOK(field, symbol)                                                         \
	do {                                                                        \
		*(void **)&api->field = dlsym(h, symbol);                            \
		if (!api->field && required) {                                       \
			snprintf(why, len, "%s has no %s", where, symbol);           \
			return -ENOENT;                                              \
		}                                                                    \
	} while (0)

static int look_up(void *h, struct cupti_api *api, const char *where, char *why, size_t len)
{
	bool required = true;

	LOOK(get_version, "cuptiGetVersion");
	LOOK(get_result_string, "cuptiGetResultString");
	LOOK(subscribe, "cuptiSubscribe");
	LOOK(unsubscribe, "cuptiUnsubscribe");
	LOOK(enable_callback, "cuptiEnableCallback");
	LOOK(activity_enable, "cuptiActivityEnable");
	LOOK(activity_disable, "cuptiActivityDisable");
	LOOK(activity_register_callbacks, "cuptiActivityRegisterCallbacks");
	LOOK(activity_register_timestamp, "cuptiActivityRegisterTimestampCallback");
	LOOK(activity_get_next_record, "cuptiActivityGetNextRecord");
	LOOK(activity_get_num_dropped, "cuptiActivityGetNumDroppedRecords");
	LOOK(activity_flush_all, "cuptiActivityFlushAll");
	required = false; /* newer CUPTIs only */
	LOOK(subscribe_v2, "cuptiSubscribe_v2");
	LOOK(get_callback_name, "cuptiGetCallbackName");
	return 0;
}

int agent_cupti_load(char *why, size_t len)
{
	char path[512] = "", tried[256];
	void *h = NULL;

	if (loaded("libcupti.so", path, sizeof(path)))
		h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = open_matching(tried, sizeof(tried));
	if (!h) {
		snprintf(why, len, "no libcupti in the process, nor %s", tried);
		return -ENOENT;
	}
	if (!path[0]) {
		struct link_map *lm = NULL;

		if (!dlinfo(h, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name)
			snprintf(path, sizeof(path), "%s", lm->l_name);
	}
	if (look_up(h, &agent.cupti, path[0] ? path : "libcupti", why, len) < 0) {
		/* Not half a table: a later start loads again, and fails again. */
		memset(&agent.cupti, 0, sizeof(agent.cupti));
		return -ENOENT;
	}
	agent.cupti_lib = h;
	return 0;
}
