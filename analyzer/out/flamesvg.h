/* SPDX-License-Identifier: MIT */
/*
 * flamesvg.h - renders folded stacks as one self-contained, interactive
 * SVG flame graph (tracetool(1), `flame --format=svg`): no network, inline
 * CSS and JavaScript. It knows nothing of traces: the caller hands it one
 * entry per call path, as folded-stack lines say them.
 *
 * The picture: the root "all" at the bottom, each path's frames stacked
 * above it, children of one frame sorted by name, every frame as wide as
 * its inclusive value (its own value plus its descendants'); colour from a
 * hash of the name (the same name has the same colour in every graph).
 * Hover shows name, value, share of the whole and calls; click zooms into
 * a frame; "Search" (or the URL's ?s=REGEX) highlights matching frames and
 * prints the share they cover; "Reset Zoom" returns. ?z=REGEX zooms into the
 * widest frame whose name matches, on load.
 *
 * Bounded output: among the children of one frame, those narrower than
 * 0.1 px at the unzoomed width (1/12 000 of the total) are drawn as one frame
 * "[N narrow frames]" with their summed value (and nothing above it); if
 * even that is narrower, its value stays in the parent's own part. So each
 * depth holds at most 24 000 frames, whatever the input's size.
 */
#ifndef TT_FLAMESVG_H
#define TT_FLAMESVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * One folded stack: `path` is the frames from the root, separated by ';'
 * ("main;parse;lex"), as bytes (invalid UTF-8 and control characters are
 * drawn as U+FFFD; an empty frame is drawn as "[empty]"). `self_value` is
 * the value of the path itself, in `unit`; `calls` the activations of its
 * last frame. A path may appear more than once (values and calls add), and
 * with self_value 0, so that a frame whose value is all in its children
 * still shows its calls; a frame that is only ever a prefix shows no calls.
 */
struct tt_flame_frame {
	const char *path;
	uint64_t self_value;
	uint64_t calls;
};

/*
 * tt_flamesvg_write() - write the SVG to out.
 * @title: the heading (escaped; may be NULL).
 * @unit: "ns" prints values as durations (1.23ms); anything else as
 *        "N unit" (e.g. "calls", for flame --weight=calls).
 * Return: 0, -ENOMEM, or -EIO when out reports a write error.
 */
int tt_flamesvg_write(FILE *out, const char *title, const struct tt_flame_frame *stacks,
		      size_t n, const char *unit);

#endif /* TT_FLAMESVG_H */
