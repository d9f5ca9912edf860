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

#include "model/stacks.h"

/* title: raw text (escaped here). 0 or -errno. */
int flamegraph_svg(FILE *f, const struct sc_stacks *s, const char *title);
/* Text for SVG/XML (content and attributes): esc_text (so no control
 * character, which XML forbids), then &, <, >, " and ' as entities. New
 * string or NULL.
 */
char *flamegraph_esc_xml(const char *s);

#endif
