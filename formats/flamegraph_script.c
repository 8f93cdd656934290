// SPDX-License-Identifier: MIT
/*
 * The flamegraph's behaviour, embedded in every SVG so it works offline:
 * click a frame to zoom to it (its callers stay, full width), "Reset zoom";
 * "Search" (or Ctrl-F) takes a regular expression, paints the matching
 * frames and shows the share of the view they cover (nested matches
 * counted once); hovering shows a frame's label, samples and share.
 * The script itself is formats/flamegraph.js.
 */
#include "formats/flamegraph_script.h"

const char flamegraph_style[] =
	"text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); }\n"
	"g.f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
	"g.f text { pointer-events: none; }\n"
	".parent { opacity: 0.5; }\n"
	".button { cursor: pointer; fill: rgb(40,40,160); }\n"
	".button:hover { text-decoration: underline; }\n"
	".hide { display: none; }\n"
	".title { font-size: 17px; text-anchor: middle; }\n"
	".subtitle { fill: rgb(90,90,90); text-anchor: middle; }\n";

/*
 * The script is kept as a JavaScript file, to be read and checked as one,
 * and copied in whole by the assembler, NUL-terminated to be a C string.
 * .incbin's path is relative to where the compiler runs, the top of the
 * tree, as -I. is; the compiler's dependency output does not list the
 * file, so the Makefile names it.
 */
__asm__(".pushsection .rodata\n"
	".globl flamegraph_script\n"
	".type flamegraph_script, %object\n"
	"flamegraph_script:\n"
	".incbin \"formats/flamegraph.js\"\n"
	".byte 0\n"
	".size flamegraph_script, . - flamegraph_script\n"
	".popsection\n");
