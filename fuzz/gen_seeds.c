/* SPDX-License-Identifier: MIT */
/*
 * gen_seeds.c - writes the tracegen seeds of the fuzz corpus (README.md):
 * small traces that between them reach every record type and the analyzer's
 * odd paths (renamed, undefined and ended threads, undefined and large site
 * ids, names that need escaping, recursion, unmatched enters and exits, a
 * clock going backwards, drops, several frames, TSC with SYNC records and
 * the monotonic clock, with and without END). Deterministic (fixed LCG), so
 * a rerun writes the same bytes. Built for reference; never run by meson test.
 *
 *     gen_seeds DIR    writes DIR/tracegen_{tsc_clean,mono_unclean,odd,modules,counters,annots,
 *                      samples,index,dlreuse}
 *     gen_seeds --packed-lies IN DIR
 *                      writes DIR/lie_packed_{zstd_cut,zstd_claims_more,over_32_mib}: the
 *                      recording IN (corpus/index/librec_packed_index) with its first packed
 *                      index frame (FORMAT.md §6.3) lying, its own hash made right again
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracegen.h"

static uint64_t lcg_state = 0x2545f4914f6cdd1dull;

static uint32_t lcg_next(uint32_t bound)
{
	lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(lcg_state >> 33) % bound;
}

/* A random walk over sites 1..nr_sites, up to 6 deep, closed at the end. */
static void walk(struct tg_trace *t, uint32_t serial, uint64_t *now, uint32_t nr_events,
		 uint32_t nr_sites)
{
	uint32_t stack[6], depth = 0;

	for (uint32_t i = 0; i < nr_events; i++) {
		*now += 1 + lcg_next(500);
		if (depth < 6 && (depth == 0 || lcg_next(2))) {
			stack[depth] = 1 + lcg_next(nr_sites);
			tg_enter(t, serial, stack[depth++], *now);
		} else {
			tg_exit(t, serial, stack[--depth], *now);
		}
	}
	while (depth)
		tg_exit(t, serial, stack[--depth], *now += 10);
}

static int write_clean(const char *path, uint32_t clock, bool clean)
{
	struct tg_config cfg = { .clock = clock, .ticks_per_second = 3000000000ull,
				 .start_ticks = 5000, .start_real_ns = 1700000000000000000ull,
				 .pid = 77, .frame_bytes = 1500, .block_events = 50 };
	static const char *const names[] = { "main_loop", "parse", "compute", "reply",
					     "solve" };
	uint64_t now[5] = { 0, 5000, 5100, 5200, 5300 };
	struct tg_trace *t = tg_create(path, &cfg);

	if (!t)
		return -1;
	tg_sync(t, 5000, 1000, 1700000000000000000ull);
	for (uint32_t s = 0; s < 5; s++)
		tg_site(t, s + 1, names[s]);
	tg_thread(t, 1, 300, "main");
	tg_thread(t, 2, 301, "worker");
	tg_thread(t, 3, 302, NULL);
	tg_thread(t, 4, 300, "reused-tid");
	for (uint32_t round = 0; round < 4; round++) {
		for (uint32_t s = 1; s <= 4; s++)
			walk(t, s, &now[s], 60, 5);
		tg_sync(t, now[1], 1000 + now[1] / 3, 1700000000000000000ull + now[1] / 3);
		if (round == 1)
			tg_thread(t, 2, 301, "worker-renamed");
	}
	tg_drops(t, 2, 4);
	tg_thread_end(t, 3);
	return tg_finish(t, clean);
}

static int write_odd(const char *path)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .frame_bytes = 400,
				 .block_events = 8 };
	struct tg_trace *t = tg_create(path, &cfg);
	uint64_t now = 100;

	if (!t)
		return -1;
	tg_site(t, 1, "quote\"back\\slash\ttab");
	tg_site(t, 2, "caf\xc3\xa9");
	tg_site(t, 1u << 21, "big_id");
	tg_thread(t, 1, 9, "t\"1");
	tg_enter(t, 1, 1, now += 10);
	tg_enter(t, 1, 1, now += 10); /* recursion */
	tg_enter(t, 1, 1u << 21, now += 10);
	tg_exit(t, 1, 1u << 21, now -= 5); /* clock backwards */
	tg_exit(t, 1, 1, now += 10);
	tg_exit(t, 1, 1, now += 10);
	tg_exit(t, 1, 2, now += 10);	/* exit without enter */
	tg_enter(t, 1, 3, now += 10);	/* site never defined */
	tg_enter(t, 2, 2, now += 10);	/* thread never defined */
	tg_exit(t, 2, 2, now += 10);
	tg_enter(t, 2, 1, now += 10);	/* never exits */
	tg_drops(t, 1, 2);
	tg_drops(t, 1, 1); /* smaller than before: the largest counts */
	return tg_finish(t, true);
}

