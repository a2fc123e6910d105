/* SPDX-License-Identifier: MIT */
/*
 * testutil.c - see testutil.h. Output goes through temporary files rather
 * than pipes, so a large output cannot dead-lock the test.
 */
#define _GNU_SOURCE
#include "testutil.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static char *slurp(FILE *f, size_t *len)
{
	long n;
	char *buf;

	fflush(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (!buf)
		abort();
	if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)
		abort();
	buf[n] = '\0';
	if (len)
		*len = (size_t)n;
	return buf;
}

struct tu_result tu_runv(const char *const *args)
{
	struct tu_result r = { 0 };
	const char *tool = getenv("TRACETOOL");
	FILE *out = tmpfile(), *err = tmpfile();
	const char *argv[64];
	size_t n = 0;
	pid_t pid;
	int ws;

	if (!tool || !out || !err)
		abort();
	argv[n++] = tool;
	while (args[n - 1] && n < 63) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		dup2(fileno(out), 1);
		dup2(fileno(err), 2);
		execv(tool, (char *const *)argv);
		_exit(127);
	}
	waitpid(pid, &ws, 0);
	r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	r.out = slurp(out, &r.out_len);
	r.err = slurp(err, NULL);
	fclose(out);
	fclose(err);
	return r;
}

struct tu_result tu_run(const char *arg, ...)
{
	const char *args[64];
	size_t n = 0;
	va_list ap;

	va_start(ap, arg);
	for (const char *a = arg; a && n < 63; a = va_arg(ap, const char *))
		args[n++] = a;
	va_end(ap);
	args[n] = NULL;
	return tu_runv(args);
}

void tu_result_free(struct tu_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/*
 * In a directory of the process's own (tu_tmpdir()), which its exit
 * removes with whatever the test left in it: tests that named a file here
 * and did not remove it, or failed before they did, filled /tmp (F29).
 */
const char *tu_path(unsigned slot, const char *name)
{
	static char paths[8][TU_PATH_MAX], dir[TU_TMPDIR_MAX];
	static pid_t dir_pid;

	if (dir_pid != getpid()) {
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "tt_%d", (int)getpid());
		tu_tmpdir(dir, prefix);
		dir_pid = getpid();
	}
	return tu_join(paths[slot & 7], dir, name);
}

const char *tu_line(const char *text, unsigned n)
{
	static char line[4096];
	const char *end;

	while (n-- && text) {
		text = strchr(text, '\n');
		if (text)
			text++;
	}
	if (!text || !*text)
		return "";
	end = strchr(text, '\n');
	if (!end)
		end = text + strlen(text);
	snprintf(line, sizeof(line), "%.*s", (int)(end - text), text);
	return line;
}

unsigned tu_nr_lines(const char *text)
{
	unsigned n = 0;

	for (; *text; text++)
		if (*text == '\n')
			n++;
	return n;
}

/* A tiny JSON syntax checker (RFC 8259), enough to prove validity. */
static const char *json_value(const char *p);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p && *p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)p[i]))
						return NULL;
				p += 4;
			} else if (!strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
		p++;
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *json_value(const char *p)
{
	p = json_ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		bool obj = *p == '{';

		p = json_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				p = json_string(json_ws(p));
				if (!p)
					return NULL;
				p = json_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = json_value(p);
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p == ',') {
				p++;
				continue;
			}
			return *p == close ? p + 1 : NULL;
		}
	}
	if (*p == '"')
		return json_string(p);
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (!strncmp(p, "null", 4))
		return p + 4;
	if (*p == '-' || isdigit((unsigned char)*p)) {
		char *end;

		strtod(p, &end);
		return end > p ? end : NULL;
	}
	return NULL;
}

bool tu_json_valid(const char *text)
{
	const char *end = json_value(text);

	return end && *json_ws(end) == '\0';
}

const char *tu_json_key(const char *json, const char *key)
{
	char k[128];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(json, k);
	return p ? p + strlen(k) : NULL;
}

bool tu_rm_rf(const char *path)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd) == 0;
}

static void tu_die(const char *what, const char *path)
{
	fprintf(stderr, "testutil: %s: %s: %s\n", what, path, strerror(errno));
	abort();
}

