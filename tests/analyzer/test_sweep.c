/* SPDX-License-Identifier: MIT */
/*
 * test_sweep.c - the corruption sweep (issue #5, style.md §6 Robustness): a
 * valid trace of 4 threads and several frames, written by tracegen, cut at
 * every byte offset of its first and of its last frame and at 1000 offsets
 * spread over the file, and hit by 1000 single-bit flips (fixed seed). On
 * each damaged file every command (summary, histogram, chrome, info, check)
 * must return 0 or 1 (never 2, never a signal, never hang) and check must
 * return 1 (unless a flip hit one of the few bits zstd's decoder ignores, so
 * that the file still decompresses to the same bytes: then check returns 0).
 *
 * Thousands of tracetool processes would take minutes, so the commands run
 * in-process through analyzer/cmd/commands.h (tracetool's own entry points), in
 * one forked child per damaged file: a crash or a sanitizer report in the
 * child fails that case only, and alarm() turns a hang into a failure. The
 * cases are split into batches, one ParameterizedTest each; within a batch
 * cr_expect names every failing case and goes on.
 *
 * TT_SWEEP_STRIDE=N runs every N-th case only (the sanitizer builds, where a
 * fork and a run cost ten times more); the default, 1, runs them all.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "cmd/commands.h"
#include "tracegen.h"

#define NR_SPREAD_CUTS 1000
#define NR_FLIPS 1000
#define BATCH_CASES 400
#define CASE_TIMEOUT_S 30 /* generous: a hang, not a slow machine */
#define MAX_FRAMES 64

enum sweep_kind { CUT_FIRST_FRAME, CUT_LAST_FRAME, CUT_SPREAD, FLIP_BIT };

static const char *const kind_names[] = { "cut in first frame", "cut in last frame",
					  "cut at spread offset", "bit flip" };

struct sweep_batch {
	enum sweep_kind kind;
	uint32_t first; /* index of the batch's first case within its kind */
};

/* The commands and arguments run on every damaged file. */
static const char *const command_args[][3] = {
	{ "summary", "--format=csv", NULL },
	{ "histogram", NULL, NULL },
	{ "chrome", NULL, NULL },
	{ "info", "--format=json", NULL },
	{ "check", NULL, NULL },
	{ "summary", "--interval=20us", NULL },
	{ "tree", "--format=csv", NULL },
	{ "flame", "--by-thread", NULL },
	{ "values", "--format=json", NULL },
	{ "flows", "--format=csv", NULL },
	{ "summary", "--arg=bytes", NULL },
};

#define NR_COMMANDS (sizeof(command_args) / sizeof(command_args[0]))
#define CHECK_INDEX 4

/* ---- the trace under test ---- */

struct base_trace {
	uint8_t *bytes;
	size_t nr_bytes;
	uint8_t *content; /* the decompressed frames, as `zstd -d` gives them */
	size_t nr_content_bytes;
	uint64_t frames[MAX_FRAMES]; /* file offsets where frames start */
	size_t nr_frames;
};

static uint64_t lcg_state;

static uint64_t lcg_next(void)
{
	lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
	return lcg_state >> 11;
}

/* 4 threads, each a random walk over 6 sites, 600 events a thread, TSC with
 * SYNC records, a rename, drops, a THREAD_END, and counters on thread 2
 * (COUNTER_SET, a COUNTERS block after each of its EVENTS blocks): every
 * record type. */
