#!/bin/sh
# A distributed job's ranks side by side and the straggler named
# (analysis/summary_ranks.c): DDP jobs on gloo (tests/python/ddp_train.py,
# a script as people write it for torchrun), started as torchrun starts
# them (tests/python/launch_ranks.py: a process a rank, RANK in its
# environment), each rank clocking its own data, compute and waits. One
# rank slowed in its data (2 ranks, one recording) or its compute (4
# ranks, a recording each, merged by report); a balanced job.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

if ! torch_python; then
	for t in "a data-slowed rank named" "the waiting rank's comm against its clock" \
		"a compute-slowed rank of four named, per-rank recordings merged" "a balanced job: no straggler" \
		"a hung job recorded: the stuck rank named" "a hung job attached: the stuck rank named" \
		"another machine's clock measured by the collectives" "ranks started by torch.multiprocessing.spawn" "spawned ranks' DataLoader workers labelled" \
		"a rank that dies named first"; do
		skip "ranks: $t" "$torch_why"
	done
	exit 0
fi
label=$torch_label
job() { timeout 120 "$@" $torch_py tests/python/launch_ranks.py; }

# The ranks' own lines, "rank R pid P steps N step_ms S data_ms D
# compute_ms C comm_ms W", against summary.json's ranks: "R PID COMM CLOCK
# STEP" a line, the comm wait's share of the step by each.
against_clock() { # SUMMARY.json OUT
	/usr/bin/python3 - "$1" "$2" <<-'EOT'
	import json, re, sys
	ranks = {r["pid"]: r for r in json.load(open(sys.argv[1]))["ranks"]}
	for line in open(sys.argv[2]):
	    m = re.match(r"rank (\d+) pid (\d+) steps \d+ step_ms ([\d.]+) data_ms [\d.]+ compute_ms [\d.]+ comm_ms ([\d.]+)", line)
	    if m and int(m[2]) in ranks:
	        r = ranks[int(m[2])]
	        step = sum(r["phase_ms"].values())
	        print(m[1], m[2], "%.1f" % (100 * r["comm_wait_ms"] / step),
	              "%.1f" % (100 * float(m[4]) / float(m[3])), "%.1f" % step)
	EOT
}

# Two ranks, one recording of the whole job: rank 1 loads its data
# slowly, rank 0 waits for it in DDP's gradient allreduce; the loss is
# averaged over the ranks each step (an explicit all_reduce).
timeout 120 $TS record -r 500 -o "$TMP/d.summary.json" -o "$TMP/d.tsprof" -- $torch_py \
	tests/python/launch_ranks.py 2 tests/python/ddp_train.py 3 --slow-rank 1 --slow data --metrics \
	>"$TMP/d.out" 2>"$TMP/d.err"
rc=$?
$TS report "$TMP/d.tsprof" --ranks >"$TMP/d.ranks" 2>&1
$TS report "$TMP/d.tsprof" --findings >"$TMP/d.findings" 2>&1
grep -q '^trainsample:   rank 0 (PID [0-9]*): [0-9]* steps, p50 [0-9.]*, p90 [0-9.]*; data [0-9.]*, forward [0-9.]*, backward [0-9.]*,.* comm [0-9.]*' "$TMP/d.ranks" &&
	grep -q '^trainsample:   rank 1 (PID [0-9]*): ' "$TMP/d.ranks" &&
	grep -q '^trainsample:   \[[a-z]*\] straggler, PID [0-9]*: rank 1 holds the others back: its data takes [0-9.]*x theirs .* rank 0 waits [0-9.]* ms a step in comm for it$' "$TMP/d.findings"
check $? "$label, 2 ranks: report --ranks lists both, and a straggler finding names rank 1 and its data" \
	"exit $rc; $(cat "$TMP/d.ranks"); $(grep '^trainsample:   \[' "$TMP/d.findings"); $(tail -3 "$TMP/d.err")" \
	"$(grep -o 'rank 1 holds.*' "$TMP/d.findings" | cut -c1-90)"

