/* SPDX-License-Identifier: MIT */
/*
 * reorder.h - a bounded reorder queue (values and flows, annots.c): entries
 * of fixed size pushed per source (a trace thread) nearly in order, popped
 * earliest first by a strict total order `before`. Each source has a FIFO
 * of the entries that came in its own order; an entry earlier than its
 * source's latest (a clock that stepped back, a crafted file) goes to one
 * min-heap of stragglers instead. A pop takes the earlier of the FIFOs'
 * heap (by each FIFO's first entry) and the stragglers' heap. Every push
 * and pop is O(log n) in the entries held, whatever the order of arrival
 * (issue 26: an insertion sort into the FIFO made a file whose ticks go
 * back quadratic).
 */
#ifndef TT_REORDER_H
#define TT_REORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A source's entries in its own order (zeroed to start; tt_reorder_src_fini). */
struct tt_reorder_src {
	char *buf;
	size_t head, len, cap; /* cap: 0 or a power of two */
	size_t hpos;	       /* its place in the heap while len > 0 */
};

struct tt_reorder {
	size_t esz;
	bool (*before)(const void *a, const void *b);
	size_t limit;		       /* push() says "full" past this many entries */
	struct tt_reorder_src **heap;  /* the sources with entries, by their first */
	size_t nr_heap, cap_heap;
	char *late;		       /* the stragglers: a binary min-heap */
	size_t nr_late, cap_late;
	size_t total;
	uint64_t work; /* entries compared or moved, for tests (test_reorder.c) */
};

void tt_reorder_init(struct tt_reorder *q, size_t esz, bool (*before)(const void *, const void *),
		     size_t limit);
/* Adds x (esz bytes) from source f. False when the queue then holds more
 * than limit entries: the caller pops one. */
bool tt_reorder_push(struct tt_reorder *q, struct tt_reorder_src *f, const void *x);
/* The earliest entry into out; the queue must not be empty (total > 0). */
void tt_reorder_pop(struct tt_reorder *q, void *out);
void tt_reorder_src_fini(struct tt_reorder_src *f);
void tt_reorder_fini(struct tt_reorder *q);

#endif /* TT_REORDER_H */
