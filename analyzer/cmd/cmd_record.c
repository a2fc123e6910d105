/* SPDX-License-Identifier: MIT */
/*
 * cmd_record.c - `tracetool record [-F HZ] [-o FILE] -- CMD [ARG...]`: runs
 * CMD recorded by librec, as `perf record` does (tracetool(1), "record").
 * CMD needs no rec at all: it is started with librec preloaded
 * (LD_PRELOAD, in front of any the user already has), REC_SAMPLE=HZ and
 * REC_OUTPUT=FILE; the other REC_* variables of the environment pass
 * through. tracetool waits for it, says on stderr where the trace went and
 * exits with CMD's status (128+N when a signal N ended it; 126 when it
 * could not be run, 127 when it was not found, as env(1)).
 *
 * Which librec: $REC_LIBRARY when set, else the first that exists of
 *   1. <dir of tracetool>/../librec/<soname>      (a meson build tree)
 *   2. <prefix>/<libdir>/<soname>, prefix found by taking the configured
 *      bindir off tracetool's own directory       (an install, relocated or not)
 *   3. the configured <prefix>/<libdir>/<soname>
 * and else the bare soname, which the dynamic loader looks up in its own
 * paths (a Debian install puts it in the multiarch directory).
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "cmd/options.h"
#include "common/emit.h"
#include "common/xalloc.h"

#ifndef TT_LIBREC_SONAME
#error "TT_LIBREC_SONAME, TT_PREFIX, TT_BINDIR and TT_LIBDIR come from analyzer/meson.build"
#endif

extern char **environ;

/* REC_SAMPLE's range (rec(3)). */
#define RECORD_HZ_MIN 1
#define RECORD_HZ_MAX 20000
#define RECORD_HZ_DEFAULT 997

struct record_args {
	unsigned long hz;
	const char *output;
	char **cmd; /* CMD and its arguments, NULL-terminated (argv's tail) */
};

static const struct argp_option record_options[] = {
	{ "frequency", 'F', "HZ", 0,
	  "Samples per second of each thread's CPU time, 1 to 20000 (default 997)", 0 },
	{ "output", 'o', "FILE", 0, "The trace file (default trace.zst); %p becomes the pid", 0 },
	{ 0 },
};

