#!/bin/sh
# Training phases from stacks alone (analysis/): a pure-Python loop with
# known phase shares and rules from a --phases file, the filters and
# roots they give report, and wrong rules and names refused: steps and
# shares to a period's precision, which tests/run.sh runs alone (the
# built-in rules on PyTorch are test_phases_torch.sh's).
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

# Under the process's line: its threads, top functions, then the loop's
# phases, largest first.
sed -n '/^trainsample: PID [0-9]* (python3.11 tests\/python\/phase_loop.py 3): /,$p' "$TMP/pl.err" >"$TMP/pl.end"
sed -n 2p "$TMP/pl.end" | grep -q "^trainsample:   threads: [^ ]* busy [0-9]*% (GIL [0-9]*%)\( (waiting for a CPU [0-9]*%)\)\{0,1\}$" &&
	sed -n 3p "$TMP/pl.end" | grep -q "^trainsample:   top functions: self spin (phase_loop.py) [0-9]*%; total spin (phase_loop.py) [0-9]*%, load_batch (phase_loop.py) [34][0-9]%, model_forward (phase_loop.py) [23][0-9]%$" &&
	sed -n 4p "$TMP/pl.end" | grep -q "^trainsample:   phases, thread [0-9]* ([^)]*): data [0-9]*%, forward [0-9]*%, backward [0-9]*%, optimizer [0-9]*%"
check $? "the end of record: the process's threads, top functions and the main loop's split by phase, largest first" \
	"$(head -5 "$TMP/pl.end")"

# Steps: counted exactly, the median step within 5% of the loop's own (at
# 1 kHz: a step's ends are known to a period, 2% of a 50 ms step). One
# exception, which the output shows: a backward (10 ms of CPU) with no
# sample in it at all, when trainsample or its VM stalled longer than that,
# merges two steps into one twice as long (a fresh clone's run here: 52 of
# 53, max 114 ms for a p50 of 55). So one short is allowed only with a
# step of 1.8 medians or more; anything else (a step split, another lost)
# fails.
# merged_ok WANT GOT P50 MAX: exact, or one short with a merged pair shown.
merged_ok() {
	[ "$2" = "$1" ] || { [ "$2" = $(($1 - 1)) ] && at_least "$(awk -v p="$3" -v m="$4" 'BEGIN { print m / p }')" 1.8; }
}
L=$(grep -n 'spin(4 \* UNIT)' tests/python/phase_loop.py | cut -d: -f1)
$TS record -r 1000 --phases "$TMP/rules" --time model_backward --time "phase_loop.py:$L" \
	-o "$TMP/st.folded" -- $PY tests/python/phase_loop.py 3 >"$TMP/pl.out" 2>"$TMP/pl.err"
set -- $(cat "$TMP/pl.out")
want_steps=${10} want_p50=${12}
line=$(grep "^trainsample:   steps: " "$TMP/pl.err")
got_steps=$(echo "$line" | sed -n 's/^trainsample:   steps: \([0-9]*\) .*/\1/p')
got_p50=$(echo "$line" | sed -n 's/.*step p50 \([0-9.]*\) ms.*/\1/p')
got_max=$(echo "$line" | sed -n 's/.*, max \([0-9.]*\) ms.*/\1/p')
merged_ok "$want_steps" "$got_steps" "$got_p50" "${got_max:-0}" &&
	within "$got_p50" "$(awk -v n="$want_p50" 'BEGIN { print n / 1e6 }')" \
	"$(awk -v n="$want_p50" 'BEGIN { print n / 1e6 * 0.05 }')"
check $? "steps counted exactly (or two merged where a whole backward went unsampled, shown), the median step within 5%" \
	"loop: $want_steps steps, p50 $want_p50 ns; trainsample: $line" "$got_steps steps, p50 $got_p50 ms against $(awk -v n="$want_p50" 'BEGIN { print n / 1e6 }') ms"

