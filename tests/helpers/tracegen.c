/* SPDX-License-Identifier: MIT */
/*
 * tracegen.c - synthetic traces through format/ (see tracegen.h). Keeps one
 * event buffer per thread serial and one raw frame buffer; everything on disk
 * is written by recfmt_encode_* and recfmt_compress_frame, never by hand.
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "tracegen.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct tg_thread_buf {
	struct recfmt_event *ev;
	uint64_t *vals;	  /* nr_cols values per event, when the thread has counters */
	uint32_t nr_cols;
	uint32_t nr;
	uint64_t nr_total; /* events of the thread so far */
	struct recfmt_nest nest; /* cfg.writer_index: its nesting (FORMAT.md §6.2) */
	struct recfmt_annot *an; /* annotations buffered with the events (pos into ev) */
	char (*text)[256];	 /* their MESSAGE texts */
	uint32_t nr_an, cap_an;
	/* Stack samples (FORMAT.md §3.23), written after the events and annotations;
	 * sm[i].frames is an offset into fr until they are written. */
	struct recfmt_sample *sm;
	uint64_t *fr;
	uint32_t nr_sm, cap_sm;
	size_t nr_fr, cap_fr;
};

struct tg_trace {
	FILE *f;
	struct tg_config cfg;
	struct recfmt_compressor *comp;
	struct recfmt_buf frame, scratch, out;
	struct recfmt_buf ix, sums; /* cfg.writer_index: the index frame, the blocks' sums */
	uint32_t seq;
	bool frame_open;
	struct tg_thread_buf *threads; /* indexed by serial */
	uint32_t nr_threads;
	uint64_t nr_events;
	uint64_t last_ticks;
	struct recfmt_samples_encoder se; /* 4 KiB: here rather than on the stack */
};

static int frame_open(struct tg_trace *t)
{
	if (t->frame_open)
		return 0;
	t->frame.len = 0;
	if (recfmt_encode_frame(&t->frame, t->seq++))
		return -ENOMEM;
	t->frame_open = true;
	return 0;
}

static int frame_close(struct tg_trace *t)
{
	if (!t->frame_open)
		return 0;
	if (recfmt_compress_frame(t->comp, &t->frame, &t->out))
		return -ENOMEM;
	if (t->cfg.writer_index) {
		if (recfmt_index_build(&t->ix, &t->frame, 1, 0,
				       (const struct recfmt_index_entry *)(void *)t->sums.data,
				       t->sums.len / sizeof(struct recfmt_index_entry), t->out.data,
				       t->out.len))
			return -ENOMEM;
		t->sums.len = 0;
		if (fwrite(t->ix.data, 1, t->ix.len, t->f) != t->ix.len)
			return -EIO;
	}
	if (fwrite(t->out.data, 1, t->out.len, t->f) != t->out.len)
		return -EIO;
	t->frame_open = false;
	t->frame.len = 0;
	return 0;
}

static int maybe_cut(struct tg_trace *t)
{
	if (t->frame_open && t->frame.len >= t->cfg.frame_bytes)
		return frame_close(t);
	return 0;
}

struct tg_trace *tg_create(const char *path, const struct tg_config *cfg)
{
	struct tg_trace *t = calloc(1, sizeof(*t));
	struct recfmt_header hdr;

	if (!t)
		return NULL;
	t->cfg = *cfg;
	if (!t->cfg.ticks_per_second)
		t->cfg.ticks_per_second = 1000000000ull;
	if (!t->cfg.frame_bytes)
		t->cfg.frame_bytes = 1u << 20;
	if (!t->cfg.block_events)
		t->cfg.block_events = 4096;
	if (!t->cfg.clock)
		t->cfg.clock = RECFMT_CLOCK_MONOTONIC;
	recfmt_buf_init(&t->frame);
	recfmt_buf_init(&t->scratch);
	recfmt_buf_init(&t->out);
	t->f = fopen(path, "wb");
	t->comp = recfmt_compressor_create(1);
	if (!t->f || !t->comp)
		goto fail;
	hdr = (struct recfmt_header){
		.clock = t->cfg.clock,
		.pid = t->cfg.pid,
		.ticks_per_second = t->cfg.ticks_per_second,
		.start_ticks = t->cfg.start_ticks,
		.start_mono_ns = 0,
		.start_real_ns = t->cfg.start_real_ns,
		.clock_step_ticks = t->cfg.clock_step_ticks,
	};
	if (frame_open(t) || recfmt_encode_header(&t->frame, &hdr))
		goto fail;
	if (t->cfg.major)
		recfmt_store_u16le(t->frame.data + t->frame.len - 64 + 8, t->cfg.major);
	t->last_ticks = t->cfg.start_ticks;
	return t;
fail:
	if (t->f)
		fclose(t->f);
	recfmt_compressor_destroy(t->comp);
	recfmt_buf_fini(&t->frame);
	free(t);
	return NULL;
}

