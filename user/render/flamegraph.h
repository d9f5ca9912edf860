/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --flamegraph: the sampled stacks (model/stacks.h) as a self-contained
 * interactive SVG flame graph, root at the bottom (all, then the process
 * name, the frames from the outermost in, the syscall on top): hover
 * shows a frame's calls and share, a click zooms into it, Search (or
 * Ctrl-F) highlights the frames a regular expression matches.
 */
#ifndef SCPROF_FLAMEGRAPH_H
#define SCPROF_FLAMEGRAPH_H

#include <stdio.h>

#include "model/diff.h"
#include "model/stacks.h"

/* title: raw text (escaped here). 0 or -errno. */
int flamegraph_svg(FILE *f, const struct sc_stacks *s, const char *title);
/*
 * Two folded stack files merged (scprof diff): a differential flame
 * graph, widths from B, each frame coloured by the change of its share
 * of all samples from A to B (red grew, blue shrank, white the same,
 * paler the smaller the change, relative to the largest). Frames only A
 * has are not drawn; a line under the title says how many of A's
 * samples that leaves out. 0 or -errno.
 */
int flamegraph_diff_svg(FILE *f, const struct stack_diff *d, const char *title);
/* Text for SVG/XML (content and attributes): esc_text (so no control
 * character, which XML forbids), then &, <, >, " and ' as entities. New
 * string or NULL.
 */
char *flamegraph_esc_xml(const char *s);

#endif