/*
 * Counters (FORMAT.md §3.13-§3.14): two threads with different COUNTER_SETs
 * (one counter not recorded), a set replaced midway, recursion, a thread
 * without counters, a counter going down, several frames.
 */
static int write_counters(const char *path)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_TSC, .ticks_per_second = 2500000000ull,
				 .start_ticks = 100, .pid = 7, .frame_bytes = 1200,
				 .block_events = 40 };
	static const char *const set1[] = { "instructions", "cycles", "branch-misses",
					    "branches" };
	static const uint32_t flags1[] = { RECFMT_COUNTER_RECORDED, RECFMT_COUNTER_RECORDED,
					   RECFMT_COUNTER_RECORDED, 0 };
	static const char *const set2[] = { "page-faults", "context-switches" };
	static const uint32_t flags2[] = { RECFMT_COUNTER_RECORDED, RECFMT_COUNTER_RECORDED };
	struct tg_trace *t = tg_create(path, &cfg);
	uint64_t now = 100, v[3] = { 1000, 500, 7 };

	if (!t)
		return -1;
	tg_sync(t, 100, 0, 1700000000000000000ull);
	tg_site(t, 1, "work");
	tg_site(t, 2, "fib");
	tg_site(t, 3, "io");
	tg_thread(t, 1, 70, "main");
	tg_thread(t, 2, 71, "io");
	tg_counter_set(t, 1, 4, set1, flags1);
	tg_counter_set(t, 2, 2, set2, flags2);
	for (uint32_t i = 0; i < 120; i++) {
		uint32_t depth = 1 + lcg_next(4);

		tg_enter_ctr(t, 1, 1, now += 10, v);
		for (uint32_t d = 0; d < depth; d++) {
			v[0] += lcg_next(1000), v[1] += lcg_next(400), v[2] += lcg_next(3);
			tg_enter_ctr(t, 1, 2, now += 1 + lcg_next(50), v);
		}
		for (uint32_t d = 0; d < depth; d++) {
			v[0] += lcg_next(1000), v[1] += lcg_next(400);
			v[2] = i == 60 ? 0 : v[2] + lcg_next(3); /* once, a counter goes down */
			tg_exit_ctr(t, 1, 2, now += 1 + lcg_next(50), v);
		}
		tg_exit_ctr(t, 1, 1, now += 10, v);
		tg_enter_ctr(t, 2, 3, now, v);
		tg_exit_ctr(t, 2, 3, now + 300, (uint64_t[]){ v[0] + 3, v[1] + 1 });
		if (i == 80)
			tg_counter_set(t, 2, 1, set2 + 1, flags2);
	}
	tg_enter(t, 3, 1, now);
	tg_exit(t, 3, 1, now + 5);
	tg_sync(t, now + 10, (now + 10 - 100) * 2 / 5, 1700000000000000000ull);
	return tg_finish(t, true);
}

/* Format 1.1's whole-program records: function sites named by address in
 * two modules whose files do not exist, mixed with a named site, on four
 * threads (so that several walkers each name and warn). */
static int write_modules(const char *path)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 100,
				 .pid = 78, .frame_bytes = 1200, .block_events = 40 };
	struct tg_trace *t = tg_create(path, &cfg);
	uint64_t now = 100;

	if (!t)
		return -1;
	tg_module(t, 1, "/nonexistent-rec-seed/prog", 0x555500000000, 0x555500001000,
		  0x555500009000);
	tg_module(t, 2, "/nonexistent-rec-seed/libgone.so", 0x7f0000000000, 0x7f0000001000,
		  0x7f0000002000);
	tg_func(t, 1, 0x555500001100);
	tg_func(t, 2, 0x7f0000001200);
	tg_func(t, 3, 0x123); /* in no module */
	tg_site(t, 4, "manual");
	for (uint32_t th = 1; th <= 4; th++) {
		tg_thread(t, th, 400 + th, th == 1 ? "main" : NULL);
		walk(t, th, &now, 60, 4);
	}
	return tg_finish(t, true);
}

