# Checks a Chrome/Perfetto trace as Perfetto's JSON importer reads it:
# every event has its fields; per track (pid, tid) complete slices start in
# order and nest strictly (a slice ends inside its parent, siblings do not
# overlap); every track and process is named; names are not empty.
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
for e in events:
    assert e["ph"] in ("X", "M"), e
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
    assert isinstance(e["dur"], (int, float)) and e["dur"] > 0, e
    tracks[(e["pid"], e["tid"])].append(e)

EPS = 1e-6
for key, slices in tracks.items():
    assert key in names, ("thread without a name", key)
    assert key[0] in names, ("process without a name", key[0])
    open_ = []  # the enclosing slices' ends
    last_ts = -1
    for e in slices:
        assert e["ts"] >= last_ts, ("not in time order", key, e)
        last_ts = e["ts"]
        end = e["ts"] + e["dur"]
        while open_ and open_[-1] <= e["ts"] + EPS:
            open_.pop()
        if open_:
            assert end <= open_[-1] + EPS, ("overlaps its parent", key, e)
        open_.append(end)
print("%d tracks, %d slices" % (len(tracks), sum(len(s) for s in tracks.values())))
