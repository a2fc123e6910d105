/* SPDX-License-Identifier: MIT */
/*
 * lifecycle.c - starting and stopping the recorder: lazy start at the first
 * probe, rec_start/rec_stop/rec_flush, the end of the file at exit, and the
 * fork policy (a child records to its own file only when the output name
 * has %p). All state changes happen under rec__g.lock; probes only read
 * rec__g.state and their own thread's `off` flag.
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct rec__global rec__g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
/* The output pattern (with %p unexpanded) in force, for a child after fork. */
static char output_pattern[4096];
static bool pattern_from_config;

/* The process the running recording is of: a vfork() child shares our memory. */
static pid_t recording_pid;
/*
 * A stop of the running recording is under way in this process (stop(),
 * rec__exit_end()): from before the state leaves REC__RUNNING (release) to
 * the writer's join; never cleared by an _exit()'s end, which the process's
 * end follows. An _exit() on another thread meanwhile waits for that end
 * (rec__exit_wait_stop(), finding F31).
 */
static int stop_busy;
/*
 * A start of recording is under way (rec__start_locked(), under g.lock: it
 * opens the file, faults the ring pool in, starts the writer: milliseconds).
 * An _exit() on another thread meanwhile waits for it and ends the
 * recording, rather than leave an empty file (finding F34).
 */
static int start_busy;
static pid_t start_pid; /* the process whose start it is (a vfork child's pid differs) */
/* rec_start()'s config of the running recording (its output in config_output), for a
 * restart after a failed exec. */
static struct rec_config start_config;
static bool has_start_config;
static char config_output[sizeof(output_pattern)];
/*
 * While recording restarts after a failed exec: the file the exec's stop
 * ended is kept, known by its name and, while it is still at that name, by
 * its device and inode (a file compacted at its end, compact.c, was renamed
 * over it: another inode, and the old number free; is_exec_ended()).
 */
static struct rec__fd_id exec_ended;
static char exec_ended_path[sizeof(rec__g.cfg.output)];
static bool exec_restarting;
/*
 * CLOCK_MONOTONIC at the last exec's stop: while recording restarts after
 * that exec failed, a trace of this pid begun before it is kept too. A
 * program that retries a failing exec ends one file per try, and the
 * restart after the second try must not take the name of the first
 * (exec_ended names only the last one).
 */
static uint64_t exec_stop_ns;

/*
 * At exit the file is finished, and a parked writer that never ran quits.
 * A recording that never started will not start after this: a probe in a
 * later exit handler or destructor would begin a file nobody finishes.
 */
static void announce(const char *text, bool path);

/* REC_SAMPLE's notes for `tracetool record` (sample.c), at exit and at _exit(). */
static void exit_notes(void)
{
	int signo;

	/* REC_SAMPLE: no sample because the program blocked the signal (sample.c). */
	if (rec__sample_exit_check(&signo)) {
		char why[64];

		snprintf(why, sizeof(why), "!sample-signal-blocked %d", signo);
		announce(why, false);
	} else if (rec__sample_exit_closed()) {
		announce("!sample-descriptors-closed", false);
	}
}

/* A note for `tracetool record` from sample.c, when it happens (handed in: no call cycle). */
static void sample_note(const char *why)
{
	announce(why, false);
}

static void at_exit(void)
{
	exit_notes();
	rec_stop();
	/* g.lock held: a handler on this thread (a sample) must not take it. */
	rec__in_librec = 1;
	pthread_mutex_lock(&rec__g.lock);
	if (rec__g.state == REC__NEVER_STARTED)
		__atomic_store_n(&rec__g.state, REC__STOPPED, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&rec__g.lock);
	rec__writer_retire();
	rec__in_librec = 0;
}

static void init_conds(void)
{
	pthread_cond_init(&rec__g.flushed, NULL);
}

/* Lock order: the module scan's lock (taken by the writer and by a
 * dlclose(), holding nothing else), then the site lock, then g.lock. */
static void fork_prepare(void)
{
	/* Until the fork is done: a handler (a sample) takes none of these locks. */
	rec__in_librec = 1;
	rec__modules_fork_prepare();
	rec__site_lock();
	pthread_mutex_lock(&rec__g.lock);
	rec__mem_fork_prepare();
}

static void fork_parent(void)
{
	rec__mem_fork_parent();
	pthread_mutex_unlock(&rec__g.lock);
	rec__site_unlock();
	rec__modules_fork_parent();
	rec__in_librec = 0;
}