static error_t parse_record(int key, char *arg, struct argp_state *state)
{
	struct record_args *a = state->input;
	uint64_t v;

	switch (key) {
	case 'F':
		if (tt_options_parse_u64(arg, &v) || v < RECORD_HZ_MIN || v > RECORD_HZ_MAX)
			argp_error(state, "-F: '%s' is not a rate from %d to %d Hz", arg,
				   RECORD_HZ_MIN, RECORD_HZ_MAX);
		a->hz = (unsigned long)v;
		break;
	case 'o':
		if (!*arg)
			argp_error(state, "-o: empty file name");
		a->output = arg;
		break;
	case ARGP_KEY_ARG:
		/* CMD: it and everything after it are the command's own. */
		a->cmd = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (!a->cmd)
			argp_error(state, "missing CMD");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp record_argp = {
	record_options, parse_record, "[--] CMD [ARG...]",
	"Runs CMD recorded: librec is preloaded into it (LD_PRELOAD), so CMD needs no "
	"rebuild and no rec of its own, and samples every thread's call stack at HZ per "
	"second of its CPU time (REC_SAMPLE). Exits with CMD's status (128+N when signal N "
	"ended it) and says on stderr where the trace went.\v"
	"The other REC_* variables of the environment apply (rec(3)), e.g. REC_MODE=flight. "
	"Programs that CMD starts inherit the recording: give -o a name with %p so that "
	"each process writes its own file. librec is $REC_LIBRARY when set, else found "
	"beside tracetool (its build tree or its install), else by the dynamic loader.\n\n"
	"Examples:\n"
	"  tracetool record -- ./server 8080\n"
	"  tracetool record -F 199 -o lua.zst -- lua5.4 bench.lua\n"
	"  tracetool profile trace.zst",
	NULL, 0, 0,
};

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir, "/", rel and name joined; malloc'd. */
static char *join3(const char *dir, const char *rel, const char *name)
{
	size_t n = strlen(dir) + strlen(rel) + strlen(name) + 3;
	char *p = tt_xrealloc(NULL, n);

	snprintf(p, n, "%s%s%s/%s", dir, *rel ? "/" : "", rel, name);
	return p;
}

/* p without "..", "." or links (for the messages); p is freed. */
static char *canonical(char *p)
{
	char *r = realpath(p, NULL);

	if (!r)
		return p;
	free(p);
	return r;
}

/* The librec to preload (file header); malloc'd. */
static char *find_librec(void)
{
	const char *env = getenv("REC_LIBRARY");
	char exe[PATH_MAX], *slash, *p;
	ssize_t n;
	size_t nb = strlen(TT_BINDIR);

	if (env && *env)
		return tt_xstrndup(env, strlen(env));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0'; /* exe is now tracetool's directory */
			p = join3(exe, "../librec", TT_LIBREC_SONAME);
			if (is_file(p))
				return canonical(p);
			free(p);
			/* <prefix>/<bindir>: take bindir off the end. */
			size_t ne = strlen(exe);
			if (TT_BINDIR[0] != '/' && ne > nb && exe[ne - nb - 1] == '/' &&
			    strcmp(exe + ne - nb, TT_BINDIR) == 0) {
				exe[ne - nb - 1] = '\0';
				p = join3(exe, TT_LIBDIR, TT_LIBREC_SONAME);
				if (is_file(p))
					return canonical(p);
				free(p);
			}
		}
	}
	static const char libdir[] = TT_LIBDIR;

	/* libdir is relative to the prefix, or absolute. */
	p = libdir[0] == '/' ? join3("", &libdir[1], TT_LIBREC_SONAME)
			     : join3(TT_PREFIX, libdir, TT_LIBREC_SONAME);
	if (is_file(p))
		return p;
	free(p);
	return tt_xstrndup(TT_LIBREC_SONAME, strlen(TT_LIBREC_SONAME));
}

/* name=value in a malloc'd string. */
static char *env_entry(const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 2;
	char *p = tt_xrealloc(NULL, n);

	snprintf(p, n, "%s=%s", name, value);
	return p;
}

/* The environment of CMD: ours with LD_PRELOAD, REC_SAMPLE and REC_OUTPUT
 * set (LD_PRELOAD keeps what it had, after librec). */
static char **child_env(const char *lib, unsigned long hz, const char *output, const char *list)
{
	size_t n = 0, k = 0;
	const char *pre = getenv("LD_PRELOAD");
	char hzs[16], *preload;
	char **env;

	while (environ[n])
		n++;
	env = tt_xrealloc(NULL, (n + 5) * sizeof(*env));
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "REC_SAMPLE=", 11) &&
		    strncmp(environ[i], "REC_OUTPUT=", 11) && strncmp(environ[i], "REC_RECORD_LOG=", 15))
			env[k++] = tt_xstrndup(environ[i], strlen(environ[i]));
	if (pre && *pre) {
		size_t len = strlen(lib) + strlen(pre) + 2;

		preload = tt_xrealloc(NULL, len);
		snprintf(preload, len, "%s:%s", lib, pre);
	} else
		preload = tt_xstrndup(lib, strlen(lib));
	env[k++] = env_entry("LD_PRELOAD", preload);
	free(preload);
	snprintf(hzs, sizeof(hzs), "%lu", hz);
	env[k++] = env_entry("REC_SAMPLE", hzs);
	env[k++] = env_entry("REC_OUTPUT", output);
	if (list)
		env[k++] = env_entry("REC_RECORD_LOG", list);
	env[k] = NULL;
	return env;
}

/*
 * The list through which each librec of CMD's tree says which file it
 * wrote (REC_RECORD_LOG, rec(3)): an empty file in a directory of our own
 * (mkdtemp, mode 0700). *dir and the return are malloc'd; NULL (no list:
 * the report falls back to looking at -o's file) if it cannot be made.
 */
static char *make_list(char **dir)
{
	const char *tmp = getenv("TMPDIR");
	char *d, *f;
	int fd;

	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	d = join3(tmp, "", "tracetool-record-XXXXXX");
	if (!mkdtemp(d)) {
		free(d);
		return NULL;
	}
	f = join3(d, "", "files");
	fd = open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		rmdir(d);
		free(d);
		free(f);
		return NULL;
	}
	close(fd);
	*dir = d;
	return f;
}

