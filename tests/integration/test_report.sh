# report's filters: --tid, --thread NAME, --pid, and a time window
# --from/--to, on a recording of named Python threads.
. tests/integration/lib.sh
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)

$TS record -q -t -r 200 -o "$TMP/t.tsprof" -o "$TMP/t.folded" -- "$PY" tests/python/threads.py 2 >/dev/null
loader=$(sed -n 's/^thread \([0-9]*\) (loader);.*/\1/p' "$TMP/t.folded" | head -1)

$TS report -q -t "$TMP/t.tsprof" --thread loader -o "$TMP/l.folded"
others=$(grep -vc '^thread [0-9]* (loader);' "$TMP/l.folded")
[ -s "$TMP/l.folded" ] && [ "$others" = 0 ] && grep -q 'spin_loader (' "$TMP/l.folded"
check $? "report --thread NAME keeps that thread alone" "$others other lines"

$TS report -q -t "$TMP/t.tsprof" --tid "${loader:-1}" -o "$TMP/tid.folded"
[ -n "$loader" ] && cmp -s "$TMP/tid.folded" "$TMP/l.folded"
check $? "report --tid TID is the same thread" "tid ${loader:-none}"

$TS report -q "$TMP/t.tsprof" --pid 1 -o "$TMP/none.folded" 2>"$TMP/none.err"
rc=$?
[ "$rc" -eq 1 ] && [ ! -e "$TMP/none.folded" ] && grep -q "no sample is left after the filters" "$TMP/none.err"
check $? "report --pid of another process keeps nothing, says so and fails" "exit $rc: $(cat "$TMP/none.err")"

# Filters that leave nothing: one line, exit 1, no file of any format.
$TS report "$TMP/t.tsprof" --thread NOPE -o "$TMP/nope.svg" -o "$TMP/nope.tsprof" 2>"$TMP/nope.err"
rc=$?
[ "$rc" -eq 1 ] && [ ! -e "$TMP/nope.svg" ] && [ ! -e "$TMP/nope.tsprof" ] &&
	[ "$(wc -l <"$TMP/nope.err")" -eq 1 ]
check $? "report --thread NOPE writes nothing and exits 1 in one line" "exit $rc: $(cat "$TMP/nope.err")"

$TS diff "$TMP/t.tsprof" "$TMP/t.tsprof" --thread NOPE -o "$TMP/nope-diff.svg" >/dev/null 2>"$TMP/nope.err"
rc=$?
[ "$rc" -eq 1 ] && [ ! -e "$TMP/nope-diff.svg" ] && grep -q "no sample is left" "$TMP/nope.err"
check $? "diff --thread NOPE writes nothing and exits 1" "exit $rc: $(cat "$TMP/nope.err")"

# "wrote FILE (FORMAT, N samples)" counts what the file holds: after the
# filters. Compared with the exact count of the same samples in a pprof
# (its samples/count values): a folded file's counts are weighted by the
# time each sample stood for, which a loaded machine stretches.
$TS report "$TMP/t.tsprof" --thread loader -o "$TMP/l2.folded" -o "$TMP/l2.pb.gz" 2>"$TMP/wrote.err"
said=$(sed -n 's/.*wrote .*l2.folded (.*, \([0-9]*\) samples)/\1/p' "$TMP/wrote.err")
held=$("$PY" tests/integration/pprof_count.py "$TMP/l2.pb.gz")
$TS report -q "$TMP/t.tsprof" -o "$TMP/all.pb.gz"
every=$("$PY" tests/integration/pprof_count.py "$TMP/all.pb.gz")
[ -n "$said" ] && [ "$said" -gt 0 ] && [ "$said" = "$held" ] && below "$said" $((${every:-0} * 2 / 3))
check $? "report's wrote line counts the samples after the filters" "said ${said:-none}, file holds ${held:-?} of ${every:-?}"

all=$(folded_total "$TMP/t.folded")
$TS report -q "$TMP/t.tsprof" -t --from 0.5 --to 1.0 -o "$TMP/w.folded"
part=$(folded_total "$TMP/w.folded")
share=$(percent "$part" "$all")
# Half a second of a run of about two: a fifth to a third of the samples.
at_least "$share" 15 && below "$share" 35
check $? "report --from 0.5 --to 1.0 keeps that half second" "$share% of the samples" "$share%"

if $TS record -q --from 1 -o "$TMP/x.folded" -- true 2>"$TMP/err"; then not_ok "record refuses --from"
elif grep -q "options of report" "$TMP/err"; then ok "record refuses --from, saying it belongs to report"
else not_ok "record refuses --from" "$(cat "$TMP/err")"; fi

