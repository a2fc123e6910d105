/* SPDX-License-Identifier: MIT */
/*
 * config.c - resolves the configuration in force from struct rec_config (its
 * non-zero fields win) and the REC_* environment (rec(3), ENVIRONMENT),
 * checking every value. A bad value is one stderr line and -EINVAL: we
 * never guess. The environment is read here only, from one table
 * (env_vars[] below), each variable once per resolution. In a setuid or
 * setgid program none of it is read (rec__getenv(), env.c; rec(3), OUTPUTS
 * AND PRIVILEGES) but the two that only turn something off.
 */
#define _GNU_SOURCE
#include "rec_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

_Static_assert(REC_OVERFLOW_DROP == 1 && REC_OVERFLOW_BLOCK == 2, "resolve_choice() order");
_Static_assert(REC_CLOCK_TSC == 1 && REC_CLOCK_MONOTONIC == 2, "resolve_choice() order");

/*
 * Every REC_* variable librec reads, in rec(3)'s order. any_program: read
 * with getenv() in every program, setuid or not, because it can only turn
 * something off; every other is read with secure_getenv() (rec__getenv()).
 * Where a value goes: rec__config_resolve() below (flight mode's through
 * rec__flight_config(), flight.c), except REC_DISABLE (rec__env_disabled(),
 * asked by lifecycle.c at load, start and fork).
 */
static const struct env_var {
	const char *name;
	bool any_program;
} env_vars[REC__NR_ENV_VARS] = {
	[REC__ENV_DISABLE] = { "REC_DISABLE", true },	  /* recording off (lifecycle.c) */
	[REC__ENV_CRASH] = { "REC_CRASH", true },	  /* crash capture off (crash.c) */
	[REC__ENV_OUTPUT] = { "REC_OUTPUT", false },	  /* output name pattern */
	[REC__ENV_BUFFER] = { "REC_BUFFER", false },	  /* the most one thread's ring holds */
	[REC__ENV_MEMORY] = { "REC_MEMORY", false },	  /* every ring in all (mem.c) */
	[REC__ENV_FLUSH_MS] = { "REC_FLUSH_MS", false },  /* bound on a record's age in memory */
	[REC__ENV_OVERFLOW] = { "REC_OVERFLOW", false },  /* drop or block on a full ring */
	[REC__ENV_CLOCK] = { "REC_CLOCK", false },	  /* tsc or monotonic */
	[REC__ENV_COUNTERS] = { "REC_COUNTERS", false },  /* hardware counters (counters.c) */
	[REC__ENV_LIVE] = { "REC_LIVE", false },	  /* live report period (live.c) */
	[REC__ENV_MIN_NS] = { "REC_MIN_NS", false },	  /* shortest activation written */
	[REC__ENV_FILE_MODE] = { "REC_FILE_MODE", false }, /* permissions of files created */
	[REC__ENV_MODE] = { "REC_MODE", false },	  /* stream or flight (flight.c) */
	[REC__ENV_WINDOW] = { "REC_WINDOW", false },	  /* flight: window kept */
	[REC__ENV_AFTER] = { "REC_AFTER", false },	  /* flight: time kept after a trigger */
	[REC__ENV_SNAPSHOT_MAX] = { "REC_SNAPSHOT_MAX", false }, /* flight: snapshots at most */
	[REC__ENV_SNAPSHOT_SIGNAL] = { "REC_SNAPSHOT_SIGNAL", false }, /* flight: signal */
	[REC__ENV_TRIGGER] = { "REC_TRIGGER", false },	  /* flight: NAME>DURATION triggers */
	[REC__ENV_SAMPLE] = { "REC_SAMPLE", false },	  /* stack samples per CPU second (sample.c) */
	[REC__ENV_RECORD_LOG] = { "REC_RECORD_LOG", false }, /* tracetool record's list of files */
};

/* The value of one variable of the table, read as its row says. */
static const char *env_read(enum rec__env_var id)
{
	const struct env_var *e = &env_vars[id];

	return e->any_program ? getenv(e->name) : rec__getenv(e->name);
}

/* Each variable of the table, read once. */
static void env_read_all(struct rec__env *env)
{
	for (int i = 0; i < REC__NR_ENV_VARS; i++)
		env->value[i] = env_read((enum rec__env_var)i);
}

const char *rec__env_output(void)
{
	return env_read(REC__ENV_OUTPUT);
}