/*
 * In the child only the forking thread exists: no writer, and the file is
 * the parent's. Forget both; record again, to a file of its own, only if the
 * output name has %p.
 */
static void fork_child(void)
{
	/* Never started: the pattern is REC_OUTPUT's, as set now (no default has %p). */
	const char *pattern = output_pattern[0] ? output_pattern : rec__env_output();

	rec__mem_fork_child();
	rec__modules_fork_child();
	rec__crash_fork_child();
	rec__site_reinit_lock();
	pthread_mutex_init(&rec__g.lock, NULL);
	init_conds();
	rec__fd_close(&rec__g.fd, &rec__g.fd_id); /* the parent's, if still ours */
	rec__writer_forget();
	stop_busy = 0; /* a stop the parent had under way is not the child's */
	rec__g.writer_running = false;
	rec__g.stop_requested = false;
	rec__g.flush_requested = rec__g.flush_done = 0;
	rec__g.write_error = 0;
	rec__flight_forget();
	rec__thread_forget_all();
	if (rec__g.state == REC__RUNNING || rec__g.state == REC__NEVER_STARTED) {
		bool has_pid = pattern && strstr(pattern, "%p");
		__atomic_store_n(&rec__g.state, has_pid ? REC__NEVER_STARTED : REC__DISABLED, __ATOMIC_RELEASE);
		if (!has_pid)
			__atomic_store_n(&rec__disabled, 1, __ATOMIC_RELAXED);
	}
	/* REC_SAMPLE: the child's one thread, if it records (%p). */
	rec__sample_fork_child(rec__g.state == REC__NEVER_STARTED);
	/* A child that will record gets its parked writer now (see rec_load()). */
	if (rec__g.state == REC__NEVER_STARTED && !rec__env_disabled())
		rec__writer_park();
	rec__in_librec = 0;
}

static void init_process(void)
{
	rec__output_image_began();
	init_conds();
	rec__thread_init_key();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(at_exit);
}

/*
 * At load time, so that the fork policy holds even for a child forked
 * before the parent's first probe, and so that our exit handler, registered
 * first, runs last: the host's own atexit handlers and C++ destructors run
 * before the file is finished, and their probes are recorded.
 *
 * It also creates the writer thread, parked: recording still starts at the
 * first probe (no file before it), but that probe may be in a signal
 * handler, where creating a thread or calling malloc can deadlock or
 * corrupt the heap (the handler may have interrupted malloc). With the
 * writer parked, the first probe allocates nothing: it opens the file,
 * maps its ring and tells the writer to go. Not with REC_DISABLE set at
 * load. Priority 101: in a static link, before the program's own
 * constructors, which may probe. A probe that still comes first (another
 * library's constructor) starts the writer itself, as before.
 */
__attribute__((constructor(101))) static void rec_load(void)
{
	rec__log_init();
	pthread_once(&init_once, init_process);
	if (rec__env_disabled())
		return;
	/*
	 * REC_SAMPLE: sampling is set up here, in normal context (a library to
	 * load, a signal handler to install), and every thread armed; the
	 * first sample starts recording as a first probe would, so a program
	 * with no probe at all is recorded, and one that calls rec_start()
	 * early still names its own output.
	 */
	uint32_t hz;
	int bad = rec__env_sample_hz(&hz);

	/* Taking g.lock below: a sample on this thread must not (sample.c). */
	rec__in_librec = 1;
	if (!bad)
		rec__sample_init(hz, rec__start_lazy, sample_note);
	rec__writer_park();
	if (bad)
		rec__start_lazy(); /* a bad REC_SAMPLE: its one line now (config.c), not never */
	rec__in_librec = 0;
}

/* Why open_one() passed a file by. */
enum pass_by {
	PASS_NONE,
	PASS_BUSY,    /* another live recording holds its lock */
	PASS_EARLIER, /* it holds an earlier program's recording of this process (exec) */
};

/*
 * Whether st is the file the exec's stop ended, by device and inode: only
 * while that file is still at its path. Compacted at its end (compact.c), a
 * new inode took its path and the old number is free: the next name,
 * created for the recording that goes on, may get it, and was passed by as
 * the ended file, an empty stray file left behind (F13). The name and the
 * header (holds_earlier()) still know the ended file then.
 */
static bool is_exec_ended(const struct stat *st)
{
	struct stat at;

	return st->st_dev == exec_ended.dev && st->st_ino == exec_ended.ino &&
	       lstat(exec_ended_path, &at) == 0 && at.st_dev == exec_ended.dev &&
	       at.st_ino == exec_ended.ino;
}