static void write_base(const char *path)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_TSC, .ticks_per_second = 2000000000ull,
				 .start_ticks = 10000, .start_real_ns = 1700000000000000000ull,
				 .pid = 99, .frame_bytes = 1500, .block_events = 64 };
	static const char *const sites[] = { "main", "read", "parse", "eval", "write", "gc" };
	uint64_t now[5] = { 0, 10000, 10010, 10020, 10030 };
	uint32_t stack[5][8], depth[5] = { 0 };
	struct tg_trace *t = tg_create(path, &cfg);

	cr_assert_not_null(t);
	lcg_state = 42;
	tg_sync(t, 10000, 1000000, 1700000000000000000ull);
	for (uint32_t s = 0; s < 6; s++)
		tg_site(t, s + 1, sites[s]);
	tg_thread(t, 1, 500, "main");
	tg_thread(t, 2, 501, "worker-1");
	tg_thread(t, 3, 502, "worker-2");
	tg_thread(t, 4, 503, NULL);
	static const char *const ctr_names[2] = { "page-faults", "instructions" };
	static const uint32_t ctr_flags[2] = { RECFMT_COUNTER_RECORDED, 0 };
	cr_assert_eq(tg_counter_set(t, 2, 2, ctr_names, ctr_flags), 0);
	/* Annotations of every kind (FORMAT.md §3.17-§3.19), so damage reaches them too. */
	cr_assert_eq(tg_annot_name(t, 1, RECFMT_NAME_TRACK, "depth"), 0);
	cr_assert_eq(tg_annot_name(t, 2, RECFMT_NAME_INSTANT, "tick"), 0);
	cr_assert_eq(tg_annot_name(t, 3, RECFMT_NAME_KEY, "bytes"), 0);
	cr_assert_eq(tg_annot_name(t, 4, RECFMT_NAME_FLOW, "request"), 0);
	for (uint32_t i = 0; i < 600; i++) {
		for (uint32_t th = 1; th <= 4; th++) {
			uint64_t faults = i * 3 + lcg_next() % 3;

			now[th] += 1 + lcg_next() % 400;
			if (depth[th] < 8 && (depth[th] == 0 || lcg_next() % 2)) {
				stack[th][depth[th]] = 1 + (uint32_t)(lcg_next() % 6);
				tg_enter_ctr(t, th, stack[th][depth[th]++], now[th], &faults);
			} else {
				tg_exit_ctr(t, th, stack[th][--depth[th]], now[th], &faults);
			}
			if (lcg_next() % 4 == 0) {
				static const uint32_t name_of[9] = { 0, 1, 1, 2, 0, 3, 4, 4, 4 };
				struct recfmt_annot a = { .kind = 1 + (uint32_t)(lcg_next() % 8),
							  .ticks = now[th] + 1, .i64 = -(int64_t)i,
							  .f64 = i * 0.25, .id = i / 3, .text = "msg",
							  .text_bytes = 3 };

				a.name_id = name_of[a.kind];
				cr_assert_eq(tg_annot(t, th, &a), 0);
			}
		}
		if (i == 300) {
			tg_thread(t, 2, 501, "worker-1b");
			tg_sync(t, now[1], 1000000 + now[1] / 2, 1700000000000000000ull + now[1] / 2);
		}
	}
	for (uint32_t th = 1; th <= 4; th++)
		while (depth[th])
			tg_exit(t, th, stack[th][--depth[th]], now[th] += 5);
	tg_sync(t, now[1], 1000000 + now[1] / 2, 1700000000000000000ull + now[1] / 2);
	tg_drops(t, 3, 7);
	tg_annot_drops(t, 3, 5);
	tg_thread_end(t, 4);
	cr_assert_eq(tg_finish(t, true), 0);
}

static void load_base(struct base_trace *b, const char *path)
{
	struct stat st;
	int fd;

	write_base(path);
	fd = open(path, O_RDONLY);
	cr_assert(fd >= 0 && fstat(fd, &st) == 0);
	b->nr_bytes = (size_t)st.st_size;
	b->bytes = malloc(b->nr_bytes);
	cr_assert_not_null(b->bytes);
	cr_assert_eq(read(fd, b->bytes, b->nr_bytes), (ssize_t)b->nr_bytes);
	close(fd);
	b->content = malloc(RECFMT_MAX_FRAME_BYTES);
	cr_assert_not_null(b->content);
	b->nr_content_bytes = ZSTD_decompress(b->content, RECFMT_MAX_FRAME_BYTES, b->bytes,
					      b->nr_bytes);
	cr_assert(!ZSTD_isError(b->nr_content_bytes));
	b->nr_frames = tg_file_frame_offsets(path, b->frames, MAX_FRAMES);
	/* The sweep is only meaningful on a multi-frame trace (issue #5). */
	cr_assert_geq(b->nr_frames, 3, "the base trace has %zu frames", b->nr_frames);
}

/* Number of cases of a kind (before the stride). */
static uint32_t nr_cases(const struct base_trace *b, enum sweep_kind kind)
{
	switch (kind) {
	case CUT_FIRST_FRAME:
		return (uint32_t)b->frames[1];
	case CUT_LAST_FRAME:
		return (uint32_t)(b->nr_bytes - b->frames[b->nr_frames - 1]);
	case CUT_SPREAD:
		return NR_SPREAD_CUTS;
	case FLIP_BIT:
		return NR_FLIPS;
	}
	return 0;
}

/*
 * Case i of a kind: the file length to keep, and the bit to flip (bit_at ==
 * SIZE_MAX for none). The flips come from their own LCG run, so that case i
 * is the same whatever batch or stride runs it.
 */
