#!/bin/sh
# Training phases from stacks alone (analysis/): a pure-Python loop with
# known phase shares and rules from a --phases file, the filters and
# roots they give report, wrong rules and names refused, and the built-in
# rules on a real PyTorch loop (the sid root's torch).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

PY=/usr/bin/python3.11
[ -x $PY ] || PY=$(command -v python3)
cat >"$TMP/rules" <<'EOR'
# the loop's own functions (tests/python/phase_loop.py)
data       load_batch
forward    model_forward   */phase_loop.py
backward   model_backward
optimizer  optimizer_step
EOR

# Shares of phases among the four, from a folded file grouped by phase.
shares() {
	awk '{ split($0, a, ";"); for (i = 1; i <= 3; i++) if (a[i] ~ /^\[phase: /) { w[a[i]] += $NF; break } }
		END { t = w["[phase: data]"] + w["[phase: forward]"] + w["[phase: backward]"] + w["[phase: optimizer]"]
		      if (!t) t = 1
		      printf "%.1f %.1f %.1f %.1f\n", 100 * w["[phase: data]"] / t, 100 * w["[phase: forward]"] / t,
			100 * w["[phase: backward]"] / t, 100 * w["[phase: optimizer]"] / t }' "$1"
}

$TS record -r 500 --phases "$TMP/rules" -o "$TMP/pl.tsprof" -- $PY tests/python/phase_loop.py 3 \
	>"$TMP/pl.out" 2>"$TMP/pl.err"
rc=$?
set -- $(cat "$TMP/pl.out")
tot=$(( $2 + $4 + $6 + $8 ))
truth="$(percent "$2" $tot) $(percent "$4" $tot) $(percent "$6" $tot) $(percent "$8" $tot)"
$TS report -q "$TMP/pl.tsprof" --phases "$TMP/rules" --group-by phase -o "$TMP/pl.folded"
got=$(shares "$TMP/pl.folded")
ok=0
set -- $truth
t1=$1 t2=$2 t3=$3 t4=$4
set -- $got
within "$1" "$t1" 3 && within "$2" "$t2" 3 && within "$3" "$t3" 3 && within "$4" "$t4" 3 || ok=1
[ $rc -eq 0 ] && [ $ok -eq 0 ]
check $? "a loop's data, forward, backward and optimizer shares within 3 points of its own clocks" \
	"exit $rc; got $got, truth $truth (data forward backward optimizer)" "$got against $truth"

grep -q "^trainsample: PID [0-9]* (python3.11 tests/python/phase_loop.py 3) phases, thread [0-9]*: data [0-9]*%, forward [0-9]*%, backward [0-9]*%, optimizer [0-9]*%" "$TMP/pl.err"
check $? "the end of record says the main loop's split by phase, largest first" "$(tail -2 "$TMP/pl.err")"

# Steps: counted exactly, the median step within 5% of the loop's own (at
# 1 kHz: a step's ends are known to a period, 2% of a 50 ms step).
L=$(grep -n 'spin(4 \* UNIT)' tests/python/phase_loop.py | cut -d: -f1)
$TS record -r 1000 --phases "$TMP/rules" --time model_backward --time "phase_loop.py:$L" \
	-o "$TMP/st.folded" -- $PY tests/python/phase_loop.py 3 >"$TMP/pl.out" 2>"$TMP/pl.err"
set -- $(cat "$TMP/pl.out")
want_steps=${10} want_p50=${12}
line=$(grep "^trainsample:   steps: " "$TMP/pl.err")
got_steps=$(echo "$line" | sed -n 's/^trainsample:   steps: \([0-9]*\) .*/\1/p')
got_p50=$(echo "$line" | sed -n 's/.*step p50 \([0-9.]*\) ms.*/\1/p')
[ "$got_steps" = "$want_steps" ] && within "$got_p50" "$(awk -v n="$want_p50" 'BEGIN { print n / 1e6 }')" \
	"$(awk -v n="$want_p50" 'BEGIN { print n / 1e6 * 0.05 }')"