/*
 * Whether the regular file fd names holds the recording of an earlier
 * program of this process (the one that exec()ed this one, or the one
 * before it), or the file the stop before a failed exec ended: kept, never
 * truncated (rec(3), ONE FILE, ONE LIVE RECORDING). A file of the same pid
 * that this program began (rec_start() after rec_stop()) is replaced as
 * before.
 */
static bool holds_earlier(const char *path, int fd, const struct stat *st)
{
	char self[40];
	struct stat rs;
	bool earlier;
	int rfd;

	if (exec_restarting && (strcmp(path, exec_ended_path) == 0 || is_exec_ended(st)))
		return true;
	/* fd is write-only: the same file opened again to read its head. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	rfd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (rfd < 0)
		rfd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW);
	if (rfd < 0)
		return false;
	earlier = fstat(rfd, &rs) == 0 && rs.st_dev == st->st_dev && rs.st_ino == st->st_ino &&
		  (rec__output_begun_earlier(rfd) ||
		   (exec_restarting && rec__output_begun_before(rfd, exec_stop_ns)));
	close(rfd); /* the lock is fd's own (flock: per open file), it stays */
	return earlier;
}

/*
 * Opens `path` for a new recording through rec__output_open() (output.c):
 * never blocking, a symbolic link at the path refused, created with
 * REC_FILE_MODE; a FIFO or device is written non-blocking (the writer
 * handles EAGAIN, writer.c), a terminal is refused. A regular file is
 * truncated only under an exclusive flock(), which it keeps while the
 * recording runs: if another live recording holds it (a traced program run
 * by a traced program, two programs in one directory), or if it holds the
 * recording of an earlier program of this process (holds_earlier()), it is
 * left alone and *by says why. The kernel drops the lock when its holder
 * dies, so a crashed recording's file is overwritten as before.
 * Return: the fd, or a negative errno (one stderr line said why, unless *by
 * is set: -EBUSY).
 */