int tg_site(struct tg_trace *t, uint32_t id, const char *name)
{
	return tg_site_at(t, id, name, "gen.c", 1);
}

int tg_site_at(struct tg_trace *t, uint32_t id, const char *name, const char *file, uint32_t line)
{
	if (frame_open(t) || recfmt_encode_site(&t->frame, id, line, name, file))
		return -ENOMEM;
	return maybe_cut(t);
}

int tg_module(struct tg_trace *t, uint32_t id, const char *path, uint64_t bias, uint64_t lo,
	      uint64_t hi)
{
	struct recfmt_range range = { lo, hi };

	if (frame_open(t) ||
	    recfmt_encode_module(&t->frame, id, 0, bias, &range, 1, NULL, 0, path))
		return -ENOMEM;
	return maybe_cut(t);
}

int tg_module_flags(struct tg_trace *t, uint32_t id, uint32_t flags, const char *path,
		    uint64_t bias, uint64_t lo, uint64_t hi, const uint8_t *build_id,
		    uint32_t build_id_bytes)
{
	struct recfmt_range range = { lo, hi };

	if (frame_open(t) || recfmt_encode_module(&t->frame, id, flags, bias, &range, 1, build_id,
						  build_id_bytes, path))
		return -ENOMEM;
	return maybe_cut(t);
}

int tg_module_build_id(struct tg_trace *t, uint32_t id, const char *path, uint64_t bias,
		       uint64_t lo, uint64_t hi, const uint8_t *build_id, uint32_t build_id_bytes)
{
	return tg_module_flags(t, id, 0, path, bias, lo, hi, build_id, build_id_bytes);
}

int tg_probe_cost(struct tg_trace *t, const struct recfmt_probe_cost *pc)
{
	if (frame_open(t) || recfmt_encode_probe_cost(&t->frame, pc))
		return -ENOMEM;
	return maybe_cut(t);
}

int tg_snapshot(struct tg_trace *t, const struct recfmt_snapshot *s)
{
	if (frame_open(t) || recfmt_encode_snapshot(&t->frame, s))
		return -ENOMEM;
	return maybe_cut(t);
}

int tg_func(struct tg_trace *t, uint32_t id, uint64_t addr)
{
	if (frame_open(t) || recfmt_encode_func(&t->frame, id, addr))
		return -ENOMEM;
	return maybe_cut(t);
}

int tg_func_in(struct tg_trace *t, uint32_t id, uint64_t addr, uint32_t module)
{
	if (frame_open(t) || recfmt_encode_func_in(&t->frame, id, addr, module))
		return -ENOMEM;
	return maybe_cut(t);
}

int tg_reused_libs(struct tg_trace *t, const char *dir, uint64_t bias)
{
	char a[512], b[512];
	int err;

	snprintf(a, sizeof(a), "%s/liba.so", dir);
	snprintf(b, sizeof(b), "%s/libb.so", dir);
	if ((err = tg_module(t, 1, a, bias, bias + 0x1000, bias + 0x2000)) ||
	    (err = tg_func_in(t, 1, bias + 0x1200, 1)) ||
	    (err = tg_module(t, 2, b, bias, bias + 0x1000, bias + 0x2000)) ||
	    (err = tg_func_in(t, 2, bias + 0x1200, 2)))
		return err;
	return tg_func(t, 3, bias + 0x1300);
}

int tg_thread(struct tg_trace *t, uint32_t serial, uint32_t os_tid, const char *name)
{
	if (frame_open(t) || recfmt_encode_thread(&t->frame, serial, os_tid, name))
		return -ENOMEM;
	return maybe_cut(t);
}

int tg_sync(struct tg_trace *t, uint64_t ticks, uint64_t mono_ns, uint64_t real_ns)
{
	struct recfmt_sync s = { ticks, mono_ns, real_ns };

	if (frame_open(t) || recfmt_encode_sync(&t->frame, &s))
		return -ENOMEM;
	return maybe_cut(t);
}

int tg_drops(struct tg_trace *t, uint32_t serial, uint64_t nr_dropped)
{
	if (frame_open(t) || recfmt_encode_drops(&t->frame, serial, nr_dropped))
		return -ENOMEM;
	return maybe_cut(t);
}

