# Two functions of about 2/3 and 1/3 of the main thread's time, each
# measuring its own with the wall clock (and the thread's CPU clock): the
# truth a profile is checked against. The wall clock's, as a sampler of
# running and runnable threads counts a thread preempted in heavy() as in
# heavy(): on a quiet machine the two agree; on a busy one the CPU clock's
# shares were the wrong truth. argv: seconds of CPU time, truth file
# (line 1 "heavy_ns light_ns total_ns" of wall time, line 2 "cpu
# heavy_ns light_ns total_ns").
import sys
import time


def heavy(spent):
    w0, t0 = time.perf_counter_ns(), time.thread_time_ns()
    x = 0
    while time.thread_time_ns() - t0 < 20000000:  # LOOP_HEAVY
        x += 1  # LOOP_HEAVY
    spent[2] += time.thread_time_ns() - t0
    spent[0] += time.perf_counter_ns() - w0


def light(spent):
    w0, t0 = time.perf_counter_ns(), time.thread_time_ns()
    x = 0
    while time.thread_time_ns() - t0 < 10000000:
        x += 1
    spent[3] += time.thread_time_ns() - t0
    spent[1] += time.perf_counter_ns() - w0


class Trainer:
    def step(self, spent):
        heavy(spent)
        light(spent)


def main():
    seconds = float(sys.argv[1])
    spent = [0, 0, 0, 0]
    wall, start = time.perf_counter_ns(), time.thread_time_ns()
    trainer = Trainer()
    while time.thread_time_ns() - start < seconds * 1e9:
        trainer.step(spent)
    total, wall = time.thread_time_ns() - start, time.perf_counter_ns() - wall
    with open(sys.argv[2], "w") as f:
        f.write("%d %d %d\ncpu %d %d %d\n" % (spent[0], spent[1], wall, spent[2], spent[3], total))


main()