# trainsample held up (SIGSTOP) for 45 ms 15 times: a stall that spans a
# whole backward merges two steps, and the steps line says some may be
# two. Not all: one quiet run said 7 of 11 merges (and a loaded one said
# more than there were), so only that it says so is asked here; the
# count's logic has unit tests (test_steps.c). Whether a stall spans a
# backward is the scheduler's: under two CPU hogs one run had none (26
# steps of 26, nothing said, rightly), so where no step was merged the
# count must be exact and nothing said.
$TS record -r 1000 --phases "$TMP/rules" -o "$TMP/stall.folded" -- $PY tests/python/phase_loop.py 3 \
	>"$TMP/stall.out" 2>"$TMP/stall.err" &
rec=$!
sleep 0.5
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
	kill -STOP $rec 2>/dev/null
	sleep 0.045
	kill -CONT $rec 2>/dev/null
	sleep 0.15
done
wait $rec
set -- $(cat "$TMP/stall.out")
line=$(grep "^trainsample:   steps: " "$TMP/stall.err")
got=$(echo "$line" | sed -n 's/^trainsample:   steps: \([0-9]*\) .*/\1/p')
two=$(echo "$line" | sed -n 's/.*; \([0-9]*\) steps* may be two: a tick came later than a backward lasts$/\1/p')
if [ -n "$got" ] && [ "$got" -eq "${10}" ]; then
	[ -z "$two" ] # no stall spanned a backward: nothing merged, nothing to say
else
	[ -n "$got" ] && [ "$got" -lt "${10}" ] && [ "${two:-0}" -ge 1 ]
fi
check $? "steps merged by stalls of trainsample: the steps line says some may be two" \
	"loop: ${10} steps; $line" "${got:-?} steps + ${two:-0} said to be two, of ${10}"

# --time: a call per backward, the median within 5% (and a period) of the
# loop's own; a FILE:LINE form (load_batch's line) as many.
set -- $(cat "$TMP/pl.out")
want_bwd=$(awk -v n="${14}" 'BEGIN { print n / 1e6 }')
line=$(grep "^trainsample: calls of model_backward: " "$TMP/pl.err")
calls=$(echo "$line" | sed -n 's/.*model_backward: \([0-9]*\),.*/\1/p')
p50=$(echo "$line" | sed -n 's/.* p50 \([0-9.]*\) ms.*/\1/p')
line_calls=$(sed -n "s/^trainsample: calls of phase_loop.py:$L: \([0-9]*\), p50 .*(each end known to 1.0 ms, the sampling period).*/\1/p" "$TMP/pl.err")
# Exact as the steps are, with the same one exception, which the steps
# line must then show too: the backward that went unsampled is one call
# fewer (calls never merge: other phases lie between them).
{ [ "$calls" = "${10}" ] && [ "$line_calls" = "${10}" ] ||
	{ [ "$got_steps" = $((${10} - 1)) ] && [ "$calls" -ge $((${10} - 1)) ] && [ "$calls" -le "${10}" ] &&
	  [ -n "$line_calls" ] && [ "$line_calls" -ge $((${10} - 1)) ] && [ "$line_calls" -le "${10}" ]; }; } &&
	within "$p50" "$want_bwd" "$(awk -v w="$want_bwd" 'BEGIN { print w * 0.05 + 1 }')"
check $? "--time FUNC and FILE:LINE: each call counted (one fewer only with the steps' merged pair), the median call within 5% of the loop's own" \
	"loop: ${10} calls, p50 $want_bwd ms; $(grep 'calls of' "$TMP/pl.err"); $(grep '^trainsample:   steps: ' "$TMP/pl.err")" "$calls calls, p50 $p50 ms against $want_bwd ms"

# report --summary: the same lines from the recording, on stdout, alone:
# its steps line is the one record printed at its end. The count is within
# two of the loop's (exactness is the check above): a tick late by more
# than a backward (10 ms of CPU) on a loaded machine merges two steps.
$TS record -r 1000 --phases "$TMP/rules" -o "$TMP/st.tsprof" -- $PY tests/python/phase_loop.py 1.5 \
	>"$TMP/st.out" 2>"$TMP/st.err"