const char *rec__env_record_log(void)
{
	return env_read(REC__ENV_RECORD_LOG);
}

/*
 * The value `v` (may be NULL) without leading and trailing white space,
 * copied into buf (cut to its size; a value that long is bad anyway).
 * Return: buf, or NULL if v is NULL or blank.
 */
static const char *trimmed(const char *v, char *buf, size_t buf_bytes)
{
	size_t n;

	if (!v)
		return NULL;
	while (isspace((unsigned char)*v))
		v++;
	n = strlen(v);
	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	if (!n)
		return NULL;
	if (n >= buf_bytes)
		n = buf_bytes - 1;
	memcpy(buf, v, n);
	buf[n] = 0;
	return buf;
}

/* REC_SAMPLE's rate, or 0 if unset or bad (rec__config_resolve() logs a bad one). */
static int parse_sample_hz(const char *raw, uint32_t *hz)
{
	char buf[32], *end;
	const char *v = trimmed(raw, buf, sizeof(buf));
	unsigned long n;

	*hz = 0;
	if (!v)
		return 0;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || end == v || v[0] == '-' || v[0] == '+' || n < 1 ||
	    n > REC__SAMPLE_MAX_HZ)
		return -EINVAL;
	*hz = (uint32_t)n;
	return 0;
}

int rec__env_sample_hz(uint32_t *hz)
{
	return parse_sample_hz(env_read(REC__ENV_SAMPLE), hz);
}

/*
 * REC_DISABLE: any value but 0, no, false, off (any case) or blank disables
 * recording: 1, yes, true, on, and anything else a user sets it to.
 */
bool rec__env_disabled(void)
{
	static const char *const keep[] = { "0", "no", "false", "off" };
	char buf[16];
	const char *v = trimmed(env_read(REC__ENV_DISABLE), buf, sizeof(buf));

	if (!v)
		return false;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (strcasecmp(v, keep[i]) == 0)
			return false;
	return true;
}

/* REC_CRASH: 0, no, false or off (any case, as set) turns crash capture off; anything else (or unset) keeps it. */
static bool crash_enabled(const char *v)
{
	static const char *const off[] = { "0", "no", "false", "off" };

	if (!v)
		return true;
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
		if (strcasecmp(v, off[i]) == 0)
			return false;
	return true;
}

/* "123", "64K", "8M", "1G" (powers of 1024). Return: 0 or -EINVAL. */
static int parse_bytes(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

/* Copies `pattern` into out, %p becoming the pid and %% a percent sign. */
static int expand_output(const char *pattern, char *out, size_t out_bytes)
{
	size_t n = 0;

	for (const char *p = pattern; *p; p++) {
		char piece[32];
		const char *add = piece;

		if (p[0] == '%' && p[1] == 'p') {
			snprintf(piece, sizeof(piece), "%d", (int)getpid());
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			piece[0] = '%', piece[1] = 0;
			p++;
		} else {
			piece[0] = *p, piece[1] = 0;
		}
		if (n + strlen(add) >= out_bytes)
			return -ENAMETOOLONG;
		memcpy(out + n, add, strlen(add));
		n += strlen(add);
	}
	if (n == 0)
		return -EINVAL;
	out[n] = 0;
	return 0;
}

/*
 * A period with a unit (ns, us, ms, s, min, h; a bare number is seconds)
 * between 10 ms and an hour. Return: 0, or -1.
 */
static int parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
		{ "min", 60000000000ull }, { "h", 3600000000000ull }, { "", 1000000000 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v > 0))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			double n = v * (double)units[i].ns;

			if (n < 1e7 || n > 3.6e12)
				return -1;
			*ns = (uint64_t)n;
			return 0;
		}
	}
	return -1;
}

/*
 * A two-way choice (enum rec_overflow, enum rec_clock: 0 default, 1 first,
 * 2 second): a config field left at 0 takes the environment variable `id`
 * (its value raw: may be NULL), which must be `first` or `second`.
 * Return: 0, or -EINVAL (logged).
 */
