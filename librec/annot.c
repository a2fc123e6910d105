/* SPDX-License-Identifier: MIT */
/*
 * annot.c - annotations (rec(3), Annotations) between the probe and the file: the
 * registry of annotation names, in an id space of their own (FORMAT.md
 * §3.17: a name is never a scope), and the writer's split of a ring slice
 * into the thread's events and its annotations, each placed by the number
 * of events written before it (FORMAT.md §3.18), with REC_MIN_NS applied
 * as writer.c applies it, plus FORMAT.md §3.19. The probe side is probe.c
 * (out of line) and rec.h (inline); the ring slots are described in
 * rec_internal.h. Does not own the rings, the frame or the file.
 */
#include "rec_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---------------------------------------------------------------------
 * Names, as site.c keeps sites: copied into librec's memory at the first
 * hit (the host module may be unloaded later), in a table of chunks that
 * never move, read by the writer without a lock.
 */
#define CHUNK_SHIFT 12
#define CHUNK_NAMES (1u << CHUNK_SHIFT)
#define NR_CHUNKS 4096u /* 16 M names, below RECFMT_MAX_ANNOT_NAME_ID */
#define ARENA_CHUNK_BYTES (64u << 10)
_Static_assert((uint64_t)NR_CHUNKS * CHUNK_NAMES <= RECFMT_MAX_ANNOT_NAME_ID + 1u,
	       "ids fit in an annotation slot's 28 bits");
_Static_assert(2 * (RECFMT_MAX_NAME_BYTES + 1) + sizeof(struct rec__annot_site) <
		       ARENA_CHUNK_BYTES,
	       "a name and its strings fit in one chunk");

static pthread_mutex_t name_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct rec__annot_site **chunks[NR_CHUNKS];
/* Ids are 1..nr_names; release-stored after the table slot is written. */
static uint32_t nr_names;
static char *arena, *arena_end;