/*
 * Format 1.5's FUNC naming its module (finding F16): two libraries mapped
 * one after the other at the same addresses, the same address a function
 * of each; a FUNC of 1.4 (module 0), one naming a module the file lacks,
 * one naming a module that does not hold it, one naming module 0xffffffff;
 * the first module recorded again with its id, after the FUNCs.
 */
static int write_dlreuse(const char *path)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 100,
				 .pid = 79, .frame_bytes = 600, .block_events = 30 };
	struct tg_trace *t = tg_create(path, &cfg);
	const uint64_t bias = 0x7f0000000000ull;
	uint64_t now = 100;

	if (!t)
		return -1;
	tg_reused_libs(t, "/nonexistent-rec-seed", bias);
	tg_func_in(t, 4, bias + 0x1400, 7);
	tg_func_in(t, 5, bias + 0x9000, 2);
	tg_func_in(t, 6, bias + 0x1500, 0xffffffffu);
	tg_module(t, 1, "/nonexistent-rec-seed/liba.so", bias, bias + 0x1000, bias + 0x2000);
	for (uint32_t th = 1; th <= 2; th++) {
		tg_thread(t, th, 500 + th, th == 1 ? "main" : NULL);
		walk(t, th, &now, 80, 6);
	}
	return tg_finish(t, true);
}

/*
 * Annotations (FORMAT.md §3.17-§3.19, 1.2): every kind on two threads, a flow
 * begun on one and ended on the other, an argument set twice in one scope,
 * annotations outside any scope (stand-alone ANNOTS records), a name id that
 * is never defined, extreme values (INT64_MIN, NaN, infinity, UINT64_MAX
 * ids), a message that needs escaping, an unfinished flow, ANNOT_DROPS.
 */
static int write_annots(const char *path)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_TSC, .ticks_per_second = 2000000000ull,
				 .start_ticks = 1000, .pid = 15, .frame_bytes = 1000,
				 .block_events = 24 };
	static const char msg[] = "say \"hi\",\n\ttab \xff\x01 end";
	struct tg_trace *t = tg_create(path, &cfg);
	uint64_t now = 1000;

	if (!t)
		return -1;
	tg_sync(t, 1000, 0, 1700000000000000000ull);
	tg_site(t, 1, "accept");
	tg_site(t, 2, "handle");
	tg_site(t, 3, "parse");
	tg_thread(t, 1, 150, "acceptor");
	tg_thread(t, 2, 151, "worker");
	tg_annot_name(t, 1, RECFMT_NAME_TRACK, "queue");
	tg_annot_name(t, 2, RECFMT_NAME_TRACK, "load");
	tg_annot_name(t, 3, RECFMT_NAME_INSTANT, "tick");
	tg_annot_name(t, 4, RECFMT_NAME_KEY, "bytes");
	tg_annot_name(t, 5, RECFMT_NAME_FLOW, "request");
	/* Outside any scope: stand-alone records. */
	tg_annot(t, 1, &(struct recfmt_annot){ .kind = RECFMT_ANNOT_VALUE_I64, .ticks = now,
					       .name_id = 1, .i64 = INT64_MIN });
	tg_annot(t, 2, &(struct recfmt_annot){ .kind = RECFMT_ANNOT_MESSAGE, .ticks = now,
					       .text = msg, .text_bytes = sizeof(msg) - 1 });
	tg_flush(t);
	for (uint32_t i = 0; i < 40; i++) {
		uint64_t id = i == 39 ? UINT64_MAX : i;

		tg_enter(t, 1, 1, now += 10);
		tg_annot(t, 1, &(struct recfmt_annot){ .kind = RECFMT_ANNOT_FLOW_BEGIN,
						       .ticks = now + 1, .name_id = 5, .id = id });
		tg_annot(t, 1, &(struct recfmt_annot){ .kind = RECFMT_ANNOT_VALUE_I64,
						       .ticks = now + 2, .name_id = 1, .i64 = i % 7 });
		tg_exit(t, 1, 1, now += 5 + lcg_next(20));
		tg_enter(t, 2, 2, now += 3);
		tg_annot(t, 2, &(struct recfmt_annot){ .kind = RECFMT_ANNOT_ARG, .ticks = now + 1,
						       .name_id = 4, .i64 = 100 * i });
		if (i % 5 == 0) /* set twice in one scope */
			tg_annot(t, 2, &(struct recfmt_annot){ .kind = RECFMT_ANNOT_ARG,
							       .ticks = now + 2, .name_id = 4,
							       .i64 = -1 });
		tg_enter(t, 2, 3, now += 2);
		tg_annot(t, 2, &(struct recfmt_annot){ .kind = RECFMT_ANNOT_FLOW_STEP,
						       .ticks = now + 1, .name_id = 5, .id = id });
		tg_annot(t, 2, &(struct recfmt_annot){ .kind = RECFMT_ANNOT_VALUE_F64,
						       .ticks = now + 1, .name_id = 2,
						       .f64 = i == 7 ? __builtin_nan("") :
							      i == 8 ? -__builtin_inf() : i * 0.5 });
		tg_annot(t, 2, &(struct recfmt_annot){ .kind = RECFMT_ANNOT_INSTANT,
						       .ticks = now + 1, .name_id = i == 9 ? 77 : 3 });
		tg_exit(t, 2, 3, now += 4 + lcg_next(9));
		if (i % 3) /* the others stay unfinished */
			tg_annot(t, 2, &(struct recfmt_annot){ .kind = RECFMT_ANNOT_FLOW_END,
							       .ticks = now, .name_id = 5, .id = id });
		tg_exit(t, 2, 2, now += 2);
	}
	tg_annot_drops(t, 2, 3);
	tg_sync(t, now + 10, (now + 10 - 1000) / 2, 1700000000000000000ull);
	return tg_finish(t, true);
}

