/* SPDX-License-Identifier: MIT */
/*
 * output.c - the one way librec opens a file it writes: the stream file
 * (lifecycle.c), a flight snapshot (flight.c, from the writer) and a crash
 * snapshot (flight.c, from the crash handler). Whatever is at the path, the
 * open never blocks and never follows a symbolic link it was not told to
 * expect, so that no path a user or an attacker prepares can hang the host
 * or turn its writes onto another file (README, "What librec guarantees").
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * Links that name a file descriptor the process already holds (/dev/stdout,
 * /dev/fd/3 of a shell's `3> >(cmd)`): following them reaches nothing the
 * process could not write anyway, and a user who names one expects it.
 */
bool rec__output_names_own_fd(const char *path)
{
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/" };

	if (strcmp(path, "/dev/stdout") == 0 || strcmp(path, "/dev/stderr") == 0)
		return true;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t n = strlen(dirs[i]);
		const char *p = path + n;

		if (strncmp(path, dirs[i], n) != 0 || !*p)
			continue;
		while (*p >= '0' && *p <= '9')
			p++;
		return !*p;
	}
	return false;
}

/* What a file that is not a regular one is, for the log line. */
static const char *kind_of(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISLNK(m))
		return "a symbolic link";
	return "not a regular file";
}

/*
 * A descriptor of librec's never takes 0, 1 or 2: in a host started with one
 * of them closed (`prog 2>&-`), the lowest free number is a standard one, and
 * the host's own writes to it, which fail without librec, would land in the
 * file (rec(3), OUTPUTS AND PRIVILEGES). Async-signal-safe.
 * Return: fd, or its copy at 3 or above (fd closed), or -errno (fd closed).
 */
int rec__fd_above_stdio(int fd)
{
	int high, err;

	if (fd < 0 || fd > 2)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	err = high < 0 ? -errno : 0;
	close(fd);
	return high < 0 ? err : high;
}

int rec__output_open(const char *path, unsigned flags, unsigned mode, const char **why)
{
	bool stream = flags & REC__OUT_STREAM, follow = rec__output_names_own_fd(path);
	struct stat st;
	int fd, err;

	*why = NULL;
	if (!mode)
		mode = REC__DEFAULT_FILE_MODE; /* a configuration never resolved */
	/*
	 * What is there already is judged before it is opened: opening a device
	 * can have effects of its own, and a FIFO with a reader would see its
	 * writer come and go. fstat() below judges what was really opened.
	 */
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode) && !follow) {
			*why = "a symbolic link (name its target to write there)";
			return -ELOOP;
		}
		if (!stream && !S_ISLNK(st.st_mode) && !S_ISREG(st.st_mode)) {
			*why = kind_of(st.st_mode);
			return -EINVAL;
		}
	}
	fd = open(path,
		  O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
		  (mode_t)mode);
	if (fd < 0) {
		err = -errno;
		if (err == -ELOOP && !follow && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			*why = "a symbolic link (name its target to write there)";
		else if (err == -ENXIO && stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
			*why = "a FIFO with no reader";
		return err;
	}
	fd = rec__fd_above_stdio(fd);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (S_ISREG(st.st_mode)) {
		if ((flags & REC__OUT_TRUNC) && ftruncate(fd, 0) < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		return fd;
	}
	if (!stream) {
		*why = kind_of(st.st_mode);
		close(fd);
		return -EINVAL;
	}
	if (isatty(fd)) {
		*why = "a terminal";
		close(fd);
		return -EINVAL;
	}
	return fd; /* a FIFO or a device: non-blocking, the writer waits for room (writer.c) */
}

int rec__fd_remember(int fd, struct rec__fd_id *id)
{
	struct stat st;
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fstat(fd, &st) < 0)
		return -errno;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->flags = flags;
	return 0;
}

/* fd names id's file, through an open with id's status flags; *st: its fstat(). */
static bool same_file(int fd, const struct rec__fd_id *id, struct stat *st)
{
	return fd >= 0 && fstat(fd, st) == 0 && st->st_dev == id->dev && st->st_ino == id->ino &&
	       fcntl(fd, F_GETFL) == id->flags;
}

bool rec__fd_is_ours(int fd, const struct rec__fd_id *id)
{
	struct stat st;

	return same_file(fd, id, &st);
}

bool rec__fd_is_ours_at(int fd, const struct rec__fd_id *id, uint64_t offset)
{
	struct stat st;

	return same_file(fd, id, &st) &&
	       (!S_ISREG(st.st_mode) || lseek(fd, 0, SEEK_CUR) == (off_t)offset);
}

void rec__fd_close(int *fd, const struct rec__fd_id *id)
{
	if (rec__fd_is_ours(*fd, id))
		close(*fd);
	*fd = -1;
}

bool rec__output_origin(int fd, uint32_t *pid, uint64_t *start_mono_ns)
{
	/* The index frame's head, FRAME (8 + 8 or 12 bytes), FILE_HEADER through start_mono_ns. */
	uint8_t b[56 + 8 + 12 + 8 + 48];
	ssize_t n = pread(fd, b, sizeof(b), 0);
	uint32_t size;
	size_t at;

	if (n < 56 + 8 + 8 + 8 + 48 || !RECFMT_IS_INDEX_MAGIC(recfmt_load_u32le(b)) ||
	    recfmt_load_u32le(b + 8) != RECFMT_INDEX_ID || b[56] != RECFMT_FRAME)
		return false;
	size = recfmt_load_u32le(b + 60);
	if (size != 8 && size != 12)
		return false;
	at = 56 + 8 + size; /* the FILE_HEADER record */
	if ((size_t)n < at + 8 + 48 || recfmt_load_u32le(b + 48) < at + 8 + 48 - 56 ||
	    b[at] != RECFMT_FILE_HEADER || recfmt_load_u32le(b + at + 4) < 48 ||
	    memcmp(b + at + 8, RECFMT_FILE_MAGIC, 8) != 0)
		return false;
	*pid = recfmt_load_u32le(b + at + 8 + 16);
	*start_mono_ns = recfmt_load_u64le(b + at + 8 + 40);
	return true;
}

/*
 * CLOCK_MONOTONIC when this program image began (lifecycle.c's
 * init_process(), at load): a trace of this pid begun before it was written
 * by an earlier program of this process, which exec()ed this one.
 */
static uint64_t image_start_ns;

void rec__output_image_began(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	image_start_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool rec__output_begun_before(int rfd, uint64_t mono_ns)
{
	uint64_t start_ns;
	uint32_t pid;

	return mono_ns && rec__output_origin(rfd, &pid, &start_ns) && pid == (uint32_t)getpid() &&
	       start_ns < mono_ns;
}

bool rec__output_begun_earlier(int rfd)
{
	return rec__output_begun_before(rfd, image_start_ns);
}

bool rec__file_is_earlier(const char *path)
{
	struct stat st;
	bool earlier;
	int rfd;

	/* Only a regular file is opened: opening a device may have effects of its own. */
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	rfd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW);
	if (rfd < 0)
		return false;
	earlier = rec__output_begun_earlier(rfd);
	close(rfd);
	return earlier;
}

int rec__fd_high(int fd)
{
	struct rlimit rl;
	int high;

	if (fd < 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur <= 64)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, (int)(rl.rlim_cur > 4096 ? 4096 : rl.rlim_cur) / 2);
	if (high < 0)
		return fd;
	close(fd);
	return high;
}
