# Two functions of about 2/3 and 1/3 of the main thread's CPU time, each
# measuring its own share with the thread's CPU clock: the truth a profile
# is checked against. argv: seconds, truth file ("heavy_ns light_ns total_ns").
import sys
import time


def heavy(spent):
    t0 = time.thread_time_ns()
    x = 0
    while time.thread_time_ns() - t0 < 20000000:  # LOOP_HEAVY
        x += 1  # LOOP_HEAVY
    spent[0] += time.thread_time_ns() - t0


def light(spent):
    t0 = time.thread_time_ns()
    x = 0
    while time.thread_time_ns() - t0 < 10000000:
        x += 1
    spent[1] += time.thread_time_ns() - t0


class Trainer:
    def step(self, spent):
        heavy(spent)
        light(spent)


def main():
    seconds = float(sys.argv[1])
    spent = [0, 0]
    start = time.thread_time_ns()
    trainer = Trainer()
    while time.thread_time_ns() - start < seconds * 1e9:
        trainer.step(spent)
    total = time.thread_time_ns() - start
    with open(sys.argv[2], "w") as f:
        f.write("%d %d %d\n" % (spent[0], spent[1], total))


main()
