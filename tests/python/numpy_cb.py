# Python -> numpy (C) -> Python, and numpy's BLAS under Python: a ufunc
# made by frompyfunc calls back a Python function for each element, and a
# matrix product runs in BLAS. argv: seconds.
import sys
import time

import numpy


def element(x):
    s = 0
    for i in range(20):
        s += i
    return x + s


per_element = numpy.frompyfunc(element, 1, 1)


def apply_once(values):
    per_element(values)


def multiply(a):
    return a @ a


def main():
    end = time.time() + float(sys.argv[1])
    values = numpy.arange(300)
    a = numpy.random.rand(80, 80)
    while time.time() < end:
        apply_once(values)
        multiply(a)


main()
