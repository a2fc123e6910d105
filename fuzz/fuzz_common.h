/* SPDX-License-Identifier: MIT */
/*
 * fuzz_common.h - what every fuzz_<command>.c shares: the input bytes become
 * a file (a memfd, so no disk I/O and nothing left behind), and tracetool's
 * command runs on it in-process through tt_cmd_<name>(), the same function
 * main.c dispatches to. Commands never exit() on valid arguments, so one
 * process runs millions of inputs; stdout goes to /dev/null.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/commands.h"

/*
 * fuzz_run_command() - write data to the input file and run cmd with the
 * argument lists in args (each NULL-terminated, the trace path appended),
 * nr_args of them. Aborts if a command returns anything but 0 or 1: a
 * usage error (2) on a fixed command line means the harness is wrong, and
 * any other value breaks tracetool(1), EXIT STATUS.
 */
void fuzz_run_command(tt_cmd_fn cmd, const char *const *const *args, size_t nr_args,
		      const uint8_t *data, size_t size);

/* What one command printed, and its exit code. */
struct fuzz_output {
	char *out, *err; /* NUL-terminated */
	size_t out_len, err_len;
	int rc;
};

/*
 * fuzz_write_input_indexed() - the input file with index frames (FORMAT.md
 * §6), for fuzz_index.c: a file that starts with an index frame is taken as
 * is but for each index frame's two hashes, made right (a crafted file can
 * always have them right); decompressed content (as fuzz_write_input()
 * takes it) is cut into frames, each after an index frame that says the
 * truth about it. Return: true in that last case (the index frames are
 * honest: a window through them must read as the whole file does).
 */
bool fuzz_write_input_indexed(const uint8_t *data, size_t size);

/* Runs cmd with args (NULL-terminated, the trace path appended) on the
 * input already written, its output to /dev/null; aborts as
 * fuzz_run_command() does. Return: the exit code. */
int fuzz_run_on_input(tt_cmd_fn cmd, const char *const *args);

/* Writes the input file, for fuzz_run_captured(). */
void fuzz_write_input(const uint8_t *data, size_t size);
/* The path the commands read the input from (after fuzz_write_input()). */
const char *fuzz_input_path(void);
/*
 * fuzz_run_captured() - run cmd with args (NULL-terminated, the trace path
 * appended) on the input of fuzz_write_input(), capturing its stdout and
 * stderr into o (free with fuzz_output_free()). Aborts like
 * fuzz_run_command() on an exit code other than 0 or 1.
 * Return: the exit code.
 */
int fuzz_run_captured(tt_cmd_fn cmd, const char *const *args, struct fuzz_output *o);
void fuzz_output_free(struct fuzz_output *o);

#endif /* FUZZ_COMMON_H */
