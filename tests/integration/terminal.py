# Drives trainsample in a real terminal (a pty with an interactive bash) to
# check job control: Ctrl-Z stops trainsample and the command, leaving the
# command untraced; fg resumes both; Ctrl-C reaches the command once and
# trainsample writes its output. Prints TAP lines.
#
# Every step waits for what it expects (a prompt, a process, a state) for up
# to LIMIT seconds and then checks, so a slow machine only makes it slower.
# The processes are found through the shell's children, never by name alone:
# other test runs may have a trainsample of their own.
import os
import pty
import re
import select
import sys
import time

LIMIT = 10
PROMPT = "ts-terminal-test$ "
ts, target, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
pid, fd = pty.fork()
if pid == 0:
    os.environ["PS1"] = PROMPT
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])

out = ""  # all the terminal showed so far


def pump(seconds):
    """Adds what the terminal shows within seconds to out (it must be read:
    a full pty would block trainsample's progress line)."""
    global out
    ready, _, _ = select.select([fd], [], [], seconds)
    if ready:
        try:
            out += os.read(fd, 65536).decode(errors="replace")
            return True
        except OSError:
            time.sleep(seconds)  # the shell is gone
    return False


def read_until(pattern, since):
    """Reads the terminal until pattern shows after offset since, for up to
    LIMIT seconds; returns the match or None."""
    end = time.monotonic() + LIMIT
    while True:
        m = re.compile(pattern).search(out, since)
        if m or time.monotonic() > end:
            return m
        pump(0.05)


def wait_for(cond):
    """Polls cond() (reading the terminal meanwhile) until it holds, for up
    to LIMIT seconds; returns its last value."""
    end = time.monotonic() + LIMIT
    while not cond() and time.monotonic() < end:
        pump(0.02)
    return cond()


def state(p):
    try:
        with open(f"/proc/{p}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, TypeError):
        return "-"


def tracer(p):
    try:
        with open(f"/proc/{p}/status") as f:
            for line in f:
                if line.startswith("TracerPid:"):
                    return int(line.split()[1])
    except (OSError, TypeError):
        pass
    return -1


def child_named(parent, name):
    """The process called name whose parent is parent, or None."""
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    comm, rest = f.read().split(" (", 1)[1].rsplit(")", 1)
                if comm == name and int(rest.split()[1]) == parent:
                    return int(d)
            except (OSError, ValueError, IndexError):
                pass
    return None


def check(ok, name, why=""):
    print(f"ok - {name}" if ok else f"not ok - {name}: {why}", flush=True)


read_until(re.escape(PROMPT), 0)
os.write(fd, f"{ts} record -r 200 -o {tmp}/tty.folded -- {target}\n".encode())
# Started: the command said so (its handlers are set), under trainsample.
# (A step that found nothing leaves the next ones nothing to wait for.)
started = read_until(r"ready\r?\n", 0)
tsp = wait_for(lambda: child_named(pid, "trainsample")) if started else None
tgt = wait_for(lambda: child_named(tsp, "interrupted")) if tsp else None
if tgt:
    wait_for(lambda: tracer(tgt) == tsp)

os.write(fd, b"\x1a")  # Ctrl-Z
stopped = lambda: state(tsp) == "T" and state(tgt) == "T" and tracer(tgt) == 0
check(tgt and wait_for(stopped),
      "Ctrl-Z in a terminal stops trainsample and the command, which is left untraced",
      f"trainsample {tsp} {state(tsp)}, command {tgt} {state(tgt)}, tracer {tracer(tgt)}")

os.write(fd, b"fg\n")
running = lambda: state(tgt) in ("R", "S") and tracer(tgt) == tsp
check(tgt and wait_for(running),
      "fg: both run again and trainsample traces the command again",
      f"command {tgt} {state(tgt)}, tracer {tracer(tgt)} (trainsample {tsp})")

# Ctrl-Z came as soon as the command was traced: give the run some ticks
# after fg (the command computes throughout), so there are samples to write.
time.sleep(0.3)
while pump(0):
    pass
ctrl_c = len(out)
os.write(fd, b"\x03")  # Ctrl-C
read_until(re.escape(PROMPT), ctrl_c)  # the job is over
since = len(out)
os.write(fd, b"echo EXIT=$?\n")  # fg's status is the job's
read_until(r"EXIT=\d+", since)
folded = f"{tmp}/tty.folded"
check("sigint 1 sigterm 0" in out[ctrl_c:] and "EXIT=0" in out[ctrl_c:] and
      os.path.exists(folded) and os.path.getsize(folded) > 0,
      "Ctrl-C in a terminal: the command gets it once, trainsample writes its output and exits with its status",
      repr(out[-300:]))


# A command writing to the terminal: its lines start at column 0, never
# after a progress line (none is drawn while it writes there). (END-41 is
# what the shell prints, not what it echoes of the command line.) One whose
# output goes elsewhere gets the progress line, cleared before the summary.
since = len(out)
os.write(fd, (f"{ts} record -r 200 -o {tmp}/lines.folded -- sh -c "
              f"'for i in 1 2 3 4; do sleep 0.5; echo LINE$i; done'; echo END-$((40+1))\n").encode())
read_until(r"END-41\r?\n", since)
shown = out[since:]
lines = re.findall(r"(?:^|\n)([^\n]*)LINE\d", shown)
# (bash's own mode switches, such as bracketed paste's, are not text.)
lines = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", before).strip("\r") for before in lines]
check(len(lines) == 4 and not any(lines) and
      "samples |" not in shown,
      "a command writing to the terminal: its lines start at column 0, no progress line is drawn",
      repr(shown[-400:]))
since = len(out)
os.write(fd, (f"{ts} record -r 200 -o {tmp}/quiet.folded -- sh -c "
              f"'exec >/dev/null 2>&1; sleep 2.5'; echo END-$((40+2))\n").encode())
read_until(r"END-42\r?\n", since)
shown = out[since:]
check(re.search(r"samples \|.*\r\x1b\[Ktrainsample: wrote", shown, re.S) is not None,
      "a command whose output goes elsewhere: a progress line, cleared before the summary",
      repr(shown[-400:]))


def shell_exited():
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return True  # reaped at the previous call


os.write(fd, b"exit\n")
wait_for(shell_exited)