/*
 * Stack samples (FORMAT.md §3.22-§3.24, REC_SAMPLE): a SAMPLING record,
 * three modules (a main program and a library whose files do not exist, and
 * the C library without a build-id, named from its symbols where it is
 * there), scopes for --within, samples whose stacks share outer frames or
 * not, recursion, truncated stacks, frames outside every module, return
 * address 0, a thread that runs no probe, one never defined, SAMPLE_DROPS,
 * and a MODULE recorded again at the same addresses (a dlclose/dlopen).
 */
static int write_samples(const char *path)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000,
				 .start_real_ns = 1700000000000000000ull, .pid = 4200,
				 .frame_bytes = 1200, .block_events = 20 };
	const uint64_t prog = 0x555555554000ull, lib = 0x7f0000100000ull,
		       libc = 0x7f0000200000ull;
	struct tg_trace *t = tg_create(path, &cfg);
	uint64_t now = 1000, st[12];

	if (!t)
		return -1;
	tg_module(t, 1, "/nonexistent/fuzz_prog", prog - 0x1000, prog, prog + 0x8000);
	tg_module(t, 2, "/nonexistent/libfuzz.so", lib - 0x1000, lib, lib + 0x4000);
	tg_module(t, 3, "/lib/x86_64-linux-gnu/libc.so.6", libc - 0x28000, libc, libc + 0x150000);
	tg_sampling(t, 997, 12);
	tg_site(t, 1, "handle_request");
	tg_site(t, 2, "parse");
	tg_thread(t, 1, 4200, "main");
	tg_thread(t, 2, 4201, "worker");
	tg_thread(t, 3, 4202, "no probes");
	for (uint32_t i = 0; i < 60; i++) {
		uint32_t serial = 1 + lcg_next(4), depth = 1 + lcg_next(12), flags = 0;

		if (serial <= 2 && lcg_next(3) == 0) {
			tg_enter(t, serial, 1, now += 5);
			tg_enter(t, serial, 2, now += 3);
		}
		for (uint32_t k = 0; k < depth; k++) {
			uint32_t where = lcg_next(10);

			st[k] = where < 5 ? prog + lcg_next(0x8000)
				: where < 7 ? lib + lcg_next(0x4000)
				: where < 9 ? libc + lcg_next(0x150000)
					    : lcg_next(2) ? 0 : 0x10 + lcg_next(0x100);
		}
		if (i % 7 == 3 && depth > 2) /* recursion: the leaf again further out */
			st[depth - 1] = st[0];
		if (i % 11 == 5)
			flags = RECFMT_SAMPLE_TRUNCATED;
		tg_sample(t, serial, now += 100 + lcg_next(900), flags, depth, st);
		if (serial <= 2 && lcg_next(2)) {
			tg_exit(t, serial, 2, now += 3);
			tg_exit(t, serial, 1, now += 2);
		}
		if (i == 30) /* the library unloaded, another at its addresses */
			tg_module(t, 4, "/nonexistent/libother.so", lib - 0x1000, lib, lib + 0x2000);
	}
	tg_sample_drops(t, 2, 7);
	return tg_finish(t, true);
}

