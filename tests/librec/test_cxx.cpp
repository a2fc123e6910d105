// SPDX-License-Identifier: MIT
// test_cxx.cpp - rec.h from C++17: TRACE_SCOPE records its exit when an
// exception is thrown through the scope, and on every ordinary way out.
#include <criterion/criterion.h>
#include <rec.h>
#include <stdexcept>
#include <string>
#include <unistd.h>

// format/'s header is C; its _Static_asserts are C++'s static_assert.
#define _Static_assert static_assert
#include "recfmt.h"
#undef _Static_assert
#include "trace_read.h"

static std::string out;

static void cleanup()
{
	unlink(out.c_str());
}

TestSuite(cxx, .fini = cleanup, .timeout = 60);

static void thrower(int i)
{
	TRACE_SCOPE();
	if (i % 2)
		throw std::runtime_error("odd");
}

struct widget {
	int poke(int v)
	{
		TRACE_SCOPE_NAMED("widget::poke");
		return v + 1;
	}
};

Test(cxx, exception_through_a_scope_records_its_exit)
{
	struct tr_trace tr;
	int caught = 0;

	out = "/tmp/rec_cxx_" + std::to_string(getpid()) + ".zst";
	setenv("REC_OUTPUT", out.c_str(), 1);
	for (int i = 0; i < 100; i++) {
		TRACE_SCOPE_NAMED("catcher");
		try {
			thrower(i);
		} catch (const std::exception &) {
			caught++;
		}
	}
	cr_assert_eq(widget().poke(1), 2);
	cr_assert_eq(caught, 50);
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(tr_load(out.c_str(), &tr), 0);
	cr_assert(tr.clean);
	cr_assert(tr_well_nested(&tr));
	cr_assert_eq(tr.threads[0].nr_unclosed, 0u);
	cr_assert_eq(tr_calls(&tr, "thrower"), 100u);
	cr_assert_eq(tr_calls(&tr, "catcher"), 100u);
	cr_assert_eq(tr_calls(&tr, "widget::poke"), 1u);
	cr_assert_eq(tr.nr_events, 2u * 201u);
	tr_free(&tr);
}

// Annotations from C++: TRACE_VALUE's overloads record integers exactly and
// floating-point values as doubles; an argument lands on the innermost scope.
Test(cxx, annotations_record_each_arithmetic_type_exactly)
{
	struct recfmt_reader *r;
	struct recfmt_error err;
	const uint8_t *data;
	size_t len;
	std::string names[16];
	uint64_t n = 0;
	// Events of the EVENTS blocks before the last one, and in all: an ANNOTS
	// record's positions count from the start of the block it follows, and
	// the writer may cut a block anywhere (between outer's enter and the
	// annotations, under load).
	uint64_t before_block = 0, seen = 0;

	out = "/tmp/rec_cxx_annots_" + std::to_string(getpid()) + ".zst";
	setenv("REC_OUTPUT", out.c_str(), 1);
	{
		TRACE_SCOPE_NAMED("outer");
		TRACE_VALUE("int", -5);
		TRACE_VALUE("ull", 18446744073709551615ull); // as int64_t: -1
		TRACE_VALUE("uchar", static_cast<unsigned char>(200));
		TRACE_VALUE("bool", true);
		TRACE_VALUE("float", 0.25f);
		TRACE_VALUE("double", -1e300);
		TRACE_ARG("key", 7);
		TRACE_FLOW_STEP("flow", 9u);
	}
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(recfmt_reader_open(&r, out.c_str(), &err), RECFMT_OK);
	while (recfmt_reader_next(r, &data, &len, &err) == RECFMT_OK) {
		struct recfmt_cursor c;
		struct recfmt_record rec;

		recfmt_cursor_init(&c, data, len);
		while (recfmt_cursor_next(&c, &rec, &err) == RECFMT_OK) {
			if (rec.type == RECFMT_EVENTS) {
				struct recfmt_events_iter it;

				cr_assert_eq(recfmt_events_open(&rec, &it, &err), RECFMT_OK);
				before_block = seen;
				seen += it.nr_events;
			} else if (rec.type == RECFMT_ANNOT_NAME) {
				struct recfmt_annot_name nm;

				cr_assert_eq(recfmt_decode_annot_name(&rec, &nm, &err), RECFMT_OK);
				cr_assert_lt(nm.id, 16u);
				names[nm.id].assign(nm.name, nm.name_bytes);
			} else if (rec.type == RECFMT_ANNOTS) {
				struct recfmt_annots_iter it;
				struct recfmt_annot a;

				cr_assert_eq(recfmt_annots_open(&rec, &it, &err), RECFMT_OK);
				while (recfmt_annots_next(&it, &a, &err) == RECFMT_OK) {
					const std::string &nm = names[a.name_id];

					n++;
					// after outer's enter (event 0), before its exit (1)
					cr_assert_eq(before_block + a.pos, 1u, "every one inside outer");
					if (nm == "int")
						cr_assert(a.kind == RECFMT_ANNOT_VALUE_I64 && a.i64 == -5);
					else if (nm == "ull")
						cr_assert(a.kind == RECFMT_ANNOT_VALUE_I64 && a.i64 == -1);
					else if (nm == "uchar")
						cr_assert(a.kind == RECFMT_ANNOT_VALUE_I64 && a.i64 == 200);
					else if (nm == "bool")
						cr_assert(a.kind == RECFMT_ANNOT_VALUE_I64 && a.i64 == 1);
					else if (nm == "float")
						cr_assert(a.kind == RECFMT_ANNOT_VALUE_F64 && a.f64 == 0.25);
					else if (nm == "double")
						cr_assert(a.kind == RECFMT_ANNOT_VALUE_F64 && a.f64 == -1e300);
					else if (nm == "key")
						cr_assert(a.kind == RECFMT_ANNOT_ARG && a.i64 == 7);
					else
						cr_assert(nm == "flow" && a.kind == RECFMT_ANNOT_FLOW_STEP &&
							  a.id == 9);
				}
			}
		}
	}
	recfmt_reader_close(r);
	cr_assert_eq(n, 8u);
}

