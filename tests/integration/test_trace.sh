# Chrome/Perfetto trace: nested complete slices per thread in time order,
# named tracks; a timeline that follows the program's phases in order and
# duration; the slices' total time matches the samples; report writes what
# record wrote; -f trace.
. tests/integration/lib.sh
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)

# Four phases of 0.6 s: load, train, load, train.
$TS record -q -r 200 -o "$TMP/p.trace.json" -o "$TMP/p.tsprof" -o "$TMP/p.folded" -- \
	"$PY" tests/python/phases.py 0.6 >/dev/null
python3 tests/integration/trace_check.py "$TMP/p.trace.json" >"$TMP/check" 2>&1
check $? "trace: slices nest per track, in time order, every track named" \
	"$(tail -2 "$TMP/check")" "$(cat "$TMP/check")"

python3 - "$TMP/p.trace.json" >"$TMP/phases" 2>&1 <<'EOT'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
main = [e for e in ev if e["ph"] == "X" and e["tid"] == e["pid"]]
calls = [e for e in main if e["name"].split(" ")[0] in ("load", "train")]
calls.sort(key=lambda e: e["ts"])
seq = [e["name"].split(" ")[0] for e in calls]
durs = [round(e["dur"] / 1e6, 3) for e in calls]
print(seq, durs)
assert seq == ["load", "train", "load", "train"], seq
assert all(0.45 <= d <= 0.75 for d in durs), durs
assert all(e["cat"] == "python" and e["args"]["file"].endswith("phases.py") for e in calls)
EOT
check $? "trace: the main thread's slices are load, train, load, train, 0.6 s each" \
	"$(tail -2 "$TMP/phases")" "$(tail -1 "$TMP/phases")"

# Outermost slices cover as much time as the samples stand for (200 Hz).
python3 - "$TMP/p.trace.json" "$TMP/p.folded" >"$TMP/cover" 2>&1 <<'EOT'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
tracks = {}
for e in ev:
    if e["ph"] == "X":
        tracks.setdefault((e["pid"], e["tid"]), []).append(e)
covered = 0.0
for slices in tracks.values():
    end = -1
    for e in slices:
        if e["ts"] >= end - 1e-6:
            covered += e["dur"]
            end = e["ts"] + e["dur"]
samples = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]))
want = samples * 5000.0
print("covered %.0f us, samples say %.0f us" % (covered, want))
assert abs(covered - want) <= 0.05 * want, (covered, want)
EOT
check $? "trace: the outermost slices cover the samples' time" \
	"$(tail -2 "$TMP/cover")" "$(tail -1 "$TMP/cover")"

$TS report -q "$TMP/p.tsprof" -o "$TMP/r.trace.json"
cmp -s "$TMP/p.trace.json" "$TMP/r.trace.json"
check $? "trace: report writes what record wrote"

# Threads and filters: one track per named thread; --thread keeps one.
$TS record -q -r 200 -o "$TMP/t.tsprof" -- "$PY" tests/python/threads.py 1.5 >/dev/null
$TS report -q "$TMP/t.tsprof" -o "$TMP/t.trace.json"
$TS report -q "$TMP/t.tsprof" --thread loader -o "$TMP/l.trace.json"
python3 tests/integration/trace_check.py "$TMP/t.trace.json" >/dev/null 2>&1 &&
	python3 - "$TMP/t.trace.json" "$TMP/l.trace.json" >"$TMP/threads" 2>&1 <<'EOT'
import json, sys
def names(path):
    ev = json.load(open(path))["traceEvents"]
    n = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["name"] == "thread_name"}
    busy = {n[(e["pid"], e["tid"])] for e in ev if e["ph"] == "X"}
    fns = {e["name"].split(" ")[0] for e in ev if e["ph"] == "X"}
    return busy, fns
busy, fns = names(sys.argv[1])
assert {"loader", "trainer"} <= busy, busy
assert {"spin_loader", "spin_trainer"} <= fns, fns
busy, fns = names(sys.argv[2])
assert busy == {"loader"}, busy
assert "spin_trainer" not in fns, fns
print(sorted(busy))
EOT
check $? "trace: a track per named thread; --thread keeps one" "$(tail -2 "$TMP/threads")"

# A native target.
$TS record -q -r 500 -o "$TMP/c.trace.json" -- "$T/cpu_shares" 1 >/dev/null
python3 tests/integration/trace_check.py "$TMP/c.trace.json" >"$TMP/c" 2>&1 &&
	grep -q '"name":"hot_a","cat":"native"' "$TMP/c.trace.json"
check $? "trace: a native target's timeline" "$(tail -2 "$TMP/c")" "$(cat "$TMP/c")"

# -f names the format when the file's name does not.
$TS report -q "$TMP/p.tsprof" -f trace -o "$TMP/x.json"
python3 tests/integration/trace_check.py "$TMP/x.json" >/dev/null 2>&1
check $? "trace: -f trace names the format"
