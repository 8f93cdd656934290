// SPDX-License-Identifier: MIT
/* GPU activities in the model and the .tsprof, and the agent's record
 * file read back (cuda/gpu_reader.c), on data made by hand. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda/gpu_merge_impl.h"
#include "cuda/gpu_record.h"
#include "formats/flamegraph_script.h"
#include "formats/formats.h"
#include "model_helpers.h"

#define MS 1000000ull

static uint32_t launch_stack(struct profile *p)
{
	uint32_t m = frame(p, FRAME_PYTHON, "<module>", "/src/t.py", 1);
	uint32_t f = frame(p, FRAME_PYTHON, "forward", "/src/t.py", 9);
	uint32_t s[] = { m, f };

	return stack(p, s, 2);
}

static struct gpu_activity kernel(struct profile *p, uint32_t st, uint64_t start, uint64_t dur)
{
	return (struct gpu_activity){
		.kind = GPU_ACTIVITY_KERNEL, .device = 0, .stream = 7, .correlation = 3,
		.start_ns = start, .end_ns = start + dur, .name = str(p, "gemm"),
		.grid = { 64, 1, 1 }, .block = { 256, 1, 1 }, .pid = 100, .tid = 101, .stack = st,
		.launch_start_ns = start - 50000, .launch_end_ns = start - 40000,
		.api = str(p, "cudaLaunchKernel"),
	};
}

static char *folded(const struct profile *p)
{
	struct render_options o = { 0 };

	return written(folded_write, p, &o, 0);
}

Test(gpu, kernels_weigh_onto_their_launching_stack_apart_from_cpu_samples)
{
	struct profile *p = profile_new();
	uint32_t st = launch_stack(p);
	struct gpu_activity a = kernel(p, st, 10 * MS, 4 * MS);
	struct gpu_activity c = { .kind = GPU_ACTIVITY_MEMCPY, .copy_kind = 2, .bytes = 4096,
				  .start_ns = 20 * MS, .end_ns = 21 * MS, .pid = 100 };
	struct render_options o = { 0 };
	char *text;

	profile_set_meta(p, "period_ns", "1000000");
	profile_set_meta(p, "python_script_dir", "/src");
	samples(p, 101, st, 3, MS, 0);
	cr_assert_eq(profile_add_gpu_activity(p, &a), 0);
	cr_assert_eq(profile_add_gpu_activity(p, &c), 0);
	a.kind = 99;
	cr_assert_eq(profile_add_gpu_activity(p, &a), -EINVAL);
	cr_assert_eq(profile_sample_count(p), 3, "GPU time is not CPU samples");
	text = folded(p);
	cr_assert(strstr(text, "<module> (t.py:1);forward (t.py:9) 3\n"), "%s", text);
	cr_assert(strstr(text, "[gpu];<module> (t.py:1);forward (t.py:9);[kernel] gemm 4\n"), "%s", text);
	/* A copy without a launch: stack 0, under [gpu] alone. */
	cr_assert(strstr(text, "[gpu];[memcpy DtoH] 1\n"), "%s", text);
	free(text);

	/* The flamegraph of CPU samples leaves the GPU out; the GPU one keeps it only. */
	text = written(flamegraph_write, p, &o, 0);
	cr_assert_null(strstr(text, "[kernel] gemm"));
	free(text);
	o.gpu = true;
	text = written(flamegraph_write, p, &o, 0);
	cr_assert(strstr(text, "[kernel] gemm"));
	cr_assert(strstr(text, "data-total=\"5000000\""), "4 ms kernel + 1 ms copy");
	/* The page of every flamegraph: the whole script, which opens on the
	 * frames of depth 0, and such frames. */
	cr_assert(strstr(flamegraph_script, "showRoots();") && strstr(text, flamegraph_script));
	cr_assert(strstr(text, "data-d=\"0\""));
	free(text);
	profile_free(p);
}

struct kept {
	struct gpu_activity a[4];
	int n;
};

static int keep_activity(const struct gpu_activity *a, void *ctx)
{
	struct kept *k = ctx;

	cr_assert_lt(k->n, 4);
	k->a[k->n++] = *a;
	return 0;
}