static struct tg_thread_buf *thread_buf(struct tg_trace *t, uint32_t serial)
{
	if (serial >= t->nr_threads) {
		uint32_t n = serial + 8;
		struct tg_thread_buf *th = realloc(t->threads, n * sizeof(*th));

		if (!th)
			return NULL;
		memset(th + t->nr_threads, 0, (n - t->nr_threads) * sizeof(*th));
		t->threads = th;
		t->nr_threads = n;
	}
	if (!t->threads[serial].ev) {
		t->threads[serial].ev = malloc(t->cfg.block_events * sizeof(struct recfmt_event));
		if (!t->threads[serial].ev)
			return NULL;
	}
	return &t->threads[serial];
}

static int block_flush(struct tg_trace *t, uint32_t serial)
{
	struct tg_thread_buf *b = &t->threads[serial];
	struct recfmt_events_encoder enc;

	if (!b->nr && !b->nr_an && !b->nr_sm)
		return 0;
	if (frame_open(t))
		return -ENOMEM;
	if (b->nr && recfmt_events_begin(&enc, &t->frame, &t->scratch, serial, b->ev[0].ticks))
		return -ENOMEM;
	if (b->nr && t->cfg.writer_index)
		recfmt_events_track(&enc, &b->nest, &t->sums);
	if (b->nr && (recfmt_events_append(&enc, b->ev, b->nr) || recfmt_events_finish(&enc)))
		return -ENOMEM;
	/* FORMAT.md §3.14: the values right after their EVENTS block. */
	if (b->nr && b->nr_cols &&
	    recfmt_encode_counters(&t->frame, serial, b->nr, b->nr_cols, b->vals))
		return -ENOMEM;
	/* FORMAT.md §3.18: the annotations after the block they lie among. */
	if (b->nr_an) {
		struct recfmt_annots_encoder ae;
		int err = recfmt_annots_begin(&ae, &t->frame, serial, b->an[0].ticks, b->nr);

		for (uint32_t i = 0; i < b->nr_an && !err; i++) {
			if (b->an[i].kind == RECFMT_ANNOT_MESSAGE)
				b->an[i].text = b->text[i];
			err = recfmt_annots_append(&ae, &b->an[i]);
		}
		if (err || recfmt_annots_finish(&ae))
			return err == -EINVAL ? -EINVAL : -ENOMEM;
		b->nr_an = 0;
	}
	/* FORMAT.md §3.23: the samples, in one record (the encoder needs no order among blocks). */
	if (b->nr_sm) {
		struct recfmt_samples_encoder *se = &t->se;
		int err = recfmt_samples_begin(se, &t->frame, serial, b->sm[0].ticks);

		for (uint32_t i = 0; i < b->nr_sm && !err; i++) {
			struct recfmt_sample smp = b->sm[i];

			smp.frames = b->fr + (size_t)(uintptr_t)b->sm[i].frames;
			err = recfmt_samples_append(se, &smp);
		}
		if (err || recfmt_samples_finish(se))
			return err == -EINVAL ? -EINVAL : -ENOMEM;
		b->nr_sm = 0;
		b->nr_fr = 0;
	}
	b->nr = 0;
	return maybe_cut(t);
}

int tg_thread_end(struct tg_trace *t, uint32_t serial)
{
	struct recfmt_thread_end te = { .thread = serial };

	if (serial < t->nr_threads && block_flush(t, serial))
		return -ENOMEM;
	if (serial < t->nr_threads)
		te.nr_events = t->threads[serial].nr_total;
	if (frame_open(t) || recfmt_encode_thread_end(&t->frame, &te))
		return -ENOMEM;
	return maybe_cut(t);
}

int tg_counter_set(struct tg_trace *t, uint32_t serial, uint32_t nr, const char *const *names,
		   const uint32_t *flags)
{
	struct tg_thread_buf *b = thread_buf(t, serial);
	uint32_t cols = 0;

	if (!b || block_flush(t, serial))
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++)
		cols += flags[i] & RECFMT_COUNTER_RECORDED;
	free(b->vals);
	b->vals = cols ? malloc((size_t)t->cfg.block_events * cols * sizeof(uint64_t)) : NULL;
	if (cols && !b->vals)
		return -ENOMEM;
	b->nr_cols = cols;
	if (frame_open(t) || recfmt_encode_counter_set(&t->frame, serial, nr, names, flags))
		return -ENOMEM;
	return maybe_cut(t);
}

