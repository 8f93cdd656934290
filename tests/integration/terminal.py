# Drives trainsample in a real terminal (a pty with an interactive bash) to
# check job control: Ctrl-Z stops trainsample and the command, leaving the
# command untraced; fg resumes both; Ctrl-C reaches the command once and
# trainsample writes its output. Prints TAP lines.
import os
import pty
import select
import sys
import time

ts, target, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])


def read_for(seconds):
    out, end = b"", time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    return out.decode(errors="replace")


def state(p):
    try:
        with open(f"/proc/{p}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "-"


def tracer(p):
    with open(f"/proc/{p}/status") as f:
        for line in f:
            if line.startswith("TracerPid:"):
                return int(line.split()[1])
    return -1


def pid_of(name):
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/comm") as f:
                    if f.read().strip() == name:
                        return int(d)
            except OSError:
                pass
    return None


def check(ok, name, why=""):
    print(f"ok - {name}" if ok else f"not ok - {name}: {why}")


read_for(1.0)
os.write(fd, f"{ts} record -r 200 -o {tmp}/tty.folded -- {target}\n".encode())
time.sleep(1.0)
tsp, tgt = pid_of("trainsample"), pid_of("interrupted")
os.write(fd, b"\x1a")  # Ctrl-Z
out = read_for(1.0)
check(tsp and tgt and state(tsp) == "T" and state(tgt) == "T" and tracer(tgt) == 0,
      "Ctrl-Z in a terminal stops trainsample and the command, which is left untraced",
      f"trainsample {state(tsp)}, command {state(tgt)}, tracer {tracer(tgt) if tgt else '?'}")
os.write(fd, b"fg\n")
time.sleep(1.0)
check(tgt and state(tgt) in ("R", "S") and tracer(tgt) == tsp,
      "fg: both run again and trainsample traces the command again",
      f"command {state(tgt)}, tracer {tracer(tgt) if tgt else '?'}")
os.write(fd, b"\x03")  # Ctrl-C
out = read_for(2.0)
os.write(fd, b"echo EXIT=$?\n")  # fg's status is the job's
out += read_for(1.0)
check("sigint 1 sigterm 0" in out and "EXIT=0" in out and os.path.getsize(f"{tmp}/tty.folded") > 0,
      "Ctrl-C in a terminal: the command gets it once, trainsample writes its output and exits with its status",
      repr(out[-300:]))
os.write(fd, b"exit\n")
read_for(0.5)