Test(gpu, activities_survive_a_tsprof_round_trip_with_every_field)
{
	char path[] = "/tmp/gpu_tsprof.XXXXXX";
	struct profile *p = profile_new(), *q = profile_new();
	struct tsprof_writer *w = NULL;
	struct tsprof_read_info info;
	struct gpu_activity a, b, c;
	struct kept got = { .n = 0 };
	char err[256] = "";
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	close(fd);
	cr_assert_eq(profile_keep_timeline(p), 0);
	cr_assert_eq(tsprof_writer_open(&w, path, p, err, sizeof(err)), 0, "%s", err);
	a = kernel(p, launch_stack(p), 5 * MS, 2 * MS);
	cr_assert_eq(profile_add_gpu_activity(p, &a), 0);
	b = a;
	b.kind = GPU_ACTIVITY_SYNC; /* earlier than the one before: deltas are signed */
	b.start_ns = 3 * MS;
	b.end_ns = 4 * MS;
	b.launch_start_ns = b.launch_end_ns = 0;
	b.grid[0] = -1;
	cr_assert_eq(profile_add_gpu_activity(p, &b), 0);
	/* A copy's memory kinds and flags ride in its copy field. */
	c = (struct gpu_activity){ .kind = GPU_ACTIVITY_MEMCPY, .copy_kind = GPU_COPY_KIND_HTOD,
				   .src_kind = GPU_MEMORY_KIND_PAGEABLE, .dst_kind = 3, .async = true,
				   .null_stream = true, .bytes = 1 << 20, .start_ns = 6 * MS,
				   .end_ns = 7 * MS, .stream = 7, .pid = 100 };
	cr_assert_eq(profile_add_gpu_activity(p, &c), 0);
	cr_assert_eq(tsprof_writer_close(w), 0);

	cr_assert_eq(profile_keep_timeline(q), 0);
	cr_assert_eq(tsprof_read(path, q, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert(info.complete);
	cr_assert_eq(profile_for_each_gpu_activity(q, keep_activity, &got), 0);
	cr_assert_eq(got.n, 3);
	cr_assert_eq(memcmp(&got.a[0], &a, sizeof(a)), 0, "the kernel, field for field");
	cr_assert_eq(got.a[2].copy_kind, GPU_COPY_KIND_HTOD);
	cr_assert_eq(got.a[2].src_kind, GPU_MEMORY_KIND_PAGEABLE);
	cr_assert_eq(got.a[2].dst_kind, 3);
	cr_assert(got.a[2].async && got.a[2].null_stream);
	cr_assert_eq(got.a[2].bytes, 1 << 20);
	cr_assert_eq(memcmp(&got.a[1], &b, sizeof(b)), 0, "the sync, field for field");
	cr_assert_str_eq(profile_string(q, got.a[0].name), "gemm");
	cr_assert_str_eq(profile_string(q, got.a[0].api), "cudaLaunchKernel");
	profile_free(p);
	profile_free(q);
	unlink(path);
}

/* ---- the agent's record file ---- */

struct seen {
	char strings[4][300];
	uint32_t types[16];
	int nrecords;
	struct gpu_record last;
};

static void seen_string(void *ctx, uint32_t id, const char *text)
{
	struct seen *s = ctx;

	cr_assert_lt(id, 4);
	snprintf(s->strings[id], sizeof(s->strings[id]), "%s", text);
}

static void seen_record(void *ctx, const struct gpu_record *r)
{
	struct seen *s = ctx;

	s->types[s->nrecords++ % 16] = r->type;
	s->last = *r;
}

static void put(int fd, const void *rec, size_t n)
{
	cr_assert_eq(write(fd, rec, n), (ssize_t)n);
}

Test(gpu, reader_joins_strings_and_waits_for_whole_records)
{
	const struct gpu_reader_ops ops = { seen_string, seen_record };
	char path[] = "/tmp/gpu_rec.XXXXXX";
	struct gpu_file_header h = { .version = GPU_FILE_VERSION, .record_size = GPU_RECORD_SIZE,
				     .pid = 4242 };
	struct gpu_record r = { .type = GPU_REC_STRING };
	char longname[250];
	struct gpu_reader *rd;
	struct seen seen = { .nrecords = 0 };
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	memcpy(h.magic, GPU_FILE_MAGIC, 8);
	cr_assert_eq(gpu_reader_open(&rd, path), 0);
	cr_assert_eq(gpu_reader_poll(rd, &ops, &seen), 0, "no header yet: nothing, no error");
	put(fd, &h, sizeof(h));
	/* A 249-byte name in three pieces. */
	memset(longname, 'k', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	for (uint32_t off = 0; off < 249; off += GPU_STRING_PIECE) {
		uint32_t n = 249 - off < GPU_STRING_PIECE ? 249 - off : GPU_STRING_PIECE;

		r.u.string = (struct gpu_rec_string){ .id = 1, .total = 249, .offset = off,
						      .len = (uint16_t)n };
		memcpy(r.u.string.text, longname + off, n);
		put(fd, &r, sizeof(r));
	}
	memset(&r, 0, sizeof(r));
	r.type = GPU_REC_KERNEL;
	r.u.activity.correlation = 77;
	put(fd, &r, sizeof(r) / 2); /* half a record: it waits */
	cr_assert_eq(gpu_reader_poll(rd, &ops, &seen), 3);
	cr_assert_str_eq(seen.strings[1], longname);
	cr_assert_eq(gpu_reader_pid(rd), 4242);
	cr_assert_eq(seen.nrecords, 0);
	put(fd, (char *)&r + sizeof(r) / 2, sizeof(r) / 2);
	r.type = 999; /* unknown types are skipped */
	put(fd, &r, sizeof(r));
	cr_assert_eq(gpu_reader_poll(rd, &ops, &seen), 2);
	cr_assert_eq(seen.nrecords, 1);
	cr_assert_eq(seen.last.type, GPU_REC_KERNEL);
	cr_assert_eq(seen.last.u.activity.correlation, 77);
	gpu_reader_close(rd);

	/* Not a record file: refused. */
	cr_assert_eq(ftruncate(fd, 0), 0);
	cr_assert_eq(pwrite(fd, "not a gpu file, not at all, not even close, no no no no no no no no no no no"
			    " no no no no no no no no no no no no no no no no no no no no no no", 128, 0), 128);
	cr_assert_eq(gpu_reader_open(&rd, path), 0);
	cr_assert_eq(gpu_reader_poll(rd, &ops, &seen), -EPROTO);
	gpu_reader_close(rd);
	close(fd);
	unlink(path);
}

/* Issue 30: attach printed "busy 100.8% of 1.00 s". Busy time is the union
 * of a device's intervals over its streams; its share is of the wall time,
 * or of the activities' own span where that is longer (records from before
 * an attach), so it never passes 100%. */
Test(gpu, busy_share_is_a_union_within_its_span_never_over_100_percent)
{
	struct profile *p = profile_new();
	char dir[] = "/tmp/gpu_busy.XXXXXX", *text = NULL;
	struct gpu_merge *g;
	size_t len = 0;
	FILE *out;
	static const struct { uint32_t device; uint64_t start, end; } spans[] = {
		/* device 0: 1.2 s covered, over 1.4 s of activities, in a 1 s run */
		{ 0, 0, 600 * MS }, { 0, 500 * MS, 1200 * MS }, { 0, 100 * MS, 200 * MS },
		/* device 1: 0.5 s busy of the run's 1 s, a gap inside */
		{ 1, 0, 300 * MS }, { 1, 200 * MS, 400 * MS }, { 1, 600 * MS, 700 * MS },
	};

	cr_assert(p);
	cr_assert(mkdtemp(dir));
	cr_assert_eq(gpu_merge_new(&g, dir, p, NULL, NULL), 0);
	for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
		struct gpu_activity a = { .kind = GPU_ACTIVITY_KERNEL, .device = spans[i].device,
					  .stream = 7 + (uint32_t)i, .name = str(p, "gemm"),
					  .start_ns = 5000 * MS + spans[i].start,
					  .end_ns = 5000 * MS + spans[i].end };

		gpu_stats_add(g, &a);
	}
	out = open_memstream(&text, &len);
	cr_assert(out);
	gpu_merge_summary(g, out, 1000 * MS);
	fclose(out);
	cr_assert(strstr(text, "device 0: busy 100.0% of 1.20 s (1.200 s of kernels and copies)"),
		  "%s", text);
	cr_assert(strstr(text, "device 1: busy 50.0% of 1.00 s (0.500 s of kernels and copies)"),
		  "%s", text);
	free(text);
	gpu_merge_free(g);
	profile_free(p);
}

/* ---- launches paired with their work (cuda/gpu_merge.c) ---- */

struct paired {
	uint32_t tid[1024];
	int n;
};

static int note_tid(const struct gpu_activity *a, void *ctx)
{
	struct paired *p = ctx;

	cr_assert_lt(p->n, 1024);
	p->tid[p->n++] = a->tid;
	return 0;
}

static void put_launch(int fd, uint32_t tid, uint32_t id1, uint32_t id2, bool graph)
{
	struct gpu_record r = { .type = GPU_REC_LAUNCH };

	r.u.launch = (struct gpu_rec_launch){ .start_ns = MS, .end_ns = MS + 10, .tid = tid,
					      .nids = id2 ? 2 : 1, .ids = { id1, id2 },
					      .graph = graph };
	put(fd, &r, sizeof(r));
}

static void put_kernel(int fd, uint32_t correlation)
{
	struct gpu_record r = { .type = GPU_REC_KERNEL };

	r.u.activity = (struct gpu_rec_activity){ .start_ns = 2 * MS, .end_ns = 2 * MS + 5,
						  .correlation = correlation };
	put(fd, &r, sizeof(r));
}

/* Each kernel finds its launch by either of its correlation ids while
 * hundreds are in flight; a finished launch's ids find nothing, until a
 * later launch has them; a graph launch's ids serve all its kernels. */
Test(gpu, kernels_find_their_launch_by_correlation_id)
{
	char dir[] = "/tmp/gpu_merge.XXXXXX", path[64];
	struct gpu_file_header h = { .version = GPU_FILE_VERSION, .record_size = GPU_RECORD_SIZE,
				     .pid = 4242 };
	struct profile *p = profile_new();
	struct paired seen = { .n = 0 };
	struct gpu_merge *g;
	int fd, k = 0;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/4242.gpu", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert(fd >= 0);
	memcpy(h.magic, GPU_FILE_MAGIC, 8);
	put(fd, &h, sizeof(h));
	for (uint32_t i = 0; i < 400; i++)
		put_launch(fd, 1000 + i, 2 * i + 1, 2 * i + 2, false);
	/* Half by the first id, newest first; the rest by the second. */
	for (uint32_t i = 400; i-- > 0;)
		if (!(i % 2))
			put_kernel(fd, 2 * i + 1);
	for (uint32_t i = 1; i < 400; i += 2)
		put_kernel(fd, 2 * i + 2);
	put_kernel(fd, 1); /* launch 0's work came: nothing */
	for (uint32_t i = 0; i < 50; i++)
		put_launch(fd, 5000 + i, 2 * i + 1, 0, false);
	for (uint32_t i = 0; i < 50; i++)
		put_kernel(fd, 2 * i + 1);
	put_launch(fd, 7000, 9001, 0, true);
	put_kernel(fd, 9001);
	put_kernel(fd, 9001);
	close(fd);

	profile_keep_gpu_activities(p);
	cr_assert_eq(gpu_merge_new(&g, dir, p, NULL, NULL), 0);
	cr_assert_gt(gpu_merge_poll(g), 0);
	cr_assert_eq(profile_for_each_gpu_activity(p, note_tid, &seen), 0);
	cr_assert_eq(seen.n, 200 + 200 + 1 + 50 + 2);
	for (uint32_t i = 400; i-- > 0;)
		if (!(i % 2))
			cr_assert_eq(seen.tid[k++], 1000 + i);
	for (uint32_t i = 1; i < 400; i += 2)
		cr_assert_eq(seen.tid[k++], 1000 + i);
	cr_assert_eq(seen.tid[k++], 0);
	for (uint32_t i = 0; i < 50; i++)
		cr_assert_eq(seen.tid[k++], 5000 + i);
	cr_assert_eq(seen.tid[k++], 7000);
	cr_assert_eq(seen.tid[k++], 7000);
	gpu_merge_free(g);
	profile_free(p);
	unlink(path);
	rmdir(dir);
}