static int event_vals(struct tg_trace *t, uint32_t serial, uint32_t code, uint64_t ticks,
		      const uint64_t *vals);

int tg_raw_counters(struct tg_trace *t, uint32_t serial, uint32_t nr_events,
		    uint32_t nr_columns, const uint64_t *vals)
{
	if (frame_open(t) || recfmt_encode_counters(&t->frame, serial, nr_events, nr_columns, vals))
		return -ENOMEM;
	return maybe_cut(t);
}

int tg_enter_ctr(struct tg_trace *t, uint32_t serial, uint32_t site, uint64_t ticks,
		 const uint64_t *vals)
{
	return event_vals(t, serial, RECFMT_CODE(site, RECFMT_KIND_ENTER), ticks, vals);
}

int tg_exit_ctr(struct tg_trace *t, uint32_t serial, uint32_t site, uint64_t ticks,
		const uint64_t *vals)
{
	return event_vals(t, serial, RECFMT_CODE(site, RECFMT_KIND_EXIT), ticks, vals);
}

static int event(struct tg_trace *t, uint32_t serial, uint32_t code, uint64_t ticks)
{
	return event_vals(t, serial, code, ticks, NULL);
}

static int event_vals(struct tg_trace *t, uint32_t serial, uint32_t code, uint64_t ticks,
		      const uint64_t *vals)
{
	struct tg_thread_buf *b = thread_buf(t, serial);

	if (!b)
		return -ENOMEM;
	for (uint32_t c = 0; c < b->nr_cols; c++)
		b->vals[(size_t)b->nr * b->nr_cols + c] = vals ? vals[c] : 0;
	b->ev[b->nr].ticks = ticks;
	b->ev[b->nr].code = code;
	b->ev[b->nr].aux = 0;
	b->nr++;
	b->nr_total++;
	t->nr_events++;
	if (ticks > t->last_ticks)
		t->last_ticks = ticks;
	if (b->nr == t->cfg.block_events)
		return block_flush(t, serial);
	return 0;
}

int tg_annot_name(struct tg_trace *t, uint32_t id, uint32_t kind, const char *name)
{
	if (frame_open(t))
		return -ENOMEM;
	if (recfmt_encode_annot_name(&t->frame, id, kind, 1, name, "tracegen.c"))
		return -EINVAL;
	return maybe_cut(t);
}

int tg_annot_drops(struct tg_trace *t, uint32_t serial, uint64_t nr_dropped)
{
	if (frame_open(t) || recfmt_encode_annot_drops(&t->frame, serial, nr_dropped))
		return -ENOMEM;
	return maybe_cut(t);
}

int tg_annot(struct tg_trace *t, uint32_t serial, const struct recfmt_annot *a)
{
	struct tg_thread_buf *b = thread_buf(t, serial);

	if (!b)
		return -ENOMEM;
	if (b->nr_an == b->cap_an) {
		uint32_t cap = b->cap_an ? 2 * b->cap_an : 64;
		struct recfmt_annot *an = realloc(b->an, cap * sizeof(*an));
		char(*text)[256] = an ? realloc(b->text, cap * sizeof(*text)) : NULL;

		if (an)
			b->an = an;
		if (!text)
			return -ENOMEM;
		b->text = text;
		b->cap_an = cap;
	}
	b->an[b->nr_an] = *a;
	b->an[b->nr_an].thread = serial;
	b->an[b->nr_an].pos = b->nr;
	if (a->kind == RECFMT_ANNOT_MESSAGE && a->text_bytes)
		memcpy(b->text[b->nr_an], a->text,
		       a->text_bytes < RECFMT_MAX_MESSAGE_BYTES ? a->text_bytes
								 : RECFMT_MAX_MESSAGE_BYTES);
	b->nr_an++;
	if (a->ticks > t->last_ticks)
		t->last_ticks = a->ticks;
	return 0;
}

int tg_sampling(struct tg_trace *t, uint32_t hz, uint32_t max_frames)
{
	struct recfmt_sampling sp = {
		.hz = hz,
		.clock = RECFMT_SAMPLE_CLOCK_THREAD_CPU,
		.mechanism = RECFMT_SAMPLE_MECH_TIMER_UNWIND,
		.max_frames = max_frames,
		.period_ns = hz ? (1000000000ull + hz / 2) / hz : 0,
	};
	int err;

	if (frame_open(t))
		return -ENOMEM;
	err = recfmt_encode_sampling(&t->frame, &sp);
	return err ? err : maybe_cut(t);
}