static int resolve_choice(enum rec__env_var id, const char *raw, const char *field,
			  const char *first, const char *second, int *value)
{
	char buf[64], pb[REC__LOG_PATH_BYTES];
	const char *v;

	if (*value == 0 && (v = trimmed(raw, buf, sizeof(buf)))) {
		if (strcmp(v, first) == 0)
			*value = 1;
		else if (strcmp(v, second) == 0)
			*value = 2;
		else {
			rec__log("bad %s '%s' (want %s or %s); tracing disabled", env_vars[id].name,
				 rec__log_path(raw, pb, sizeof(pb)), first, second);
			return -EINVAL;
		}
	}
	if (*value < 0 || *value > 2) {
		rec__log("rec_start: bad config.%s %d", field, *value);
		return -EINVAL;
	}
	return 0;
}

int rec__config_resolve(const struct rec_config *in, struct rec__config *out)
{
	struct rec_config c = REC_CONFIG_INIT;
	struct rec__env env;
	char buf[256], pb[REC__LOG_PATH_BYTES];
	const char *v;
	int err;

	if (in) {
		if (in->size == 0) {
			rec__log("rec_start: config.size is 0 (use REC_CONFIG_INIT)");
			return -EINVAL;
		}
		/* An older caller knows fewer fields: take those, default the rest. */
		memcpy(&c, in, in->size < sizeof(c) ? in->size : sizeof(c));
	}

	env_read_all(&env);
	out->crash = crash_enabled(env.value[REC__ENV_CRASH]);
	err = rec__flight_config(&env, out);
	if (err)
		return err;
	v = c.output ? c.output : env.value[REC__ENV_OUTPUT];
	{
		const char *pattern = v && *v ? v : out->flight ? REC__FLIGHT_DEFAULT_OUTPUT : "trace.zst";

		/* Kept for a restart and a fork (lifecycle.c); cut as it always was. */
		snprintf(out->output_pattern, sizeof(out->output_pattern), "%s", pattern);
		err = expand_output(pattern, out->output, sizeof(out->output));
	}
	if (err) {
		rec__log("bad REC_OUTPUT '%s': %s; tracing disabled",
			 rec__log_path(v ? v : "", pb, sizeof(pb)), strerror(-err));
		return err;
	}

	out->buffer_bytes = c.buffer_bytes;
	if (!out->buffer_bytes && (v = trimmed(env.value[REC__ENV_BUFFER], buf, sizeof(buf)))) {
		if (parse_bytes(v, &out->buffer_bytes) || out->buffer_bytes == 0) {
			rec__log("bad REC_BUFFER '%s' (want bytes with K/M/G suffix); tracing disabled",
				 rec__log_path(env.value[REC__ENV_BUFFER], pb, sizeof(pb)));
			return -EINVAL;
		}
	}
	if (!out->buffer_bytes)
		out->buffer_bytes =
			out->flight ? REC__DEFAULT_FLIGHT_BUFFER_BYTES : REC__DEFAULT_BUFFER_BYTES;
	if (out->buffer_bytes < REC__MIN_BUFFER_BYTES || out->buffer_bytes > REC__MAX_BUFFER_BYTES) {
		rec__log("REC_BUFFER %zu out of range (4K to 4G); tracing disabled", out->buffer_bytes);
		return -EINVAL;
	}
	/* The ring holds a power of two of records: round down. */
	size_t ring = REC__MIN_BUFFER_BYTES;
	while (ring * 2 <= out->buffer_bytes)
		ring *= 2;
	out->buffer_bytes = ring;

	/* REC_MEMORY: every ring of the process, the pool's included (mem.c). */
	out->memory_bytes = c.memory_bytes; /* 0 from a caller that does not know it */
	if (!out->memory_bytes && (v = trimmed(env.value[REC__ENV_MEMORY], buf, sizeof(buf)))) {
		if (parse_bytes(v, &out->memory_bytes) || out->memory_bytes == 0) {
			rec__log("bad REC_MEMORY '%s' (want bytes with K/M/G suffix); tracing disabled",
				 rec__log_path(env.value[REC__ENV_MEMORY], pb, sizeof(pb)));
			return -EINVAL;
		}
	}
	if (!out->memory_bytes)
		out->memory_bytes = REC__DEFAULT_MEMORY_BYTES;
	if (out->memory_bytes < REC__MIN_MEMORY_BYTES) {
		if (c.memory_bytes)
			rec__log("REC_MEMORY %zu below its minimum (64K); tracing disabled",
				 out->memory_bytes);
		else
			rec__log("REC_MEMORY '%s' below its minimum (64K); tracing disabled",
				 rec__log_path(env.value[REC__ENV_MEMORY], pb, sizeof(pb)));
		return -EINVAL;
	}

	out->flush_ms = c.flush_ms;
	if (!out->flush_ms && (v = trimmed(env.value[REC__ENV_FLUSH_MS], buf, sizeof(buf)))) {
		char *end;
		unsigned long ms;

		errno = 0;
		ms = strtoul(v, &end, 10);
		if (errno || *end || end == v || v[0] == '-' || ms == 0 || ms > 3600000) {
			rec__log("bad REC_FLUSH_MS '%s' (want 1 to 3600000); tracing disabled",
				 rec__log_path(env.value[REC__ENV_FLUSH_MS], pb, sizeof(pb)));
			return -EINVAL;
		}
		out->flush_ms = (uint32_t)ms;
	}
	if (!out->flush_ms)
		out->flush_ms = REC__DEFAULT_FLUSH_MS;

	/* REC_COUNTERS: names are checked at start (counters.c). */
	v = env.value[REC__ENV_COUNTERS];
	snprintf(out->counters, sizeof(out->counters), "%s", v ? v : "");
	out->live_ns = 0;
	if ((v = trimmed(env.value[REC__ENV_LIVE], buf, sizeof(buf))) && parse_duration(v, &out->live_ns)) {
		rec__log("bad REC_LIVE '%s' (want a period such as 1s or 500ms, 10ms to 1h); "
			 "no live report", rec__log_path(env.value[REC__ENV_LIVE], pb, sizeof(pb)));
		out->live_ns = 0;
	}

	/* REC_MIN_NS (env only): activations shorter than this are not written. */
	out->min_ns = 0;
	if ((v = trimmed(env.value[REC__ENV_MIN_NS], buf, sizeof(buf)))) {
		char *end;
		unsigned long long ns;

		errno = 0;
		ns = strtoull(v, &end, 10);
		if (errno || *end || end == v || v[0] == '-' || ns > 3600000000000ull) {
			rec__log("bad REC_MIN_NS '%s' (want nanoseconds, 0 to 3600000000000); "
				 "tracing disabled", rec__log_path(env.value[REC__ENV_MIN_NS], pb, sizeof(pb)));
			return -EINVAL;
		}
		out->min_ns = ns;
	}

	/* REC_SAMPLE (env only): stack samples per second of each thread's CPU time. */
	if (parse_sample_hz(env.value[REC__ENV_SAMPLE], &out->sample_hz)) {
		rec__log("bad REC_SAMPLE '%s' (want samples per second of CPU time, 1 to %u); "
			 "tracing disabled",
			 rec__log_path(env.value[REC__ENV_SAMPLE], pb, sizeof(pb)), REC__SAMPLE_MAX_HZ);
		return -EINVAL;
	}

	/* REC_FILE_MODE (env only): octal permissions of the files librec creates. */
	out->file_mode = REC__DEFAULT_FILE_MODE;
	if ((v = trimmed(env.value[REC__ENV_FILE_MODE], buf, sizeof(buf)))) {
		char *end;
		unsigned long mode;

		errno = 0;
		mode = strtoul(v, &end, 8);
		if (errno || *end || end == v || v[0] == '-' || v[0] == '+' || mode > 0777 ||
		    (mode & 0600) != 0600) {
			rec__log("bad REC_FILE_MODE '%s' (want octal permissions from 0600 to 0777, "
				 "such as 0644); tracing disabled",
				 rec__log_path(env.value[REC__ENV_FILE_MODE], pb, sizeof(pb)));
			return -EINVAL;
		}
		out->file_mode = (unsigned)mode;
	}

	int overflow = c.overflow, clock = c.clock;

	err = resolve_choice(REC__ENV_OVERFLOW, env.value[REC__ENV_OVERFLOW], "overflow", "drop", "block",
			     &overflow);
	if (err)
		return err;
	out->block = overflow == REC_OVERFLOW_BLOCK;
	err = resolve_choice(REC__ENV_CLOCK, env.value[REC__ENV_CLOCK], "clock", "tsc", "monotonic",
			     &clock);
	if (err)
		return err;
	out->use_tsc = rec__clock_choose(clock, rec__clock_fast_read);
	return 0;
}

/*
 * The exec family's search path, as execvp() reads it (exec.c): the
 * program's own, not a setting of librec's, so getenv(), not the table's
 * secure_getenv(). NULL if unset.
 */
const char *rec__env_exec_path(void)
{
	return getenv("PATH");
}