$TS report "$TMP/st.tsprof" --phases "$TMP/rules" --summary >"$TMP/sum.out" 2>"$TMP/sum.err"
rc=$?
set -- $(cat "$TMP/st.out")
got=$(sed -n 's/^trainsample:   steps: \([0-9]*\) .*/\1/p' "$TMP/sum.out")
[ $rc -eq 0 ] && [ -n "$got" ] && [ "$got" -le "${10}" ] && [ "$got" -ge $((${10} - 2)) ] &&
	[ "$(grep '^trainsample:   steps: ' "$TMP/sum.out")" = "$(grep '^trainsample:   steps: ' "$TMP/st.err")" ] &&
	grep -q "^trainsample:   phases, thread [0-9]* ([^)]*): data" "$TMP/sum.out" &&
	[ "$(grep -c '^trainsample: PID ' "$TMP/sum.out")" -eq 1 ] &&
	! grep -v '^trainsample: ' "$TMP/sum.out" | grep -q . && ! grep -q . "$TMP/sum.err"
check $? "report --summary: the process, phase and step lines from a recording, on stdout, the steps line record's own" \
	"exit $rc, the loop's ${10} steps; out: $(cat "$TMP/sum.out"); err: $(cat "$TMP/sum.err"); record's: $(grep '^trainsample:   steps: ' "$TMP/st.err")" \
	"$got steps of ${10}"

# summary.json and the DataLoader metrics: a loop over a train_loader
# (2 units of CPU, then 2 asleep) and, every 8 steps, an evaluation over
# a val_loader (tests/python/loader_loop.py), each phase timed by the
# loop's own wall clock: the metrics within 10% (and 1.5 ms) of it.
cat >"$TMP/lrules" <<'EOR'
data       Loader.__next__
forward    model_forward
backward   model_backward
optimizer  optimizer_step
eval       evaluate
EOR
$TS record -r 1000 --phases "$TMP/lrules" -o "$TMP/ll.summary.json" -o "$TMP/ll.tsprof" -- \
	$PY tests/python/loader_loop.py 48 >"$TMP/ll.out" 2>"$TMP/ll.err"
rc=$?
/usr/bin/python3 - "$TMP/ll.summary.json" docs/summary.schema.json $(cat "$TMP/ll.out") >"$TMP/ll.check" 2>&1 <<'EOT'
import json, sys, jsonschema
doc, schema = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
truth = dict(zip(sys.argv[3::2], map(float, sys.argv[4::2])))
jsonschema.validate(doc, schema)
p = doc["processes"][0]
m = p["loop"]["metrics"]
tr, va = "profile/train/dl_train_loader/", "profile/val/dl_val_loader/"
want = [tr + k for k in ("time_data_ms", "time_forward_ms", "time_backward_ms",
                         "time_optimizer_ms", "time_batch_wait_ms")] + [va + "time_data_ms", va + "time_forward_ms"]
assert sorted(m) == sorted(want), sorted(m)
loaders = {l["name"]: l for l in p["loop"]["loaders"]}
# A fetch sampled not at all (a tick late by more than its 5 or 10 ms of
# CPU on a loaded machine) is a batch lost: two at most, none invented.
# The first step's fetch comes before the first backward: not a step's.
assert truth["train_steps"] - 3 <= loaders["train_loader"]["train_steps"] <= truth["train_steps"] - 1, loaders
assert truth["val_batches"] - 2 <= loaders["val_loader"]["val_batches"] <= truth["val_batches"], loaders
open(sys.argv[1] + ".val", "w").write("%d" % loaders["val_loader"]["val_batches"])
def near(got, want, what):
    # the loop's own wall clock; ends known to a period at 1 kHz
    assert abs(got - want) <= 0.10 * want + 1.5, "%s %.2f against %.2f" % (what, got, want)