static int open_one(const char *path, enum pass_by *by)
{
	char pb[REC__LOG_PATH_BYTES];
	const char *why;
	struct stat st;
	int fd, err;

	*by = PASS_NONE;
	fd = rec__output_open(path, REC__OUT_STREAM, rec__g.cfg.file_mode, &why);
	if (fd < 0) {
		rec__log("cannot %s %s: %s; tracing disabled",
			 why && strcmp(why, "a terminal") == 0 ? "write" : "open",
			 rec__log_path(path, pb, sizeof(pb)), why ? why : strerror(-fd));
		return fd;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		rec__log("cannot open %s: %s; tracing disabled", rec__log_path(path, pb, sizeof(pb)),
			 strerror(-err));
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode))
		return fd; /* FIFO or device: nothing to truncate, writes never block */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
		*by = PASS_BUSY;
		close(fd);
		return -EBUSY;
	}
	/* Locked (or locks are not supported here: as before, truncate). */
	if (holds_earlier(path, fd, &st)) {
		/*
		 * A descriptor named (/dev/stdout redirected to a file) is a
		 * stream, as a FIFO is (rec(3), Exec): this recording follows the
		 * earlier program's in it (the writer starts at the offset, writer.c),
		 * never in a name made from it (/dev/stdout-PID).
		 */
		if (rec__output_names_own_fd(path) && lseek(fd, 0, SEEK_END) >= 0)
			return fd;
		*by = PASS_EARLIER;
		close(fd);
		return -EBUSY;
	}
	if (ftruncate(fd, 0) < 0) {
		err = -errno;
		rec__log("cannot open %s: %s; tracing disabled", rec__log_path(path, pb, sizeof(pb)),
			 strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

/*
 * The k-th name after `path` (k >= 1): "dir/trace.zst" -> "dir/trace-<pid>.zst",
 * then "dir/trace-<pid>-2.zst", "-3", ...; "trace" -> "trace-<pid>".
 */
static int fallback_name(const char *path, unsigned k, char *out, size_t out_bytes)
{
	const char *base = strrchr(path, '/'), *dot;
	char nth[16] = "";
	int n;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		dot = base + strlen(base);
	if (k > 1)
		snprintf(nth, sizeof(nth), "-%u", k);
	n = snprintf(out, out_bytes, "%.*s-%d%s%s", (int)(dot - path), path, (int)getpid(), nth,
		     dot);
	return n < 0 || (size_t)n >= out_bytes ? -ENAMETOOLONG : 0;
}

/* Names tried after the output's own: an exec chain of that many programs. */
#define MAX_FALLBACKS 1000u

static int open_output(char *path, size_t path_bytes)
{
	/* Static: under rec__g.lock, and off a signal handler's small stack (announce()). */
	static char other[sizeof(rec__g.cfg.output)];
	char pb[REC__LOG_PATH_BYTES], pb2[REC__LOG_PATH_BYTES];
	enum pass_by by, first;
	int fd = open_one(path, &first);

	if (first == PASS_NONE)
		return fd;
	for (unsigned k = 1; k <= MAX_FALLBACKS; k++) {
		if (fallback_name(path, k, other, sizeof(other)) < 0 || strlen(other) >= path_bytes)
			break;
		fd = open_one(other, &by);
		if (by != PASS_NONE)
			continue;
		if (fd < 0)
			return fd; /* logged */
		if (exec_restarting)
			; /* rec__exec_failed() says where recording goes on */
		else if (first == PASS_BUSY)
			rec__log("%s is being written by another recording; writing %s instead",
				 rec__log_path(path, pb, sizeof(pb)),
				 rec__log_path(other, pb2, sizeof(pb2)));
		else if (k == 1)
			rec__log("%s holds the recording of this process's program before exec; "
				 "writing %s instead",
				 rec__log_path(path, pb, sizeof(pb)),
				 rec__log_path(other, pb2, sizeof(pb2)));
		else
			rec__log("%s and the %u name%s after it hold the recordings of this process's "
				 "programs before exec; writing %s instead",
				 rec__log_path(path, pb, sizeof(pb)), k - 1, k == 2 ? "" : "s",
				 rec__log_path(other, pb2, sizeof(pb2)));
		memcpy(path, other, strlen(other) + 1);
		return fd;
	}
	rec__log("%s and the names after it (%s ...) are being written by other recordings or hold "
		 "this process's earlier ones; tracing disabled",
		 rec__log_path(path, pb, sizeof(pb)), rec__log_path(other, pb2, sizeof(pb2)));
	return -EBUSY;
}

/*
 * Tells `tracetool record` which file this process writes (tracetool(1),
 * "record"; rec(3), REC_RECORD_LOG): appends "PID<tab>PATH<NUL>" to the
 * file REC_RECORD_LOG names, PATH absolute, in one write (O_APPEND: lines
 * of processes recording at once do not mix), or "PID<tab>!WHY<NUL>" for
 * a note (tell()). Only a regular file that exists is written (never
 * created, never through a link); setuid and setgid programs read no
 * REC_RECORD_LOG (secure_getenv()). Failures are silent: the list is a
 * courtesy, the trace is written regardless.
 */
static void announce(const char *text, bool path)
{
	/*
	 * Static, not on the stack: the first probe, which starts recording
	 * and so calls this, may run in a signal handler on a small
	 * alternate stack (SIGSTKSZ), which 12 KiB of buffers here overflowed
	 * into the host's heap. One caller at a time (a second one, at exit
	 * while another thread starts, tells nothing: a courtesy).
	 */
	static char cwd[PATH_MAX], line[2 * PATH_MAX + 32];
	static bool busy;
	const char *list = rec__env_record_log();
	struct stat st;
	bool rel = path && text[0] != '/';
	int fd, n;

	if (!list || list[0] != '/')
		return;
	if (__atomic_test_and_set(&busy, __ATOMIC_ACQUIRE))
		return;
	if (rel && !getcwd(cwd, sizeof(cwd)))
		goto out;
	n = snprintf(line, sizeof(line), "%d\t%s%s%s", (int)getpid(), rel ? cwd : "",
		     rel ? "/" : "", text);
	if (n < 0 || (size_t)n >= sizeof(line))
		goto out;
	fd = open(list, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		goto out;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		(void)!write(fd, line, (size_t)n + 1); /* with its NUL */
	close(fd);
out:
	__atomic_clear(&busy, __ATOMIC_RELEASE);
}

static void announce_output(const char *path)
{
	announce(path, true);
}

/*
 * rec__start_locked() - start recording (under rec__g.lock).
 * Return: 0 (also when disabled), -EALREADY, -EINVAL, or a negative errno
 * for the output file; on failure recording is off and a line was logged.
 */
static int start_locked(const struct rec_config *config);

int rec__start_locked(const struct rec_config *config)
{
	int err;

	start_pid = getpid();
	__atomic_store_n(&start_busy, 1, __ATOMIC_RELEASE);
	err = start_locked(config);
	__atomic_store_n(&start_busy, 0, __ATOMIC_RELEASE);
	return err;
}

bool rec__exit_starting(void)
{
	/* Not in a vfork() child: it shares this memory (rec__exit_end() writes
	 * its thread's rec__in_librec), and the recording is its parent's. */
	return !rec__in_librec && __atomic_load_n(&start_busy, __ATOMIC_ACQUIRE) &&
	       getpid() == start_pid;
}

static int start_locked(const struct rec_config *config)
{
	struct rec_config child_cfg = REC_CONFIG_INIT;
	int fd, err;

	pthread_once(&init_once, init_process);
	if (rec__g.state == REC__RUNNING)
		return -EALREADY;
	if (rec__env_disabled()) {
		__atomic_store_n(&rec__g.state, REC__DISABLED, __ATOMIC_RELEASE);
		/* For good (nothing leaves DISABLED): the macros skip librec. */
		__atomic_store_n(&rec__disabled, 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (rec__secure() && !(config && config->output) && !pattern_from_config) {
		/*
		 * A setuid or setgid program: the environment is its caller's, and
		 * so would be the file's name and directory, written with the
		 * program's privileges. Only the program itself may name one.
		 */
		static bool said; /* under rec__g.lock: said once per process */

		if (!said)
			rec__log("a setuid or setgid program: the REC_* environment is ignored and "
				 "nothing is recorded (the program may name its output with rec_start())");
		said = true;
		__atomic_store_n(&rec__g.state, REC__FAILED, __ATOMIC_RELEASE);
		return -EPERM;
	}
	if (!config && pattern_from_config && output_pattern[0]) {
		/* A child after fork keeps the parent's explicit output pattern. */
		child_cfg.output = output_pattern;
		config = &child_cfg;
	}
	err = rec__config_resolve(config, &rec__g.cfg);
	if (err) {
		__atomic_store_n(&rec__g.state, REC__FAILED, __ATOMIC_RELEASE);
		return err;
	}
	if (config != &start_config) {
		/* A restart after a failed exec starts with the same config (rec__exec_failed()). */
		has_start_config = config && config != &child_cfg;
		if (has_start_config) {
			start_config = (struct rec_config)REC_CONFIG_INIT;
			memcpy(&start_config, config,
			       config->size < sizeof(start_config) ? config->size : sizeof(start_config));
			start_config.size = sizeof(start_config);
			if (config->output) {
				snprintf(config_output, sizeof(config_output), "%s", config->output);
				start_config.output = config_output;
			}
		}
	}
	if (config && config->output) {
		snprintf(output_pattern, sizeof(output_pattern), "%s", config->output);
		pattern_from_config = true;
	} else {
		/* REC_OUTPUT or the default, as rec__config_resolve() resolved it. */
		snprintf(output_pattern, sizeof(output_pattern), "%s", rec__g.cfg.output_pattern);
		pattern_from_config = false;
	}
	/* Flight mode opens a file per snapshot (flight.c), none now. */
	fd = rec__g.cfg.flight ? rec__flight_init(&rec__g.cfg)
			       : open_output(rec__g.cfg.output, sizeof(rec__g.cfg.output));
	if (fd < 0) {
		__atomic_store_n(&rec__g.state, REC__FAILED, __ATOMIC_RELEASE);
		return fd;
	}
	rec__g.fd = rec__g.cfg.flight ? -1 : fd;
	if (rec__g.fd >= 0 && (err = rec__fd_remember(rec__g.fd, &rec__g.fd_id)) < 0) {
		rec__log("cannot open %s: %s; tracing disabled", rec__g.cfg.output, strerror(-err));
		close(rec__g.fd);
		rec__g.fd = -1;
		__atomic_store_n(&rec__g.state, REC__FAILED, __ATOMIC_RELEASE);
		return err;
	}
	if (!rec__g.cfg.flight)
		announce_output(rec__g.cfg.output);
	rec__counters_configure(rec__g.cfg.counters);
	rec__g.stop_requested = false;
	rec__g.write_error = 0;
	rec__clock_sync(rec__g.cfg.use_tsc, &rec__g.start_sync);
	/*
	 * Threads left from an earlier recording: start them afresh in this
	 * file, numbered from 1 again (the writer resets its own fields).
	 */
	rec__g.next_serial = 0;
	for (struct rec__thread *t = rec__g.threads; t; t = t->reg.next) {
		t->reg.serial = ++rec__g.next_serial;
		rec__writer_thread_restart(t);
		/* A scope still open from the last recording exits silently (probe.c). */
		__atomic_store_n(&t->ring.p.gen, t->ring.p.gen + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&t->ring.p.off, 0, __ATOMIC_RELAXED);
	}
	/*
	 * The pool of rings, before any probe's stamp (mem.c): a thread that
	 * starts flat out grows to REC_BUFFER without waiting for the writer.
	 */
	rec__mem_configure(rec__g.cfg.memory_bytes, rec__g.cfg.buffer_bytes);
	rec__mem_refill(SIZE_MAX, SIZE_MAX);
	rec__crash_arm(rec__writer_crash_view); /* a failure is logged; recording goes on without it */
	err = rec__writer_start();
	if (err) {
		rec__log("cannot start the writer thread: %s; tracing disabled", strerror(-err));
		rec__fd_close(&rec__g.fd, &rec__g.fd_id);
		__atomic_store_n(&rec__g.state, REC__FAILED, __ATOMIC_RELEASE);
		return err;
	}
	recording_pid = getpid();
	__atomic_store_n(&rec__g.state, REC__RUNNING, __ATOMIC_RELEASE);
	return 0;
}

/*
 * rec__start_lazy() - the first probe's start (or rec_thread_name()'s):
 * starts recording with the environment's configuration if nothing has
 * started it yet. Called before rec__thread_attach(), with rec__in_librec
 * set. Return: true if recording is running.
 */
bool rec__start_lazy(void)
{
	if (__atomic_load_n(&rec__g.state, __ATOMIC_ACQUIRE) == REC__NEVER_STARTED) {
		pthread_mutex_lock(&rec__g.lock);
		if (rec__g.state == REC__NEVER_STARTED)
			rec__start_locked(NULL);
		pthread_mutex_unlock(&rec__g.lock);
	}
	return __atomic_load_n(&rec__g.state, __ATOMIC_ACQUIRE) == REC__RUNNING;
}

int rec_thread_name(const char *name)
{
	struct rec__thread *t = NULL;

	if (!name)
		return -EINVAL;
	rec__in_librec = 1;
	if (rec__start_lazy())
		t = rec__thread_attach();
	if (t)
		rec__thread_set_name(t, name);
	rec__in_librec = 0;
	return 0;
}

/*
 * Here, not in flight.c, because of the lazy start: lifecycle.c calls
 * flight.c, and flight.c calls nothing in lifecycle.c.
 */
int rec_snapshot(const char *reason)
{
	int err;

	/*
	 * A signal handler that interrupted librec on this thread (this very
	 * function, rec_flush(), rec_start(), a first probe): the locks librec
	 * would take may be held by the code it interrupted. Refused, never a
	 * deadlock.
	 */
	if (rec__in_librec)
		return -EDEADLK;
	rec__in_librec = 1;
	err = rec__flight_snapshot(reason, rec__start_lazy());
	rec__in_librec = 0;
	return err;
}

int rec_start(const struct rec_config *config)
{
	int err;

	rec__in_librec = 1;
	pthread_mutex_lock(&rec__g.lock);
	err = rec__start_locked(config);
	pthread_mutex_unlock(&rec__g.lock);
	rec__in_librec = 0;
	return err;
}

/* *ended: whether this call ended a running recording (NULL: not asked). */
static uint64_t monotonic_ns(void);
static void wait_stop(uint64_t t0);

static int stop(bool *ended)
{
	int err;

	pthread_mutex_lock(&rec__g.lock);
	if (ended)
		*ended = rec__g.state == REC__RUNNING;
	if (rec__g.writer_running)
		__atomic_store_n(&stop_busy, 1, __ATOMIC_RELAXED); /* published by the state's store */
	if (rec__g.state == REC__RUNNING)
		__atomic_store_n(&rec__g.state, REC__STOPPED, __ATOMIC_RELEASE);
	if (!rec__g.writer_running) {
		err = rec__g.write_error;
		pthread_mutex_unlock(&rec__g.lock);
		/* Another thread's stop under way (an _exit()'s, which joins
		 * nothing): its end, so that exit() does not end the process in
		 * its middle, nor rec_stop() return before the file is (F31). */
		wait_stop(monotonic_ns());
		return err ? -EIO : 0;
	}
	rec__thread_set_all_off();
	rec__g.stop_requested = true;
	rec__g.writer_running = false;
	rec__writer_wake();
	pthread_mutex_unlock(&rec__g.lock);

	rec__writer_stop();
	__atomic_store_n(&stop_busy, 0, __ATOMIC_RELEASE);

	pthread_mutex_lock(&rec__g.lock);
	rec__fd_close(&rec__g.fd, &rec__g.fd_id); /* never the host's file under our old number */
	err = rec__g.write_error;
	/* Wake flushers that raced with the stop: everything is written now. */
	rec__g.flush_done = rec__g.flush_requested;
	pthread_cond_broadcast(&rec__g.flushed);
	pthread_mutex_unlock(&rec__g.lock);
	return err ? -EIO : 0;
}

static int flush(void)
{
	uint64_t ticket;
	int err;

	pthread_mutex_lock(&rec__g.lock);
	if (rec__g.state != REC__RUNNING || !rec__g.writer_running) {
		err = rec__g.write_error;
		pthread_mutex_unlock(&rec__g.lock);
		return err ? -EIO : 0;
	}
	ticket = ++rec__g.flush_requested;
	rec__writer_wake();
	while (rec__g.flush_done < ticket && rec__g.state == REC__RUNNING)
		pthread_cond_wait(&rec__g.flushed, &rec__g.lock);
	err = rec__g.write_error;
	pthread_mutex_unlock(&rec__g.lock);
	return err ? -EIO : 0;
}

int rec_stop(void)
{
	int err;

	rec__in_librec = 1;
	err = stop(NULL);
	rec__in_librec = 0;
	return err;
}

int rec_flush(void)
{
	int err;

	rec__in_librec = 1;
	err = flush();
	rec__in_librec = 0;
	return err;
}

bool rec__exec_wanted(void)
{
	/*
	 * Nothing while a handler interrupted librec on this thread (its locks
	 * may be held), and nothing in a vfork() child: the recording running
	 * in this memory is its parent's, which goes on after the exec (or
	 * the _exit()). The child only reads here. Nor in a child made past
	 * fork()'s handlers (a raw clone): the pid is the parent's too.
	 */
	return !rec__in_librec && __atomic_load_n(&rec__g.state, __ATOMIC_ACQUIRE) == REC__RUNNING &&
	       getpid() == recording_pid;
}

bool rec__exec_begin(void)
{
	struct timespec now;
	struct rec__fd_id id;
	bool ended = false;

	if (!rec__exec_wanted())
		return false;
	rec__in_librec = 1;
	pthread_mutex_lock(&rec__g.lock);
	id = rec__g.fd_id;
	pthread_mutex_unlock(&rec__g.lock);
	clock_gettime(CLOCK_MONOTONIC, &now);
	stop(&ended);
	if (ended && !rec__g.cfg.flight) {
		pthread_mutex_lock(&rec__g.lock);
		exec_ended = id;
		exec_stop_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
		pthread_mutex_unlock(&rec__g.lock);
	}
	rec__in_librec = 0;
	return ended;
}

/*
 * The bounds of _exit()'s wait for the writer (rec(3), "Exit"). Its last
 * pass writes what the rings hold and the end marker in milliseconds;
 * EXIT_END_NS is for a writer that cannot (an output that takes nothing, a
 * lock that code this call interrupted holds): then the process ends as
 * after a kill, what the writer had written in the file, and one stderr
 * line says so, as the writer's own when it gives up on a stalled output
 * (after 10 s, which exit() waits for). Past the marker,
 * the recompression of what the writer shed under pressure (compact.c) has
 * a wall-time budget of its own (5 s), which exit() waits for too; a kill
 * during it leaves the file whole.
 */
#define EXIT_END_NS 2000000000ull
#define EXIT_FINAL_NS 6000000000ull

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The writer did not end in time: one line, as when it gives up on a stalled output. */
static void exit_unended(void)
{
	char pb[REC__LOG_PATH_BYTES];

	rec__log("_exit(): %s not ended: the writer did not finish within %llu s; the file is as "
		 "after a kill, without its end marker",
		 rec__log_path(rec__g.cfg.output, pb, sizeof(pb)),
		 (unsigned long long)(EXIT_END_NS / 1000000000u));
}

/*
 * Another thread is ending the recording (stop_busy): the end marker and
 * the final file are waited for, bounded as rec__exit_end()'s own wait, on
 * the writer's futex word (no join: the thread that stops joins). Not in
 * a child (fork() or vfork(): the stop is the parent's, or forgotten).
 */
static void wait_stop(uint64_t t0)
{
	if (!__atomic_load_n(&stop_busy, __ATOMIC_ACQUIRE) || getpid() != recording_pid)
		return;
	rec__writer_wait_end(t0 + EXIT_END_NS, t0 + EXIT_END_NS + EXIT_FINAL_NS);
}

void rec__exit_wait_stop(void)
{
	sigset_t all;

	/* The state (acquire) first: a stop seen in it is seen in stop_busy. */
	if (rec__in_librec || __atomic_load_n(&rec__g.state, __ATOMIC_ACQUIRE) == REC__RUNNING ||
	    !__atomic_load_n(&stop_busy, __ATOMIC_ACQUIRE) || getpid() != recording_pid)
		return;
	/* As rec__exit_end(): the process is ending; no signal ends it before the file. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	wait_stop(monotonic_ns());
}

void rec__exit_end(void)
{
	struct timespec pause_1ms = { 0, 1000000 };
	uint64_t t0 = monotonic_ns();
	sigset_t all;
	int err;

	exit_notes(); /* as at exit; before this thread blocks the signal */
	/*
	 * From here the process is ending, as it is once exit_group runs (the
	 * kernel delivers no signal to it then): a signal now, a parent's
	 * SIGTERM to a worker that already called _exit(), must not end it
	 * without its file. The end undoes the mask.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	rec__in_librec = 1;
	/* g.lock is held briefly (never across a wait; a start's few milliseconds of faulting
	 * the pool in): tried, not waited for unbounded. */
	while ((err = pthread_mutex_trylock(&rec__g.lock)) != 0) {
		if (err != EBUSY || monotonic_ns() - t0 >= EXIT_END_NS) {
			exit_unended();
			return;
		}
		nanosleep(&pause_1ms, NULL);
	}
	if (rec__g.state != REC__RUNNING || !rec__g.writer_running || getpid() != recording_pid) {
		pthread_mutex_unlock(&rec__g.lock);
		/* Another thread got here (or to exit()) first: its end, not the middle of it. */
		wait_stop(t0);
		return;
	}
	/* What stop() asks of the writer; then its end is waited for, bounded, never joined. */
	__atomic_store_n(&stop_busy, 1, __ATOMIC_RELAXED); /* published by the state's store */
	__atomic_store_n(&rec__g.state, REC__STOPPED, __ATOMIC_RELEASE);
	rec__thread_set_all_off();
	rec__g.stop_requested = true;
	rec__g.writer_running = false;
	rec__writer_wake();
	pthread_mutex_unlock(&rec__g.lock);
	if (!rec__writer_wait_end(t0 + EXIT_END_NS, t0 + EXIT_END_NS + EXIT_FINAL_NS))
		exit_unended();
}

void rec__exec_failed(const char *what, int err)
{
	/* Static: g.lock is held while they are used, and stacks may be small. */
	static char pb[REC__LOG_PATH_BYTES], pb2[REC__LOG_PATH_BYTES], pb3[REC__LOG_PATH_BYTES];
	const char *ended = exec_ended_path;
	int e = -EALREADY;

	rec__in_librec = 1;
	pthread_mutex_lock(&rec__g.lock);
	snprintf(exec_ended_path, sizeof(exec_ended_path), "%s", rec__g.cfg.output);
	/* Unless another thread started a recording meanwhile. */
	if (rec__g.state == REC__STOPPED) {
		exec_restarting = true;
		e = rec__start_locked(has_start_config ? &start_config : NULL);
		exec_restarting = false;
	}
	if (e == 0 && rec__g.cfg.flight)
		rec__log("exec of %s failed (%s): recording goes on",
			 rec__log_path(what, pb, sizeof(pb)), strerror(err));
	else if (e == 0)
		rec__log("exec of %s failed (%s): %s holds the recording up to it, which goes on in %s",
			 rec__log_path(what, pb, sizeof(pb)), strerror(err),
			 rec__log_path(ended, pb2, sizeof(pb2)),
			 rec__log_path(rec__g.cfg.output, pb3, sizeof(pb3)));
	pthread_mutex_unlock(&rec__g.lock);
	rec__in_librec = 0;
}

const char *rec_strerror(int err)
{
	switch (err) {
	case 0: return "success";
	case -EALREADY: return "already recording";
	case -EINVAL: return "invalid configuration";
	case -EIO: return "the trace file could not be written";
	case -ENOMEM: return "out of memory";
	case -EDEADLK: return "called from a signal handler that interrupted librec on this thread";
	default: return err < 0 ? strerror(-err) : "unknown error";
	}
}

unsigned rec_version(void)
{
	return REC_VERSION_NUMBER;
}
