# SPDX-License-Identifier: MIT
"""Checks --native's frames in a speedscope file against the interpreter's.

argv: FILE.speedscope.json MODE LEAF PATH INTERPRETER...
  MODE         "default" (--native) or "all" (--native-all)
  LEAF         the Python function whose samples are checked
  PATH         the names, outermost first, that must appear in that order in
               each: Python functions and native ones (qsort_r), "|" between
               alternatives
  INTERPRETER  the interpreter's module names (python3.11, libpython3.11.so.1.0)

A frame is Python when it has a line; the interpreter's when its file is one
of INTERPRETER. Prints one line:
  SAMPLES HIDDEN_OK KEPT_BELOW ORDERED SHAPE_SHARE DROPPABLE BETWEEN SHAPE
Samples are the file's rows (a run of equal samples is one).
SAMPLES: samples whose innermost Python frame is LEAF (unmerged ones left
out, and those whose native unwind stopped short, which say so in their
root frame; test_python.sh counts and bounds those); HIDDEN_OK: of them, those with no interpreter frame outward of LEAF
(default) or with one between two Python frames (all); KEPT_BELOW: samples of the whole file
with an interpreter frame below their innermost Python frame; ORDERED: of
SAMPLES, those with PATH in order; SHAPE: the commonest stack of SAMPLES down
to LEAF, with the interpreter's frames outward of the innermost Python frame
dropped (what default shows of an "all" file), runs of one frame as one,
names only; SHAPE_SHARE: its share of SAMPLES in percent; DROPPABLE: the
share of all frames of the file (in percent, each frame weighted by its
sample's time) that are the interpreter's and
outward of their stack's innermost Python frame; BETWEEN: likewise, those
between two Python frames.
"""
import json
import re
import sys
from collections import Counter


def main():
    path, mode, leaf, order = sys.argv[1:5]
    interp = set(sys.argv[5:])
    order = [alt.split("|") for alt in order.split(",")]
    doc = json.load(open(path))
    frames = doc["shared"]["frames"]
    is_py = ["line" in f for f in frames]
    is_interp = [not p and f.get("file") in interp for f, p in zip(frames, is_py)]
    samples = hidden_ok = below = ordered = nframes = droppable = between = 0
    shapes = Counter()
    for prof in doc["profiles"]:
        for stack, weight in zip(prof["samples"], prof["weights"]):
            if any(frames[i]["name"] == "[unmerged]" for i in stack):
                continue
            if stack and frames[stack[0]]["name"].startswith("[truncated"):
                continue
            pys = [k for k, i in enumerate(stack) if is_py[i]]
            if not pys:
                continue
            inner = pys[-1]
            nframes += weight * len(stack)
            droppable += weight * sum(is_interp[i] for i in stack[:inner])
            between += weight * sum(is_interp[i] for i in stack[pys[0] + 1:inner])
            if any(is_interp[i] for i in stack[inner + 1:]):
                below += 1
            if frames[stack[inner]]["name"] != leaf:
                continue
            samples += 1
            if mode == "all":
                hidden_ok += any(is_interp[i] for i in stack[pys[0] + 1:inner])
            else:
                hidden_ok += not any(is_interp[i] for i in stack[:inner])
            names = [frames[i]["name"] for i in stack]
            at = 0
            for alts in order:
                while at < len(names) and names[at] not in alts:
                    at += 1
                at += 1
            if at <= len(names):
                ordered += 1
            shape = []
            for k, i in enumerate(stack[:inner + 1]):
                if is_interp[i] and k < inner:
                    continue
                # A run of nameless frames of one module is one step: a
                # stripped libc's qsort recurses through two of them to a
                # depth and in an order that differ from sample to sample.
                name = re.sub(r"^0x[0-9a-f]+ \(", "0x* (", frames[i]["name"])
                if not shape or shape[-1] != name:
                    shape.append(name)
            shapes[";".join(shape)] += 1
    top, n = shapes.most_common(1)[0] if shapes else ("-", 0)
    share = 100.0 * n / samples if samples else 0.0
    def pct(n):
        return "%.1f" % (100.0 * n / nframes if nframes else 0.0)

    print(samples, hidden_ok, below, ordered, "%.1f" % share, pct(droppable), pct(between), top)


main()