/*
 * The files the list names, each once, in the order written; per file, how
 * many processes (distinct pids) opened it: librec truncates a file no live
 * recording holds (rec(3), REC_OUTPUT), so a file opened by several in turn
 * keeps the last one's recording only. And the list's notes.
 */
struct written {
	char **path;
	size_t n;
	unsigned *writers;
	long *last_pid; /* per file, the pid of its latest opener */
	int blocked_signo; /* "!sample-signal-blocked N": every thread blocked signal N */
	bool fds_closed;   /* "!sample-descriptors-closed": the program closed librec's */
	int taken_signo;   /* "!sample-signal-taken N": the program installed its action for N */
	bool taken_first;  /* ... " before-first-sample": no sample had been taken then */
};

static void read_list(const char *list, struct written *w)
{
	FILE *f = fopen(list, "re");
	char *rec = NULL, *tab;
	size_t cap = 0;
	ssize_t len;

	w->path = NULL;
	w->writers = NULL;
	w->last_pid = NULL;
	w->n = 0;
	w->blocked_signo = 0;
	w->fds_closed = false;
	w->taken_signo = 0;
	w->taken_first = false;
	if (!f)
		return;
	while ((len = getdelim(&rec, &cap, '\0', f)) > 0) {
		size_t i;
		long pid;

		if (rec[len - 1] != '\0')
			break; /* cut short: a process still writing it */
		tab = strchr(rec, '\t');
		if (tab && strncmp(tab + 1, "!sample-signal-blocked ", 23) == 0) {
			w->blocked_signo = atoi(tab + 24);
			continue;
		}
		if (tab && strncmp(tab + 1, "!sample-signal-taken ", 21) == 0) {
			w->taken_signo = atoi(tab + 22);
			w->taken_first = strstr(tab + 22, " before-first-sample") != NULL;
			continue;
		}
		if (tab && strcmp(tab + 1, "!sample-descriptors-closed") == 0) {
			w->fds_closed = true;
			continue;
		}
		if (!tab || tab[1] != '/')
			continue;
		pid = strtol(rec, NULL, 10);
		for (i = 0; i < w->n; i++)
			if (strcmp(w->path[i], tab + 1) == 0)
				break;
		if (i < w->n) {
			/* The same pid again: rec_start() after rec_stop(), or exec. */
			w->writers[i] += pid != w->last_pid[i];
			w->last_pid[i] = pid;
			continue;
		}
		w->path = tt_xrealloc(w->path, (w->n + 1) * sizeof(*w->path));
		w->writers = tt_xrealloc(w->writers, (w->n + 1) * sizeof(*w->writers));
		w->last_pid = tt_xrealloc(w->last_pid, (w->n + 1) * sizeof(*w->last_pid));
		w->writers[w->n] = 1;
		w->last_pid[w->n] = pid;
		w->path[w->n++] = tt_xstrndup(tab + 1, strlen(tab + 1));
	}
	free(rec);
	fclose(f);
}

/* path as the user would type it here: relative when under our directory. */
static const char *shown(const char *path, const char *cwd)
{
	size_t n = cwd ? strlen(cwd) : 0;

	if (n > 1 && strncmp(path, cwd, n) == 0 && path[n] == '/')
		return path + n + 1;
	return path;
}

/*
 * The closing lines from the list: the file -o named (when a process wrote
 * it) and every other that CMD's processes wrote — a name with %p, or the
 * name with "-PID" librec took when another process held -o's file
 * (rec(3), REC_OUTPUT) — and how to read them together.
 */