for k in ("data", "forward", "backward", "optimizer"):
    near(m[tr + "time_%s_ms" % k], truth[k], k)
near(m[tr + "time_batch_wait_ms"], truth["wait"], "wait")
near(m[va + "time_data_ms"], truth["val_data"], "val data")
near(m[va + "time_forward_ms"], truth["val_forward"], "val forward")
assert truth["train_steps"] - 2 <= p["loop"]["steps"]["count"] <= truth["train_steps"], p["loop"]["steps"]
# Its loader sleeps in __next__: a wait, not a sync.
assert p["loop"]["phases"]["sync"] == 0, p["loop"]["phases"]
print(" ".join("%s %.1f" % (k.split("/", 2)[2], v) for k, v in sorted(m.items())))
# The schema is checked for real: a process without its busy share fails.
del p["busy"]
try:
    jsonschema.validate(doc, schema)
    sys.exit("a summary without a process's busy share passed the schema")
except jsonschema.ValidationError:
    pass
EOT
prc=$?
[ $rc -eq 0 ] && [ $prc -eq 0 ]
check $? "summary.json: valid, the steps, each loader's batches and per-step ms under the frameworks' names" \
	"exit $rc; loop: $(cat "$TMP/ll.out"); $(tail -c 600 "$TMP/ll.check")" "$(tail -1 "$TMP/ll.check")"
val_batches=$(cat "$TMP/ll.summary.json.val" 2>/dev/null)
grep -q "^trainsample:   DataLoaders: train_loader: training [0-9.]* ms a step waiting for data; val_loader: evaluation ${val_batches:-24} batches, data [0-9.]* ms and forward [0-9.]* ms a batch$" "$TMP/ll.err"
check $? "the end names the loaders by their variables, with their wait and evaluation batches" \
	"$(grep -A1 'steps:' "$TMP/ll.err")"
$TS report "$TMP/ll.tsprof" --phases "$TMP/lrules" -f summary -o - >"$TMP/ll2.json" 2>"$TMP/ll2.err" &&
	/usr/bin/python3 - "$TMP/ll.summary.json" "$TMP/ll2.json" <<'EOT'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["processes"][0]["loop"]["metrics"] == b["processes"][0]["loop"]["metrics"]
EOT
check $? "report -f summary of the recording gives the same metrics" "$(head -c 300 "$TMP/ll2.json"; cat "$TMP/ll2.err")"

