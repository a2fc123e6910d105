/* SPDX-License-Identifier: MIT */
/*
 * pprof.c - the profile.proto writer of pprof.h. Field numbers are those of
 * pprof's proto/profile.proto (message Profile: sample_type 1, sample 2,
 * mapping 3, location 4, function 5, string_table 6, time_nanos 9,
 * duration_nanos 10, period_type 11, period 12, comment 13,
 * default_sample_type 14; ValueType: type 1, unit 2; Sample: location_id 1,
 * value 2, label 3; Label: key 1, str 2; Mapping: id 1, memory_start 2,
 * memory_limit 3, file_offset 4, filename 5, build_id 6, has_functions 7;
 * Location: id 1, mapping_id 2, address 3, line 4; Line: function_id 1,
 * line 2; Function: id 1, name 2, system_name 3, filename 4, start_line 5). Repeated numbers
 * are written packed, as proto3 does. The string table's entry 0 is "".
 */
#include "out/pprof.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/hmap.h"
#include "common/xalloc.h"
#include "out/protobuf.h"

/* Open addressing over an array of entries (slot: index + 1, 0 empty),
 * kept at most half full. */
struct ptab {
	uint32_t *slot;
	uint32_t mask;
};

struct pfunc {
	int64_t name, sys, file, line;
};

struct pmap {
	uint64_t start, limit, offset;
	int64_t file, build_id;
	bool has_functions;
};

struct ploc {
	uint64_t mapping, addr, func;
	int64_t line;
};

struct psample {
	size_t at;	/* first location id in p->stacks */
	uint32_t depth;
	int64_t labels[2 * TT_PPROF_MAX_LABELS]; /* key, value string ids; 0: none */
	int64_t values[TT_PPROF_MAX_TYPES];
	uint32_t hash;
};

struct tt_pprof {
	char **strs;
	uint32_t nr_strs, cap_strs;
	struct ptab str_tab;
	struct pfunc *funcs;
	uint32_t nr_funcs, cap_funcs;
	struct ptab func_tab;
	struct pmap *maps;
	uint32_t nr_maps, cap_maps;
	struct ploc *locs;
	uint32_t nr_locs, cap_locs;
	struct psample *samples;
	uint32_t nr_samples, cap_samples;
	struct ptab sample_tab;
	uint64_t *stacks;
	size_t nr_stacks, cap_stacks;
	int64_t types[TT_PPROF_MAX_TYPES][2];
	unsigned nr_types;
	int64_t period_type[2], period;
	bool has_period;
	int64_t time_nanos, duration_nanos;
	int64_t *comments;
	uint32_t nr_comments;
};

static uint32_t mix64(uint32_t h, uint64_t v)
{
	return tt_hash_u32(h ^ tt_hash_u32((uint32_t)v ^ tt_hash_u32((uint32_t)(v >> 32))));
}

/* Grows t when n entries would make it more than half full; rehash(i)
 * gives entry i's hash. */
static void ptab_grow(struct ptab *t, uint32_t n, uint32_t (*hash_of)(const struct tt_pprof *, uint32_t),
		      const struct tt_pprof *p)
{
	uint32_t mask;

	if (t->slot && 2 * (uint64_t)n <= t->mask)
		return;
	mask = t->slot ? 2 * t->mask + 1 : 63;
	while (2 * (uint64_t)n > mask)
		mask = 2 * mask + 1;
	free(t->slot);
	t->slot = tt_xcalloc((size_t)mask + 1, sizeof(*t->slot));
	t->mask = mask;
	for (uint32_t i = 0; i + 1 < n; i++) {
		uint32_t s = hash_of(p, i) & mask;

		while (t->slot[s])
			s = (s + 1) & mask;
		t->slot[s] = i + 1;
	}
}

static uint32_t str_hash(const struct tt_pprof *p, uint32_t i)
{
	return tt_hash_bytes(p->strs[i], strlen(p->strs[i]));
}

static uint32_t func_hash_of(const struct pfunc *f)
{
	return mix64(mix64(mix64(mix64(0, (uint64_t)f->name), (uint64_t)f->sys), (uint64_t)f->file),
		     (uint64_t)f->line);
}

static uint32_t func_hash(const struct tt_pprof *p, uint32_t i)
{
	return func_hash_of(&p->funcs[i]);
}

static uint32_t sample_hash(const struct tt_pprof *p, uint32_t i)
{
	return p->samples[i].hash;
}

