# speedscope: one profile per thread named PID/NAME (TID), equal-length
# samples and positive weights, frames with file and line, the busiest
# thread active (here also the loop's); samples in time order and the
# training loop's thread active under a launcher; report writes what record wrote; and the files validate
# against speedscope's published schema (ajv and the speedscope package
# from npm, installed here into build/npm).
. tests/integration/lib.sh
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)

$TS record -q -r 500 -o "$TMP/t.speedscope.json" -o "$TMP/t.tsprof" -- "$PY" examples/train.py 1.5 >/dev/null
$TS record -q -r 500 -o "$TMP/c.speedscope.json" -- build/tests/nofp/cxx_leaf >/dev/null
python3 - "$TMP/t.speedscope.json" >"$TMP/check" 2>&1 <<'EOT'
import json, re, sys
d = json.load(open(sys.argv[1]))
frames = d["shared"]["frames"]
names = [p["name"] for p in d["profiles"]]
assert any(re.fullmatch(r"\d+/MainThread \(\d+\)", n) for n in names), names
assert any(re.fullmatch(r"\d+/loader \(\d+\)", n) for n in names), names
totals = []
for p in d["profiles"]:
    assert p["type"] == "sampled" and p["unit"] == "seconds", p["name"]
    assert len(p["samples"]) == len(p["weights"]) > 0, p["name"]
    assert all(w > 0 for w in p["weights"]), p["name"]
    assert all(0 <= i < len(frames) for s in p["samples"] for i in s), p["name"]
    assert abs(sum(p["weights"]) - p["endValue"]) < 1e-6 * len(p["weights"]) + 1e-6, p["name"]
    totals.append(sum(p["weights"]))
assert d["activeProfileIndex"] == totals.index(max(totals)), (d["activeProfileIndex"], totals)
fwd = [f for f in frames if f["name"] == "forward"]
assert fwd and all(f["file"] == "train.py" and f["line"] > 0 for f in fwd), fwd
EOT
check $? "speedscope: a profile per named thread, samples and weights agree, frames with file and line" \
	"$(tail -3 "$TMP/check")"

$TS report -q "$TMP/t.tsprof" -o "$TMP/r.speedscope.json"
cmp -s "$TMP/t.speedscope.json" "$TMP/r.speedscope.json"
check $? "speedscope: report writes what record wrote"

# A launcher waiting for a child that runs the loop (as torchrun waits for
# its ranks; tests/python/helpers_loop.py --launch): speedscope opens on the
# loop's thread, not on the launcher's wait (the longest), and its samples
# are in time order, so the time-order view shows each step's backward
# once per step (until issue 29 part 4: its distinct stacks, a handful).
cat >"$TMP/hl.rules" <<'EOR'
data       load_batch
forward    model_forward
backward   model_backward
EOR
$TS record -q -r 500 --phases "$TMP/hl.rules" -o "$TMP/hl.speedscope.json" -- \
	"$PY" tests/python/helpers_loop.py 1 --launch >"$TMP/hl.out"
python3 - "$TMP/hl.speedscope.json" $(cat "$TMP/hl.out") >"$TMP/hl.check" 2>&1 <<'EOT'
import json, sys
d = json.load(open(sys.argv[1]))
frames = d["shared"]["frames"]
steps = int(sys.argv[3])
active = d["profiles"][d["activeProfileIndex"]]
def runs(profile):
    n, prev = 0, False
    for s in profile["samples"]:
        cur = any(frames[i]["name"] == "model_backward" for i in s)
        n += cur and not prev
        prev = cur
    return n
print("%s: %d runs of backward, %d steps" % (active["name"], runs(active), steps))
assert "--launch" not in active["name"] and "MainThread" in active["name"], active["name"]
assert runs(active) >= steps * 0.6, (runs(active), steps)
EOT
check $? "speedscope: opens on the training loop's thread, not the launcher's; its samples in time order (a run of backward per step)" \
	"$(tail -3 "$TMP/hl.check")" "$(tail -1 "$TMP/hl.check")"

if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
	skip "speedscope: files validate against speedscope's schema" "no node/npm to install ajv and speedscope"
elif { [ -d build/npm/node_modules/ajv ] && [ -d build/npm/node_modules/speedscope ]; } ||
     npm install --silent --no-audit --no-fund --prefix build/npm ajv@8 speedscope@1 >"$TMP/npm.log" 2>&1; then
	NODE_PATH=build/npm/node_modules node tests/browser/speedscope_schema.js "$TMP/t.speedscope.json" "$TMP/c.speedscope.json"
else
	skip "speedscope: files validate against speedscope's schema" "npm could not install ajv and speedscope: $(tail -1 "$TMP/npm.log")"
fi