/*
 * Index frames (FORMAT.md §6) before each of about 30 small frames, for
 * fuzz_index: thread 1's main open throughout, calls under it three deep,
 * thread 2 left deep in a recursion across frames, a DROPS record midway.
 */
static int write_index(const char *path)
{
	struct tg_config cfg = { .clock = RECFMT_CLOCK_MONOTONIC, .start_ticks = 1000,
				 .start_real_ns = 1700000000000000000ull, .pid = 78,
				 .frame_bytes = 160, .block_events = 16, .writer_index = true };
	struct tg_trace *t = tg_create(path, &cfg);
	uint64_t now = 1000;
	uint32_t deep = 0;

	if (!t)
		return -1;
	tg_site(t, 1, "main");
	tg_site(t, 2, "step");
	tg_site(t, 3, "leaf");
	tg_site(t, 4, "recurse");
	tg_thread(t, 1, 400, "main");
	tg_thread(t, 2, 401, "worker");
	tg_enter(t, 1, 1, now);
	for (uint32_t i = 0; i < 400; i++) {
		tg_enter(t, 1, 2, now += 10 + lcg_next(40));
		if (lcg_next(3) == 0) {
			tg_enter(t, 1, 3, now += 3);
			tg_exit(t, 1, 3, now += 5 + lcg_next(20));
		}
		tg_exit(t, 1, 2, now += 7);
		if (i % 9 == 0 && deep < 30) {
			tg_enter(t, 2, 4, now += 2);
			deep++;
		} else if (i % 13 == 0 && deep) {
			tg_exit(t, 2, 4, now += 2);
			deep--;
		}
		if (i == 200)
			tg_drops(t, 2, 3);
	}
	while (deep--)
		tg_exit(t, 2, 4, now += 2);
	tg_exit(t, 1, 1, now += 10);
	return tg_finish(t, true);
}

/* A file in memory. */
struct bytes {
	uint8_t *p;
	size_t n;
};

static int read_whole(const char *path, struct bytes *b)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		if (f)
			fclose(f);
		return -1;
	}
	b->n = (size_t)n;
	b->p = malloc(b->n + 1);
	if (!b->p || fread(b->p, 1, b->n, f) != b->n) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

static int write_whole(const char *dir, const char *name, const struct bytes *b)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(b->p, 1, b->n, f) != b->n) {
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f);
}

/* The offset of the first packed index frame of b (FORMAT.md §6.3), or b->n. */
static size_t first_packed(const struct bytes *b)
{
	size_t off = 0;

	while (b->n - off >= 8 + RECFMT_INDEX_HEAD_BYTES + 8) {
		uint32_t magic = recfmt_load_u32le(b->p + off), size = recfmt_load_u32le(b->p + off + 4);

		if (magic == RECFMT_INDEX_PACKED_MAGIC)
			return off;
		if (magic != RECFMT_INDEX_FRAME_MAGIC)
			break;
		off += 8 + (size_t)size + recfmt_load_u64le(b->p + off + 8 + 16);
	}
	return b->n;
}

/* The index frame at off: its size field set to size and its own hash made right. */
static void reseal(struct bytes *b, size_t off, uint32_t size)
{
	recfmt_store_u32le(b->p + off + 4, size);
	recfmt_store_u64le(b->p + off + 8 + size - 8, recfmt_xxh64(b->p + off + 8, size - 8));
}

/*
 * The lies of one packed index frame, each a file that a reader must read as
 * one without the writer's index (FORMAT.md §6.3: it refuses the frame):
 * its compressed records cut short (a zstd frame that ends early); a zstd
 * frame whose header, and records_bytes with it, claim 64 bytes more than
 * it holds (it decompresses to fewer); records_bytes over the 32 MiB a
 * reader allows.
 */
