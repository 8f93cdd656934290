# A CPU-bound Python target for the overhead benchmark: waits for a byte on
# stdin, then runs ROUNDS rounds of a small call tree.
#   pyspin.py [THREADS] ROUNDS
# With THREADS it also starts THREADS - 1 idle threads first (a process
# with many threads where one is busy).
import sys
import threading


def leaf(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def middle(n):
    return leaf(n) + leaf(n // 2)


def step(n):
    return sum(middle(n) for _ in range(4))


def main():
    rounds = int(sys.argv[-1])
    threads = int(sys.argv[1]) if len(sys.argv) > 2 else 1
    stop = threading.Event()
    idle = [threading.Thread(target=stop.wait) for _ in range(threads - 1)]
    for t in idle:
        t.start()
    sys.stdin.buffer.read(1)
    for _ in range(rounds):
        step(2000)
    stop.set()
    for t in idle:
        t.join()


main()