/* The string table index of s, added when new. */
static int64_t str_id(struct tt_pprof *p, const char *s)
{
	uint32_t h = tt_hash_bytes(s, strlen(s)), sl;

	if (p->str_tab.slot)
		for (sl = h & p->str_tab.mask; p->str_tab.slot[sl]; sl = (sl + 1) & p->str_tab.mask)
			if (strcmp(p->strs[p->str_tab.slot[sl] - 1], s) == 0)
				return p->str_tab.slot[sl] - 1;
	if (p->nr_strs == p->cap_strs) {
		p->cap_strs = p->cap_strs ? 2 * p->cap_strs : 64;
		p->strs = tt_xrealloc(p->strs, p->cap_strs * sizeof(*p->strs));
	}
	p->strs[p->nr_strs++] = tt_xstrndup(s, strlen(s));
	ptab_grow(&p->str_tab, p->nr_strs, str_hash, p);
	for (sl = h & p->str_tab.mask; p->str_tab.slot[sl]; sl = (sl + 1) & p->str_tab.mask)
		;
	p->str_tab.slot[sl] = p->nr_strs;
	return p->nr_strs - 1;
}

struct tt_pprof *tt_pprof_create(void)
{
	struct tt_pprof *p = tt_xcalloc(1, sizeof(*p));

	str_id(p, ""); /* string_table[0] must be "" */
	return p;
}

void tt_pprof_destroy(struct tt_pprof *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->nr_strs; i++)
		free(p->strs[i]);
	free(p->strs);
	free(p->str_tab.slot);
	free(p->funcs);
	free(p->func_tab.slot);
	free(p->maps);
	free(p->locs);
	free(p->samples);
	free(p->sample_tab.slot);
	free(p->stacks);
	free(p->comments);
	free(p);
}

void tt_pprof_sample_type(struct tt_pprof *p, const char *type, const char *unit)
{
	if (p->nr_types == TT_PPROF_MAX_TYPES || p->nr_samples)
		abort(); /* a programming error */
	p->types[p->nr_types][0] = str_id(p, type);
	p->types[p->nr_types][1] = str_id(p, unit);
	p->nr_types++;
}

void tt_pprof_period(struct tt_pprof *p, const char *type, const char *unit, int64_t period)
{
	p->period_type[0] = str_id(p, type);
	p->period_type[1] = str_id(p, unit);
	p->period = period;
	p->has_period = true;
}

void tt_pprof_times(struct tt_pprof *p, int64_t time_nanos, int64_t duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

void tt_pprof_comment(struct tt_pprof *p, const char *text)
{
	p->comments = tt_xrealloc(p->comments, (p->nr_comments + 1) * sizeof(*p->comments));
	p->comments[p->nr_comments++] = str_id(p, text);
}

uint64_t tt_pprof_function(struct tt_pprof *p, const char *name, const char *system_name,
			   const char *file, int64_t line)
{
	struct pfunc f = { str_id(p, name), str_id(p, system_name ? system_name : name),
			   str_id(p, file ? file : ""), line };
	uint32_t h = func_hash_of(&f), sl;

	if (p->func_tab.slot)
		for (sl = h & p->func_tab.mask; p->func_tab.slot[sl]; sl = (sl + 1) & p->func_tab.mask) {
			const struct pfunc *g = &p->funcs[p->func_tab.slot[sl] - 1];

			if (g->name == f.name && g->sys == f.sys && g->file == f.file && g->line == f.line)
				return p->func_tab.slot[sl];
		}
	if (p->nr_funcs == p->cap_funcs) {
		p->cap_funcs = p->cap_funcs ? 2 * p->cap_funcs : 64;
		p->funcs = tt_xrealloc(p->funcs, p->cap_funcs * sizeof(*p->funcs));
	}
	p->funcs[p->nr_funcs++] = f;
	ptab_grow(&p->func_tab, p->nr_funcs, func_hash, p);
	for (sl = h & p->func_tab.mask; p->func_tab.slot[sl]; sl = (sl + 1) & p->func_tab.mask)
		;
	p->func_tab.slot[sl] = p->nr_funcs;
	return p->nr_funcs; /* ids start at 1 */
}

uint64_t tt_pprof_mapping(struct tt_pprof *p, uint64_t start, uint64_t limit, uint64_t offset,
			  const char *file, const char *build_id, bool has_functions)
{
	if (p->nr_maps == p->cap_maps) {
		p->cap_maps = p->cap_maps ? 2 * p->cap_maps : 16;
		p->maps = tt_xrealloc(p->maps, p->cap_maps * sizeof(*p->maps));
	}
	p->maps[p->nr_maps++] = (struct pmap){ start, limit, offset, str_id(p, file),
					       str_id(p, build_id), has_functions };
	return p->nr_maps;
}

uint64_t tt_pprof_location(struct tt_pprof *p, uint64_t mapping, uint64_t addr, uint64_t func,
			   int64_t line)
{
	if (p->nr_locs == p->cap_locs) {
		p->cap_locs = p->cap_locs ? 2 * p->cap_locs : 256;
		p->locs = tt_xrealloc(p->locs, p->cap_locs * sizeof(*p->locs));
	}
	p->locs[p->nr_locs++] = (struct ploc){ mapping, addr, func, line };
	return p->nr_locs;
}

/* a + b, held at INT64_MAX/INT64_MIN: a hostile file's sample period or
 * scope times can sum past int64 (fuzz_pprof under UBSan). */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (!__builtin_add_overflow(a, b, &r))
		return r;
	return b > 0 ? INT64_MAX : INT64_MIN;
}

