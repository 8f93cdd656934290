# SPDX-License-Identifier: MIT
# The other user of test_outputs_race.sh: keeps swapping what a name in
# its own folder is, as fast as it can, until killed.
#   swap_names.py fifo DIR NAME TARGET: a FIFO (held open for reading and
#     drained, so a writer never waits) and a link to TARGET, in turn.
#   swap_names.py dir DIR NAME TARGET: a folder and a link to TARGET.
# The two are exchanged in one step (renameat2 RENAME_EXCHANGE), so NAME
# always is one of them. A file the writer renamed over either name is
# removed and the FIFO made again, so the race goes on.
import ctypes
import os
import stat
import sys

mode, folder, name, target = sys.argv[1:5]
at = os.path.join(folder, name).encode()
spare = os.path.join(folder, "." + name + ".spare").encode()
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
readers = []


def make(path):
    if mode == "fifo":
        os.mkfifo(path)
        readers.append(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    else:
        os.mkdir(path)


def restore():
    """A file the writer renamed over either name removed, and the FIFO
    or the link it replaced made again."""
    have = {}
    for path in (at, spare):
        try:
            m = os.lstat(path).st_mode
        except FileNotFoundError:
            m = 0
        if stat.S_ISREG(m):
            os.unlink(path)
            m = 0
        have[path] = m
    for path, other in ((at, spare), (spare, at)):
        if not have[path]:
            if stat.S_ISLNK(have[other]):
                make(path)
            else:
                os.symlink(target, path)
            have[path] = os.lstat(path).st_mode


def drain():
    while len(readers) > 4:
        os.close(readers.pop(0))
    for fd in readers:
        try:
            while os.read(fd, 65536):
                pass
        except BlockingIOError:
            pass


make(at)
os.symlink(target, spare)
n = 0
while True:
    if libc.renameat2(AT_FDCWD, spare, AT_FDCWD, at, RENAME_EXCHANGE) != 0:
        sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
    n += 1
    # Now and then only: the exchanges are what must be fast.
    if n % 256 == 0:
        if mode == "fifo":
            restore()
        drain()