int tg_sample(struct tg_trace *t, uint32_t serial, uint64_t ticks, uint32_t flags,
	      uint32_t nr_frames, const uint64_t *frames)
{
	struct tg_thread_buf *b = thread_buf(t, serial);

	if (!b)
		return -ENOMEM;
	if (nr_frames == 0 || nr_frames > RECFMT_MAX_SAMPLE_FRAMES)
		return -EINVAL;
	if (b->nr_sm == b->cap_sm) {
		uint32_t cap = b->cap_sm ? 2 * b->cap_sm : 64;
		struct recfmt_sample *sm = realloc(b->sm, cap * sizeof(*sm));

		if (!sm)
			return -ENOMEM;
		b->sm = sm;
		b->cap_sm = cap;
	}
	if (b->cap_fr - b->nr_fr < nr_frames) {
		size_t cap = b->cap_fr ? 2 * b->cap_fr : 1024;
		uint64_t *fr;

		while (cap - b->nr_fr < nr_frames)
			cap *= 2;
		fr = realloc(b->fr, cap * sizeof(*fr));
		if (!fr)
			return -ENOMEM;
		b->fr = fr;
		b->cap_fr = cap;
	}
	memcpy(b->fr + b->nr_fr, frames, (size_t)nr_frames * sizeof(*frames));
	b->sm[b->nr_sm] = (struct recfmt_sample){
		.thread = serial,
		.flags = flags,
		.ticks = ticks,
		.nr_frames = nr_frames,
		.frames = (const uint64_t *)(uintptr_t)b->nr_fr,
	};
	b->nr_fr += nr_frames;
	b->nr_sm++;
	if (ticks > t->last_ticks)
		t->last_ticks = ticks;
	if (b->nr_sm == t->cfg.block_events)
		return block_flush(t, serial);
	return 0;
}

int tg_sample_drops(struct tg_trace *t, uint32_t serial, uint64_t nr_dropped)
{
	if (frame_open(t) || recfmt_encode_sample_drops(&t->frame, serial, nr_dropped))
		return -ENOMEM;
	return maybe_cut(t);
}

int tg_enter(struct tg_trace *t, uint32_t serial, uint32_t site, uint64_t ticks)
{
	return event(t, serial, RECFMT_CODE(site, RECFMT_KIND_ENTER), ticks);
}

int tg_exit(struct tg_trace *t, uint32_t serial, uint32_t site, uint64_t ticks)
{
	return event(t, serial, RECFMT_CODE(site, RECFMT_KIND_EXIT), ticks);
}

int tg_flush(struct tg_trace *t)
{
	for (uint32_t s = 0; s < t->nr_threads; s++)
		if (block_flush(t, s))
			return -ENOMEM;
	return frame_close(t);
}

uint64_t tg_nr_events(const struct tg_trace *t)
{
	return t->nr_events;
}

int tg_known_tree(struct tg_trace *t, const char *b_file, uint32_t b_line)
{
	static const struct {
		uint32_t serial, site;
		uint64_t ticks;
		bool exit;
	} ev[] = {
		{ 1, 1, 1000, false }, { 1, 2, 1100, false }, { 1, 3, 1150, false },
		{ 1, 3, 1250, true },  { 1, 2, 1400, true },  { 1, 3, 1500, false },
		{ 1, 3, 1550, false }, { 1, 3, 1600, false }, { 1, 3, 1700, true },
		{ 1, 3, 1850, true },  { 1, 3, 1900, true },  { 1, 2, 1950, false },
		{ 1, 2, 1990, true },  { 1, 1, 2000, true },  { 2, 4, 1000, false },
		{ 2, 2, 1100, false }, { 2, 3, 1150, false }, { 2, 3, 1200, true },
		{ 2, 2, 1300, true },  { 2, 4, 1600, true },
	};
	int rc = tg_site(t, 1, "main");

	rc = rc ? rc : tg_site(t, 2, "a");
	rc = rc ? rc : b_file ? tg_site_at(t, 3, "b", b_file, b_line) : tg_site(t, 3, "b");
	rc = rc ? rc : tg_site(t, 4, "w");
	rc = rc ? rc : tg_thread(t, 1, 701, "main");
	rc = rc ? rc : tg_thread(t, 2, 702, "worker");
	for (size_t i = 0; !rc && i < sizeof(ev) / sizeof(ev[0]); i++)
		rc = ev[i].exit ? tg_exit(t, ev[i].serial, ev[i].site, ev[i].ticks)
				: tg_enter(t, ev[i].serial, ev[i].site, ev[i].ticks);
	return rc;
}