static void report_written(const struct written *w, const char *output)
{
	/* Paths shown as -o was given: absolute, or relative to here. */
	char *cwd = output[0] == '/' ? NULL : getcwd(NULL, 0), *want = NULL;
	size_t main_i = w->n, more, same = 0;
	const char *from;

	/* -o's file, absolute as librec wrote it. */
	if (output[0] == '/')
		want = tt_xstrndup(output, strlen(output));
	else if (cwd)
		want = join3(cwd, "", output);
	for (size_t i = 0; i < w->n && want; i++)
		if (strcmp(w->path[i], want) == 0)
			main_i = i;
	if (main_i == w->n)
		main_i = 0; /* no process wrote -o's name itself: the first file leads */
	more = w->n - 1;
	/* Files of the main file's pid: the programs its process exec()ed (rec(3), "Exec"). */
	for (size_t i = 0; i < w->n; i++)
		same += i != main_i && w->last_pid[i] == w->last_pid[main_i];
	if (!same)
		from = more == 1 ? "another process" : "other processes";
	else if (same == more)
		from = more == 1 ? "the program it exec()ed" : "the programs it exec()ed";
	else
		from = "other processes and programs exec()ed";
	fputs("tracetool: record: trace in ", stderr);
	tt_emit_text(stderr, shown(w->path[main_i], cwd));
	if (more) {
		fprintf(stderr, "; %zu more from %s: ", more, from);
		for (size_t i = 0, k = 0; i < w->n; i++) {
			if (i == main_i)
				continue;
			fputs(k++ ? ", " : "", stderr);
			tt_emit_text(stderr, shown(w->path[i], cwd));
		}
		fputs("\ntracetool: record: read them together: tracetool profile --by-process", stderr);
		for (size_t i = 0; i < w->n; i++) {
			fputc(' ', stderr);
			tt_emit_text(stderr, shown(w->path[i], cwd));
		}
	}
	fputc('\n', stderr);
	for (size_t i = 0; i < w->n; i++) {
		if (w->writers[i] < 2)
			continue;
		fputs("tracetool: record: warning: ", stderr);
		tt_emit_text(stderr, shown(w->path[i], cwd));
		fprintf(stderr,
			" was written by %u processes one after another: it holds the last one's "
			"recording only (give -o a %%p to keep each)\n",
			w->writers[i]);
	}
	free(want);
	free(cwd);
}

/*
 * The end of a line: librec took no sample because every thread of cmd
 * blocked its signal (rec(3), REC_SAMPLE; librec's REC_RECORD_LOG note).
 */
static void say_blocked(const char *cmd, int signo)
{
	tt_emit_text(stderr, cmd);
	fprintf(stderr, " took no sample: every thread of it blocked signal %d (SIGRTMAX-%d), "
			"which librec samples with\n",
		signo, SIGRTMAX - signo);
}

/*
 * The end of a line: cmd installed its own action for librec's sampling
 * signal, which stopped sampling for good (rec(3), REC_SAMPLE; librec's
 * REC_RECORD_LOG note). before: no sample had been taken then, as when the
 * Go runtime takes every signal at start (README, "Profile an unmodified
 * program").
 */
static void say_taken(const char *cmd, int signo, bool before)
{
	tt_emit_text(stderr, cmd);
	if (before)
		fprintf(stderr, " took no sample: it installed its own action for signal %d "
				"(SIGRTMAX-%d), which librec samples with, before the first sample "
				"(the Go runtime does so at start, for every signal: Go programs are "
				"not sampled)\n",
			signo, SIGRTMAX - signo);
	else
		fprintf(stderr, " was sampled only until it installed its own action for signal "
				"%d (SIGRTMAX-%d), which librec samples with\n",
			signo, SIGRTMAX - signo);
}

static void free_env(char **env)
{
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
}