static void case_of(const struct base_trace *b, enum sweep_kind kind, uint32_t i,
		    size_t *len, size_t *bit_at, uint8_t *mask)
{
	*len = b->nr_bytes;
	*bit_at = SIZE_MAX;
	*mask = 0;
	switch (kind) {
	case CUT_FIRST_FRAME:
		*len = i;
		break;
	case CUT_LAST_FRAME:
		*len = (size_t)b->frames[b->nr_frames - 1] + i;
		break;
	case CUT_SPREAD:
		*len = (size_t)((uint64_t)i * b->nr_bytes / NR_SPREAD_CUTS);
		break;
	case FLIP_BIT:
		lcg_state = 0x5eed0000u + i;
		lcg_next();
		*bit_at = (size_t)(lcg_next() % b->nr_bytes);
		*mask = (uint8_t)(1u << (lcg_next() % 8));
		break;
	}
}

/*
 * True if a flipped file still holds exactly the original content in valid
 * zstd frames with good checksums. zstd's format has a few bits a decoder
 * may ignore (a flip there leaves every byte the reader sees unchanged);
 * such a file is intact, and check rightly passes it.
 */
static bool same_content(const struct base_trace *b, const uint8_t *bytes, size_t len)
{
	static uint8_t *out;
	size_t n;

	if (!out)
		out = malloc(RECFMT_MAX_FRAME_BYTES);
	cr_assert_not_null(out);
	n = ZSTD_decompress(out, RECFMT_MAX_FRAME_BYTES, bytes, len);
	return !ZSTD_isError(n) && n == b->nr_content_bytes &&
	       memcmp(out, b->content, n) == 0;
}

/* ---- one damaged file, in a child ---- */

/*
 * Runs every command on path in a forked child. Return: true if the child
 * ran them all and exited normally, with their exit codes in rc[]; else
 * false with what happened in why.
 */