static int write_packed_lies(const char *in, const char *dir)
{
	static const unsigned fcs_bytes[4] = { 1, 2, 4, 8 };
	struct bytes b, lie;
	size_t off, z, fcs_at;
	uint32_t size, raw;
	uint8_t fhd;
	unsigned fcs_flag, fcs_n;
	uint64_t fcs = 0;
	int rc = 0;

	if (read_whole(in, &b) || (off = first_packed(&b)) == b.n) {
		fprintf(stderr, "gen_seeds: %s: unreadable, or no packed index frame\n", in);
		return -1;
	}
	size = recfmt_load_u32le(b.p + off + 4);
	raw = recfmt_load_u32le(b.p + off + 8 + 44);
	z = off + 8 + RECFMT_INDEX_HEAD_BYTES + raw; /* its zstd frame */
	lie.p = malloc(b.n);
	if (!lie.p || recfmt_load_u32le(b.p + z) != 0xFD2FB528u)
		return -1;

	/* Cut: the zstd frame's second half gone, the frame that size shorter. */
	{
		const uint32_t zlen = size - RECFMT_INDEX_HEAD_BYTES - raw - 8, cut = zlen / 2;

		memcpy(lie.p, b.p, z + zlen - cut);
		memcpy(lie.p + z + zlen - cut, b.p + z + zlen, b.n - (z + zlen));
		lie.n = b.n - cut;
		reseal(&lie, off, size - cut);
		rc |= write_whole(dir, "lie_packed_zstd_cut", &lie);
	}

	/* More: Frame_Content_Size (RFC 8878 §3.1.1.1.1) and records_bytes 64 up. */
	memcpy(lie.p, b.p, b.n);
	lie.n = b.n;
	fhd = b.p[z + 4];
	fcs_flag = fhd >> 6;
	fcs_n = fcs_flag ? fcs_bytes[fcs_flag] : (fhd & 0x20) ? 1 : 0;
	fcs_at = z + 5 + ((fhd & 0x20) ? 0 : 1) + (unsigned[]){ 0, 1, 2, 4 }[fhd & 3];
	if (fcs_n < 2) {
		fprintf(stderr, "gen_seeds: %s: a content size field of %u bytes\n", in, fcs_n);
		return -1;
	}
	for (unsigned i = 0; i < fcs_n; i++)
		fcs |= (uint64_t)b.p[fcs_at + i] << (8 * i);
	fcs += 64; /* a 2-byte field holds the size - 256: the same shift */
	for (unsigned i = 0; i < fcs_n; i++)
		lie.p[fcs_at + i] = (uint8_t)(fcs >> (8 * i));
	recfmt_store_u32le(lie.p + off + 8 + 40, recfmt_load_u32le(b.p + off + 8 + 40) + 64);
	reseal(&lie, off, size);
	rc |= write_whole(dir, "lie_packed_zstd_claims_more", &lie);

	/* Over 32 MiB: records_bytes alone. */
	memcpy(lie.p, b.p, b.n);
	recfmt_store_u32le(lie.p + off + 8 + 40, (32u << 20) + raw + 1);
	reseal(&lie, off, size);
	rc |= write_whole(dir, "lie_packed_over_32_mib", &lie);
	free(lie.p);
	free(b.p);
	return rc;
}

int main(int argc, char **argv)
{
	char path[4096];
	int rc = 0;

	if (argc == 4 && !strcmp(argv[1], "--packed-lies"))
		return write_packed_lies(argv[2], argv[3]) ? 1 : 0;
	if (argc != 2) {
		fprintf(stderr, "usage: gen_seeds DIR | gen_seeds --packed-lies IN DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/tracegen_tsc_clean", argv[1]);
	rc |= write_clean(path, RECFMT_CLOCK_TSC, true);
	snprintf(path, sizeof(path), "%s/tracegen_mono_unclean", argv[1]);
	rc |= write_clean(path, RECFMT_CLOCK_MONOTONIC, false);
	snprintf(path, sizeof(path), "%s/tracegen_odd", argv[1]);
	rc |= write_odd(path);
	snprintf(path, sizeof(path), "%s/tracegen_counters", argv[1]);
	rc |= write_counters(path);
	snprintf(path, sizeof(path), "%s/tracegen_modules", argv[1]);
	rc |= write_modules(path);
	snprintf(path, sizeof(path), "%s/tracegen_annots", argv[1]);
	rc |= write_annots(path);
	snprintf(path, sizeof(path), "%s/tracegen_samples", argv[1]);
	rc |= write_samples(path);
	snprintf(path, sizeof(path), "%s/tracegen_index", argv[1]);
	rc |= write_index(path);
	snprintf(path, sizeof(path), "%s/tracegen_dlreuse", argv[1]);
	rc |= write_dlreuse(path);
	if (rc)
		fprintf(stderr, "gen_seeds: cannot write the seeds in %s\n", argv[1]);
	return rc ? 1 : 0;
}
