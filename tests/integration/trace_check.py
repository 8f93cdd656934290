# Checks a Chrome/Perfetto trace as Perfetto's JSON importer reads it:
# every event has its fields; per track (pid, tid) complete slices, sorted by
# start as viewers sort them (stably: equal starts keep file order), nest strictly (a slice ends inside its parent, siblings do not
# overlap); every track and process is named; names are not empty; every
# flow ("s" to "f") has both ends, each inside a slice of its track.
# argv: trace.json; prints a summary line, exits 1 with the reason.
import json
import sys
from collections import defaultdict

d = json.load(open(sys.argv[1]))
assert d.get("displayTimeUnit") in ("ms", "ns"), d.get("displayTimeUnit")
assert isinstance(d.get("otherData"), dict)
events = d["traceEvents"]
names = {}
tracks = defaultdict(list)
flows = defaultdict(dict)
for e in events:
    assert e["ph"] in ("X", "M", "s", "f", "C"), e
    assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
    assert isinstance(e["name"], str) and e["name"], e
    if e["ph"] == "M":
        assert e["name"] in ("process_name", "thread_name"), e
        assert isinstance(e["args"]["name"], str) and e["args"]["name"], e
        key = (e["pid"], e["tid"]) if e["name"] == "thread_name" else e["pid"]
        assert key not in names, ("named twice", key)
        names[key] = e["args"]["name"]
        continue
    assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
    if e["ph"] == "C":
        assert e["pid"] in names, ("a counter of a process without a name", e)
        assert all(isinstance(v, (int, float)) for v in e["args"].values()), e
        continue
    if e["ph"] in ("s", "f"):
        assert e["ph"] not in flows[e["id"]], ("flow end twice", e)
        flows[e["id"]][e["ph"]] = e
        continue
    # Zero only for GPU synchronizations that waited for nothing.
    assert isinstance(e["dur"], (int, float)) and (e["dur"] > 0 or e.get("cat") == "sync"), e
    tracks[(e["pid"], e["tid"])].append(e)

EPS = 1e-6
for key, slices in tracks.items():
    assert key in names, ("thread without a name", key)
    assert key[0] in names, ("process without a name", key[0])
    open_ = []  # the enclosing slices' ends
    for e in sorted(slices, key=lambda e: e["ts"]):
        end = e["ts"] + e["dur"]
        while open_ and open_[-1] <= e["ts"] + EPS:
            open_.pop()
        if open_:
            assert end <= open_[-1] + EPS, ("overlaps its parent", key, e)
        open_.append(end)
def inside(e):
    return any(x["ts"] - EPS <= e["ts"] <= x["ts"] + x["dur"] + EPS
               for x in tracks.get((e["pid"], e["tid"]), []))


for fid, ends in flows.items():
    assert set(ends) == {"s", "f"}, ("flow without both ends", fid, ends)
    assert inside(ends["s"]) and inside(ends["f"]), ("flow end outside a slice", ends)
print("%d tracks, %d slices, %d flows" % (len(tracks), sum(len(s) for s in tracks.values()),
                                          len(flows)))
