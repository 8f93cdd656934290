# SPDX-License-Identifier: MIT
"""Writes .tsprof recordings by hand (the layout of formats/tsprof_layout.h),
well-formed but of shapes a recorder seldom makes:

  craft_tsprof.py many FUNCS THREADS OUT
      one process whose every sample is in a function of its own (FUNCS
      distinct Python functions, as code that makes a new function per
      call), spread over THREADS short threads
  craft_tsprof.py strings COUNT SIZE OUT
      COUNT unique strings of SIZE bytes each, all alike but for their
      start, so the file is small and the strings are not
"""
import struct
import sys
import zlib

MAGIC = b"\x89TSPROF\n"
REC_STRING, REC_FRAME, REC_STACK, REC_THREAD, REC_META, REC_SAMPLE = 1, 2, 3, 4, 5, 6
FRAME_PYTHON = 1
FLUSH = 256 << 10


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(v):
    return (v << 1) ^ (v >> 63) if v < 0 else v << 1


class Writer:
    def __init__(self, path):
        self.f = open(path, "wb")
        self.f.write(MAGIC + struct.pack("<II", 1, 0))
        self.buf = bytearray()
        self.strings = 1  # the empty string is 0
        self.frames = 0
        self.stacks = 1  # the root stack is 0

    def record(self, tag, *fields, texts=()):
        self.buf += varint(tag)
        for v in fields:
            self.buf += varint(v)
        for t in texts:
            self.buf += varint(len(t)) + t
        if len(self.buf) >= FLUSH:
            self.flush()

    def flush(self):
        if not self.buf:
            return
        raw = bytes(self.buf)
        stored = zlib.compress(raw, 6)
        self.chunk(1, 1, stored, len(raw))
        self.buf = bytearray()

    def chunk(self, kind, flags, payload, raw_len):
        head = struct.pack("<BBHII", kind, flags, 0, len(payload), raw_len)
        self.f.write(head + payload + struct.pack("<I", zlib.crc32(head + payload) & 0xFFFFFFFF))

    def string(self, text):
        self.record(REC_STRING, self.strings, texts=(text,))
        self.strings += 1
        return self.strings - 1

    def frame(self, name, module, line):
        self.record(REC_FRAME, self.frames, FRAME_PYTHON, name, module, line)
        self.frames += 1
        return self.frames - 1

    def stack(self, parent, frame):
        self.record(REC_STACK, self.stacks, parent, frame)
        self.stacks += 1
        return self.stacks - 1

    def meta(self, key, value):
        self.record(REC_META, texts=(key.encode(), value.encode()))

    def close(self):
        self.flush()
        self.chunk(2, 0, b"", 0)
        self.f.close()


def many(funcs, threads, path):
    w = Writer(path)
    w.meta("period_ns", "1000000")
    w.meta("command", "python3 many_functions.py")
    script = w.string(b"/src/many_functions.py")
    top = w.stack(0, w.frame(w.string(b"<module>"), script, 1))
    run = w.stack(top, w.frame(w.string(b"run"), script, 9))
    where = w.string(b"<string>")
    pid, prev, t = 1000, 0, 1000000000
    per = max(1, funcs // threads)
    for i in range(funcs):
        tid = pid + 1 + i // per
        if i % per == 0:
            w.record(REC_THREAD, pid, tid, w.string(b"Thread-%d" % tid))
        f = w.frame(w.string(b"f_%d" % i), where, 1)
        s = w.stack(run, f)
        t += 1000000
        w.record(REC_SAMPLE, zigzag(t - prev), pid, tid, s, 1000000, 0)
        prev = t
    w.close()


def strings(count, size, path):
    w = Writer(path)
    w.meta("period_ns", "1000000")
    body = b"x" * size
    for i in range(count):
        text = (b"%08d" % i) + body[8:]
        w.string(text)
    w.close()


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("many", "strings"):
        sys.stderr.write(__doc__)
        return 2
    a, b = int(sys.argv[2]), int(sys.argv[3])
    (many if sys.argv[1] == "many" else strings)(a, b, sys.argv[4])
    return 0


if __name__ == "__main__":
    sys.exit(main())
