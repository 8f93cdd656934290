# Reads the GPU agent's own record file (cuda/gpu_record.h), as written
# when a CUDA program runs with CUDA_INJECTION64_PATH and TRAINSAMPLE_GPU_DIR
# set and no trainsample reading it: what a real CUPTI handed the agent.
#   gpu_records.py summary FILE.gpu   counts, devices, statuses, which of a
#                                     launch's correlation ids its work carries
#   gpu_records.py marks FILE.gpu MARKS
#                                     every kernel lies between the CLOCK_MONOTONIC
#                                     marks taken around its launch (tests/cuda/marks.cu)
# Prints what it found; exits 1 with the reason when a check fails.
import collections
import struct
import sys

REC = 128
TYPES = {1: "string", 2: "stack", 3: "launch", 4: "kernel", 5: "memcpy", 6: "memset",
         7: "sync", 8: "device", 9: "status", 10: "dropped", 11: "stream"}
MEMORY = {0: "unknown", 1: "pageable", 2: "pinned", 3: "device", 4: "array", 5: "managed",
          6: "device static", 7: "managed static"}
STREAM_FLAG = {0: "unknown", 1: "default", 2: "non-blocking", 3: "NULL"}
COPY = {0: "unknown", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD",
        7: "DtoA", 8: "DtoD", 9: "HtoH", 10: "PtoP"}
STATUS = {1: "started", 2: "no cupti", 3: "taken", 4: "failed", 5: "stopped"}


def read(path):
    data = open(path, "rb").read()
    assert data[:8] == b"TSGPUREC", "not an agent file: %r" % data[:8]
    version, size, pid = struct.unpack_from("<III", data, 8)
    assert size == REC, size
    pieces = collections.defaultdict(dict)
    out = collections.defaultdict(list)
    for off in range(REC, len(data) - REC + 1, REC):
        typ = struct.unpack_from("<I", data, off)[0]
        b = off + 8
        name = TYPES.get(typ, "type%d" % typ)
        if name == "string":
            sid, total, o, n = struct.unpack_from("<IIIH", data, b)
            pieces[sid][o] = (total, data[b + 16:b + 16 + n])
        elif name == "stack":
            out[name].append(dict(zip(("id", "parent", "name", "file", "line"),
                                      struct.unpack_from("<5I", data, b))))
        elif name == "launch":
            v = struct.unpack_from("<QQIIIII4II", data, b)
            out[name].append(dict(start=v[0], end=v[1], tid=v[2], stack=v[3], api=v[4],
                                  thread_name=v[5], ids=list(v[7:7 + min(v[6], 4)]),
                                  nids=v[6], graph=v[11]))
        elif name in ("kernel", "memcpy", "memset", "sync"):
            v = struct.unpack_from("<QQIIIIIIQ3i3iIBBB", data, b)
            out[name].append(dict(start=v[0], end=v[1], device=v[2], context=v[3], stream=v[4],
                                  correlation=v[5], name=v[6], kind=v[7], bytes=v[8],
                                  grid=v[9:12], block=v[12:15], shared=v[15],
                                  src=v[16], dst=v[17], flags=v[18]))
        elif name == "stream":
            v = struct.unpack_from("<3I", data, b)
            out[name].append(dict(context=v[0], stream=v[1], flag=v[2]))
        elif name == "device":
            v = struct.unpack_from("<5I4xQ16s", data, b)
            out[name].append(dict(id=v[0], name=v[1], cc="%d.%d" % (v[2], v[3]), sms=v[4],
                                  memory=v[5], uuid=v[6].hex()))
        elif name == "status":
            out[name].append(struct.unpack_from("<II", data, b))
        elif name == "dropped":
            out[name].append(struct.unpack_from("<Q", data, b)[0])
        else:
            out["unknown"].append(typ)
    strings = {}
    for sid, ps in pieces.items():
        strings[sid] = b"".join(p for _, (_, p) in sorted(ps.items())).decode(errors="replace")
    return pid, strings, out


