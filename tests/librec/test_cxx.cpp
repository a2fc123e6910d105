// SPDX-License-Identifier: MIT
// test_cxx.cpp - rec.h from C++17: TRACE_SCOPE records its exit when an
// exception is thrown through the scope, and on every ordinary way out.
#include <criterion/criterion.h>
#include <rec.h>
#include <stdexcept>
#include <string>
#include <unistd.h>

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
