# A Python thread storm for bench/storm.sh: starts N short threads
# (default 20000), WIDTH at a time (default 4), each summing a small range
# in storm_work, and checks the total against the same sums made without
# threads.
#   pystorm.py [N [WIDTH]]
import sys
import threading


def storm_work(seed, out, k):
    x = 0
    for i in range(200):
        x += (seed * 31 + i) % 7
    out[k] = x


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    width = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    total, started = 0, 0
    out = [0] * width
    while started < n:
        k = min(width, n - started)
        threads = [threading.Thread(target=storm_work, args=(started + j, out, j)) for j in range(k)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        total += sum(out[:k])
        started += k
    want = 0
    for seed in range(n):
        want += sum((seed * 31 + i) % 7 for i in range(200))
    print("threads %d checksum %s" % (started, "ok" if total == want else "BAD"))
    return 0 if total == want else 1


if __name__ == "__main__":
    sys.exit(main())
