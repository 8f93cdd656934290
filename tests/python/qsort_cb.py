# Python -> C -> Python: libc's qsort, called through ctypes, calls back a
# Python comparator. argv: seconds.
import ctypes
import random
import sys
import time

libc = ctypes.CDLL("libc.so.6")
CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))


def compare(a, b):
    x = 0
    for _ in range(20):
        x += 1
    return a[0] - b[0]


callback = CMP(compare)


def sort_once():
    values = (ctypes.c_int * 300)(*random.sample(range(100000), 300))
    libc.qsort(values, len(values), ctypes.sizeof(ctypes.c_int), callback)


def main():
    end = time.time() + float(sys.argv[1])
    while time.time() < end:
        sort_once()


main()
