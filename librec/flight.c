/* SPDX-License-Identifier: MIT */
/*
 * flight.c - REC_MODE=flight, the flight recorder (rec(3), FLIGHT RECORDER): what a
 * trigger is and when one is accepted, the snapshot files' names, and what
 * the writer does with the rings between snapshots. Probes are not touched:
 * they record into their rings exactly as in stream mode.
 *
 * Between snapshots nothing drains the rings: a full ring discards its own
 * oldest chunk in the probe's slow path (ring.h, rec__ring_refresh_flight()),
 * up to the writer's hold, so no ring ever drops or waits for the writer.
 * The writer holds a ring only while it reads it (rec__flight_hold(): the
 * (F1)/(F2) handshake of ring.h): to scan the events it has not seen for
 * REC_TRIGGER (scan(), the way live.c pairs drained events), then gives
 * the ring back (rec__flight_keep()). An accepted trigger freezes the
 * rings (no discarding) until the writer holds its window. A snapshot is
 * written by the writer's own stream machinery (writer.c): it holds each
 * ring at the first event of the window (rec__flight_window_index()),
 * opens the snapshot's file (rec__flight_open()) and drains into it as
 * stream mode does, each ring up to the window's end, then ends the file
 * and gives the rings back. docs/DESIGN.md "Flight recorder" has the
 * picture. REC_TRIGGER names are also resolved to function addresses
 * (modules.c), for the hooks' sites.
 *
 * Triggers come from rec_snapshot() (any thread, under fl.lock), from the
 * REC_SNAPSHOT_SIGNAL handler (async-signal-safe: atomics and a futex
 * wake only) and from the writer's scan. A trigger is accepted (gets a
 * number, %n) only if no snapshot is pending or being written, if at least
 * REC_WINDOW has passed since the last accepted trigger, and if fewer than
 * REC_SNAPSHOT_MAX were accepted: so a burst of triggers makes one file,
 * and a process at most REC_SNAPSHOT_MAX. The others are counted
 * (nr_suppressed of the next snapshot's SNAPSHOT record, and a stderr line
 * at stop).
 *
 * Crash capture (crash.c, another file) takes a snapshot number and opens
 * its file from a signal handler with rec__flight_open_next(): no
 * allocation, no lock, no stdio.
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define SCAN_DEPTH 256u	     /* REC_TRIGGER pairing: deeper enters are not timed */
#define REASON_BYTES 256u

struct trigger {
	uint64_t ticks, mono_ns;
	uint32_t kind; /* enum recfmt_snapshot_kind */
	char reason[REASON_BYTES];
};

struct flight_trigger_spec {
	char name[REC__MAX_NAME_BYTES + 1];
	uint64_t dur_ns, dur_ticks;
	/* Hook-traced functions of that name: their addresses (writer, at start). */
	uintptr_t *addrs;
	uint32_t nr_addrs;
};

/* Writer-private: a thread's REC_TRIGGER pairing state. */
struct rec__flight_thread {
	uint64_t scanned; /* ring index up to which events were scanned */
	uint32_t depth;	  /* open enters, also those deeper than SCAN_DEPTH */
	struct {
		uint64_t ticks;
		uint32_t site;
	} stack[SCAN_DEPTH];
};

static struct {
	/*
	 * Under lock: the accepted trigger the writer has not begun yet
	 * (pending), a snapshot accepted and not yet ended (busy: pending, or
	 * the writer is writing it), the last accepted trigger's time, and the
	 * counts. API callers and the writer take it; never a signal handler.
	 */
	pthread_mutex_t lock;
	bool pending, busy, has_last;
	struct trigger next;
	uint64_t last_mono_ns;
	uint32_t nr_accepted;
	uint64_t nr_suppressed;	      /* since the last accepted trigger */
	uint64_t nr_suppressed_total; /* for the stderr line at stop */
	uint64_t next_suppressed;     /* nr_suppressed handed to `next` */
	/*
	 * Snapshot numbers: taken by accepted triggers and by crash capture
	 * (relaxed atomic add: a handler may take one while the writer does).
	 */
	uint32_t nr_numbers;
	uint32_t base; /* the last number of an earlier program of this process (exec) */
	pid_t numbered_pid; /* the process the numbers are of (fork: the child starts at 1) */
	/*
	 * The signal trigger: the handler stores the time (first signal wins
	 * until the writer takes it: sig_ticks is 0 again) and counts every
	 * signal; the writer reads and clears them (atomics, both sides).
	 */
	uint64_t sig_ticks, sig_mono_ns, nr_sig, nr_sig_taken;
	int sig_installed;
	/* Set at start (rec__flight_init(), under rec__g.lock), read-only after. */
	bool on;
	bool use_tsc;
	uint64_t window_ns, after_ns;
	uint32_t max;
	/* The output name around %n, with %p expanded: head N tail. */
	char head[4096], tail[4096];
	struct flight_trigger_spec *specs;
	uint32_t nr_specs;
	/* Writer-private. */
	uint64_t ticks_per_second;
	uint8_t *site_match; /* per site id: 0 unknown, 1 none, 2 + spec index */
	uint32_t nr_site_match;
	uint32_t resolved_snaps; /* rec__site_nr_snaps() when the names were resolved */
	bool main_stripped, said_unresolved;
} fl = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * Read by every producer's slow path (probe.c, ring.h's flight refresh):
 * recording in flight mode (set at start by the writer's start, under
 * rec__g.lock), wake the writer at each discarded chunk (REC_TRIGGER: its
 * scan must keep up), and the rings frozen: an accepted trigger (or a
 * signal, until the writer judged it) stops every producer discarding, so
 * that the window before the trigger stays until the writer holds it.
 */
uint8_t rec__flight_overwrite;
uint8_t rec__flight_wake_on_discard;
int rec__flight_frozen;