int tt_cmd_record(int argc, char **argv)
{
	struct record_args a = { .hz = RECORD_HZ_DEFAULT, .output = "trace.zst" };
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	struct stat before, st;
	bool existed;
	struct written w = { 0 };
	char **env;
	char *lib, *list, *list_dir = NULL, *cwd, *abs_output = NULL;
	pid_t pid;
	int status, err, rc;

	/* CMD's own options are not ours: stop at the first operand. */
	argp_parse(&record_argp, argc, argv, ARGP_IN_ORDER, NULL, &a);
	lib = find_librec();
	list = make_list(&list_dir);
	/* -o relative to here, as perf record's, not to the directory a
	 * process of CMD is in when it opens the file (sh -c 'cd d && prog'). */
	if (a.output[0] != '/' && (cwd = getcwd(NULL, 0))) {
		abs_output = join3(cwd, "", a.output);
		free(cwd);
	}
	env = child_env(lib, a.hz, abs_output ? abs_output : a.output, list);
	free(abs_output);
	/* Whether CMD wrote the trace: the file is new or changed. */
	existed = stat(a.output, &before) == 0;
	/* As a shell does for its foreground job: ^C and ^\ are for CMD,
	 * tracetool stays to report its status. */
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	posix_spawnattr_t attr;
	sigset_t def;

	posix_spawnattr_init(&attr);
	sigemptyset(&def);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGQUIT);
	posix_spawnattr_setsigdefault(&attr, &def);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	err = posix_spawnp(&pid, a.cmd[0], NULL, &attr, a.cmd, env);
	posix_spawnattr_destroy(&attr);
	free_env(env);
	if (err) {
		fprintf(stderr, "tracetool: record: ");
		tt_emit_text(stderr, a.cmd[0]);
		fprintf(stderr, ": %s\n", strerror(err));
		rc = err == ENOENT ? 127 : 126;
		goto out;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "tracetool: record: waitpid: %s\n", strerror(errno));
			rc = 1;
			goto out;
		}
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (WIFSIGNALED(status))
		fprintf(stderr, "tracetool: record: %s ended by signal %d (%s)\n", a.cmd[0],
			WTERMSIG(status), strsignal(WTERMSIG(status)));
	if (list)
		read_list(list, &w);
	if (w.n) {
		report_written(&w, a.output);
		if (w.blocked_signo) {
			fputs("tracetool: record: ", stderr);
			say_blocked(a.cmd[0], w.blocked_signo);
		}
		if (w.taken_signo) {
			fputs("tracetool: record: warning: ", stderr);
			say_taken(a.cmd[0], w.taken_signo, w.taken_first);
		}
	} else if (w.taken_signo) {
		fputs("tracetool: record: no trace written to ", stderr);
		tt_emit_text(stderr, a.output);
		fputs(": ", stderr);
		say_taken(a.cmd[0], w.taken_signo, w.taken_first);
	} else if (w.blocked_signo) {
		fputs("tracetool: record: no trace written to ", stderr);
		tt_emit_text(stderr, a.output);
		fputs(": ", stderr);
		say_blocked(a.cmd[0], w.blocked_signo);
	} else if (w.fds_closed) {
		fputs("tracetool: record: no trace written to ", stderr);
		tt_emit_text(stderr, a.output);
		fputs(": ", stderr);
		tt_emit_text(stderr, a.cmd[0]);
		fputs(" took no sample: it closed the descriptors librec samples with "
		      "(close_range(), closefrom()) before the first sample\n", stderr);
	} else if (strstr(a.output, "%p")) {
		fputs("tracetool: record: trace in ", stderr);
		tt_emit_text(stderr, a.output);
		fputs(" (%p: each process's pid)\n", stderr);
	} else if (stat(a.output, &st) == 0 &&
		   (!existed || st.st_ino != before.st_ino || st.st_size != before.st_size ||
		    st.st_mtim.tv_sec != before.st_mtim.tv_sec ||
		    st.st_mtim.tv_nsec != before.st_mtim.tv_nsec)) {
		fputs("tracetool: record: trace in ", stderr);
		tt_emit_text(stderr, a.output);
		fputc('\n', stderr);
	} else {
		fputs("tracetool: record: no trace written to ", stderr);
		tt_emit_text(stderr, a.output);
		fputs(": ", stderr);
		tt_emit_text(stderr, a.cmd[0]);
		fputs(" recorded nothing (it ran less than one sample period, or librec was not "
		      "loaded: a statically linked or set-user-ID program), or the file could not be "
		      "written; librec: ", stderr);
		tt_emit_text(stderr, lib);
		fputc('\n', stderr);
	}
out:
	for (size_t i = 0; i < w.n; i++)
		free(w.path[i]);
	free(w.path);
	free(w.writers);
	free(w.last_pid);
	if (list) {
		unlink(list);
		rmdir(list_dir);
	}
	free(list);
	free(list_dir);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	free(lib);
	return rc;
}
