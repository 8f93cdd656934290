# Stack shapes: a recursion exactly 500 Python frames deep, a generator,
# an async coroutine, and a function with a non-ASCII name.
# argv: seconds per shape.
import asyncio
import sys
import time

seconds = float(sys.argv[1])


def spin(until):
    x = 0
    while time.time() < until:
        x += 1


def recurse(depth, until):
    if depth == 1:
        spin(until)
        return
    recurse(depth - 1, until)


def numbers(until):
    while time.time() < until:
        spin(time.time() + 0.01)
        yield 1


async def coroutine_work(until):
    while time.time() < until:
        spin(time.time() + 0.01)
        await asyncio.sleep(0)


def función_ünïcode(until):
    spin(until)


recurse(500, time.time() + seconds)
sum(numbers(time.time() + seconds))
asyncio.run(coroutine_work(time.time() + seconds))
función_ünïcode(time.time() + seconds)