static void freeze(void)
{
	__atomic_store_n(&rec__flight_frozen, 1, __ATOMIC_SEQ_CST);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ----------------------------------------------------------------------
 * Configuration (config.c calls it while resolving).
 */

/* "5s", "500ms", "250us", "100ns", "2min"; a bare number is seconds. Return: 0 or -1. */
int rec__flight_parse_duration(const char *s, bool allow_zero, uint64_t *ns)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
		{ "min", 60000000000ull }, { "h", 3600000000000ull }, { "", 1000000000 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0) || (!allow_zero && !(v > 0)) || !isdigit((unsigned char)*s))
		return -1;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			double n = v * (double)units[i].ns;

			if (n > 86400e9)
				return -1;
			*ns = (uint64_t)(n + 0.5);
			return 0;
		}
	}
	return -1;
}

/*
 * REC_TRIGGER: "NAME>DUR[,NAME>DUR...]". Names are matched exactly against
 * scope names (TRACE_SCOPE's function name, TRACE_SCOPE_NAMED's string).
 * Return: the number of triggers, or -1 if the list is malformed.
 */
static int parse_triggers(const char *list, struct flight_trigger_spec **out)
{
	struct flight_trigger_spec *specs = NULL;
	int n = 0;
	const char *p = list;

	*out = NULL;
	while (*p) {
		const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
		const char *gt = memchr(p, '>', (size_t)(end - p));
		char dur[64];
		struct flight_trigger_spec *grown;
		size_t name_bytes;

		while (p < end && isspace((unsigned char)*p))
			p++;
		if (!gt || gt <= p || (size_t)(end - gt - 1) >= sizeof(dur))
			goto bad;
		name_bytes = (size_t)(gt - p);
		while (name_bytes && isspace((unsigned char)p[name_bytes - 1]))
			name_bytes--;
		if (!name_bytes || name_bytes > REC__MAX_NAME_BYTES)
			goto bad;
		memcpy(dur, gt + 1, (size_t)(end - gt - 1));
		dur[end - gt - 1] = '\0';
		grown = realloc(specs, (size_t)(n + 1) * sizeof(*specs));
		if (!grown)
			goto bad;
		specs = grown;
		memcpy(specs[n].name, p, name_bytes);
		specs[n].name[name_bytes] = '\0';
		{
			char *d = dur;
			size_t k = strlen(d);

			while (isspace((unsigned char)*d))
				d++;
			while (k && isspace((unsigned char)dur[k - 1]))
				dur[--k] = '\0';
			if (rec__flight_parse_duration(d, false, &specs[n].dur_ns))
				goto bad;
		}
		specs[n].dur_ticks = 0;
		specs[n].addrs = NULL;
		specs[n].nr_addrs = 0;
		n++;
		if (n > 64)
			goto bad;
		p = comma ? comma + 1 : end;
	}
	if (!n)
		goto bad;
	*out = specs;
	return n;
bad:
	free(specs);
	return -1;
}

/*
 * rec__flight_config() - REC_MODE, REC_WINDOW, REC_AFTER, REC_TRIGGER,
 * REC_SNAPSHOT_SIGNAL and REC_SNAPSHOT_MAX, as config.c read them into env,
 * parsed into out (config.c calls it before the output name: flight mode
 * has its own default). Return: 0, or -EINVAL after one stderr line naming
 * the bad value.
 */
int rec__flight_config(const struct rec__env *env, struct rec__config *out)
{
	const char *v;
	char pb[REC__LOG_PATH_BYTES];

	out->flight = false;
	out->window_ns = 5000000000ull;
	out->after_ns = 0;
	out->snapshot_signal = 0;
	out->snapshot_max = 10;
	out->triggers[0] = '\0';
	{
		char mode[16];
		size_t k = 0;

		v = env->value[REC__ENV_MODE];
		while (v && isspace((unsigned char)*v))
			v++;
		while (v && v[k] && !isspace((unsigned char)v[k]) && k < sizeof(mode) - 1) {
			mode[k] = v[k];
			k++;
		}
		mode[k] = '\0';
		if (!k || strcmp(mode, "stream") == 0)
			return 0;
		if (strcmp(mode, "flight") != 0) {
			rec__log("bad REC_MODE '%s' (want stream or flight); tracing disabled",
				 rec__log_path(env->value[REC__ENV_MODE], pb, sizeof(pb)));
			return -EINVAL;
		}
	}
	out->flight = true;
	if ((v = env->value[REC__ENV_WINDOW]) && *v &&
	    (rec__flight_parse_duration(v, false, &out->window_ns))) {
		rec__log("bad REC_WINDOW '%s' (want a time such as 5s or 500ms); tracing disabled",
			 rec__log_path(v, pb, sizeof(pb)));
		return -EINVAL;
	}
	if ((v = env->value[REC__ENV_AFTER]) && *v && rec__flight_parse_duration(v, true, &out->after_ns)) {
		rec__log("bad REC_AFTER '%s' (want a time such as 0, 1s or 200ms); tracing disabled",
			 rec__log_path(v, pb, sizeof(pb)));
		return -EINVAL;
	}
	if ((v = env->value[REC__ENV_SNAPSHOT_MAX]) && *v) {
		char *end;
		unsigned long n;

		errno = 0;
		n = strtoul(v, &end, 10);
		if (errno || end == v || *end || v[0] == '-' || n == 0 || n > 1000000) {
			rec__log("bad REC_SNAPSHOT_MAX '%s' (want 1 to 1000000); tracing disabled",
				 rec__log_path(v, pb, sizeof(pb)));
			return -EINVAL;
		}
		out->snapshot_max = (uint32_t)n;
	}
	if ((v = env->value[REC__ENV_SNAPSHOT_SIGNAL]) && *v) {
		static const struct {
			const char *name;
			int sig;
		} sigs[] = { { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP },
			     { "PROF", SIGPROF }, { "WINCH", SIGWINCH }, { "URG", SIGURG } };
		const char *s = strncmp(v, "SIG", 3) == 0 ? v + 3 : v;
		char *end;
		long num = strtol(s, &end, 10);

		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			if (strcmp(s, sigs[i].name) == 0)
				out->snapshot_signal = sigs[i].sig;
		if (!out->snapshot_signal && end != s && !*end && num >= SIGRTMIN && num <= SIGRTMAX)
			out->snapshot_signal = (int)num;
		if (!out->snapshot_signal) {
			rec__log("bad REC_SNAPSHOT_SIGNAL '%s' (want USR1, USR2, HUP, PROF, WINCH, URG "
				 "or a real-time signal number); tracing disabled",
				 rec__log_path(v, pb, sizeof(pb)));
			return -EINVAL;
		}
	}
	if ((v = env->value[REC__ENV_TRIGGER]) && *v) {
		struct flight_trigger_spec *specs;

		if (strlen(v) >= sizeof(out->triggers) || parse_triggers(v, &specs) < 0) {
			rec__log("bad REC_TRIGGER '%s' (want NAME>DURATION[,...], e.g. parse>10ms); "
				 "tracing disabled", rec__log_path(v, pb, sizeof(pb)));
			return -EINVAL;
		}
		free(specs);
		snprintf(out->triggers, sizeof(out->triggers), "%s", v);
	}
	return 0;
}

