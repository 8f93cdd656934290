# Fast recursion whose every possible stack is known, in three threads that
# take turns with the GIL (tests/python/recursion_shapes.py, its lines the
# same): a thread that takes the GIL while another is read must not tear
# its walk. argv: seconds [switch interval, ms: 5].
import sys
import threading, time; sys.setswitchinterval(float(sys.argv[2] if len(sys.argv) > 2 else 5) / 1000)


def leaf(n):
    x = 0
    for i in range(n):
        x += i
    return x


def rec(d, depth):
    if depth == 0:
        return leaf(30)
    return rec(d, depth - 1)


def main(seconds):
    end = time.time() + seconds
    while time.time() < end:
        for d in (3, 7, 12):
            rec(d, d)


others = [threading.Thread(target=main, args=(float(sys.argv[1]),)) for _ in range(2)]
for t in others:
    t.start()
main(float(sys.argv[1]))
for t in others:
    t.join()