void tt_pprof_add(struct tt_pprof *p, const uint64_t *funcs, size_t depth, const int64_t *values,
		  const char *const *label_keys, const char *const *label_vals, size_t nr_labels)
{
	int64_t labels[2 * TT_PPROF_MAX_LABELS] = { 0 };
	uint32_t h = (uint32_t)depth, sl;
	unsigned nl = 0;

	for (size_t i = 0; i < nr_labels && i < TT_PPROF_MAX_LABELS; i++)
		if (label_vals[i]) {
			labels[2 * nl] = str_id(p, label_keys[i]);
			labels[2 * nl + 1] = str_id(p, label_vals[i]);
			nl++;
		}
	for (size_t i = 0; i < depth; i++)
		h = mix64(h, funcs[i]);
	for (unsigned i = 0; i < 2 * TT_PPROF_MAX_LABELS; i++)
		h = mix64(h, (uint64_t)labels[i]);
	if (p->sample_tab.slot)
		for (sl = h & p->sample_tab.mask; p->sample_tab.slot[sl];
		     sl = (sl + 1) & p->sample_tab.mask) {
			struct psample *s = &p->samples[p->sample_tab.slot[sl] - 1];

			if (s->hash == h && s->depth == depth &&
			    !memcmp(s->labels, labels, sizeof(labels)) &&
			    !memcmp(p->stacks + s->at, funcs, depth * sizeof(*funcs))) {
				for (unsigned t = 0; t < p->nr_types; t++)
					s->values[t] = sat_add(s->values[t], values[t]);
				return;
			}
		}
	if (p->nr_samples == p->cap_samples) {
		p->cap_samples = p->cap_samples ? 2 * p->cap_samples : 256;
		p->samples = tt_xrealloc(p->samples, p->cap_samples * sizeof(*p->samples));
	}
	if (p->nr_stacks + depth > p->cap_stacks) {
		while (p->nr_stacks + depth > p->cap_stacks)
			p->cap_stacks = p->cap_stacks ? 2 * p->cap_stacks : 1024;
		p->stacks = tt_xrealloc(p->stacks, p->cap_stacks * sizeof(*p->stacks));
	}
	struct psample *s = &p->samples[p->nr_samples++];

	memset(s, 0, sizeof(*s));
	s->at = p->nr_stacks;
	s->depth = (uint32_t)depth;
	s->hash = h;
	memcpy(s->labels, labels, sizeof(labels));
	for (unsigned t = 0; t < p->nr_types; t++)
		s->values[t] = values[t];
	if (depth)
		memcpy(p->stacks + p->nr_stacks, funcs, depth * sizeof(*funcs));
	p->nr_stacks += depth;
	ptab_grow(&p->sample_tab, p->nr_samples, sample_hash, p);
	for (sl = h & p->sample_tab.mask; p->sample_tab.slot[sl]; sl = (sl + 1) & p->sample_tab.mask)
		;
	p->sample_tab.slot[sl] = p->nr_samples;
}

size_t tt_pprof_nr_samples(const struct tt_pprof *p)
{
	return p->nr_samples;
}

/* A packed repeated field of varints. */
static void packed(struct tt_pb *pb, uint32_t field, const uint64_t *v, size_t n)
{
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += tt_pb_varint_len(v[i]);
	tt_pb_begin(pb, field);
	uint8_t *w = tt_pb_reserve(pb, len), *w0 = w;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = v[i];

		while (x >= 0x80) {
			*w++ = (uint8_t)(x | 0x80);
			x >>= 7;
		}
		*w++ = (uint8_t)x;
	}
	pb->n += (size_t)(w - w0);
	tt_pb_end(pb);
}

static void value_type(struct tt_pb *pb, uint32_t field, const int64_t vt[2])
{
	tt_pb_begin(pb, field);
	tt_pb_int64(pb, 1, vt[0]);
	tt_pb_int64(pb, 2, vt[1]);
	tt_pb_end(pb);
}