/* ----------------------------------------------------------------------
 * Snapshot file names.
 */

/* Decimal digits of v into out (no libc: async-signal-safe). Return: length. */
static size_t u32_digits(uint32_t v, char *out)
{
	char tmp[10];
	size_t n = 0, k = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		out[k++] = tmp[--n];
	return k;
}

/*
 * rec__flight_path() - the file name of snapshot `number` into out: the
 * output name with %n replaced. Async-signal-safe. Return: 0, or
 * -ENAMETOOLONG.
 */
int rec__flight_path(uint32_t number, char *out, size_t out_bytes)
{
	size_t h = strlen(fl.head), t = strlen(fl.tail), k;
	char digits[10];

	k = u32_digits(number, digits);
	if (h + k + t + 1 > out_bytes)
		return -ENAMETOOLONG;
	memcpy(out, fl.head, h);
	memcpy(out + h, digits, k);
	memcpy(out + h + k, fl.tail, t + 1);
	return 0;
}

/*
 * Opens a snapshot file through rec__output_open() (output.c): a regular
 * file, created or truncated (the name holds the pid and the number, so no
 * other live recording writes it; a leftover of an earlier process with the
 * same pid is replaced); a FIFO, a device or a symbolic link at the path is
 * refused without blocking. Async-signal-safe. *why: as rec__output_open().
 */
static int open_path(const char *path, const char **why)
{
	return rec__output_open(path, REC__OUT_TRUNC, rec__g.cfg.file_mode, why);
}

int rec__flight_open(uint32_t number)
{
	char path[sizeof(fl.head) + sizeof(fl.tail) + 16], pb[REC__LOG_PATH_BYTES];
	const char *why;
	int fd;

	if (rec__flight_path(number, path, sizeof(path)))
		return -ENAMETOOLONG;
	fd = open_path(path, &why);
	if (fd < 0)
		rec__log("cannot write snapshot %s: %s", rec__log_path(path, pb, sizeof(pb)),
			 why ? why : strerror(-fd));
	return fd;
}

/*
 * rec__flight_open_next() - for crash capture, from a signal handler: takes
 * the next snapshot number (so that later snapshots do not reuse it), and
 * creates its file. Async-signal-safe: no allocation, no lock, no stdio.
 * *number: the number taken (0 if none); *path: the name (static storage,
 * "" if none: a process captures one crash, crash.c's crash_flag, so the
 * name needs no room on a small alternate signal stack); *why: as
 * rec__output_open() (NULL but for a refused path).
 * Return: the fd, -ENOTSUP if not in flight mode, -ENOSPC if
 * REC_SNAPSHOT_MAX numbers were taken, or a negative errno from open().
 */
