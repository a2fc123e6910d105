/* SPDX-License-Identifier: MIT */
/*
 * progress.h - the progress line of long analyses (tracetool(1), PROGRESS): on stderr,
 * only when stderr is a terminal, once an analysis has lasted a second
 * (TRACETOOL_PROGRESS_MS changes that delay), redrawn at most four times a
 * second and erased when the reading ends. `--quiet` turns it off. The
 * reader pipeline (events.c) reports how far it read; nothing else here
 * knows about traces.
 *
 * Threads: tt_progress_read() is called by whichever thread reads frames
 * (events.c's reader thread, or the caller), one at a time; the other calls
 * come from the main thread before that thread starts or after it is joined
 * (pthread_create/join order them), so the state needs no lock.
 */
#ifndef TT_PROGRESS_H
#define TT_PROGRESS_H

#include <argp.h>
#include <stdbool.h>
#include <stdint.h>

/* `-q, --quiet`, for the argp children of every command. */
extern const struct argp tt_progress_argp;

void tt_progress_set_quiet(bool quiet);
/* Called by a command that writes its report to stdout while it reads
 * (chrome): no progress line then if stdout is a terminal too. */
void tt_progress_stdout_streams(void);
/* The reader is at done_bytes of a file of file_bytes (events.c, per frame). */
void tt_progress_read(uint64_t done_bytes, uint64_t file_bytes);
/* The reading ended: erase the line if one is shown. */
void tt_progress_done(void);

#endif /* TT_PROGRESS_H */
