# Drives trainsample top in a pseudo-terminal against a running Python
# process (tests/python/threads.py): the screen shows its running
# functions and threads, a key changes the sort, q quits, the terminal is
# given back (the alternate screen left, the cursor shown) and the target
# runs on, untraced. Prints TAP lines.
# Then top -- CMD: the command's functions on the screen, and its exit
# status once it ends.
#   top.py TRAINSAMPLE PID PYTHON
import os
import pty
import re
import select
import signal
import sys
import time

LIMIT = 15
ts, target, python = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pid, fd = pty.fork()
if pid == 0:
    os.environ["COLUMNS"] = "160"
    os.execv(ts, [ts, "top", str(target)])

out = ""


def pump(seconds):
    global out
    ready, _, _ = select.select([fd], [], [], seconds)
    if ready:
        try:
            out += os.read(fd, 65536).decode(errors="replace")
        except OSError:
            time.sleep(seconds)


def read_until(pattern, since=0):
    end = time.monotonic() + LIMIT
    while time.monotonic() < end:
        m = re.compile(pattern).search(out, since)
        if m:
            return m
        pump(0.05)
    return None


def field(pid, name):
    try:
        for line in open("/proc/%d/status" % pid):
            if line.startswith(name + ":"):
                return line.split()[1]
    except OSError:
        return None
    return None


def wait_exit(child):
    """Its wait status once it exits (the terminal read meanwhile), for up
    to LIMIT seconds; None, and it is killed, if it does not."""
    end = time.monotonic() + LIMIT
    while time.monotonic() < end:
        pump(0.05)
        done, st = os.waitpid(child, os.WNOHANG)
        if done:
            return st
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    return None


def tap(ok, what, detail=""):
    print("%s - %s%s" % ("ok" if ok else "not ok", what, "" if ok else ": " + detail[-600:]))


m = read_until(r"spin_(loader|trainer) \(threads\.py:\d+\)")
tap(m is not None and "\x1b[?1049h" in out,
    "top: the screen shows the running functions by line", repr(out))
tap(re.search(r"\n  thread \d+ \((loader|trainer)\) +busy +\d+%", out) is not None,
    "top: each thread with its busy, idle and GIL shares", repr(out[-1500:]))
mark = len(out)
os.write(fd, b"2")
m2 = read_until(r"\x1b\[7m *%Total", mark)
tap(m2 is not None, "top: key 2 sorts by %Total", repr(out[mark:][-800:]))
os.write(fd, b"q")
status = wait_exit(pid)
pump(0.1)
state = field(target, "State")
tracer = field(target, "TracerPid")
tap(status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and
    out.rfind("\x1b[?1049l") > out.rfind("\x1b[?1049h") and "\x1b[?25h" in out,
    "top: q quits at once, exit 0, the terminal given back", "status %r; %r" % (status, out[-300:]))
tap(state is not None and not state.startswith("t") and tracer == "0",
    "top: the target runs on, untraced", "state %s, tracer %s" % (state, tracer))

# top -- CMD: a command that spins 2.5 s in a function of its own, then
# exits 3.
out = ""
pid, fd = pty.fork()
if pid == 0:
    os.execv(ts, [ts, "top", "--", python, "-c", "import time\n"
                  "def busy_here():\n"
                  "    end = time.time() + 2.5\n"
                  "    while time.time() < end:\n"
                  "        pass\n"
                  "busy_here()\n"
                  "raise SystemExit(3)\n"])
m = read_until(r"busy_here \(<string>:\d+\)")
status = wait_exit(pid)
tap(m is not None and status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3,
    "top -- CMD: the command's function on the screen, its exit status kept",
    "status %r; %r" % (status, out[-600:]))

# top -s -- CMD with a child process: each process's line, its threads
# right under it (not mixed with the other's).
out = ""
pid, fd = pty.fork()
if pid == 0:
    os.environ["COLUMNS"] = "160"
    os.execv(ts, [ts, "top", "-s", "--", python, "tests/python/spinners.py", "2", "3"])
plain = ""
end = time.monotonic() + LIMIT
while time.monotonic() < end:
    pump(0.1)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out)
    if len(set(re.findall(r"PID (\d+) [^\n]*\n  thread \1 \(", plain))) >= 2:
        break
status = wait_exit(pid)
pairs = set(re.findall(r"PID (\d+) [^\n]*\n  thread \1 \(", plain))
tap(len(pairs) >= 2 and status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
    "top -s -- CMD: each of two processes on a line of its own with its thread under it",
    "pairs %r, status %r; %r" % (pairs, status, plain[-1200:]))