# A recording cut at random offsets renders up to the cut, or fails with
# one clear line; it never crashes, and what it writes is whole.
size=$(stat -c %s "$TMP/t.tsprof")
bad=""
for i in $(seq 1 25); do
	cut=$(awk -v s="$size" -v i="$i" 'BEGIN { srand(i * 7919); print int(rand() * s) }')
	head -c "$cut" "$TMP/t.tsprof" >"$TMP/cut.tsprof"
	$TS report -q "$TMP/cut.tsprof" -o "$TMP/cut.svg" -o "$TMP/cut.speedscope.json" 2>"$TMP/cut.err"
	rc=$?
	if [ $rc -ge 2 ]; then
		bad="$bad cut@$cut:exit$rc"
	elif [ $rc -eq 0 ] && { ! xmllint --noout "$TMP/cut.svg" 2>/dev/null ||
		! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/cut.speedscope.json"; }; then
		bad="$bad cut@$cut:broken-output"
	elif [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/cut.err")" -gt 2 ]; then
		bad="$bad cut@$cut:unclear"
	fi
done
[ -z "$bad" ]
check $? "a recording cut at 25 random offsets renders up to the cut or fails in a line" "$bad"

# Several recordings in one report (ranks, machines): every sample of each,
# their processes kept apart; one from another host (a UTS namespace with
# another name) has its PIDs moved past 2^22; on one time line by each
# recording's clock offset.
$TS record -r 500 -o "$TMP/m1.tsprof" -o "$TMP/m1.folded" -- "$T/cpu_shares" 1 >/dev/null 2>"$TMP/m1.err"
if unshare -u true 2>/dev/null; then
	unshare -u sh -c "hostname trainsample-other-host && $TS record -r 500 -o '$TMP/m2.tsprof' -o '$TMP/m2.folded' -- '$T/cpu_shares' 1" >/dev/null 2>"$TMP/m2.err"
	other=yes
else
	$TS record -r 500 -o "$TMP/m2.tsprof" -o "$TMP/m2.folded" -- "$T/cpu_shares" 1 >/dev/null 2>"$TMP/m2.err"
	other=no
fi
$TS report "$TMP/m1.tsprof" "$TMP/m2.tsprof" -o "$TMP/m.folded" -o "$TMP/m.trace.json" 2>"$TMP/m.err"
rc=$?
# One line per process, the other host's named so.
[ "$(grep -c '^trainsample: PID [0-9]* (.*cpu_shares 1.*): [0-9]* samples' "$TMP/m.err")" = 2 ] &&
	{ [ $other = no ] || grep -q 'cpu_shares 1 on trainsample-other-host)' "$TMP/m.err"; }
check $? "report of several recordings ends with a line per process, named" "$(cat "$TMP/m.err")"
# Samples as each run counted them ("wrote X.tsprof (tsprof, N samples)");
# folded lines are weights rounded to periods, so hot_a's sum may differ
# by a rounding or two.
wrote_n() { sed -n "s/^trainsample: wrote .*$2 (.*, \([0-9]*\) samples)$/\1/p" "$1"; }
n1=$(wrote_n "$TMP/m1.err" m1.tsprof) n2=$(wrote_n "$TMP/m2.err" m2.tsprof) n=$(wrote_n "$TMP/m.err" m.folded)
a=$(( $(folded_with "$TMP/m1.folded" hot_a) + $(folded_with "$TMP/m2.folded" hot_a) ))
ma=$(folded_with "$TMP/m.folded" hot_a)
[ $rc = 0 ] && [ -n "$n1" ] && [ -n "$n2" ] && [ "$n" = $((n1 + n2)) ] && within "$ma" "$a" 3 &&
	python3 tests/integration/trace_check.py "$TMP/m.trace.json" >"$TMP/m.check" 2>&1 &&
	python3 - "$TMP/m.trace.json" "$other" >>"$TMP/m.check" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pids = sorted({e["pid"] for e in d["traceEvents"] if e.get("ph") == "X"})
assert len(pids) == 2, pids
if sys.argv[2] == "yes":
    assert pids[1] >= 1 << 22 and pids[0] < 1 << 22, pids
first = {p: min(e["ts"] for e in d["traceEvents"] if e.get("ph") == "X" and e["pid"] == p) for p in pids}
# Recorded one after the other: the second starts after the first began.
assert first[pids[1]] > first[pids[0]], first
PY
check $? "report A.tsprof B.tsprof merges them: every sample, processes apart, on one time line" \
	"exit $rc; $n samples of $n1 + $n2, hot_a $ma of $a; $(tail -3 "$TMP/m.check")"
$TS report -q "$TMP/m1.tsprof" "$TMP/nothing.tsprof" -o "$TMP/m3.folded" 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && grep -q "nothing.tsprof" "$TMP/err" && [ ! -e "$TMP/m3.folded" ]
check $? "report of several with one missing: says which, writes nothing" "exit $rc $(cat "$TMP/err")"

# Many distinct functions (issue 30: code that makes a new function for
# every call): the summary finds each by a hash, not by a search of all
# of them, and holds little beside the recording. 100,000 functions on
# 2,000 threads, written by craft_tsprof.py.
python3 tests/integration/craft_tsprof.py many 100000 2000 "$TMP/many.tsprof"
if [ -x /usr/bin/time ]; then
	/usr/bin/time -v -o "$TMP/sum.time" $TS report "$TMP/many.tsprof" --summary >"$TMP/sum.out" 2>&1
	rc=$?
	/usr/bin/time -v -o "$TMP/fold.time" $TS report -q "$TMP/many.tsprof" -o "$TMP/many.folded" 2>&1
	rc2=$?
	rs=$(awk '/Maximum resident set size/ { print $NF }' "$TMP/sum.time")
	rf=$(awk '/Maximum resident set size/ { print $NF }' "$TMP/fold.time")
else
	$TS report "$TMP/many.tsprof" --summary >"$TMP/sum.out" 2>&1
	rc=$?
	$TS report -q "$TMP/many.tsprof" -o "$TMP/many.folded"
	rc2=$? rs=0 rf=1
fi
[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && grep -q "PID 1000: 100000 samples" "$TMP/sum.out" &&
	grep -q "top functions: self f_0 0%; total run (many_functions.py) 100%" "$TMP/sum.out" &&
	grep -q "2000 threads\|1996 more threads" "$TMP/sum.out" &&
	[ "$(folded_total "$TMP/many.folded")" = 100000 ] && below "${rs:-0}" "$((${rf:-1} * 2))"
check $? "100,000 distinct functions on 2,000 threads: the summary, its RSS within twice folded's" \
	"exit $rc/$rc2, RSS ${rs:-?} KiB against ${rf:-?} KiB: $(tail -4 "$TMP/sum.out")" \
	"RSS $((${rs:-0} / 1024)) MiB, folded $((${rf:-0} / 1024)) MiB"