int rec__flight_open_next(uint32_t *number, const char **path, const char **why)
{
	static char buf[sizeof(fl.head) + sizeof(fl.tail) + 16];
	uint32_t n;

	*number = 0;
	*why = NULL;
	buf[0] = '\0';
	*path = buf;
	if (!fl.on)
		return -ENOTSUP;
	n = __atomic_add_fetch(&fl.nr_numbers, 1, __ATOMIC_RELAXED);
	if (n > fl.max)
		return -ENOSPC;
	*number = n;
	if (rec__flight_path(n, buf, sizeof(buf))) {
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return open_path(buf, why);
}

/*
 * rec__flight_open_pending() - for crash capture, from a signal handler,
 * with the writer stopped (crash.c's hand-shake): a trigger accepted and
 * not yet taken by the writer (its snapshot not begun: the crash came
 * right after it, as in `rec_snapshot("bad state"); abort();`) is the
 * snapshot the crash ends, under the number it took (finding F33: the
 * crash wrote the next number, and the trigger's file and reason were
 * lost). Takes it (the writer will not) and fills s's number, kind,
 * reason (static storage: fl.next, which no trigger rewrites while busy)
 * and trigger time; creates its file. Async-signal-safe, as
 * rec__flight_open_next(). Return: the fd; -ENOENT when no trigger waits;
 * else as rec__flight_open_next() (*path, *why likewise).
 */
int rec__flight_open_pending(struct recfmt_snapshot *s, const char **path, const char **why)
{
	static char buf[sizeof(fl.head) + sizeof(fl.tail) + 16];

	*why = NULL;
	buf[0] = '\0';
	*path = buf;
	if (!fl.on || !__atomic_exchange_n(&fl.pending, false, __ATOMIC_ACQ_REL))
		return -ENOENT;
	s->number = fl.nr_accepted;
	s->kind = fl.next.kind;
	s->trigger_ticks = fl.next.ticks;
	s->nr_suppressed = fl.next_suppressed;
	s->reason = fl.next.reason;
	s->reason_bytes = (uint32_t)strnlen(fl.next.reason, sizeof(fl.next.reason));
	if (rec__flight_path(s->number, buf, sizeof(buf))) {
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return open_path(buf, why);
}

/*
 * rec__flight_window_ns() - for crash capture, from a signal handler: 0
 * when not recording in flight mode, else REC_WINDOW in ns (a snapshot
 * holds the events since now minus this). Async-signal-safe: plain reads of
 * values set at start.
 */
uint64_t rec__flight_window_ns(void)
{
	return __atomic_load_n(&fl.on, __ATOMIC_RELAXED) ? fl.window_ns : 0;
}

/* ----------------------------------------------------------------------
 * Triggers.
 */

static void on_signal(int sig)
{
	int saved = errno;
	uint64_t ticks = rec__clock_now(fl.use_tsc), now = mono_ns();
	uint64_t zero = 0;

	(void)sig;
	if (__atomic_compare_exchange_n(&fl.sig_ticks, &zero, ticks ? ticks : 1, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		__atomic_store_n(&fl.sig_mono_ns, now, __ATOMIC_RELAXED);
	/* Release: the writer's acquire of nr_sig sees the time stored above. */
	__atomic_add_fetch(&fl.nr_sig, 1, __ATOMIC_SEQ_CST);
	/* After the count (rec__flight_thaw() reads them the other way round). */
	freeze(); /* until the writer accepts or counts it (rec__flight_take()) */
	rec__writer_wake();
	errno = saved;
}

/* Under fl.lock: accept or count one trigger. Return: 0, -EBUSY or -ENOSPC. */
static int accept_locked(const struct trigger *tr)
{
	/* Signed: a slow scope found late may have ended before the last trigger. */
	if (!fl.busy && fl.nr_accepted < fl.max &&
	    (!fl.has_last || (int64_t)(tr->mono_ns - fl.last_mono_ns) >= (int64_t)fl.window_ns)) {
		uint32_t n = __atomic_add_fetch(&fl.nr_numbers, 1, __ATOMIC_RELAXED);

		if (n <= fl.max) {
			freeze(); /* the window is in the rings: keep it (rec__flight_thaw()) */
			fl.next = *tr;
			fl.next_suppressed = fl.nr_suppressed;
			fl.nr_suppressed = 0;
			/* Read by trim; release: a crash takes `next` by it (rec__flight_open_pending()). */
			__atomic_store_n(&fl.pending, true, __ATOMIC_RELEASE);
			fl.busy = fl.has_last = true;
			fl.last_mono_ns = tr->mono_ns;
			fl.nr_accepted = n;
			return 0;
		}
		fl.nr_accepted = fl.max; /* crash capture took the rest */
	}
	fl.nr_suppressed++;
	fl.nr_suppressed_total++;
	return fl.nr_accepted >= fl.max ? -ENOSPC : -EBUSY;
}

/*
 * rec__flight_snapshot() - rec_snapshot() (lifecycle.c) after its lazy
 * start; started: whether that start succeeded. The caller sets
 * rec__in_librec around the call.
 */
int rec__flight_snapshot(const char *reason, bool started)
{
	struct trigger tr = { .kind = RECFMT_SNAPSHOT_API };
	int err;

	if (!started || !fl.on) {
		int state = __atomic_load_n(&rec__g.state, __ATOMIC_ACQUIRE);

		return state == REC__RUNNING ? -ENOTSUP : -ENOTCONN;
	}
	tr.ticks = rec__clock_now(fl.use_tsc);
	tr.mono_ns = mono_ns();
	snprintf(tr.reason, sizeof(tr.reason), "%s", reason ? reason : "");
	/*
	 * A try-lock, then a bounded wait: the lock is held for a few
	 * instructions by whoever holds it, so a holder that keeps it 1 s
	 * never comes back (a thread that died in there): -EBUSY, not a hang.
	 * (A holder on this thread is refused before: rec_snapshot().)
	 */
	if (pthread_mutex_trylock(&fl.lock) != 0) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		if (pthread_mutex_timedlock(&fl.lock, &until) != 0)
			return -EBUSY;
	}
	err = accept_locked(&tr);
	pthread_mutex_unlock(&fl.lock);
	if (!err)
		rec__writer_wake();
	return err;
}

/*
 * After exec (rec(3), EXIT, FORK AND CRASH, "Exec"): the snapshots of the
 * earlier programs of this process (same pid, begun before this program)
 * are kept, and this one's are numbered on after the last of them. A number
 * an earlier program took without writing its file (a failed snapshot) is
 * no gap that ends the search, up to 16 in a row. Return: that last number,
 * or 0. Async-signal-safe (the first probe may start flight mode).
 */
static uint32_t earlier_numbers(void)
{
	/* Static: under rec__g.lock, off a signal handler's small stack. */
	static char path[sizeof(fl.head) + sizeof(fl.tail) + 16];
	uint32_t last = 0;

	for (uint32_t n = 1; n - last <= 16 && n < UINT32_MAX / 2; n++)
		if (rec__flight_path(n, path, sizeof(path)) == 0 && rec__file_is_earlier(path))
			last = n;
	return last;
}

/*
 * rec__flight_init() - under rec__g.lock, at the start of a recording in
 * flight mode (also in a child after fork: numbering starts again at 1,
 * the name gets the child's pid). Installs the REC_SNAPSHOT_SIGNAL handler.
 * Return: 0, or -ENAMETOOLONG / -ENOMEM / -EINVAL (logged).
 */
int rec__flight_init(const struct rec__config *cfg)
{
	const char *n = strstr(cfg->output, "%n");
	char pb[REC__LOG_PATH_BYTES];

	pthread_mutex_init(&fl.lock, NULL); /* also after fork, where it may be held */
	fl.on = false;
	for (uint32_t i = 0; i < fl.nr_specs; i++)
		free(fl.specs[i].addrs);
	free(fl.specs);
	fl.specs = NULL;
	fl.nr_specs = 0;
	fl.resolved_snaps = 0;
	fl.said_unresolved = false;
	if (cfg->triggers[0]) {
		int k = parse_triggers(cfg->triggers, &fl.specs);

		if (k < 0)
			return -ENOMEM;
		fl.nr_specs = (uint32_t)k;
	}
	free(fl.site_match);
	fl.site_match = NULL;
	fl.nr_site_match = 0;
	if (n) {
		size_t h = (size_t)(n - cfg->output);

		memcpy(fl.head, cfg->output, h);
		fl.head[h] = '\0';
		snprintf(fl.tail, sizeof(fl.tail), "%s", n + 2);
	} else {
		/* No %n: before the extension, as NAME-N.EXT (trace.zst -> trace-1.zst). */
		const char *base = strrchr(cfg->output, '/'), *dot;

		base = base ? base + 1 : cfg->output;
		dot = strrchr(base, '.');
		if (!dot || dot == base)
			dot = base + strlen(base);
		snprintf(fl.head, sizeof(fl.head), "%.*s-", (int)(dot - cfg->output), cfg->output);
		snprintf(fl.tail, sizeof(fl.tail), "%s", dot);
	}
	if (strlen(fl.head) + strlen(fl.tail) + 12 > sizeof(fl.head)) {
		rec__log("REC_OUTPUT '%s' is too long; tracing disabled",
			 rec__log_path(cfg->output, pb, sizeof(pb)));
		return -ENAMETOOLONG;
	}
	fl.pending = fl.busy = fl.has_last = false;
	if (fl.numbered_pid != getpid()) {
		/* Numbers are per process: a restart goes on, never reusing a file. */
		fl.numbered_pid = getpid();
		fl.base = earlier_numbers();
		fl.nr_accepted = fl.base;
		fl.nr_numbers = fl.base;
	}
	fl.nr_suppressed = fl.nr_suppressed_total = 0;
	fl.sig_ticks = fl.sig_mono_ns = 0;
	fl.nr_sig = fl.nr_sig_taken = 0;
	fl.use_tsc = cfg->use_tsc;
	fl.window_ns = cfg->window_ns;
	fl.after_ns = cfg->after_ns;
	fl.max = fl.base + cfg->snapshot_max;
	fl.ticks_per_second = 0;
	if (cfg->snapshot_signal && fl.sig_installed != cfg->snapshot_signal) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(cfg->snapshot_signal, &sa, NULL) < 0) {
			rec__log("cannot handle signal %d: %s; tracing disabled",
				 cfg->snapshot_signal, strerror(errno));
			return -EINVAL;
		}
		fl.sig_installed = cfg->snapshot_signal;
	}
	fl.on = true;
	return 0;
}

static void found_addr(uint32_t i, uintptr_t addr, void *arg)
{
	struct flight_trigger_spec *sp = &fl.specs[i];
	uintptr_t *grown;

	(void)arg;
	for (uint32_t k = 0; k < sp->nr_addrs; k++)
		if (sp->addrs[k] == addr)
			return;
	grown = realloc(sp->addrs, (sp->nr_addrs + 1) * sizeof(*grown));
	if (!grown)
		return;
	sp->addrs = grown;
	sp->addrs[sp->nr_addrs++] = addr;
}

/*
 * REC_TRIGGER names as hook-traced functions: the address(es) of each in
 * the symbol tables of the objects loaded now (modules.c). Again when a
 * function site of an object loaded since shows up (site_trigger()).
 */
static void resolve_names(void)
{
	const char *names[64];
	uint32_t n = fl.nr_specs < 64 ? fl.nr_specs : 64;

	for (uint32_t i = 0; i < n; i++)
		names[i] = fl.specs[i].name;
	fl.resolved_snaps = rec__site_nr_snaps();
	rec__modules_find_funcs(names, n, found_addr, NULL, &fl.main_stripped);
}

/*
 * Whole-program mode is in use (a hook registered a function site): each
 * REC_TRIGGER name that is no function says so, once, at start.
 */
static void say_unresolved(void)
{
	char pb[REC__LOG_PATH_BYTES];

	if (fl.said_unresolved)
		return;
	fl.said_unresolved = true;
	for (uint32_t i = 0; i < fl.nr_specs; i++)
		if (!fl.specs[i].nr_addrs)
			rec__log("REC_TRIGGER '%s': no function of that name in the symbol tables of "
				 "the loaded objects%s; it fires only for a TRACE_SCOPE of that name",
				 rec__log_path(fl.specs[i].name, pb, sizeof(pb)),
				 fl.main_stripped ? " (the program has no .symtab: stripped?)" : "");
}

/*
 * rec__flight_calibrated() - writer, once the tick rate is known: trigger
 * durations in ticks, and the names resolved to the addresses the hooks
 * pass (whole-program mode).
 */
void rec__flight_calibrated(uint64_t ticks_per_second)
{
	fl.ticks_per_second = ticks_per_second;
	for (uint32_t i = 0; i < fl.nr_specs; i++) {
		fl.specs[i].dur_ticks = (uint64_t)((unsigned __int128)fl.specs[i].dur_ns *
						   ticks_per_second / 1000000000u);
	}
	if (!fl.nr_specs)
		return;
	resolve_names();
	/* The hooks started this recording (their first call does): say it now. */
	for (uint32_t id = 1; id <= rec__site_count(); id++)
		if (rec__site_func_addr(rec__site_get(id))) {
			say_unresolved();
			break;
		}
}

static uint64_t ns_to_ticks(uint64_t ns)
{
	return (uint64_t)((unsigned __int128)ns * fl.ticks_per_second / 1000000000u);
}

/* Writer: a trigger of its own (REC_TRIGGER, or a signal it noticed). */
static void writer_trigger(uint64_t ticks, uint64_t mono, uint32_t kind, const char *reason)
{
	struct trigger tr = { .ticks = ticks, .mono_ns = mono, .kind = kind };

	snprintf(tr.reason, sizeof(tr.reason), "%.*s", (int)sizeof(tr.reason) - 1, reason);
	pthread_mutex_lock(&fl.lock);
	accept_locked(&tr);
	pthread_mutex_unlock(&fl.lock);
}

/*
 * rec__flight_take() - writer, at the start of a pass: the accepted trigger
 * to begin now, if any (signals received since the last pass are accepted
 * or counted here). Fills the SNAPSHOT record but its window, which the
 * caller sets from the window in ticks. Return: true if a snapshot begins.
 */
bool rec__flight_take(struct recfmt_snapshot *s, char *reason, size_t reason_bytes,
		      uint64_t *window_ticks, uint64_t *after_ticks)
{
	/* Acquire pairs with the handler's release: sig_ticks is stored. */
	uint64_t nr_sig = __atomic_load_n(&fl.nr_sig, __ATOMIC_ACQUIRE);
	bool go;

	if (nr_sig != fl.nr_sig_taken) {
		/* Taken and cleared at once: the next signal stores its own time. */
		uint64_t ticks = __atomic_exchange_n(&fl.sig_ticks, 0, __ATOMIC_RELAXED);
		uint64_t mono = __atomic_load_n(&fl.sig_mono_ns, __ATOMIC_RELAXED);
		char what[64];

		if (!ticks) {
			/* Its time went with the signal taken at the last pass: now. */
			ticks = rec__clock_now(fl.use_tsc);
			mono = mono_ns();
		}

		snprintf(what, sizeof(what), "signal %s", sigabbrev_np(fl.sig_installed)
				? sigabbrev_np(fl.sig_installed) : "?");
		/* The first signal since the last take; the others are a burst. */
		writer_trigger(ticks, mono, RECFMT_SNAPSHOT_SIGNAL, what);
		pthread_mutex_lock(&fl.lock);
		fl.nr_suppressed += nr_sig - fl.nr_sig_taken - 1;
		fl.nr_suppressed_total += nr_sig - fl.nr_sig_taken - 1;
		pthread_mutex_unlock(&fl.lock);
		fl.nr_sig_taken = nr_sig;
	}
	pthread_mutex_lock(&fl.lock);
	go = fl.pending;
	if (go) {
		__atomic_store_n(&fl.pending, false, __ATOMIC_RELAXED);
		memset(s, 0, sizeof(*s));
		s->trigger_ticks = fl.next.ticks;
		s->number = fl.nr_accepted;
		s->kind = fl.next.kind;
		s->nr_suppressed = fl.next_suppressed;
		snprintf(reason, reason_bytes, "%s", fl.next.reason);
		s->reason = reason;
		s->reason_bytes = (uint32_t)strlen(reason);
	}
	pthread_mutex_unlock(&fl.lock);
	if (!go)
		rec__flight_thaw(); /* a signal counted, not accepted: discard again */
	*window_ticks = ns_to_ticks(fl.window_ns);
	*after_ticks = ns_to_ticks(fl.after_ns);
	return go;
}

/*
 * rec__flight_thaw() - writer: the rings may discard again, once the
 * snapshot that froze them holds its window (flight_begin()) or its
 * trigger was not accepted. Not while a trigger waits or a signal came
 * since the last take: that one's window is still to be held.
 */
void rec__flight_thaw(void)
{
	bool keep;

	__atomic_store_n(&rec__flight_frozen, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&fl.lock);
	keep = fl.pending;
	pthread_mutex_unlock(&fl.lock);
	/* After the store: a signal before it is seen here, one after it froze again. */
	if (keep || __atomic_load_n(&fl.nr_sig, __ATOMIC_SEQ_CST) != fl.nr_sig_taken)
		freeze();
}

/* rec__flight_pending() - writer: an accepted trigger waits to begin. */
bool rec__flight_pending(void)
{
	bool p;

	pthread_mutex_lock(&fl.lock);
	p = fl.pending || __atomic_load_n(&fl.nr_sig, __ATOMIC_ACQUIRE) != fl.nr_sig_taken;
	pthread_mutex_unlock(&fl.lock);
	return p;
}

/* rec__flight_done() - writer: the snapshot begun last is ended (or failed). */
void rec__flight_done(void)
{
	pthread_mutex_lock(&fl.lock);
	fl.busy = fl.pending;
	pthread_mutex_unlock(&fl.lock);
}

/* rec__flight_stopped() - writer, at stop: says how many triggers made no file. */
void rec__flight_stopped(void)
{
	uint64_t n;

	pthread_mutex_lock(&fl.lock);
	n = fl.nr_suppressed_total;
	pthread_mutex_unlock(&fl.lock);
	if (n)
		rec__log("flight recorder: %llu snapshot trigger%s suppressed (at most one "
			 "snapshot per REC_WINDOW and %u per process)", (unsigned long long)n,
			 n == 1 ? "" : "s", fl.max - fl.base);
}

/* ----------------------------------------------------------------------
 * The writer's work on the rings between snapshots.
 */

static uint32_t group_of(const struct rec__thread *t)
{
	return t->reg.ctr ? 1 + t->reg.ctr->nr : 1;
}

/*
 * Annotations (rec_internal.h) share the rings: every slot of one has code
 * REC__ANNOT_CODE, its first slot its time, the others (aux kind 0) a value
 * or text. Counted threads hold no annotation but REC_SAMPLE's samples,
 * whole groups of such slots (sample.c), whose first groups a discard (whole
 * groups too) may take: a window starts after what is left of one.
 */
static bool is_annot_tail_slot(const struct recfmt_event *ev)
{
	return ev->code == REC__ANNOT_CODE && REC__ANNOT_KIND(ev->aux) == 0;
}

/* The time of slot i: an annotation's later slot takes its first slot's (0 if before lo). */
static uint64_t ticks_at(const struct rec__thread *t, uint64_t lo, uint64_t i)
{
	struct rec__ring_view v = rec__ring_view(&t->ring); /* (G2): after the caller's (C) */

	while (is_annot_tail_slot(&v.ev[i & v.mask])) {
		if (i == lo)
			return 0;
		i--;
	}
	return v.ev[i & v.mask].ticks;
}

/* The first slot at or after i that starts an event or an annotation (head if none). */
static uint64_t record_start(const struct rec__thread *t, uint64_t i, uint64_t head)
{
	struct rec__ring_view v = rec__ring_view(&t->ring); /* (G2): after the caller's (C) */

	while (i < head && is_annot_tail_slot(&v.ev[i & v.mask]))
		i++;
	return i;
}

/*
 * rec__flight_hold() - writer (or crash capture, with the writer
 * stopped): holds t's ring (F2, ring.h) at its oldest whole slot, or at
 * `from` or t's floor if later (<= head). From the return X on, the slots
 * [X, head) stay whole until the hold moves on (rec__ring_release()) or
 * is given up (rec__flight_free()); the producer discards up to X only.
 * Async-signal-safe. Return: X.
 */
uint64_t rec__flight_hold(struct rec__thread *t, uint64_t from)
{
	uint64_t x = __atomic_load_n(&t->ring.discard, __ATOMIC_SEQ_CST);

	if (from < t->wr.flight_floor)
		from = t->wr.flight_floor; /* done with: written, or of an earlier recording */
	if (x < from)
		x = from;
	for (;;) {
		uint64_t d;

		/*
		 * (F2): pairs with (F1) in ring.h's rec__ring_refresh_flight();
		 * an exchange, not a store (ring.h, "Why an exchange").
		 */
		(void)__atomic_exchange_n(&t->ring.tail, x, __ATOMIC_SEQ_CST);
		d = __atomic_load_n(&t->ring.discard, __ATOMIC_SEQ_CST);
		if (d <= x)
			return x;
		x = d; /* it discarded meanwhile: hold past that */
	}
}

/* rec__flight_free() - writer: no hold on t's ring; its producer discards at will. */
void rec__flight_free(struct rec__thread *t)
{
	/* Release: our reads of the slots are done before any is overwritten. */
	__atomic_store_n(&t->ring.tail, REC__RING_FREE, __ATOMIC_RELEASE);
}

/* Which trigger (1 + index) a site is, 0 for none; cached per site id. */
static uint32_t site_trigger(uint32_t site)
{
	if (site >= fl.nr_site_match) {
		uint32_t n = fl.nr_site_match ? fl.nr_site_match : 256;
		uint8_t *m;

		while (n <= site)
			n *= 2;
		m = realloc(fl.site_match, n);
		if (!m)
			return 0;
		memset(m + fl.nr_site_match, 0, n - fl.nr_site_match);
		fl.site_match = m;
		fl.nr_site_match = n;
	}
	if (!fl.site_match[site]) {
		const struct rec__site *s = site && site <= rec__site_count() ? rec__site_get(site) : NULL;
		uintptr_t fn = s ? rec__site_func_addr(s) : 0;

		fl.site_match[site] = 1;
		if (fn) {
			/* A hook's site: by the function's address (its symbol's name). */
			if (rec__site_nr_snaps() != fl.resolved_snaps)
				resolve_names(); /* an object loaded since: its symbols too */
			say_unresolved();
			for (uint32_t i = 0; i < fl.nr_specs && i < 250 && fl.site_match[site] == 1; i++)
				for (uint32_t k = 0; k < fl.specs[i].nr_addrs; k++)
					if (fl.specs[i].addrs[k] == fn) {
						fl.site_match[site] = (uint8_t)(2 + i);
						break;
					}
		}
		for (uint32_t i = 0; !fn && s && s->name && i < fl.nr_specs && i < 250; i++)
			if (strcmp(s->name, fl.specs[i].name) == 0) {
				fl.site_match[site] = (uint8_t)(2 + i);
				break;
			}
	}
	return fl.site_match[site] - 1u;
}

/* Events scanned between two moves of the scan's hold (so the producer may discard behind it). */
#define SCAN_HOLD_STEP 8192u

/*
 * Pairs the events of t's ring not scanned yet, for REC_TRIGGER, and
 * accepts a trigger for the first activation of a REC_TRIGGER scope
 * longer than its duration; the trigger's time is that activation's exit.
 * held: a snapshot's drain holds the ring (its tail), which stays; else
 * the scan holds the ring while it reads, moving the hold along behind it,
 * and leaves it held where it stopped. Events the producer discarded before
 * they were scanned are skipped (the pairing starts over after them).
 */
static void scan(struct rec__thread *t, bool held)
{
	struct rec__flight_thread *ft = t->wr.flight;
	uint32_t group = group_of(t);
	uint64_t lo, head, i, moved;
	struct rec__ring_view view;

	if (!ft) {
		ft = calloc(1, sizeof(*ft));
		if (!ft)
			return;
		t->wr.flight = ft;
	}
	if (held) {
		lo = t->ring.tail;
		if (lo == REC__RING_FREE)
			return; /* new since the snapshot began: its drain holds it first */
	} else {
		head = rec__ring_peek(&t->ring);
		lo = rec__flight_hold(t, ft->scanned <= head ? ft->scanned : head);
	}
	head = rec__ring_peek(&t->ring); /* (C), after the hold */
	if (ft->scanned < lo || ft->scanned > head) {
		/* Discarded before they were scanned (or a restart): start over. */
		ft->scanned = record_start(t, lo, head);
		ft->depth = 0;
	}
	moved = ft->scanned;
	view = rec__ring_view(&t->ring); /* (G2), after (C) */
	for (i = ft->scanned; i + group <= head; i += group) {
		const struct recfmt_event *ev = &view.ev[i & view.mask];
		uint32_t site = RECFMT_CODE_SITE(ev->code);

		if (!held && i - moved >= SCAN_HOLD_STEP) {
			__atomic_store_n(&t->ring.tail, i, __ATOMIC_RELEASE); /* (D): behind us */
			moved = i;
		}
		if (ev->code == REC__ANNOT_CODE)
			continue; /* an annotation's slot: no scope (its others follow, alike) */
		if (!RECFMT_CODE_IS_EXIT(ev->code)) {
			if (ft->depth < SCAN_DEPTH) {
				ft->stack[ft->depth].ticks = ev->ticks;
				ft->stack[ft->depth].site = site;
			}
			ft->depth++;
			continue;
		}
		if (!ft->depth)
			continue; /* its enter was before the scan began */
		ft->depth--;
		if (ft->depth < SCAN_DEPTH && ft->stack[ft->depth].site == site) {
			uint32_t k = site_trigger(site);
			uint64_t dur = ev->ticks - ft->stack[ft->depth].ticks;

			if (k && ev->ticks >= ft->stack[ft->depth].ticks &&
			    dur > fl.specs[k - 1].dur_ticks) {
				char reason[REASON_BYTES + 64];
				uint64_t now_ticks = rec__clock_now(fl.use_tsc), now = mono_ns();
				uint64_t ago = now_ticks > ev->ticks ? now_ticks - ev->ticks : 0;

				snprintf(reason, sizeof(reason), "%.200s took %.3f ms (> %.3f ms)",
					 fl.specs[k - 1].name, (double)dur * 1e3 / (double)fl.ticks_per_second,
					 (double)fl.specs[k - 1].dur_ns / 1e6);
				writer_trigger(ev->ticks,
					       now - (uint64_t)((unsigned __int128)ago * 1000000000u /
								fl.ticks_per_second),
					       RECFMT_SNAPSHOT_TRIGGER, reason);
			}
		}
	}
	ft->scanned = i;
}

/*
 * rec__flight_scan_held() - writer, while a snapshot is written: the scan
 * for REC_TRIGGER goes on (a trigger then is counted as suppressed, and the
 * pairing stays whole for the next one), within the drain's hold.
 */
void rec__flight_scan_held(struct rec__thread *t)
{
	if (fl.nr_specs && fl.ticks_per_second)
		scan(t, true);
}

/*
 * rec__flight_keep() - writer, between snapshots, for each thread: the
 * REC_TRIGGER scan, then the ring is left to its producer, which discards
 * its oldest events itself when it needs room (ring.h): no ring ever waits
 * for the writer, and each keeps the newest events it can hold.
 * Return: true if t has exited and its newest event is older than
 * REC_WINDOW (or it has none): the caller frees it.
 */
bool rec__flight_keep(struct rec__thread *t, bool dead, uint64_t now_ticks)
{
	uint32_t group = group_of(t);

	if (fl.nr_specs && fl.ticks_per_second)
		scan(t, false);
	if (dead) {
		/* No producer any more: nothing moves. */
		uint64_t head = rec__ring_peek(&t->ring), lo = rec__flight_hold(t, 0);
		bool waiting = __atomic_load_n(&fl.pending, __ATOMIC_RELAXED);

		if (!waiting && (head <= lo || (now_ticks > ticks_at(t, lo, head - group) &&
						now_ticks - ticks_at(t, lo, head - group) >
							ns_to_ticks(fl.window_ns))))
			return true;
	}
	rec__flight_free(t);
	return false;
}

/*
 * rec__flight_window_index() - writer: the ring index of t's first event
 * at or after `start` in [lo, head) (slots the caller holds), by bisection
 * (a thread's events are in time order), or head if none.
 */
uint64_t rec__flight_window_index(const struct rec__thread *t, uint64_t lo, uint64_t head,
				  uint64_t start)
{
	uint32_t group = group_of(t);
	uint64_t lo_k = 0, hi = (head - lo) / group;

	while (lo_k < hi) {
		uint64_t mid = lo_k + (hi - lo_k) / 2;

		if (ticks_at(t, lo, lo + mid * group) < start)
			lo_k = mid + 1;
		else
			hi = mid;
	}
	/* Never inside an annotation or a sample: its later slots carry its time
	 * (ticks_at()); a sample ends at a group's end, where record_start() stops. */
	return record_start(t, lo + lo_k * group, head);
}

/*
 * rec__flight_window_tail() - crash capture (crash.c), with the writer
 * stopped: holds t's ring and returns the index of its first event at or
 * after `start` below `head` (read before), where the hold then stays.
 * head if none (also when the producer discarded past head meanwhile).
 * Async-signal-safe.
 */
uint64_t rec__flight_window_tail(struct rec__thread *t, uint64_t head, uint64_t start)
{
	uint64_t lo = rec__flight_hold(t, 0), first;

	if (lo >= head)
		return head;
	first = rec__flight_window_index(t, lo, head, start);
	__atomic_store_n(&t->ring.tail, first, __ATOMIC_RELEASE);
	return first;
}

void rec__flight_forget_thread(struct rec__thread *t)
{
	free(t->wr.flight);
	t->wr.flight = NULL;
}

/*
 * rec__flight_forget() - in a child after fork: the parent's snapshots are
 * not the child's. Off until the child starts recording (rec__flight_init():
 * its own numbering from 1, its own pid in the name); fl.lock may have been
 * held by a parent's thread at the fork.
 */
void rec__flight_forget(void)
{
	pthread_mutex_init(&fl.lock, NULL);
	fl.on = false;
	fl.pending = fl.busy = false;
}
