/* SPDX-License-Identifier: MIT */
/*
 * testutil.h - running tracetool (the binary under test, found through the
 * TRACETOOL environment variable that tests/analyzer/meson.build sets) and
 * capturing its exit code, stdout and stderr; per-test temporary paths.
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

/* "/tmp/tt_<pid>_<name>" in a static buffer per slot (0..7). */
const char *tu_path(unsigned slot, const char *name);
/* The n-th line (0-based) of text, copied into a static buffer; "" if none. */
const char *tu_line(const char *text, unsigned n);
/* Number of lines in text. */
unsigned tu_nr_lines(const char *text);
/* text is one JSON value (RFC 8259's syntax), with white space around it only. */
bool tu_json_valid(const char *text);
/* Just past `"key":` in json (its first one), where its value starts; NULL if there is none. */
const char *tu_json_key(const char *json, const char *key);
/* Removes path and everything under it (rm -rf), as a test's teardown does. */
void tu_rm_rf(const char *path);

#endif /* TESTUTIL_H */