/*
 * The directories tu_tmpdir() made in this process, by their names (a
 * copy: a test's dir is often an array on its stack, gone or overwritten
 * by the time the process exits), removed at its exit too: Criterion runs
 * no .fini after cr_skip_test(), a test that fails or skips before its own
 * tu_tmpdir_remove() would leave its directory behind, and some tests never
 * call it (F29, check4). Only in the process that made them: a test's
 * forked child that exits leaves them alone.
 */
static char tmpdirs[8][TU_TMPDIR_MAX];
static pid_t tmpdirs_pid;

static void tmpdirs_at_exit(void)
{
	if (getpid() != tmpdirs_pid)
		return;
	for (size_t i = 0; i < sizeof(tmpdirs) / sizeof(tmpdirs[0]); i++)
		if (tmpdirs[i][0])
			tu_tmpdir_remove(tmpdirs[i]);
}

const char *tu_tmpdir(char dir[TU_TMPDIR_MAX], const char *prefix)
{
	int n = snprintf(dir, TU_TMPDIR_MAX, "/tmp/%s_XXXXXX", prefix);
	size_t i = 0;

	errno = ENAMETOOLONG;
	if (n < 0 || n >= TU_TMPDIR_MAX || !mkdtemp(dir))
		tu_die("cannot make a temporary directory", dir);
	if (tmpdirs_pid != getpid()) {
		memset(tmpdirs, 0, sizeof(tmpdirs));
		if (!tmpdirs_pid)
			atexit(tmpdirs_at_exit);
		tmpdirs_pid = getpid();
	}
	while (i < sizeof(tmpdirs) / sizeof(tmpdirs[0]) && tmpdirs[i][0])
		i++;
	if (i < sizeof(tmpdirs) / sizeof(tmpdirs[0]))
		memcpy(tmpdirs[i], dir, TU_TMPDIR_MAX);
	else
		fprintf(stderr, "testutil: %s is not removed at exit (more than %zu)\n", dir,
			sizeof(tmpdirs) / sizeof(tmpdirs[0]));
	return dir;
}

bool tu_tmpdir_remove(char dir[TU_TMPDIR_MAX])
{
	char cmd[TU_TMPDIR_MAX + 32];
	bool ok;

	/* Only what tu_tmpdir() made: never a path a failed setup left half-written. */
	if (!dir[0] || strncmp(dir, "/tmp/", 5) != 0 || strchr(dir, '\''))
		return true;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ok = system(cmd) == 0;
	if (!ok)
		fprintf(stderr, "testutil: cannot remove %s\n", dir);
	/* Out of the list of those to remove at exit (dir may be that entry). */
	for (size_t i = 0; tmpdirs_pid == getpid() && i < sizeof(tmpdirs) / sizeof(tmpdirs[0]); i++)
		if (tmpdirs[i] != dir && strcmp(tmpdirs[i], dir) == 0)
			tmpdirs[i][0] = '\0';
	dir[0] = '\0';
	return ok;
}

const char *tu_join(char out[TU_PATH_MAX], const char *dir, const char *name)
{
	int n = snprintf(out, TU_PATH_MAX, "%s/%s", dir, name);

	errno = ENAMETOOLONG;
	if (n < 0 || n >= TU_PATH_MAX)
		tu_die("path too long", name);
	return out;
}

/* All of f, NUL-terminated (malloc'ed), its size in *len unless NULL; NULL on a read error. */
static char *read_all(FILE *f, size_t *len)
{
	size_t cap = 4096, n = 0, got;
	char *buf = malloc(cap);

	if (!buf)
		abort();
	while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (cap - n - 1 == 0) {
			buf = realloc(buf, cap *= 2);
			if (!buf)
				abort();
		}
	}
	if (ferror(f)) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	if (!f)
		return NULL;
	buf = read_all(f, len);
	fclose(f);
	return buf;
}

char *tu_sh(const char *cmd, int *status)
{
	FILE *p;
	char *buf;
	int ws;

	fflush(stdout);
	fflush(stderr);
	p = popen(cmd, "r");
	if (!p)
		tu_die("cannot start", cmd);
	buf = read_all(p, NULL);
	if (!buf)
		tu_die("cannot read the output of", cmd);
	ws = pclose(p);
	*status = ws == -1 ? -1 : WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	return buf;
}