against_clock "$TMP/d.summary.json" "$TMP/d.out" >"$TMP/d.shares" 2>&1
set -- $(grep '^0 ' "$TMP/d.shares")
[ $# -eq 5 ] && within "$3" "$4" 5 && [ "$(wc -l <"$TMP/d.shares")" -eq 2 ]
check $? "$label, 2 ranks: the waiting rank's comm share of its step within 5 points of its own clock" \
	"rank pid comm% clock% step_ms: $(cat "$TMP/d.shares"); $(cat "$TMP/d.out")" "${3:-?}% against ${4:-?}%"

# summary.json's ranks, by the schema.
/usr/bin/python3 - "$TMP/d.summary.json" docs/summary.schema.json >"$TMP/d.json" 2>&1 <<'EOT'
import json, sys, jsonschema
doc = json.load(open(sys.argv[1]))
jsonschema.validate(doc, json.load(open(sys.argv[2])))
ranks = doc["ranks"]
assert [r["rank"] for r in ranks] == [0, 1], ranks
assert all(r["steps"] > 5 and r["step_p50_ms"] > 0 and r["stopped_early_s"] is None for r in ranks), ranks
assert ranks[1]["phase_ms"]["data"] > 2 * ranks[0]["phase_ms"]["data"], ranks
straggler = [f for f in doc["findings"] if f["id"] == "straggler"]
assert len(straggler) == 1 and "rank 1 " in straggler[0]["title"], doc["findings"]
EOT
check $? "$label, 2 ranks: summary.json's ranks (valid), rank 1's data the larger, one straggler finding" \
	"$(tail -5 "$TMP/d.json")"

# Four ranks, each under its own trainsample (torchrun --no-python
# trainsample record -o prof-{host}-{rank}.tsprof -- python3 ...), rank 2's
# forward five times the others': merged by report.
timeout 120 $torch_py tests/python/launch_ranks.py --no-python 4 $TS record -q -r 500 \
	-o "$TMP/prof-{host}-{rank}.tsprof" -- $torch_py tests/python/ddp_train.py 3 --slow-rank 2 --slow compute \
	>"$TMP/c.out" 2>"$TMP/c.err"
rc=$?
n=$(ls "$TMP"/prof-*-[0-3].tsprof 2>/dev/null | wc -l)
$TS report -q "$TMP"/prof-*.tsprof --findings >"$TMP/c.findings" 2>&1
$TS report -q "$TMP"/prof-*.tsprof -o "$TMP/c.summary.json" 2>/dev/null
against_clock "$TMP/c.summary.json" "$TMP/c.out" >"$TMP/c.shares" 2>&1
bad=$(awk '{ d = $3 - $4; if (d < 0) d = -d; if (d > 5) print }' "$TMP/c.shares")
[ $rc -eq 0 ] && [ "$n" = 4 ] && [ "$(wc -l <"$TMP/c.shares")" -eq 4 ] && [ -z "$bad" ] &&
	grep -q '^trainsample:   \[[a-z]*\] straggler, PID [0-9]*: rank 2 holds the others back: its \(forward\|backward\) takes .* ranks 0, 1, 3 wait [0-9.]* ms a step in comm for it$' "$TMP/c.findings"
check $? "$label, 4 ranks recorded apart and merged: rank 2 named, its compute the cause; every rank's comm share within 5 points of its clock" \
	"exit $rc, $n recordings; rank pid comm% clock% step_ms: $(cat "$TMP/c.shares"); $(grep -A1 straggler "$TMP/c.findings"); $(tail -3 "$TMP/c.err")" \
	"$(awk '{ printf "%s%s %s%% (clock %s%%)", (NR > 1 ? ", " : ""), $1, $3, $4 }' "$TMP/c.shares")"

# Rank 1 "on another machine": a hostname of its own (a UTS namespace)
# and a wall clock 4 ms ahead (TRAINSAMPLE_TEST_CLOCK_SKEW_NS, as if its
# NTP were off): merged on the wall clocks, the collectives' ends measure
# the 4 ms; recordings of one machine have no such line.
cat >"$TMP/elsewhere.sh" <<'EOT'
#!/bin/sh
if [ "$RANK" = 1 ]; then
	exec unshare -u sh -c 'hostname nodeb && TRAINSAMPLE_TEST_CLOCK_SKEW_NS=4000000 exec "$@"' sh "$@"
fi
exec "$@"
EOT
chmod +x "$TMP/elsewhere.sh"
if ! unshare -u true 2>/dev/null; then
	skip "ranks: another machine's clock measured by the collectives" "unshare -u (a UTS namespace) is not allowed here"
else
	mkdir -p "$TMP/k"
	timeout 120 $torch_py tests/python/launch_ranks.py --no-python 2 "$TMP/elsewhere.sh" $TS record -q -r 500 \
		-o "$TMP/k/prof-{host}-{rank}.tsprof" -- $torch_py tests/python/ddp_train.py 3 --slow-rank 1 --slow data \
		>"$TMP/k.out" 2>"$TMP/k.err"
	rc=$?
	$TS report -q "$TMP"/k/prof-[!n]*-0.tsprof "$TMP/k/prof-nodeb-1.tsprof" --ranks >"$TMP/k.ranks" 2>&1
	$TS report -q "$TMP"/prof-*.tsprof --ranks >"$TMP/c.ranks" 2>&1
	set -- $(sed -n "s/^trainsample:   clocks: nodeb's put on rank 0's time line by the machines' wall clocks; by their collectives' ends its clock is \([0-9.]*\) ms ahead (+-\([0-9.]*\) ms, \([0-9]*\) waits matched)$/\1 \2 \3/p" "$TMP/k.ranks")
	[ $rc -eq 0 ] && [ $# -eq 3 ] && [ "$3" -ge 10 ] &&
		awk -v a="$1" -v u="$2" 'BEGIN { d = a - 4; if (d < 0) d = -d; exit !(d <= 2 * u) }' &&
		grep -q '^trainsample:   rank 1 (PID [0-9]* on nodeb)' "$TMP/k.ranks" && ! grep -q 'clocks:' "$TMP/c.ranks"
	check $? "$label, a rank on a machine whose clock is 4 ms ahead: measured by the collectives, within twice the uncertainty said; none said for one machine's" \
		"exit $rc; $(cat "$TMP/k.ranks"); $(grep clocks "$TMP/c.ranks"); $(tail -3 "$TMP/k.err")" "${1:-?} ms +- ${2:-?}, ${3:-?} waits matched"
fi

# Ranks started by torch.multiprocessing.spawn (no RANK in their
# environment; each told its rank by spawn's process index, read from
# spawn's _wrap frame): labelled, set side by side, the straggler named.
timeout 120 $TS record -q -r 500 -o "$TMP/s.summary.json" -- $torch_py tests/python/ddp_train.py 3 \
	--spawn 2 --slow-rank 1 --slow data >"$TMP/s.out" 2>"$TMP/s.err"
rc=$?
against_clock "$TMP/s.summary.json" "$TMP/s.out" >"$TMP/s.shares" 2>&1
/usr/bin/python3 - "$TMP/s.summary.json" "$TMP/s.out" >"$TMP/s.json" 2>&1 <<'EOT'
import json, re, sys
doc = json.load(open(sys.argv[1]))
pids = {int(m[2]): int(m[1]) for m in re.finditer(r"rank (\d+) pid (\d+)", open(sys.argv[2]).read())}
ranks = {r["pid"]: r["rank"] for r in doc["ranks"]}
assert pids and ranks == pids, (ranks, pids)
labels = {p["pid"]: p["label"] for p in doc["processes"]}
assert all(labels[p] == "rank %d" % r for p, r in pids.items()), labels
straggler = [f for f in doc["findings"] if f["id"] == "straggler"]
assert len(straggler) == 1 and straggler[0]["title"].startswith("rank 1 holds the others back: its data"), doc["findings"]
EOT
ok=$?
set -- $(grep '^0 ' "$TMP/s.shares")
[ $rc -eq 0 ] && [ $ok -eq 0 ] && [ $# -eq 5 ] && within "$3" "$4" 5
check $? "$label, ranks started by torch.multiprocessing.spawn: each rank its spawn index, the data-slowed rank 1 named, rank 0's comm within 5 points of its clock" \
	"exit $rc; $(tail -3 "$TMP/s.json"); rank pid comm% clock% step_ms: $(cat "$TMP/s.shares"); $(tail -3 "$TMP/s.err")" \
	"rank 0's comm ${3:-?}% against ${4:-?}%"

# The same, each rank loading its data in a DataLoader worker, which
# spawn's start method starts afresh (no RANK, no spawn frame of its
# own): labelled by its parent's rank.
timeout 120 $TS record -q -r 200 -o "$TMP/sw.summary.json" -- $torch_py tests/python/ddp_train.py 1 \
	--spawn 2 --workers 1 >"$TMP/sw.out" 2>"$TMP/sw.err"
rc=$?
/usr/bin/python3 - "$TMP/sw.summary.json" >"$TMP/sw.json" 2>&1 <<'EOT'
import json, sys
labels = sorted(p["label"] or "" for p in json.load(open(sys.argv[1]))["processes"])
print(labels)
assert [l for l in labels if l.startswith(("rank", "DataLoader"))] == \
    ["DataLoader worker 0 of rank 0", "DataLoader worker 0 of rank 1", "rank 0", "rank 1"], labels
EOT
check $? "$label, ranks started by torch.multiprocessing.spawn: each one's DataLoader worker (spawned, no RANK) labelled with its rank" \
	"exit $rc; $(tail -3 "$TMP/sw.json"); $(tail -3 "$TMP/sw.err")" "$(head -c 200 "$TMP/sw.json")"

# Balanced: the same job, no rank slowed.
timeout 120 $TS record -q -r 500 -o "$TMP/b.summary.json" -- $torch_py \
	tests/python/launch_ranks.py 2 tests/python/ddp_train.py 3 >"$TMP/b.out" 2>"$TMP/b.err"
rc=$?
/usr/bin/python3 - "$TMP/b.summary.json" >"$TMP/b.json" 2>&1 <<'EOT'
import json, sys
doc = json.load(open(sys.argv[1]))
assert len(doc["ranks"]) == 2, doc["ranks"]
print(" ".join("rank %d: %s" % (r["rank"], ", ".join("%s %.1f" % kv for kv in r["phase_ms"].items() if kv[1]))
               for r in doc["ranks"]))
assert not [f for f in doc["findings"] if f["id"] in ("straggler", "rank-stuck")], doc["findings"]
EOT
check $? "$label, 2 ranks balanced: no straggler finding, no rank stuck" "exit $rc; $(tail -4 "$TMP/b.json")" "$(head -c 200 "$TMP/b.json")"

# A rank that dies (exit 3 in its data loading, 2 s in): rank 0 fails at
# its next collective (gloo: the connection closed); the table says how
# each ended and which ended first.
timeout 120 $TS record -q -r 500 -o "$TMP/x.tsprof" -o "$TMP/x.summary.json" -- $torch_py \
	tests/python/launch_ranks.py 2 tests/python/ddp_train.py 60 --die-rank 1 --die-after 2 \
	>"$TMP/x.out" 2>"$TMP/x.err"
rc=$?
$TS report "$TMP/x.tsprof" --ranks >"$TMP/x.ranks" 2>&1
/usr/bin/python3 - "$TMP/x.summary.json" docs/summary.schema.json >"$TMP/x.json" 2>&1 <<'EOT'
import json, sys, jsonschema
doc = json.load(open(sys.argv[1]))
jsonschema.validate(doc, json.load(open(sys.argv[2])))
exits = {r["rank"]: r["exit"] for r in doc["ranks"]}
assert exits[1] == "status 3" and exits[0] not in (None, "status 0"), exits
EOT
ok=$?
[ $rc -ne 0 ] && [ $ok -eq 0 ] && grep -q 'dies at step' "$TMP/x.out" &&
	grep -q '^trainsample:   rank 1 (PID [0-9]*): .*; ended: status 3$' "$TMP/x.ranks" &&
	grep -q '^trainsample:   rank 1 ended first (status 3), after [0-9]* steps; 1 rank ended after it, within [0-9.]* s$' "$TMP/x.ranks"
check $? "$label, a rank that dies: how each rank ended, and the dead one named first (table, summary.json)" \
	"exit $rc; $(cat "$TMP/x.out"); $(cat "$TMP/x.ranks"); $(tail -3 "$TMP/x.json")" \
	"$(grep -o 'rank 1 ended first.*' "$TMP/x.ranks")"

# A job that hangs: rank 1's data loading blocks in a read that never
# returns, 2 s into training; rank 0 waits for it in DDP's gradient
# allreduce. Recorded through the hang (stopped 3 s after it, as a user
# stops a hung job), then a hung job attached as a user would, with -s on
# its launcher. The ranks outlive the launcher: killed here.
hung_job() { pkill -KILL -f '^[^ ]*python[^ ]* tests/python/ddp_train.py 60 --hang-rank 1' 2>/dev/null; }
wait_hang() { # OUT
	for _ in $(seq 180); do
		grep -q 'hangs at step' "$1" 2>/dev/null && return 0
		sleep 0.5
	done
	return 1
}
timeout 150 $TS record -r 200 -o "$TMP/h.tsprof" -- $torch_py tests/python/launch_ranks.py 2 \
	tests/python/ddp_train.py 60 --hang-rank 1 --hang-after 2 >"$TMP/h.out" 2>"$TMP/h.err" &
rec=$!
wait_hang "$TMP/h.out" && sleep 3
kill -INT $rec
wait $rec
rc=$?
hung_job
$TS report -q "$TMP/h.tsprof" --findings >"$TMP/h.findings" 2>&1
grep -q '^trainsample:   \[high\] rank-stuck, PID [0-9]*: rank 1 stopped stepping: its last [0-9.]* s in data, while rank 0 waited in comm for it, until the recording ended$' "$TMP/h.findings" &&
	grep -q '^trainsample:     rank 1: its last [0-9.]* s at one stack, in data: .* under Samples.hang (ddp_train.py:[0-9]*)$' "$TMP/h.findings" &&
	grep -q '^trainsample:     rank 0: its last [0-9.]* s at one stack, in comm: ' "$TMP/h.findings"
check $? "$label, a hung job recorded: rank 1 named stuck in data, at its line, rank 0 waiting in comm" \
	"exit $rc; $(cat "$TMP/h.out"); $(grep -A3 'rank-stuck' "$TMP/h.findings"); $(tail -3 "$TMP/h.err")" \
	"$(grep -o 'rank 1 stopped.*' "$TMP/h.findings")"

$torch_py tests/python/launch_ranks.py 2 tests/python/ddp_train.py 60 --hang-rank 1 --hang-after 1 \
	>"$TMP/ha.out" 2>&1 &
launcher=$!
wait_hang "$TMP/ha.out" && sleep 1
timeout 60 $TS attach -q -s -d 2 -o "$TMP/ha.tsprof" $launcher 2>"$TMP/ha.err"
rc=$?
hung_job
{ wait $launcher; } 2>/dev/null
$TS report -q "$TMP/ha.tsprof" --findings >"$TMP/ha.findings" 2>&1
grep -q '^trainsample:   \[high\] rank-stuck, PID [0-9]*: rank 1 sat in data all [0-9.]* s recorded, while rank 0 waited in comm for it$' "$TMP/ha.findings" &&
	grep -q 'rank 1: .* under Samples.hang (ddp_train.py:[0-9]*)$' "$TMP/ha.findings"
check $? "$label, a hung job attached (-s on its launcher): rank 1 named, sitting in data, rank 0 waiting in comm" \
	"exit $rc; $(cat "$TMP/ha.out"); $(cat "$TMP/ha.findings"); $(tail -3 "$TMP/ha.err")" \
	"$(grep -o 'rank 1 sat.*' "$TMP/ha.findings")"
