/* SPDX-License-Identifier: MIT */
/*
 * testutil.h - running tracetool (the binary under test, found through the
 * TRACETOOL environment variable that tests/analyzer/meson.build sets) and
 * capturing its exit code, stdout and stderr; per-test temporary paths and
 * directories, a file read whole. No dependency but libc: every suite's
 * tests link it (tu_dep), librec's and whole-program mode's included.
 */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>

struct tu_result {
	int status; /* exit code, or 128 + signal */
	char *out;  /* stdout, NUL-terminated */
	size_t out_len;
	char *err;  /* stderr, NUL-terminated */
};

/* Runs tracetool with the NULL-terminated arguments (not counting argv[0]). */
struct tu_result tu_run(const char *arg, ...) __attribute__((sentinel));
struct tu_result tu_runv(const char *const *args);
void tu_result_free(struct tu_result *r);

/* "/tmp/tt_<pid>_XXXXXX/<name>" in a static buffer per slot (0..7): a
 * directory of the process's own (tu_tmpdir()), removed at its exit with
 * what is in it. */
const char *tu_path(unsigned slot, const char *name);
/* The n-th line (0-based) of text, copied into a static buffer; "" if none. */
const char *tu_line(const char *text, unsigned n);
/* Number of lines in text. */
unsigned tu_nr_lines(const char *text);
/* text is one JSON value (RFC 8259's syntax), with white space around it only. */
bool tu_json_valid(const char *text);
/* Just past `"key":` in json (its first one), where its value starts; NULL if there is none. */
const char *tu_json_key(const char *json, const char *key);
/* Removes path and everything under it (rm -rf), as a test's teardown does.
 * Return: true if rm exited 0. */
bool tu_rm_rf(const char *path);

/* The size of tu_tmpdir()'s directory name (a short prefix) and of tu_join()'s paths. */
#define TU_TMPDIR_MAX 64
#define TU_PATH_MAX 256

/*
 * tu_tmpdir() - a test's own directory: a new, empty /tmp/<prefix>_XXXXXX
 * (mkdtemp(3): mode 0700, a name no other process has), its path in dir.
 * A suite's .init makes it, its .fini removes it (tu_tmpdir_remove()), so
 * that a failed test leaves nothing behind; the process's exit removes it
 * too (atexit(3)), as Criterion runs no .fini after cr_skip_test(). Aborts
 * with a line on stderr if the directory cannot be made: the test then
 * fails as crashed.
 * Return: dir.
 */
const char *tu_tmpdir(char dir[TU_TMPDIR_MAX], const char *prefix);
/* tu_tmpdir_remove() - removes the directory of tu_tmpdir() and everything
 * under it, then empties dir; nothing if dir is "" (no directory made).
 * Return: false if rm failed (it says so on stderr). */
bool tu_tmpdir_remove(char dir[TU_TMPDIR_MAX]);
/* tu_join() - "dir/name" in out; aborts if it does not fit. Return: out. */
const char *tu_join(char out[TU_PATH_MAX], const char *dir, const char *name);
/*
 * tu_read_file() - the whole file, with a NUL after its last byte (malloc'ed:
 * free() it); its size in *len unless len is NULL. Return: NULL if it cannot
 * be opened or read.
 */
char *tu_read_file(const char *path, size_t *len);
/*
 * tu_sh() - runs the shell command cmd (popen(3): sh -c) and returns all it
 * writes on stdout, NUL-terminated (malloc'ed: free() it); its exit code in
 * *status, or 128 + the signal that killed it. Aborts with a line on stderr
 * if the shell cannot be started.
 */
char *tu_sh(const char *cmd, int *status);

#endif /* TESTUTIL_H */
