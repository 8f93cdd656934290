# Reads a FIFO slowly: opens it after OPEN_AFTER seconds, shrinks the pipe
# to one page (so a writer fills it at once), reads nothing for READ_AFTER
# seconds more, then drains it. A file system that makes its writer wait,
# without a fake: the writer blocks in open() and in write() as on a slow
# mount. Prints the bytes read to stderr.
import fcntl
import os
import sys
import time

F_SETPIPE_SZ = 1031
path, open_after, read_after = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
time.sleep(open_after)
fd = os.open(path, os.O_RDONLY)
try:
    fcntl.fcntl(fd, F_SETPIPE_SZ, 4096)
except OSError:
    pass
time.sleep(read_after)
n = 0
while True:
    b = os.read(fd, 65536)
    if not b:
        break
    n += len(b)
print("read %d bytes" % n, file=sys.stderr)
