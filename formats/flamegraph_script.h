/* SPDX-License-Identifier: MIT */
/* The flamegraph SVG's embedded style and script; formats/ only. */
#ifndef TRAINSAMPLE_FORMATS_FLAMEGRAPH_SCRIPT_H
#define TRAINSAMPLE_FORMATS_FLAMEGRAPH_SCRIPT_H

extern const char flamegraph_style[];
extern const char flamegraph_script[];

#endif
