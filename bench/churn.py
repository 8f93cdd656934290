# make bench (bench/memory.sh): a Python program whose stacks change at
# nearly every sample (random recursion depths over three functions), run
# for argv[1] seconds: the worst case for a timeline kept in memory.
import random, sys, time
def leaf(n):
    s = 0
    for i in range(n):
        s += i
    return s
def a(d):
    return leaf(50) if d == 0 else (b(d - 1) if d % 2 else c(d - 1))
def b(d):
    return leaf(80) if d == 0 else a(d - 1)
def c(d):
    return leaf(30) if d == 0 else a(d - 1)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    a(random.randrange(12))
