# dump --locals: known() holds a local of each kind trainsample renders and
# blocks in inner(), which reads a free variable (captured, a cell of
# known's); a thread named "churner" calls and returns churn() all along,
# so dump meets frames being set up and torn down. With numpy, known()
# holds arrays too (grid, row, point); without it they are None.
#   locals.py READY_FILE
import os
import sys
import threading
import time

# numpy where the interpreter has it: an array shows its dtype and shape.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
try:
    import numpy
except ImportError:
    numpy = None


class Widget:
    pass


def churn(n):
    a = n
    b = "churn"
    c = [n, n]
    return a + len(b) + len(c)


def churner():
    total = 0
    while True:
        total = churn(7)


def known(ready):
    small = 42
    big = 2 ** 100
    huge = 2 ** 400
    negative = -7
    zero = 0
    ratio = 3.14
    flag = True
    off = False
    nothing = None
    text = "hello\n'world'\t\\"
    accented = "h\u00e9llo w\u00f6rld \u20ac"
    emoji = "\U0001f600!"
    long_text = "x" * (10 * 1024 * 1024)
    data = b"abcde"
    items = [1, 2, 3]
    pair = (1, 2)
    table = {"a": 1, "b": 2}
    bag = {1, 2, 3, 4}
    loop = []
    loop.append(loop)
    widget = Widget()
    captured = "cell value"
    grid = numpy.zeros((3, 4)) if numpy else None
    row = numpy.arange(5, dtype=numpy.int32)[::2] if numpy else None
    point = numpy.array(1.5, dtype=numpy.float32) if numpy else None

    def inner():
        seen = captured
        with open(ready, "w") as f:
            f.write("ready")
        while True:
            time.sleep(60)

    inner()


threading.Thread(target=churner, name="churner", daemon=True).start()
known(sys.argv[1])