// Names (rec(3), "Names"): TRACE_SCOPE() names a member function with its
// class and namespaces, without return type, parameters or qualifiers, so
// that A::run and B::run, or two instances of a template, stay apart.
namespace outer {
struct A {
	int run(int v) const
	{
		TRACE_SCOPE();
		return v;
	}
	static long helper(const char *, int) noexcept
	{
		TRACE_SCOPE();
		return 1;
	}
	bool operator<(const A &) const
	{
		TRACE_SCOPE();
		return false;
	}
	int operator()(int v)
	{
		TRACE_SCOPE();
		return v;
	}
	operator int() const
	{
		TRACE_SCOPE();
		return 3;
	}
};
} // namespace outer

struct B {
	int run(int v) &
	{
		TRACE_SCOPE();
		return v + 1;
	}
};

template <class T> struct box {
	T get(T v) const
	{
		TRACE_SCOPE();
		return v;
	}
};

Test(cxx, trace_scope_names_methods_by_class_without_the_signature)
{
	struct tr_trace tr;
	outer::A a;
	B b;
	int sum = 0;

	out = "/tmp/rec_cxx_names_" + std::to_string(getpid()) + ".zst";
	setenv("REC_OUTPUT", out.c_str(), 1);
	cr_assert_eq(rec_start(NULL), 0);
	for (int i = 0; i < 3; i++) {
		sum += a.run(i) + b.run(i) + (int)outer::A::helper("x", i) + (a < a) + a(i) + (int)a;
		sum += box<int>().get(i) + (int)box<double>().get(i);
	}
	cr_assert_eq(sum, 30); // 5 i + 5 for i = 0, 1, 2
	cr_assert_eq(rec_stop(), 0);
	cr_assert_eq(tr_load(out.c_str(), &tr), 0);
	cr_assert_eq(tr_calls(&tr, "outer::A::run"), 3u);
	cr_assert_eq(tr_calls(&tr, "B::run"), 3u);
	cr_assert_eq(tr_calls(&tr, "outer::A::helper"), 3u);
	cr_assert_eq(tr_calls(&tr, "outer::A::operator<"), 3u);
	cr_assert_eq(tr_calls(&tr, "outer::A::operator()"), 3u);
	cr_assert_eq(tr_calls(&tr, "outer::A::operator int"), 3u);
	// gcc: "box<T>::get [with T = int]"; clang: "box<int>::get [T = int]".
	unsigned boxes = 0;
	for (uint32_t s = 0; s < tr.nr_sites; s++) {
		const char *n = tr.site_names[s];

		if (!n || strncmp(n, "box<", 4) != 0)
			continue;
		cr_assert(strstr(n, "::get [") && (strstr(n, "= int]") || strstr(n, "= double]")),
			  "%s", n);
		cr_assert_eq(tr_calls(&tr, n), 3u, "%s", n);
		boxes++;
	}
	cr_assert_eq(boxes, 2u);
	tr_free(&tr);
}