int tg_finish_at(struct tg_trace *t, uint64_t end_ticks)
{
	if (end_ticks > t->last_ticks)
		t->last_ticks = end_ticks;
	return tg_finish(t, true);
}

int tg_finish(struct tg_trace *t, bool clean)
{
	int rc = 0;

	for (uint32_t s = 0; s < t->nr_threads && !rc; s++)
		rc = block_flush(t, s);
	if (!rc && clean) {
		struct recfmt_end end = { .end_ticks = t->last_ticks, .nr_events = t->nr_events };

		if (frame_open(t) || recfmt_encode_end(&t->frame, &end))
			rc = -ENOMEM;
	}
	if (!rc)
		rc = frame_close(t);
	if (fclose(t->f) && !rc)
		rc = -EIO;
	for (uint32_t s = 0; s < t->nr_threads; s++) {
		free(t->threads[s].ev);
		free(t->threads[s].vals);
		free(t->threads[s].an);
		free(t->threads[s].text);
		free(t->threads[s].sm);
		free(t->threads[s].fr);
		recfmt_nest_fini(&t->threads[s].nest);
	}
	recfmt_buf_fini(&t->ix);
	recfmt_buf_fini(&t->sums);
	free(t->threads);
	recfmt_compressor_destroy(t->comp);
	recfmt_buf_fini(&t->frame);
	recfmt_buf_fini(&t->scratch);
	recfmt_buf_fini(&t->out);
	free(t);
	return rc;
}

int tg_file_truncate(const char *path, uint64_t bytes)
{
	return truncate(path, (off_t)bytes) ? -errno : 0;
}

int tg_file_flip_byte(const char *path, uint64_t offset, uint8_t mask)
{
	int fd = open(path, O_RDWR);
	uint8_t b;
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (pread(fd, &b, 1, (off_t)offset) != 1)
		rc = -EIO;
	b ^= mask;
	if (!rc && pwrite(fd, &b, 1, (off_t)offset) != 1)
		rc = -EIO;
	close(fd);
	return rc;
}

size_t tg_file_frame_offsets(const char *path, uint64_t *offsets, size_t max)
{
	FILE *f = fopen(path, "rb");
	uint8_t hdr[18];
	uint64_t pos = 0;
	size_t n = 0;

	if (!f)
		return 0;
	/* Walks the frames through their own headers: tracegen writes
	 * single-segment frames with a content size, so the compressed size is
	 * found by scanning blocks (RFC 8878 §3.1.1). */
	while (n < max && fseek(f, (long)pos, SEEK_SET) == 0 && fread(hdr, 1, 6, f) == 6) {
		uint8_t fhd = hdr[4];
		unsigned fcs_code = fhd >> 6, single = (fhd >> 5) & 1, dict_code = fhd & 3;
		unsigned checksum = (fhd >> 2) & 1;
		static const unsigned fcs_bytes[4] = { 0, 2, 4, 8 }, dict_bytes[4] = { 0, 1, 2, 4 };
		uint64_t p = pos + 5 + (single ? 0 : 1) + dict_bytes[dict_code] +
			     (fcs_code == 0 && single ? 1 : fcs_bytes[fcs_code]);
		uint8_t bh[3];

		offsets[n++] = pos;
		for (;;) {
			uint32_t v, size;

			if (fseek(f, (long)p, SEEK_SET) || fread(bh, 1, 3, f) != 3)
				goto out;
			v = bh[0] | (uint32_t)bh[1] << 8 | (uint32_t)bh[2] << 16;
			size = (v >> 3) & 0x1fffff;
			if (((v >> 1) & 3) == 1)
				size = 1; /* RLE block */
			p += 3 + size;
			if (v & 1)
				break;
		}
		pos = p + (checksum ? 4 : 0);
	}
out:
	fclose(f);
	return n;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	struct tg_self_map *m = data;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* the main program is the one without a name */
	m->bias = info->dlpi_addr;
	m->lo = UINT64_MAX;
	m->hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			uint64_t a = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;

			if (a < m->lo)
				m->lo = a;
			if (a + info->dlpi_phdr[i].p_memsz > m->hi)
				m->hi = a + info->dlpi_phdr[i].p_memsz;
		}
	return 1;
}

void tg_self_map(struct tg_self_map *m)
{
	*m = (struct tg_self_map){ 0 };
	dl_iterate_phdr(find_self, m);
}