# One line fetches from two loaders (tests/python/two_loaders.py:
# run_epoch(loader) with a training and a validation DataLoader stand-in):
# each is told apart by its object and named by the outermost variable
# holding it, its data time within 15% (and 1.5 ms) of the loop's clock.
# Also on 3.8-3.10, whose frames name __next__ without its class. On
# Debian's 3.11 the training loader's __iter__ takes 50 ms (its workers
# starting), the validation loader's none: the training iterator, seen
# made, is freed at its epoch's end and the validation one made at its
# address, unseen; taken for the old one by its address, every validation
# batch was filed under train_loader (3 runs in 3).
two_loaders() {
	label=$1 py=$2 start=${3:-0}
	$TS record -r 1000 --phases "$TMP/trules" -o "$TMP/tl.summary.json" -- \
		"$py" tests/python/two_loaders.py 2 15 8 "$start" >"$TMP/tl.out" 2>"$TMP/tl.err"
	rc=$?
	/usr/bin/python3 - "$TMP/tl.summary.json" $(cat "$TMP/tl.out") >"$TMP/tl.check" 2>&1 <<'EOT'
import json, sys
truth = dict(zip(sys.argv[2::2], map(float, sys.argv[3::2])))
loop = json.load(open(sys.argv[1]))["processes"][0]["loop"]
m = loop["metrics"]
tr, va = "profile/train/dl_train_loader/", "profile/val/dl_val_loader/"
assert sorted(k.rsplit("/", 1)[0] + "/" for k in m) == sorted([tr] * 5 + [va] * 2), sorted(m)
def near(got, want, what):
    assert abs(got - want) <= 0.15 * want + 1.5, "%s %.2f against %.2f" % (what, got, want)
near(m[tr + "time_data_ms"], truth["train_data"], "train data")
near(m[va + "time_data_ms"], truth["val_data"], "val data")
loaders = {l["name"]: l for l in loop["loaders"]}
assert loaders["val_loader"]["val_batches"] == truth["val_batches"], loaders
print("train data %.1f, val data %.1f ms" % (m[tr + "time_data_ms"], m[va + "time_data_ms"]))
EOT
	prc=$?
	[ $rc -eq 0 ] && [ $prc -eq 0 ]
	check $? "$label: one line fetching from two DataLoaders: two loaders, named train_loader and val_loader, each its own data time" \
		"exit $rc; loop: $(cat "$TMP/tl.out"); $(tail -c 600 "$TMP/tl.check")" "$(tail -1 "$TMP/tl.check")"
}
cat >"$TMP/trules" <<'EOR'
forward    model_forward
backward   model_backward
optimizer  optimizer_step
eval       evaluate
EOR
two_loaders "debian-3.11, the training loader's workers starting 50 ms" "$PY" 0.05
py310=$(ls -d "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.10.*/bin/python3.10 2>/dev/null | tail -1)
if [ -n "$py310" ]; then
	two_loaders "pyenv-3.10" "$py310"
else
	skip "pyenv-3.10: one line fetching from two DataLoaders: two loaders, named train_loader and val_loader, each its own data time" \
		"pyenv-3.10 is not installed here"
fi

# report --steps A:B keeps those steps of the main loop: as many backward
# calls, and a step count to match; steps past the last are refused.
$TS report "$TMP/ll.tsprof" --phases "$TMP/lrules" --steps 10:20 --summary --time model_backward \
	>"$TMP/win.out" 2>"$TMP/win.err"
rc=$?
$TS report "$TMP/ll.tsprof" --phases "$TMP/lrules" --steps 5 --time model_backward -o "$TMP/one.folded" \
	>"$TMP/one.out" 2>&1
$TS report "$TMP/ll.tsprof" --phases "$TMP/lrules" --steps 10:60 -o "$TMP/bad.folded" 2>"$TMP/bad.err"
rc2=$?
[ $rc -eq 0 ] && grep -q "^trainsample:   steps: 11 " "$TMP/win.out" &&
	grep -q "^trainsample: calls of model_backward: 11," "$TMP/win.out" &&
	grep -q "ll.tsprof: steps 10 to 20 of 48 (PID [0-9]*, thread [0-9]*)" "$TMP/win.err" &&
	grep -q "^trainsample: calls of model_backward: 1," "$TMP/one.out" &&
	[ $rc2 -ne 0 ] && [ ! -e "$TMP/bad.folded" ] && grep -q "has steps 1 to 48" "$TMP/bad.err"
check $? "report --steps A:B keeps those steps of the main loop (11 backward calls in 10:20, one in 5), refuses steps it has not" \
	"exit $rc/$rc2; $(cat "$TMP/win.out" "$TMP/win.err" "$TMP/one.out" "$TMP/bad.err" | grep -v '^trainsample:   [tDp]')"

# The trace: beside the loop's thread, a track of its phases (a slice
# per run of one) and a "step N" mark at each step's start.
$TS report -q "$TMP/ll.tsprof" --phases "$TMP/lrules" -o "$TMP/ll.trace.json" &&
	python3 - "$TMP/ll.trace.json" >"$TMP/tr.check" 2>&1 <<'EOT'
import json, sys
from collections import Counter
ev = json.load(open(sys.argv[1]))["traceEvents"]
tracks = {e["tid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
ph = [e for e in ev if e.get("cat") == "phase"]
marks = [e for e in ev if e.get("cat") == "step"]
assert ph and len({e["tid"] for e in ph + marks}) == 1, tracks
track = tracks[ph[0]["tid"]]
assert track.startswith("phases of ") and track.endswith(" (%d)" % (ph[0]["tid"] & ~(1 << 29))), tracks
n = Counter(e["name"] for e in ph)
# backward is the beat (10 ms, always seen at 1 kHz); a 5 ms optimizer
# may fall between the ticks of a loaded machine.
assert n["backward"] == 48 and n["eval"] == 6 and min(n["forward"], n["optimizer"]) >= 44, n
back = sorted(e["ts"] for e in ph if e["name"] == "backward")
assert [e["name"] for e in marks] == ["step %d" % i for i in range(1, 49)], [e["name"] for e in marks][:5]
assert [e["ts"] for e in marks] == back, (marks[:2], back[:2])
print(dict(n), len(marks), "marks")
EOT
check $? "trace: a phase track beside the loop's thread, a slice per phase run, a step mark at each backward" \
	"$(tail -c 500 "$TMP/tr.check")" "$(tail -1 "$TMP/tr.check")"

# diff compares the main loops too: a step's phases and the step times.
$TS diff "$TMP/ll.tsprof" "$TMP/ll.tsprof" --phases "$TMP/lrules" --steps 2: -q >"$TMP/diff.out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "^  main loop  *older  *newer  *change" "$TMP/diff.out" &&
	grep -q "^  data a step  *[0-9.]* ms  *[0-9.]* ms  *+0.0%$" "$TMP/diff.out" &&
	grep -q "^  backward a step  *[0-9.]* ms" "$TMP/diff.out" &&
	grep -q "^  step p50  *[0-9.]* ms  *[0-9.]* ms  *+0.0%$" "$TMP/diff.out" &&
	grep -q "^  steps  *47  *47$" "$TMP/diff.out"
check $? "diff: the main loops side by side, each phase's time a step and the step times" \
	"exit $rc: $(tail -12 "$TMP/diff.out")"

# The pictures show where the job's time goes: every thread's work and the
# loop's waits (here no loop: the main thread's, in join); the waits of
# other threads (the sleeper's) are left out, and one line on stderr says
# how much, unless --idle. (Under load the sleeper waits for a CPU as it
# starts: that is no wait of its own, and stays.) (Until issue 29 part 4 they were
# folded into one "[idle threads]" frame, kept by default.) The
# flamegraph's thread roots say how busy each thread was.
$TS record -q -t -o "$TMP/th.tsprof" -o "$TMP/th.folded" -o "$TMP/th.svg" -- $PY tests/python/threads.py 1 >/dev/null
$TS report -q -t --idle "$TMP/th.tsprof" -o "$TMP/thi.folded"
$TS report -t "$TMP/th.tsprof" -o "$TMP/th2.folded" 2>"$TMP/th2.err"
grep -q "^thread [0-9]* (loader);.*spin_loader (" "$TMP/th.folded" &&
	grep -q "^thread [0-9]* (MainThread);.*Thread.join (.*\[idle: " "$TMP/th.folded" &&
	! grep -q "(sleeper);.*\[idle: \|idle threads" "$TMP/th.folded" &&
	grep -q "^trainsample: left out [0-9.]* s of idle threads' time.*--idle keeps it" "$TMP/th2.err" &&
	cmp -s "$TMP/th.folded" "$TMP/th2.folded" &&
	grep -q "^thread [0-9]* (sleeper);.*sleeper (threads.py:[0-9]*);\[idle: " "$TMP/thi.folded" &&
	! grep -q "idle threads" "$TMP/thi.folded" &&
	grep -q "thread [0-9]* (loader) busy [0-9]*%" "$TMP/th.svg" &&
	! grep -q "\[idle threads\]" "$TMP/th.svg" && ! grep -q "(sleeper) busy 0%" "$TMP/th.svg"
check $? "by default the pictures leave out the waits of threads but the main one (no loop here), and say how much on stderr; --idle keeps them; the flamegraph's thread roots say each one's busy share" \
	"$(cut -c1-150 "$TMP/th.folded" | head -5); $(cat "$TMP/th2.err"); --idle: $(grep -c sleeper "$TMP/thi.folded") sleeper lines"

# Epochs: each pass over the loader starts by making its iterator
# (DataLoader.__iter__ of a stand-in with torch's file and names, 20 ms as
# workers starting take).
$TS record -r 1000 --phases "$TMP/rules" -o "$TMP/ep.summary.json" -- $PY tests/python/epochs_loop.py 3 10 \
	>"$TMP/ep.out" 2>"$TMP/ep.err"
rc=$?
# Steps: 30, or fewer with as many said to be two (a tick late by more
# than a backward on a loaded machine merges two).
st=$(/usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["processes"][0]["loop"]["steps"]; print(s["epochs"], 30 if s["count"] <= 30 <= s["count"] + s["maybe_merged"] else s["count"])' \
	"$TMP/ep.summary.json" 2>&1)
[ $rc -eq 0 ] && [ "$st" = "3 30" ] && grep -q "; 3 epochs (DataLoader passes started)" "$TMP/ep.err"
check $? "epochs: each pass over a DataLoader counted where its iterator is made" \
	"exit $rc; epochs, steps: $st; $(grep 'steps:' "$TMP/ep.err")" "epochs, steps: $st"

# Without native frames, a wait for the GPU is a thread blocked under a
# `.item()` line (tests/python/sync_loop.py: a stand-in loss whose item()
# blocks 10 ms from C, as a CUDA tensor's would): sync, 10 ms a step.
$TS record -r 1000 --phases "$TMP/rules" -o "$TMP/sync.summary.json" -- $PY tests/python/sync_loop.py 40 \
	>"$TMP/sync.out" 2>"$TMP/sync.err"
rc=$?
/usr/bin/python3 - "$TMP/sync.summary.json" $(cat "$TMP/sync.out") >"$TMP/sync.check" 2>&1 <<'EOT'
import json, sys
loop = json.load(open(sys.argv[1]))["processes"][0]["loop"]
truth = float(sys.argv[5])
ms = loop["steps"]["phase_ms"]["sync"]
print("sync %.1f ms a step (truth %.1f)" % (ms, truth))
assert abs(ms - truth) <= 0.2 * truth, loop["steps"]
EOT
prc=$?
[ $rc -eq 0 ] && [ $prc -eq 0 ]
check $? "without --native, a thread blocked under a .item() line is sync, its time a step within 20%" \
	"exit $rc; $(tail -c 400 "$TMP/sync.check"); $(grep 'phases\|steps' "$TMP/sync.err")" "$(tail -1 "$TMP/sync.check")"

# Lightning's rules (Lightning is not in Debian) on stand-ins with its
# qualified names, files and call structure (tests/python/fake_lightning):
# the training step runs inside the optimizer's closure, and is still
# forward and backward; evaluation, logging and checkpoints have theirs.
$TS record -r 1000 -o "$TMP/lit.summary.json" -- $PY tests/python/lightning_loop.py 2 16 \
	>"$TMP/lit.out" 2>"$TMP/lit.err"
rc=$?
/usr/bin/python3 - "$TMP/lit.summary.json" $(cat "$TMP/lit.out") >"$TMP/lit.check" 2>&1 <<'EOT'
import json, sys
doc = json.load(open(sys.argv[1]))
steps = int(sys.argv[3])
loop = doc["processes"][0]["loop"]
ph = loop["phases"]
four = ("data", "forward", "backward", "optimizer")
got = {k: 100 * ph[k] / sum(ph[p] for p in four) for k in four}
print(" ".join("%s %.1f" % (k, got[k]) for k in four), "steps", loop["steps"]["count"])
assert all(abs(got[k] - w) <= 3 for k, w in zip(four, (40, 30, 20, 10))), got
assert loop["steps"]["count"] == steps, loop["steps"]
assert ph["eval"] > 0.05 and ph["logging"] > 0.005 and ph["checkpoint"] > 0.005, ph
assert [l["val_batches"] for l in loop["loaders"] if l["val_batches"]] == [8], loop["loaders"]
EOT
prc=$?
[ $rc -eq 0 ] && [ $prc -eq 0 ]
check $? "Lightning's call structure: data, forward, backward, optimizer within 3 points (the step inside the optimizer's closure), steps exact, eval, logging, checkpoint" \
	"exit $rc; $(tail -c 400 "$TMP/lit.check"); $(grep phases "$TMP/lit.err")" "$(tail -1 "$TMP/lit.check")"

# At 11 Hz a backward of 10 ms of CPU (three times longer in wall time on
# a loaded machine, still under a 91 ms period) falls between ticks at
# most steps: steps are not counted rather than counted wrong. Not 10 or
# 20 Hz: a period that is a multiple of the loop's 50 ms step keeps the
# ticks in step with it, and backward can be missed for good.
# A loaded machine slows the loop's step toward the 91 ms period; with
# ticks a period plus or minus a quarter apart that caught the same phase
# for tick after tick (CI counted 7 steps of 490 ms); the gaps are now
# drawn from 0.2 to 1.8 periods (sampler/loop.c).
$TS record -r 11 --phases "$TMP/rules" -o "$TMP/slow.folded" -- $PY tests/python/phase_loop.py 4 \
	>/dev/null 2>"$TMP/slow.err"
grep -q "^trainsample:   steps: not counted: backward is seen for [0-9.]* samples ([0-9.]* ms) at a time .* each must be seen for two samples" "$TMP/slow.err"
check $? "steps too short for the rate are not counted, and the line says why" "$(grep 'steps' "$TMP/slow.err")"

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

# The loop thread's time before its first step is startup in the
# grouped pictures as in the summary (imports, build_model's 0.4 s here;
# until issue 29 part 4 they were 'other'): it needs the samples' times,
# kept by record and read back from the .tsprof.
$TS record -q -r 500 --phases "$TMP/rules" --group-by phase -o "$TMP/su.folded" -o "$TMP/su.tsprof" -- \
	$PY tests/python/phase_loop.py 0.8 0.4 >/dev/null
$TS report -q "$TMP/su.tsprof" --phases "$TMP/rules" --group-by phase -o "$TMP/su2.folded"
startup=$(awk '/^\[phase: startup\];/ { n += $NF } END { print n + 0 }' "$TMP/su.folded")
[ "$startup" -ge 150 ] && grep -q '^\[phase: startup\];.*build_model (' "$TMP/su.folded" &&
	! grep -q '^\[phase: other\];.*build_model (' "$TMP/su.folded" &&
	grep -q '^\[phase: backward\];.*model_backward (' "$TMP/su.folded" &&
	cmp -s "$TMP/su.folded" "$TMP/su2.folded"
check $? "--group-by phase: the loop thread's time before its first step is startup (record, and report of the .tsprof)" \
	"$startup samples in startup; $(cut -d';' -f1 "$TMP/su.folded" | sort | uniq -c | tr '\n' ' ')"

printf 'data load_batch\nlunch eat\n' >"$TMP/bad"
$TS record --phases "$TMP/bad" -o "$TMP/bad.folded" -- $PY -c 'open("'"$TMP"'/ran", "w")' 2>"$TMP/bad.err"
rc=$?
[ $rc -eq 2 ] && [ ! -e "$TMP/ran" ] && grep -q "$TMP/bad:2: 'lunch' is not a phase" "$TMP/bad.err"
check $? "a wrong rule is refused with its file and line, before anything runs" "exit $rc: $(cat "$TMP/bad.err")"
$TS report "$TMP/pl.tsprof" --phase lunch -o "$TMP/x.folded" 2>"$TMP/ph.err"
rc=$?
[ $rc -eq 2 ] && grep -q "phase takes one of data, forward" "$TMP/ph.err"
check $? "--phase with no such phase is refused, naming the phases" "exit $rc: $(cat "$TMP/ph.err")"