def summary(path):
    pid, s, r = read(path)
    print("%s: pid %d; %s" % (path, pid, ", ".join("%d %s" % (len(v), k) for k, v in sorted(r.items()))))
    for st, text in r["status"]:
        print("  status %s: %s" % (STATUS.get(st, st), s.get(text, "")))
    for d in r["device"]:
        print("  device %d: %s, cc %s, %d SMs, %.1f GiB, uuid %s" % (
            d["id"], s.get(d["name"], "?"), d["cc"], d["sms"], d["memory"] / 2**30, d["uuid"]))
    apis = collections.Counter(s.get(l["api"], "?") for l in r["launch"])
    print("  launch APIs: %s" % dict(apis.most_common(8)))
    print("  ids per launch: %s" % dict(collections.Counter(l["nids"] for l in r["launch"])))
    where = {}
    for l in r["launch"]:
        for i, c in enumerate(l["ids"]):
            where.setdefault(c, []).append((i, l))
    for kind in ("kernel", "memcpy", "memset", "sync"):
        acts = r[kind]
        if not acts:
            continue
        pos = collections.Counter()
        unmatched = 0
        for a in acts:
            w = where.get(a["correlation"])
            if w:
                pos["id #%d of %s" % (w[0][0], s.get(w[0][1]["api"], "?"))] += 1
            else:
                unmatched += 1
        extra = ""
        if kind == "memcpy":
            extra = ", kinds %s, %d bytes, memory %s, async %d, streams %s" % (
                dict(collections.Counter(COPY.get(a["kind"], a["kind"]) for a in acts)),
                sum(a["bytes"] for a in acts),
                dict(collections.Counter("%s to %s" % (MEMORY.get(a["src"], a["src"]), MEMORY.get(a["dst"], a["dst"]))
                                         for a in acts)),
                sum(1 for a in acts if a["flags"] & 1),
                dict(collections.Counter(a["stream"] for a in acts)))
        if kind == "kernel":
            extra = ", names %s" % dict(collections.Counter(s.get(a["name"], "?")[:40] for a in acts).most_common(4))
        bad = sum(1 for a in acts if a["end"] < a["start"] or a["start"] == 0)
        print("  %d %s: correlation ids %d..%d, %s, %d with no launch%s%s" % (
            len(acts), kind, min(a["correlation"] for a in acts), max(a["correlation"] for a in acts),
            dict(pos), unmatched, ", %d with bad times" % bad if bad else "", extra))
    for st in r["stream"]:
        print("  stream %d of context %d: %s" % (st["stream"], st["context"], STREAM_FLAG.get(st["flag"], st["flag"])))
    streams = collections.Counter((a["context"], a["stream"]) for k in ("kernel", "memcpy", "memset") for a in r[k])
    if streams:
        print("  work by (context, stream): %s" % dict(streams.most_common(8)))
    if r["dropped"]:
        print("  dropped: %d" % sum(r["dropped"]))
    return s, r


def marks(path, marks_path):
    s, r = summary(path)
    ms = [tuple(map(int, l.split()[1:3])) for l in open(marks_path) if l.startswith("mark ")]
    ks = sorted((a for a in r["kernel"] if "marked" in s.get(a["name"], "")), key=lambda a: a["start"])
    ls = sorted((l for l in r["launch"] if "Launch" in s.get(l["api"], "")), key=lambda l: l["start"])
    assert len(ks) == len(ms), "%d kernels for %d marks" % (len(ks), len(ms))
    lead, tail, bad = [], [], []
    for i, ((before, after), k) in enumerate(zip(ms, ks)):
        lead.append(k["start"] - before)
        tail.append(after - k["end"])
        if not (before <= k["start"] <= k["end"] <= after):
            bad.append((i, before, k["start"], k["end"], after))
    launch_bad = [i for i, ((b, a), l) in enumerate(zip(ms, ls[-len(ms):])) if not b <= l["start"] <= l["end"] <= a]
    lead.sort()
    tail.sort()
    print("  %d rounds: kernel start after its mark by %.1f / %.1f / %.1f us (min/median/max); "
          "mark after kernel end by %.1f / %.1f us (min/median)" % (
              len(ms), lead[0] / 1e3, lead[len(lead) // 2] / 1e3, lead[-1] / 1e3, tail[0] / 1e3,
              tail[len(tail) // 2] / 1e3))
    assert not bad, "kernels outside their marks: %s" % bad[:3]
    assert not launch_bad, "launch calls outside their marks: rounds %s" % launch_bad[:5]


if __name__ == "__main__":
    if sys.argv[1] == "summary":
        summary(sys.argv[2])
    elif sys.argv[1] == "marks":
        marks(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: gpu_records.py summary FILE | marks FILE MARKS")
