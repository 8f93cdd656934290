// SPDX-License-Identifier: MIT
/* Output files (common/file.c): staged and renamed within the folder held,
 * links at the name replaced, a FIFO written in place, a folder refused. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"

static char dir[64];

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/trainsample-file-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

static void at(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static int entries(void)
{
	char cmd[128], line[64];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	cr_assert_not_null(fgets(line, sizeof(line), p));
	pclose(p);
	return atoi(line);
}

TestSuite(file, .init = make_dir, .fini = remove_dir);

Test(file, staged_then_published_whole)
{
	struct file_stage s;
	char path[PATH_MAX], err[256], buf[16] = "";
	int fd;

	at(path, sizeof(path), "out.folded");
	fd = file_stage_open(&s, path, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	cr_assert(s.open && !s.in_place);
	cr_assert_eq(write(fd, "abc", 3), 3);
	cr_assert_eq(access(path, F_OK), -1, "no name until published");
	cr_assert_eq(file_stage_publish(&s, path, err, sizeof(err)), 0, "%s", err);
	close(fd);
	file_stage_close(&s);
	fd = open(path, O_RDONLY);
	cr_assert_eq(read(fd, buf, sizeof(buf)), 3);
	close(fd);
	cr_assert_str_eq(buf, "abc");
	cr_assert_eq(entries(), 1);
}

Test(file, own_link_replaced_not_followed)
{
	struct file_stage s;
	char path[PATH_MAX], target[PATH_MAX], err[256];
	struct stat st;
	int fd;

	at(target, sizeof(target), "target");
	at(path, sizeof(path), "link.folded");
	fd = open(target, O_WRONLY | O_CREAT, 0600);
	cr_assert_eq(write(fd, "keep", 4), 4);
	close(fd);
	cr_assert_eq(symlink(target, path), 0);
	fd = file_stage_open(&s, path, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	cr_assert_eq(write(fd, "new", 3), 3);
	cr_assert_eq(file_stage_publish(&s, path, err, sizeof(err)), 0, "%s", err);
	close(fd);
	file_stage_close(&s);
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert(S_ISREG(st.st_mode), "the link is replaced");
	cr_assert_eq(stat(target, &st), 0);
	cr_assert_eq(st.st_size, 4, "its target untouched");
}

Test(file, fifo_written_in_place)
{
	struct file_stage s;
	char path[PATH_MAX], err[256], buf[8] = "";
	int fd, r;

	at(path, sizeof(path), "pipe.folded");
	cr_assert_eq(mkfifo(path, 0600), 0);
	r = open(path, O_RDONLY | O_NONBLOCK);
	cr_assert_geq(r, 0);
	fd = file_stage_open(&s, path, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	cr_assert(s.in_place);
	cr_assert_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0, "written blocking, as a FIFO is");
	cr_assert_eq(write(fd, "ab", 2), 2);
	cr_assert_eq(file_stage_publish(&s, path, err, sizeof(err)), 0);
	close(fd);
	file_stage_close(&s);
	cr_assert_eq(read(r, buf, sizeof(buf)), 2);
	close(r);
	cr_assert_str_eq(buf, "ab");
}

Test(file, folder_refused_at_once)
{
	struct file_stage s;
	char path[PATH_MAX], err[256];

	at(path, sizeof(path), "sub");
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_assert_eq(file_stage_open(&s, path, err, sizeof(err)), -EISDIR);
	cr_assert(strstr(err, "is a directory"), "%s", err);
	cr_assert(!s.open);
	at(path, sizeof(path), "none/x.folded");
	cr_assert_eq(file_stage_open(&s, path, err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, "none"), "%s", err);
}

Test(file, closed_unpublished_leaves_nothing_and_removed_only_if_ours)
{
	struct file_stage s;
	char path[PATH_MAX], err[256];
	int fd, other;

	at(path, sizeof(path), "gone.svg");
	fd = file_stage_open(&s, path, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	close(fd);
	file_stage_close(&s);
	cr_assert_eq(entries(), 0);

	fd = file_stage_open(&s, path, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	cr_assert_eq(file_stage_publish(&s, path, err, sizeof(err)), 0, "%s", err);
	/* Replaced by someone else meanwhile: theirs is left alone (ours
	 * still open, so its inode number is not theirs). */
	cr_assert_eq(unlink(path), 0);
	other = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(other, 0);
	close(other);
	file_stage_remove(&s);
	cr_assert_eq(access(path, F_OK), 0);
	close(fd);
	file_stage_close(&s);

	/* Still ours: removed. */
	cr_assert_eq(unlink(path), 0);
	fd = file_stage_open(&s, path, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	cr_assert_eq(file_stage_publish(&s, path, err, sizeof(err)), 0, "%s", err);
	file_stage_remove(&s);
	close(fd);
	file_stage_close(&s);
	cr_assert_eq(entries(), 0);
}

Test(file, folder_trust)
{
	char err[256];
	bool trusted = false;
	int fd = file_folder_open(dir, &trusted, err, sizeof(err));

	cr_assert_geq(fd, 0, "%s", err);
	cr_assert(trusted, "a 0700 folder of ours under /tmp");
	close(fd);
	cr_assert_eq(chmod(dir, 0777), 0);
	fd = file_folder_open(dir, &trusted, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	cr_assert(!trusted, "open to all without the sticky bit");
	close(fd);
}