static bool run_commands(const char *path, int *shared_rc, int rc[NR_COMMANDS], char *why,
			 size_t why_bytes)
{
	int status;
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (pid == 0) {
		int null_fd = open("/dev/null", O_WRONLY);

		/* stdout and the analyzer's stderr lines to /dev/null; a
		 * sanitizer report still reaches fd 2 through its own dup. */
		dup2(null_fd, STDOUT_FILENO);
		stderr = fdopen(dup(null_fd), "w");
		alarm(CASE_TIMEOUT_S);
		for (size_t c = 0; c < NR_COMMANDS; c++) {
			char *argv[4];
			int argc = 0;

			for (; command_args[c][argc]; argc++)
				argv[argc] = (char *)command_args[c][argc];
			argv[argc++] = (char *)path;
			argv[argc] = NULL;
			shared_rc[c] = tt_command_find(argv[0])->fn(argc, argv);
			fflush(stdout);
		}
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		;
	if (WIFSIGNALED(status)) {
		snprintf(why, why_bytes, "killed by signal %d%s", WTERMSIG(status),
			 WTERMSIG(status) == SIGALRM ? " (hang)" : "");
		return false;
	}
	if (WEXITSTATUS(status) != 0) {
		/* The commands return; only exit() (argp) or a sanitizer ends
		 * the child otherwise. */
		snprintf(why, why_bytes, "child exited %d", WEXITSTATUS(status));
		return false;
	}
	memcpy(rc, shared_rc, NR_COMMANDS * sizeof(int));
	return true;
}

static unsigned stride(void)
{
	const char *s = getenv("TT_SWEEP_STRIDE");
	long v = s ? strtol(s, NULL, 10) : 1;

	return v >= 1 ? (unsigned)v : 1;
}

static void run_batch(enum sweep_kind kind, uint32_t first)
{
	char base_path[64], path[64], why[128];
	struct base_trace b = { 0 };
	int *shared_rc, rc[NR_COMMANDS];
	uint32_t end, step = stride(), nr_run = 0, nr_harmless = 0;

	snprintf(base_path, sizeof(base_path), "/tmp/tt_sweep_%d.zst", (int)getpid());
	snprintf(path, sizeof(path), "/tmp/tt_sweep_%d_damaged.zst", (int)getpid());
	load_base(&b, base_path);
	shared_rc = mmap(NULL, NR_COMMANDS * sizeof(int), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert(shared_rc != MAP_FAILED);
	end = nr_cases(&b, kind);
	if (end > first + BATCH_CASES)
		end = first + BATCH_CASES;
	/* Start at a multiple of the stride, so batches do not overlap. */
	for (uint32_t i = first + (step - first % step) % step; i < end; i += step) {
		size_t len, bit_at;
		uint8_t mask;
		bool harmless;
		FILE *f;

		case_of(&b, kind, i, &len, &bit_at, &mask);
		if (bit_at != SIZE_MAX)
			b.bytes[bit_at] ^= mask;
		f = fopen(path, "wb");
		cr_assert_not_null(f);
		cr_assert_eq(fwrite(b.bytes, 1, len, f), len);
		cr_assert_eq(fclose(f), 0);
		harmless = bit_at != SIZE_MAX && same_content(&b, b.bytes, len);
		if (bit_at != SIZE_MAX)
			b.bytes[bit_at] ^= mask;
		nr_run++;
		nr_harmless += harmless;
		memset(shared_rc, 0xff, NR_COMMANDS * sizeof(int));
		if (!run_commands(path, shared_rc, rc, why, sizeof(why))) {
			cr_expect_fail("%s %" PRIu32 " (length %zu, flip at %zd mask %#x): %s",
				       kind_names[kind], i, len, bit_at == SIZE_MAX ? -1 : (ssize_t)bit_at,
				       mask, why);
			continue;
		}
		for (size_t c = 0; c < NR_COMMANDS; c++)
			cr_expect(rc[c] == 0 || rc[c] == 1,
				  "%s %" PRIu32 " (length %zu, flip at %zd mask %#x): %s returned %d",
				  kind_names[kind], i, len, bit_at == SIZE_MAX ? -1 : (ssize_t)bit_at,
				  mask, command_args[c][0], rc[c]);
		cr_expect_eq(rc[CHECK_INDEX], harmless ? 0 : 1,
			     "%s %" PRIu32 " (length %zu, flip at %zd mask %#x): check %s",
			     kind_names[kind], i, len, bit_at == SIZE_MAX ? -1 : (ssize_t)bit_at, mask,
			     harmless ? "failed a file whose content is intact"
				      : "passed a damaged file");
	}
	cr_log_info("%s from case %" PRIu32 ": %" PRIu32 " case(s) run, %" PRIu32
		    " left the content intact",
		    kind_names[kind], first, nr_run, nr_harmless);
	munmap(shared_rc, NR_COMMANDS * sizeof(int));
	unlink(path);
	unlink(base_path);
	free(b.bytes);
	free(b.content);
}

/* ---- the matrix ---- */

ParameterizedTestParameters(sweep, every_command_survives_each_damage_and_check_fails_it)
{
	static struct sweep_batch batches[64];
	struct base_trace b = { 0 };
	char base_path[64];
	size_t n = 0;

	snprintf(base_path, sizeof(base_path), "/tmp/tt_sweep_%d_params.zst", (int)getpid());
	load_base(&b, base_path);
	unlink(base_path);
	for (int kind = CUT_FIRST_FRAME; kind <= FLIP_BIT; kind++)
		for (uint32_t first = 0; first < nr_cases(&b, kind) && n < 64; first += BATCH_CASES)
			batches[n++] = (struct sweep_batch){ (enum sweep_kind)kind, first };
	free(b.bytes);
	free(b.content);
	return cr_make_param_array(struct sweep_batch, batches, n);
}

ParameterizedTest(struct sweep_batch *batch, sweep,
		  every_command_survives_each_damage_and_check_fails_it, .timeout = 600)
{
	run_batch(batch->kind, batch->first);
}

/* The intact file passes, so the failures above are the damage's doing. */
Test(sweep, the_undamaged_base_trace_passes_check, .timeout = 60)
{
	char base_path[64], why[128];
	struct base_trace b = { 0 };
	int *shared_rc, rc[NR_COMMANDS];

	snprintf(base_path, sizeof(base_path), "/tmp/tt_sweep_%d.zst", (int)getpid());
	load_base(&b, base_path);
	shared_rc = mmap(NULL, NR_COMMANDS * sizeof(int), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert(shared_rc != MAP_FAILED);
	cr_assert(run_commands(base_path, shared_rc, rc, why, sizeof(why)), "%s", why);
	for (size_t c = 0; c < NR_COMMANDS; c++)
		cr_expect_eq(rc[c], 0, "%s returned %d", command_args[c][0], rc[c]);
	munmap(shared_rc, NR_COMMANDS * sizeof(int));
	unlink(base_path);
	free(b.bytes);
	free(b.content);
}