check $? "steps counted exactly, the median step within 5%" \
	"loop: $want_steps steps, p50 $want_p50 ns; trainsample: $line" "$got_steps steps, p50 $got_p50 ms against $(awk -v n="$want_p50" 'BEGIN { print n / 1e6 }') ms"

# --time: a call per backward, the median within 5% (and a period) of the
# loop's own; a FILE:LINE form (load_batch's line) as many.
set -- $(cat "$TMP/pl.out")
want_bwd=$(awk -v n="${14}" 'BEGIN { print n / 1e6 }')
line=$(grep "^trainsample: calls of model_backward: " "$TMP/pl.err")
calls=$(echo "$line" | sed -n 's/.*model_backward: \([0-9]*\),.*/\1/p')
p50=$(echo "$line" | sed -n 's/.* p50 \([0-9.]*\) ms.*/\1/p')
[ "$calls" = "${10}" ] && within "$p50" "$want_bwd" "$(awk -v w="$want_bwd" 'BEGIN { print w * 0.05 + 1 }')" &&
	grep -q "^trainsample: calls of phase_loop.py:$L: ${10}, p50 .*(each end known to 1.0 ms, the sampling period)" "$TMP/pl.err"
check $? "--time FUNC and FILE:LINE: each call counted, the median call within 5% of the loop's own" \
	"loop: ${10} calls, p50 $want_bwd ms; $(grep 'calls of' "$TMP/pl.err")" "$calls calls, p50 $p50 ms against $want_bwd ms"

# report --summary: the same lines from the recording, on stdout, alone.
$TS record -q -r 1000 --phases "$TMP/rules" -o "$TMP/st.tsprof" -- $PY tests/python/phase_loop.py 1.5 \
	>"$TMP/st.out" 2>/dev/null
$TS report "$TMP/st.tsprof" --phases "$TMP/rules" --summary >"$TMP/sum.out" 2>"$TMP/sum.err"
rc=$?
set -- $(cat "$TMP/st.out")
[ $rc -eq 0 ] && grep -q "^trainsample:   steps: ${10} " "$TMP/sum.out" &&
	grep -q "phases, thread [0-9]*: data" "$TMP/sum.out" && [ "$(wc -l <"$TMP/sum.out")" -eq 3 ] &&
	! grep -q . "$TMP/sum.err"
check $? "report --summary: the process, phase and step lines from a recording, on stdout" \
	"exit $rc, the loop's ${10} steps; out: $(cat "$TMP/sum.out"); err: $(cat "$TMP/sum.err")"

# At 100 Hz a 10 ms backward can fall between ticks: steps are not counted
# rather than counted wrong.
$TS record -r 100 --phases "$TMP/rules" -o "$TMP/slow.folded" -- $PY tests/python/phase_loop.py 1.5 \
	>/dev/null 2>"$TMP/slow.err"
grep -q "^trainsample:   steps: not counted: backward is seen for .* under two sampling periods (20.0 ms)" "$TMP/slow.err"
check $? "steps too short for the rate are not counted, and the line says why" "$(tail -2 "$TMP/slow.err")"

# Without the rules file these functions are no phase of the built-in rules.
$TS report -q "$TMP/pl.tsprof" --group-by phase -o "$TMP/none.folded"
[ "$(grep -c '^\[phase: other\];' "$TMP/none.folded")" -eq "$(wc -l <"$TMP/none.folded")" ]
check $? "without --phases, a loop of its own functions is all 'other'" "$(cut -d';' -f1 "$TMP/none.folded" | sort | uniq -c)"

