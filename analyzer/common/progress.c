/* SPDX-License-Identifier: MIT */
/*
 * progress.c - the progress line of progress.h: "tracetool: reading the
 * trace: 42% (1.2 GB of 2.9 GB)" on stderr, redrawn in place with \r and
 * erased with \r ESC[K. It owns only that line and the --quiet option; the
 * reading itself is events.c's. The clock starts at the first frame read by
 * the process, so an analysis that reads the file twice (a pre-pass for
 * --from/--to, then the report) shows its progress once it has lasted a
 * second in all.
 */
#include "common/progress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Redraw at most every 250 ms: four times a second. */
#define REDRAW_NS 250000000ull

static struct {
	bool quiet;
	bool stdout_streams;
	bool stdout_tty;
	int enabled;		 /* -1: not decided yet; 0: off; 1: on */
	uint64_t start_ns;	 /* the first frame read */
	uint64_t delay_ns;	 /* nothing shown before start_ns + delay_ns */
	uint64_t last_draw_ns;	 /* 0: nothing drawn yet */
	bool shown;		 /* a line is on the terminal */
} pg = { .enabled = -1 };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tt_progress_set_quiet(bool quiet)
{
	pg.quiet = quiet;
}

void tt_progress_stdout_streams(void)
{
	pg.stdout_streams = true;
}

/* Decided at the first frame: a terminal on stderr and no --quiet; and
 * then for each frame: not while a report streams to a terminal on stdout. */
static bool enabled(void)
{
	const char *env;

	if (pg.enabled >= 0)
		return pg.enabled && !(pg.stdout_streams && pg.stdout_tty);
	pg.enabled = !pg.quiet && isatty(STDERR_FILENO);
	pg.stdout_tty = isatty(STDOUT_FILENO);
	pg.delay_ns = 1000000000ull;
	env = getenv("TRACETOOL_PROGRESS_MS");
	if (env && *env) {
		char *end;
		unsigned long long ms;

		errno = 0;
		ms = strtoull(env, &end, 10);
		if (!errno && !*end && *env != '-' && ms <= 3600000)
			pg.delay_ns = ms * 1000000ull;
	}
	pg.start_ns = now_ns();
	return pg.enabled && !(pg.stdout_streams && pg.stdout_tty);
}

/* "1.2 GB": bytes in the unit that keeps them short (decimal units). */
static void fmt_bytes(char *buf, size_t buf_bytes, uint64_t b)
{
	static const char *const units[] = { "B", "kB", "MB", "GB", "TB" };
	double v = (double)b;
	size_t u = 0;

	while (v >= 1000.0 && u < 4) {
		v /= 1000.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, buf_bytes, "%llu B", (unsigned long long)b);
	else
		snprintf(buf, buf_bytes, "%.1f %s", v, units[u]);
}

void tt_progress_read(uint64_t done_bytes, uint64_t file_bytes)
{
	char line[128], done[32], total[32];
	unsigned percent;
	uint64_t t;
	int n;

	if (!enabled())
		return;
	t = now_ns();
	if (t - pg.start_ns < pg.delay_ns || (pg.last_draw_ns && t - pg.last_draw_ns < REDRAW_NS))
		return;
	pg.last_draw_ns = t;
	if (done_bytes > file_bytes)
		done_bytes = file_bytes;
	percent = file_bytes ? (unsigned)(done_bytes * 100 / file_bytes) : 100;
	fmt_bytes(done, sizeof(done), done_bytes);
	fmt_bytes(total, sizeof(total), file_bytes);
	n = snprintf(line, sizeof(line), "\rtracetool: reading the trace: %u%% (%s of %s)\033[K",
		     percent, done, total);
	/* Best effort: a terminal that cannot take the line loses only it. */
	if (n > 0 && write(STDERR_FILENO, line, strlen(line)) > 0)
		pg.shown = true;
}

void tt_progress_done(void)
{
	static const char erase[] = "\r\033[K";

	if (!pg.shown)
		return;
	pg.shown = false;
	pg.last_draw_ns = 0;
	if (write(STDERR_FILENO, erase, sizeof(erase) - 1) < 0)
		return; /* nothing more to do for a terminal that went away */
}

static error_t parse_quiet(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	(void)state;
	if (key != 'q')
		return ARGP_ERR_UNKNOWN;
	tt_progress_set_quiet(true);
	return 0;
}

static const struct argp_option quiet_options[] = {
	{ "quiet", 'q', 0, 0,
	  "No progress line on stderr (shown when stderr is a terminal and reading lasts over "
	  "a second)",
	  90 },
	{ 0 },
};

const struct argp tt_progress_argp = { quiet_options, parse_quiet, 0, 0, 0, 0, 0 };
