/* SPDX-License-Identifier: MIT */
/*
 * reorder.c - see reorder.h. The sources' heap holds pointers to FIFOs
 * (each knows its place, hpos, so that its first entry can change in
 * place); the stragglers' heap holds the entries themselves.
 */
#include "common/reorder.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

void tt_reorder_init(struct tt_reorder *q, size_t esz, bool (*before)(const void *, const void *),
		     size_t limit)
{
	memset(q, 0, sizeof(*q));
	q->esz = esz;
	q->before = before;
	q->limit = limit;
}

static bool before(struct tt_reorder *q, const void *a, const void *b)
{
	q->work++;
	return q->before(a, b);
}

static void *src_at(const struct tt_reorder *q, const struct tt_reorder_src *f, size_t i)
{
	return f->buf + ((f->head + i) & (f->cap - 1)) * q->esz;
}

static void src_resize(struct tt_reorder *q, struct tt_reorder_src *f, size_t cap)
{
	char *buf = tt_xcalloc(cap, q->esz);

	for (size_t i = 0; i < f->len; i++)
		memcpy(buf + i * q->esz, src_at(q, f, i), q->esz);
	q->work += f->len;
	free(f->buf);
	f->buf = buf;
	f->head = 0;
	f->cap = cap;
}

/* The sources' heap, by each one's first entry. */
static bool src_before(struct tt_reorder *q, const struct tt_reorder_src *a,
		       const struct tt_reorder_src *b)
{
	return before(q, src_at(q, a, 0), src_at(q, b, 0));
}

static void src_set(struct tt_reorder *q, size_t k, struct tt_reorder_src *f)
{
	q->heap[k] = f;
	f->hpos = k;
}

static void src_up(struct tt_reorder *q, size_t k)
{
	struct tt_reorder_src *f = q->heap[k];

	for (; k && src_before(q, f, q->heap[(k - 1) / 2]); k = (k - 1) / 2)
		src_set(q, k, q->heap[(k - 1) / 2]);
	src_set(q, k, f);
}

static void src_down(struct tt_reorder *q, size_t k)
{
	struct tt_reorder_src *f = q->heap[k];
	size_t c;

	while ((c = 2 * k + 1) < q->nr_heap) {
		if (c + 1 < q->nr_heap && src_before(q, q->heap[c + 1], q->heap[c]))
			c++;
		if (!src_before(q, q->heap[c], f))
			break;
		src_set(q, k, q->heap[c]);
		k = c;
	}
	src_set(q, k, f);
}

/* The stragglers' heap: entries, slot cap_late is scratch. */
static void *late_at(const struct tt_reorder *q, size_t k)
{
	return q->late + k * q->esz;
}

static void late_push(struct tt_reorder *q, const void *x)
{
	size_t k = q->nr_late++;
	void *tmp;

	if (q->nr_late > q->cap_late) {
		q->cap_late = q->cap_late ? 2 * q->cap_late : 16;
		q->late = tt_xrealloc(q->late, (q->cap_late + 1) * q->esz);
	}
	tmp = late_at(q, q->cap_late);
	memcpy(tmp, x, q->esz);
	for (; k && before(q, tmp, late_at(q, (k - 1) / 2)); k = (k - 1) / 2) {
		memcpy(late_at(q, k), late_at(q, (k - 1) / 2), q->esz);
		q->work++;
	}
	memcpy(late_at(q, k), tmp, q->esz);
}

static void late_pop(struct tt_reorder *q, void *out)
{
	size_t k = 0, c, n = --q->nr_late;
	void *last = late_at(q, n);

	memcpy(out, late_at(q, 0), q->esz);
	while ((c = 2 * k + 1) < n) {
		if (c + 1 < n && before(q, late_at(q, c + 1), late_at(q, c)))
			c++;
		if (!before(q, late_at(q, c), last))
			break;
		memcpy(late_at(q, k), late_at(q, c), q->esz);
		q->work++;
		k = c;
	}
	if (k != n)
		memcpy(late_at(q, k), last, q->esz);
}

bool tt_reorder_push(struct tt_reorder *q, struct tt_reorder_src *f, const void *x)
{
	if (f->len && before(q, x, src_at(q, f, f->len - 1))) {
		/* Earlier than its source's latest: a straggler. */
		late_push(q, x);
		return ++q->total <= q->limit;
	}
	if (f->len == f->cap)
		src_resize(q, f, f->cap ? 2 * f->cap : 16);
	memcpy(src_at(q, f, f->len), x, q->esz);
	if (f->len++ == 0) {
		if (q->nr_heap == q->cap_heap) {
			q->cap_heap = q->cap_heap ? 2 * q->cap_heap : 16;
			q->heap = tt_xrealloc(q->heap, q->cap_heap * sizeof(*q->heap));
		}
		src_set(q, q->nr_heap++, f);
		src_up(q, f->hpos);
	}
	return ++q->total <= q->limit;
}

void tt_reorder_pop(struct tt_reorder *q, void *out)
{
	struct tt_reorder_src *f = q->nr_heap ? q->heap[0] : NULL;

	q->total--;
	if (q->nr_late && (!f || before(q, late_at(q, 0), src_at(q, f, 0)))) {
		late_pop(q, out);
		return;
	}
	memcpy(out, src_at(q, f, 0), q->esz);
	f->head = (f->head + 1) & (f->cap - 1);
	if (--f->len) {
		src_down(q, 0);
	} else if (--q->nr_heap) {
		src_set(q, 0, q->heap[q->nr_heap]);
		src_down(q, 0);
	}
	/* A FIFO shrinks as it empties: the buffers stay within about
	 * 4 × limit entries plus 16 per source. */
	if (f->cap > 16 && f->len < f->cap / 4)
		src_resize(q, f, f->cap / 2);
}

void tt_reorder_src_fini(struct tt_reorder_src *f)
{
	free(f->buf);
	memset(f, 0, sizeof(*f));
}

void tt_reorder_fini(struct tt_reorder *q)
{
	free(q->heap);
	free(q->late);
	memset(q, 0, sizeof(*q));
}