$TS report -q "$TMP/pl.tsprof" --phases "$TMP/rules" --phase backward -o "$TMP/bwd.folded"
n=$(wc -l <"$TMP/bwd.folded")
[ "$n" -gt 0 ] && [ "$(grep -c 'model_backward (' "$TMP/bwd.folded")" -eq "$n" ]
check $? "report --phase backward keeps only the backward's stacks" "$n lines: $(head -3 "$TMP/bwd.folded")"

$TS report -q "$TMP/pl.tsprof" --phases "$TMP/rules" --group-by phase -t -o "$TMP/t.folded"
grep -q '^thread [0-9]* ([^)]*);\[phase: data\];' "$TMP/t.folded" &&
	! grep -v '^thread [0-9]* ([^)]*);\[phase: [a-z]*\];' "$TMP/t.folded" | grep -q .
check $? "--group-by phase -t: a phase root under each thread's" "$(head -3 "$TMP/t.folded")"

$TS report -q "$TMP/pl.tsprof" --phases "$TMP/rules" --group-by phase -o "$TMP/p.svg" &&
	grep -q '\[phase: forward\]' "$TMP/p.svg"
check $? "the flamegraph gets the phase roots too"

printf 'data load_batch\nlunch eat\n' >"$TMP/bad"
$TS record --phases "$TMP/bad" -o "$TMP/bad.folded" -- $PY -c 'open("'"$TMP"'/ran", "w")' 2>"$TMP/bad.err"
rc=$?
[ $rc -eq 2 ] && [ ! -e "$TMP/ran" ] && grep -q "$TMP/bad:2: 'lunch' is not a phase" "$TMP/bad.err"
check $? "a wrong rule is refused with its file and line, before anything runs" "exit $rc: $(cat "$TMP/bad.err")"
$TS report "$TMP/pl.tsprof" --phase lunch -o "$TMP/x.folded" 2>"$TMP/ph.err"
rc=$?
[ $rc -eq 2 ] && grep -q "phase takes one of data, forward" "$TMP/ph.err"
check $? "--phase with no such phase is refused, naming the phases" "exit $rc: $(cat "$TMP/ph.err")"

# The built-in rules on PyTorch itself: a loop with a DataLoader of two
# workers (tests/python/torch_train.py).
if ! sid_root_ready || [ ! -f build/sid-root/.stamp-torch ]; then
	skip "sid-3.14 torch: data, forward, backward and optimizer by the built-in rules" \
		"${sid_root_why:-no torch in the sid root (make sid-root-torch)}"
	exit 0
fi
$TS record -q -r 200 -o "$TMP/torch.tsprof" -- tests/sid/python3.14 tests/python/torch_train.py 6
$TS report -q "$TMP/torch.tsprof" --group-by phase -o "$TMP/torch.folded"
under() { awk -v r="[phase: $1];" -v f="$2" '{ i = index($0, r); if (i && index($0, f)) n += $NF } END { print n + 0 }' "$TMP/torch.folded"; }
d=$(under data "_BaseDataLoaderIter.__next__ (torch/utils/data/dataloader.py")
w=$(under data "Slow.__getitem__ (torch_train.py")
f=$(under forward "MLP.forward (torch_train.py")
b=$(under backward "Tensor.backward (torch/_tensor.py")
o=$(under optimizer " (torch/optim/")
wrong=$(awk '/\[phase: (forward|optimizer|data)\];/ && /Tensor.backward \(/ { n += $NF } END { print n + 0 }' "$TMP/torch.folded")
[ "$d" -gt 0 ] && [ "$w" -gt 0 ] && [ "$f" -gt 0 ] && [ "$b" -gt 0 ] && [ "$o" -gt 0 ] && [ "$wrong" -eq 0 ]
check $? "sid-3.14 torch: data (the loader and its workers' __getitem__), forward, backward and optimizer by the built-in rules" \
	"data $d, workers' __getitem__ $w, forward $f, backward $b, optimizer $o, backward misplaced $wrong" \
	"data $d, workers $w, forward $f, backward $b, optimizer $o"
