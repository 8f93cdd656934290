# SPDX-License-Identifier: MIT
# The other user of test_outputs_race.sh: keeps swapping what a name in
# its own folder is, as fast as it can, until killed.
#   swap_names.py fifo DIR NAME TARGET: a FIFO (held open for reading and
#     drained, so a writer never waits) and a link to TARGET, in turn.
#   swap_names.py dir DIR NAME TARGET: a folder and a link to TARGET.
# The two are exchanged in one step (renameat2 RENAME_EXCHANGE), so NAME
# always is one of them.
import ctypes
import os
import sys

mode, folder, name, target = sys.argv[1:5]
at = os.path.join(folder, name).encode()
spare = os.path.join(folder, "." + name + ".spare").encode()
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2

reader = None
if mode == "fifo":
    os.mkfifo(at)
    reader = os.open(at, os.O_RDONLY | os.O_NONBLOCK)
else:
    os.mkdir(at)
os.symlink(target, spare)
while True:
    if libc.renameat2(AT_FDCWD, spare, AT_FDCWD, at, RENAME_EXCHANGE) != 0:
        sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
    if reader is not None:
        try:
            while os.read(reader, 65536):
                pass
        except BlockingIOError:
            pass