/* mmap, not malloc: registration may run in a signal handler (probe.c). */
static void *arena_alloc(size_t bytes, size_t align)
{
	char *p = (char *)(((uintptr_t)arena + align - 1) & ~(uintptr_t)(align - 1));

	if (!arena || bytes > (size_t)(arena_end - p)) {
		void *m = mmap(NULL, ARENA_CHUNK_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return NULL;
		arena = m;
		arena_end = arena + ARENA_CHUNK_BYTES;
		p = arena;
	}
	arena = p + bytes;
	return p;
}

static const char *copy_string(const char *s)
{
	size_t n = 0;
	char *c;

	while (s && n < RECFMT_MAX_NAME_BYTES && s[n])
		n++;
	c = arena_alloc(n + 1, 1);
	if (c && n)
		memcpy(c, s, n); /* the arena is zeroed: c[n] is the terminator */
	return c;
}

uint32_t rec__annot_register(struct rec__annot_site *site)
{
	struct rec__annot_site *c;
	uint32_t id;

	pthread_mutex_lock(&name_lock);
	id = site->id; /* another thread may have registered it meanwhile */
	if (id)
		goto out;
	id = nr_names + 1;
	if (id >= NR_CHUNKS * CHUNK_NAMES) {
		id = 0;
		goto out;
	}
	if (!chunks[id >> CHUNK_SHIFT]) {
		void *m = mmap(NULL, CHUNK_NAMES * sizeof(**chunks), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			id = 0;
			goto out;
		}
		chunks[id >> CHUNK_SHIFT] = m;
	}
	c = arena_alloc(sizeof(*c), _Alignof(struct rec__annot_site));
	if (!c || !(c->name = copy_string(site->name)) || !(c->file = copy_string(site->file))) {
		id = 0;
		goto out;
	}
	c->id = id;
	c->kind = site->kind >= RECFMT_NAME_TRACK && site->kind <= RECFMT_NAME_FLOW ? site->kind
										    : RECFMT_NAME_TRACK;
	c->line = site->line;
	chunks[id >> CHUNK_SHIFT][id & (CHUNK_NAMES - 1)] = c;
	/* Pairs with the acquire in rec__annot_count(). */
	__atomic_store_n(&nr_names, id, __ATOMIC_RELEASE);
	/* Pairs with the acquire load in rec__annot(); the inline path needs no order. */
	__atomic_store_n(&site->id, id, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&name_lock);
	return id;
}

uint32_t rec__annot_count(void)
{
	return __atomic_load_n(&nr_names, __ATOMIC_ACQUIRE);
}

const struct rec__annot_site *rec__annot_get(uint32_t id)
{
	return chunks[id >> CHUNK_SHIFT][id & (CHUNK_NAMES - 1)];
}

int rec__annot_encode_names(struct recfmt_buf *meta, uint32_t *nr_written)
{
	uint32_t n = rec__annot_count();
	int err = 0;

	for (uint32_t id = *nr_written + 1; id <= n && !err; id++) {
		const struct rec__annot_site *c = rec__annot_get(id);

		err = recfmt_encode_annot_name(meta, id, c->kind, c->line, c->name, c->file);
		if (!err)
			*nr_written = id;
	}
	return err;
}

/* ---------------------------------------------------------------------
 * The writer's side.
 */
void rec__annot_split_fini(struct rec__annot_split *s)
{
	if (s->fixed)
		return;
	free(s->ev);
	free(s->row);
	free(s->text);
	memset(s, 0, sizeof(*s));
}

/* Room for `need` elements of `size` bytes; a fixed split (crash.c) never reallocates. */
static int grow(const struct rec__annot_split *s, void **p, size_t *cap, size_t need, size_t size)
{
	size_t cap2 = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	if (s->fixed)
		return -ENOMEM;
	while (cap2 < need)
		cap2 *= 2;
	q = realloc(*p, cap2 * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = cap2;
	return 0;
}

/* A new row r of s for the annotation (or sample) of kind at slot offset at,
 * nr slots long, stamped ticks; NULL when there is no room (-ENOMEM). */
static struct rec__annot_row *add_row(struct rec__annot_split *s, size_t r, uint64_t at,
				      uint32_t nr, uint32_t kind, uint64_t ticks)
{
	struct rec__annot_row *row;

	if (grow(s, (void **)&s->row, &s->row_cap, r + 1, sizeof(*s->row)))
		return NULL;
	row = &s->row[r];
	memset(row, 0, sizeof(*row));
	row->at = at;
	row->nr_slots = nr;
	row->a.kind = kind;
	row->a.ticks = ticks;
	return row;
}

static bool binds(uint32_t kind)
{
	return kind >= RECFMT_ANNOT_ARG; /* ARG, FLOW_BEGIN/STEP/END */
}

/*
 * Splits the slots [tail, tail + n) into s->ev (events, aux = offset from
 * tail) and s->row (annotations, pos = events kept before them), leaving
 * out, when min_ticks is set, the activations shorter than it with nothing
 * kept inside them (writer.c's filter_short()) unless an argument or a flow
 * step was recorded in them while they were innermost (FORMAT.md §3.19).
 * Stops before an annotation whose slots run past the slice.
 * Return: 0 or -ENOMEM; *nr_ev, *nr_row; *scanned: slots looked at.
 */
static int split(struct rec__annot_split *s, const struct rec__thread *t, uint64_t tail,
		 uint64_t n, uint64_t min_ticks, size_t *nr_ev, size_t *nr_row, uint64_t *scanned)
{
	struct rec__ring_view view = rec__ring_view(&t->ring); /* (G2): after the caller's (C) */
	const struct recfmt_event *slots = view.ev;
	uint64_t mask = view.mask, i;
	size_t k = 0, r = 0, text_len = 0;
	size_t bind_pos = SIZE_MAX; /* pos of the last argument or flow step */

	if (grow(s, (void **)&s->ev, &s->ev_cap, (size_t)n, sizeof(*s->ev)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct recfmt_event *ev = &slots[(tail + i) & mask];

		if (ev->code == REC__ANNOT_CODE) {
			uint32_t aux = ev->aux, kind = REC__ANNOT_KIND(aux), nr = rec__annot_slots(aux);
			struct rec__annot_row *row;

			if (kind == REC__SAMPLE_KIND) {
				/* A stack sample (sample.c): a row; its frames stay in the ring. */
				if (i + nr > n)
					break;
				row = add_row(s, r++, i, nr, kind, ev->ticks);
				if (!row)
					return -ENOMEM;
				row->a.name_id = aux; /* flags and frames, for encode_samples() */
				i += nr - 1;
				continue;
			}
			if (kind < RECFMT_ANNOT_VALUE_I64 || kind > RECFMT_ANNOT_KIND_MAX)
				continue; /* cannot happen: the probe writes whole annotations */
			if (i + nr > n)
				break; /* the rest of it is past the slice: next piece */
			row = add_row(s, r++, i, nr, kind, ev->ticks);
			if (!row)
				return -ENOMEM;
			row->a.pos = (uint32_t)k;
			if (kind == RECFMT_ANNOT_MESSAGE) {
				uint32_t bytes = REC__ANNOT_ARGBITS(aux);

				if (grow(s, (void **)&s->text, &s->text_cap, text_len + bytes + 8, 1))
					return -ENOMEM;
				for (uint32_t j = 1; j < nr; j++)
					memcpy(s->text + text_len + (j - 1) * 8,
					       &slots[(tail + i + j) & mask].ticks, 8);
				row->text_at = (uint32_t)text_len;
				row->a.text_bytes = bytes;
				text_len += bytes;
			} else {
				uint64_t v = nr > 1 ? slots[(tail + i + 1) & mask].ticks : 0;

				row->a.name_id = REC__ANNOT_ARGBITS(aux);
				if (kind == RECFMT_ANNOT_VALUE_F64)
					memcpy(&row->a.f64, &v, 8);
				else if (binds(kind) && kind != RECFMT_ANNOT_ARG)
					row->a.id = v;
				else
					row->a.i64 = (int64_t)v;
				if (binds(kind))
					bind_pos = k;
			}
			i += nr - 1;
			continue;
		}
		if (min_ticks && RECFMT_CODE_IS_EXIT(ev->code) && k &&
		    !RECFMT_CODE_IS_EXIT(s->ev[k - 1].code) &&
		    RECFMT_CODE_SITE(s->ev[k - 1].code) == RECFMT_CODE_SITE(ev->code) &&
		    ev->ticks - s->ev[k - 1].ticks < min_ticks && ev->ticks >= s->ev[k - 1].ticks &&
		    bind_pos != k) {
			/* Its annotations (none binds to it) now follow the event before it. */
			for (size_t j = r; j-- > 0 && s->row[j].a.pos == k;)
				s->row[j].a.pos = (uint32_t)(k - 1);
			k--;
			continue;
		}
		s->ev[k] = *ev;
		s->ev[k].aux = (uint32_t)i;
		k++;
	}
	*nr_ev = k;
	*nr_row = r;
	*scanned = i;
	return 0;
}

/*
 * The SAMPLES record (FORMAT.md §3.23) of the sample rows among rows
 * [0, nr_rows), their frames read from the ring at tail + row->at + 1.
 * The encoder keeps a copy of the last stack: 4 KiB, static (only the
 * writer, or crash.c's handler with the writer stopped, runs this).
 */
static int encode_samples(const struct rec__annot_split *s, size_t nr_rows, struct recfmt_buf *body,
			  const struct rec__thread *t, uint64_t tail)
{
	static struct recfmt_samples_encoder enc;
	struct rec__ring_view view = rec__ring_view(&t->ring); /* (G2): after the caller's (C) */
	const struct recfmt_event *slots = view.ev;
	uint64_t mask = view.mask, f[REC__SAMPLE_MAX_FRAMES];
	bool begun = false;
	int err = 0;

	for (size_t j = 0; j < nr_rows && !err; j++) {
		const struct rec__annot_row *row = &s->row[j];
		struct recfmt_sample smp = { .ticks = row->a.ticks, .frames = f };

		if (row->a.kind != REC__SAMPLE_KIND)
			continue;
		smp.flags = (row->a.name_id >> 16) & 0xfffu;
		smp.nr_frames = row->nr_slots - 1;
		if (smp.nr_frames == 0 || smp.nr_frames > REC__SAMPLE_MAX_FRAMES)
			continue; /* cannot happen: the handler writes 1 ... max */
		for (uint32_t k = 0; k < smp.nr_frames; k++)
			f[k] = slots[(tail + row->at + 1 + k) & mask].ticks;
		if (!begun) {
			err = recfmt_samples_begin(&enc, body, t->reg.serial, smp.ticks);
			begun = true;
		}
		if (!err)
			err = recfmt_samples_append(&enc, &smp);
	}
	if (begun && !err)
		err = recfmt_samples_finish(&enc);
	return err;
}

int rec__annot_encode_ring(struct rec__annot_split *s, struct recfmt_buf *body,
			   struct recfmt_buf *scratch, struct rec__thread *t, uint64_t tail,
			   uint64_t n, bool final, uint64_t now_ticks, uint64_t min_ticks,
			   uint64_t hold_max, uint64_t *nr_written, uint64_t *nr_consumed)
{
	size_t k, r, cut, nr_rows = 0;
	uint64_t consumed, annot_slots = 0;
	int err;

	err = split(s, t, tail, n, min_ticks, &k, &r, &consumed);
	if (err)
		return err;
	cut = k;
	if (min_ticks) {
		/* writer.c's hold-back: outward from the innermost trailing young enter. */
		while (!final && cut > 0 && !RECFMT_CODE_IS_EXIT(s->ev[cut - 1].code) &&
		       (now_ticks < s->ev[cut - 1].ticks ||
			now_ticks - s->ev[cut - 1].ticks < min_ticks) &&
		       n - s->ev[cut - 1].aux <= hold_max)
			cut--;
		if (cut < k)
			consumed = s->ev[cut].aux;
	}
	while (nr_rows < r && s->row[nr_rows].at < consumed)
		annot_slots += s->row[nr_rows++].nr_slots;
	/* Every event consumed but not written is half of a filtered activation. */
	t->wr.nr_filtered_written += (consumed - annot_slots - cut) / 2;
	*nr_written = cut;
	*nr_consumed = consumed;
	if (cut) {
		struct recfmt_events_encoder enc;

		err = recfmt_events_begin(&enc, body, scratch, t->reg.serial, s->ev[0].ticks);
		if (!err)
			err = recfmt_events_append(&enc, s->ev, cut);
		if (!err)
			err = recfmt_events_finish(&enc);
	}
	if (!err && nr_rows) {
		struct recfmt_annots_encoder enc;

		err = recfmt_annots_begin(&enc, body, t->reg.serial, s->row[0].a.ticks, (uint32_t)cut);
		for (size_t j = 0; j < nr_rows && !err; j++) {
			struct rec__annot_row *row = &s->row[j];

			if (row->a.kind == REC__SAMPLE_KIND)
				continue; /* below */
			if (row->a.kind == RECFMT_ANNOT_MESSAGE)
				row->a.text = (const char *)s->text + row->text_at;
			if (!cut)
				row->a.pos = 0; /* stand-alone: FORMAT.md §3.18 */
			err = recfmt_annots_append(&enc, &row->a);
		}
		if (!err)
			err = recfmt_annots_finish(&enc);
	}
	if (!err && nr_rows)
		err = encode_samples(s, nr_rows, body, t, tail);
	return err == -EINVAL ? -EIO : err;
}