static void encode(struct tt_pprof *p, struct tt_pb *pb)
{
	uint64_t vals[TT_PPROF_MAX_TYPES];

	for (unsigned t = 0; t < p->nr_types; t++)
		value_type(pb, 1, p->types[t]);
	for (uint32_t i = 0; i < p->nr_samples; i++) {
		const struct psample *s = &p->samples[i];

		tt_pb_begin(pb, 2);
		packed(pb, 1, p->stacks + s->at, s->depth);
		for (unsigned t = 0; t < p->nr_types; t++)
			vals[t] = (uint64_t)s->values[t];
		packed(pb, 2, vals, p->nr_types);
		for (unsigned l = 0; l < TT_PPROF_MAX_LABELS && s->labels[2 * l]; l++) {
			tt_pb_begin(pb, 3);
			tt_pb_int64(pb, 1, s->labels[2 * l]);
			tt_pb_int64(pb, 2, s->labels[2 * l + 1]);
			tt_pb_end(pb);
		}
		tt_pb_end(pb);
	}
	for (uint32_t i = 0; i < p->nr_maps; i++) {
		const struct pmap *m = &p->maps[i];

		tt_pb_begin(pb, 3);
		tt_pb_varint(pb, 1, i + 1);
		tt_pb_varint(pb, 2, m->start);
		tt_pb_varint(pb, 3, m->limit);
		if (m->offset)
			tt_pb_varint(pb, 4, m->offset);
		tt_pb_int64(pb, 5, m->file);
		if (m->build_id)
			tt_pb_int64(pb, 6, m->build_id);
		if (m->has_functions)
			tt_pb_varint(pb, 7, 1);
		tt_pb_end(pb);
	}
	for (uint32_t i = 0; i < p->nr_locs; i++) {
		const struct ploc *l = &p->locs[i];

		tt_pb_begin(pb, 4);
		tt_pb_varint(pb, 1, i + 1);
		if (l->mapping)
			tt_pb_varint(pb, 2, l->mapping);
		if (l->addr)
			tt_pb_varint(pb, 3, l->addr);
		/* func 0: an address not named, without a Line (tt_pprof_location()). */
		if (l->func) {
			tt_pb_begin(pb, 4);
			tt_pb_varint(pb, 1, l->func);
			if (l->line)
				tt_pb_int64(pb, 2, l->line);
			tt_pb_end(pb);
		}
		tt_pb_end(pb);
	}
	for (uint32_t i = 0; i < p->nr_funcs; i++) {
		const struct pfunc *f = &p->funcs[i];

		tt_pb_begin(pb, 5);
		tt_pb_varint(pb, 1, i + 1);
		tt_pb_int64(pb, 2, f->name);
		tt_pb_int64(pb, 3, f->sys);
		if (f->file)
			tt_pb_int64(pb, 4, f->file);
		if (f->line)
			tt_pb_int64(pb, 5, f->line);
		tt_pb_end(pb);
	}
	for (uint32_t i = 0; i < p->nr_strs; i++)
		tt_pb_string(pb, 6, p->strs[i]);
	if (p->time_nanos)
		tt_pb_int64(pb, 9, p->time_nanos);
	if (p->duration_nanos)
		tt_pb_int64(pb, 10, p->duration_nanos);
	if (p->has_period) {
		value_type(pb, 11, p->period_type);
		tt_pb_int64(pb, 12, p->period);
	}
	for (uint32_t i = 0; i < p->nr_comments; i++)
		tt_pb_int64(pb, 13, p->comments[i]);
	if (p->nr_types)
		tt_pb_int64(pb, 14, p->types[p->nr_types - 1][0]);
}

int tt_pprof_write(struct tt_pprof *p, FILE *f)
{
	struct tt_pb pb = { 0 };
	z_stream z;
	uint8_t out[65536];
	int rc = 0, zr;

	encode(p, &pb);
	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip header and trailer (RFC 1952). */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK) {
		tt_pb_fini(&pb);
		return -ENOMEM;
	}
	z.next_in = pb.p;
	z.avail_in = 0;
	size_t left = pb.n;
	do {
		/* avail_in is 32 bits: feed at most 1 GiB at a time. */
		if (!z.avail_in && left) {
			uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;

			z.avail_in = chunk;
			left -= chunk;
		}
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			rc = -ENOMEM;
			break;
		}
		size_t have = sizeof(out) - z.avail_out;
		if (have && fwrite(out, 1, have, f) != have) {
			rc = errno ? -errno : -EIO; /* ENOSPC said as such, as the other writers do */
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	tt_pb_fini(&pb);
	if (!rc && fflush(f))
		rc = errno ? -errno : -EIO;
	else if (!rc && ferror(f))
		rc = -EIO;
	return rc;
}
