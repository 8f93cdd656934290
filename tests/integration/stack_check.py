#!/usr/bin/env python3
"""Which stacks of tests/python/recursion_shapes.py (or of
recursion_threads.py, the same in three threads) could have happened.

argv: a folded file (default labels, with lines). Prints
"SAMPLES IMPOSSIBLE MARKED" and then up to five impossible stacks. A
stack is possible when it is <module> at the call of main (or at an
import, starting up), main at its call of rec unless innermost, rec frames
each at the call of the next (line 19, or 18 above leaf), leaf only under
exactly 4, 8 or 13 rec frames. Stacks starting with a marker ([error...],
[truncated...]) are counted apart: they say they are not whole. Stacks
with no frame of the script are the interpreter's start-up and end
(imports run from C have no Python caller): not judged. In
recursion_threads.py main is called at line 32, and by each other thread
under threading.py's frames; <module> elsewhere (starting and joining the
threads) is not judged further.
"""
import re
import sys

FRAME = re.compile(r'^(\S+) \(recursion_(shapes|threads)\.py:(\d+)\)$')
THREADING = re.compile(r'^\S+ \(threading\.py:\d+\)$')
LEAF_UNDER = {4, 8, 13}


def possible(frames):
    if not any(FRAME.match(f) for f in frames):
        return True
    py = []
    main_call = 29
    thread = False
    for f in frames:
        m = FRAME.match(f)
        if m:
            py.append((m.group(1), int(m.group(3))))
            if m.group(2) == 'threads':
                main_call = 32
        elif not py and THREADING.match(f):
            thread = True  # another thread's start, down to its target
        elif f.startswith('[idle') and f is frames[-1]:
            continue
        elif py and py[0][0] == '<module>' and py[0][1] < 29:
            return True  # importing, starting up: the frames are the library's
        elif py and py[0][0] == '<module>' and main_call == 32 and len(py) == 1 and py[0][1] != 32:
            return True  # starting or joining the threads
        else:
            return False
    if thread:
        py = [('<module>', main_call)] + py
    if not py or py[0][0] != '<module>':
        return False
    if py[0][1] != main_call:
        return len(py) == 1
    rest = py[1:]
    if not rest:
        return True
    if rest[0][0] != 'main':
        return False
    if len(rest) == 1:
        return 22 <= rest[0][1] <= 26
    if rest[0][1] != 26:
        return False
    recs = rest[1:]
    leaf = recs and recs[-1][0] == 'leaf'
    if leaf:
        if not 9 <= recs[-1][1] <= 13:
            return False
        recs = recs[:-1]
        if len(recs) not in LEAF_UNDER or recs[-1][1] != 18:
            return False
    if len(recs) > 13 or any(name != 'rec' for name, _ in recs):
        return False
    for i, (_, line) in enumerate(recs):
        inner = i == len(recs) - 1
        if inner and not leaf:
            if not 16 <= line <= 19 or (line == 18 and len(recs) not in LEAF_UNDER):
                return False
        elif not inner and line != 19:
            return False
    return True


def main(path):
    total = impossible = marked = 0
    bad = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            stack, _, count = line.rstrip('\n').rpartition(' ')
            n = int(count)
            frames = stack.split(';')
            if frames and frames[0].startswith('thread '):
                frames = frames[1:]
            total += n
            if frames and frames[0].startswith('['):
                marked += n
            elif not possible(frames):
                impossible += n
                bad.append((n, stack))
    print(total, impossible, marked)
    for n, stack in sorted(bad, reverse=True)[:5]:
        print(n, stack)


main(sys.argv[1])
