/* SPDX-License-Identifier: MIT */
/*
 * test_writer_fast.c - when librec's writer switches to fast compression
 * (rec__writer_want_fast(), writer.c): at once when behind, over an eighth
 * of a CPU in a window, back under a sixteenth, and unchanged in between or
 * without a window. The figures in the file: tests/format/test_fastframe.c.
 */
#include <criterion/criterion.h>

#include "rec_internal.h"

#define W 20000000ull /* a 20 ms window */

Test(writer_fast, behind_switches_at_once)
{
	cr_assert(rec__writer_want_fast(false, true, 0, 0));
	cr_assert(rec__writer_want_fast(false, true, 0, W));
	cr_assert(rec__writer_want_fast(true, true, 0, W));
}

Test(writer_fast, cpu_share_with_a_gap)
{
	/* Over an eighth of the window: fast. */
	cr_assert(rec__writer_want_fast(false, false, W / 8 + 1, W));
	cr_assert_not(rec__writer_want_fast(false, false, W / 8, W));
	/* Between a sixteenth and an eighth: as it was. */
	cr_assert(rec__writer_want_fast(true, false, W / 10, W));
	cr_assert_not(rec__writer_want_fast(false, false, W / 10, W));
	/* Under a sixteenth: normal again. */
	cr_assert_not(rec__writer_want_fast(true, false, W / 16 - 1, W));
	cr_assert(rec__writer_want_fast(true, false, W / 16, W));
}

Test(writer_fast, no_window_keeps_the_mode)
{
	cr_assert(rec__writer_want_fast(true, false, 0, 0));
	cr_assert_not(rec__writer_want_fast(false, false, 0, 0));
}
