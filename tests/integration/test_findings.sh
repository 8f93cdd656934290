#!/bin/sh
# Findings (analysis/findings.c): each bottleneck reported on a small
# target that has it and not on one that does not, with its evidence, in
# the end of record, report --findings and summary.json.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

PY=/usr/bin/python3.11
[ -x $PY ] || PY=$(command -v python3)
cat >"$TMP/rules" <<'EOR'
data       load_batch
data       Loader.__next__
forward    model_forward
backward   model_backward
optimizer  optimizer_step
eval       evaluate
EOR

# The findings' ids of a recording, from its summary.json (validated).
ids() {
	$TS report -q "$TMP/$1.tsprof" --phases "$TMP/rules" -o "$TMP/$1.summary.json" &&
		/usr/bin/python3 - "$TMP/$1.summary.json" docs/summary.schema.json <<'EOT'
import json, sys, jsonschema
doc = json.load(open(sys.argv[1]))
jsonschema.validate(doc, json.load(open(sys.argv[2])))
print(" ".join(sorted({f["id"] for f in doc["findings"]})) or "none")
EOT
}

run() {
	name=$1
	shift
	$TS record -r 1000 --phases "$TMP/rules" -o "$TMP/$name.tsprof" -- "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
}

# has ID TARGET: the finding is among the target's; lacks: it is not.
has() { case " $(ids "$2") " in *" $1 "*) return 0 ;; esac; return 1; }

run data $PY tests/python/loader_loop.py 24
run sync $PY tests/python/sync_loop.py 30
run logging $PY tests/python/logging_loop.py 40
run plain $PY tests/python/phase_loop.py 1
run hotspot $PY tests/python/hotspot_loop.py 1.5
run slow $PY tests/python/phase_loop.py 1 2
run restart $PY tests/python/epochs_loop.py 3 10 0.3 0.2
run keep $PY tests/python/epochs_loop.py 3 20
$TS record -t -o "$TMP/gil.tsprof" -- $PY tests/python/threads.py 1 >/dev/null 2>"$TMP/gil.err"
# Twice as many spinning processes as CPUs, and one alone (which, on a
# machine others load, may wait for a CPU too: not its own doing).
$TS record -s -r 200 -o "$TMP/crowd.tsprof" -- $PY tests/python/spinners.py $(($(nproc) * 2)) 1 \
	>/dev/null 2>"$TMP/crowd.err"
$TS record -s -r 200 -o "$TMP/alone.tsprof" -- $PY tests/python/spinners.py 1 1 >/dev/null 2>&1
# ATen's copies, stood in for (tests/fake_aten): 20 ms of CPU of a 50 ms
# step in at::native::_to_copy, and a loop all in at::native::addmm.
for m in copies compute; do
	$TS record --native -o "$TMP/aten_$m.tsprof" -- \
		$PY tests/python/aten_copies.py build/tests/libfake_aten.so $m 1.5 >/dev/null 2>"$TMP/aten_$m.err"
done
# An OpenMP team of twice as many threads as CPUs, spinning at its
# barriers (OMP_WAIT_POLICY=active), and a team of one.
OMP_NUM_THREADS=$(($(nproc) * 2)) OMP_WAIT_POLICY=active \
	$TS record -o "$TMP/omp.tsprof" -- build/tests/targets/omp_spin 1 >/dev/null 2>"$TMP/omp.err"
OMP_NUM_THREADS=1 OMP_WAIT_POLICY=active \
	$TS record -o "$TMP/omp1.tsprof" -- build/tests/targets/omp_spin 1 >/dev/null 2>&1

for case in "data-bound data sync" "host-sync sync data" "logging logging plain" \
	"slow-startup slow plain" "worker-restart restart keep" "gil-contention gil plain" \
	"cpu-oversubscribed crowd alone" "cpu-oversubscribed omp omp1" "cpu-copies aten_copies aten_compute" \
	"python-hotspot hotspot plain"; do
	set -- $case
	has "$1" "$2" && ! has "$1" "$3"
	check $? "findings: $1 is found in $2, not in $3" "$2: $(ids "$2"); $3: $(ids "$3")" \
		"$2: $(ids "$2"); $3: $(ids "$3")"
done

# Evidence: the lines and numbers that show each.
$TS report "$TMP/sync.tsprof" --phases "$TMP/rules" --findings >"$TMP/sync.f" 2>&1
L=$(grep -n 'loss.item()' tests/python/sync_loop.py | cut -d: -f1)
grep -q "^trainsample:   \[[a-z]*\] host-sync, PID [0-9]*: the loop waits for the GPU: [0-9]*% of the loop's time" "$TMP/sync.f" &&
	grep -q "^trainsample:     main (sync_loop.py:$L): [0-9.]* ms a step$" "$TMP/sync.f" &&
	grep -q "^trainsample:     try: " "$TMP/sync.f"
check $? "findings: a host sync names the line that calls .item(), its time a step, and a hint" "$(cat "$TMP/sync.f")"
$TS report "$TMP/data.tsprof" --phases "$TMP/rules" --findings >"$TMP/data.f" 2>&1
grep -q "fetched from train_loader at main (loader_loop.py:[0-9]*)" "$TMP/data.f" &&
	grep -q "ms a step blocked waiting for a batch from the workers" "$TMP/data.f"
check $? "findings: data-bound names the loader, the line that fetches and the time blocked" "$(cat "$TMP/data.f")"
L=$(grep -n 'log.info(' tests/python/logging_loop.py | cut -d: -f1)
grep -q "^trainsample: findings, the costliest first" "$TMP/logging.err" &&
	grep -q "^trainsample:     main (logging_loop.py:$L): [0-9.]* ms a step$" "$TMP/logging.err"
check $? "findings: the end of record lists the top findings with the line that logs" \
	"$(grep -A4 findings "$TMP/logging.err")"
grep -q "^trainsample:     [^ ]* ([0-9]*) held it [0-9]*% of its time, was on a CPU [0-9]*%$" "$TMP/gil.err"
check $? "findings: GIL contention names each thread with its GIL and CPU shares" "$(grep -A4 findings "$TMP/gil.err")"
grep -q "^trainsample:   \[[a-z]*\] cpu-oversubscribed: [0-9.]* threads runnable on average for $(nproc) CPUs: [0-9]*% of their busy time waiting for a CPU$" "$TMP/crowd.err" &&
	grep -q "^trainsample:     waiting most: PID [0-9]* (.*spinners.py.*), thread [0-9]* MainThread: [0-9]*% of its busy time$" "$TMP/crowd.err"
check $? "findings: CPU oversubscription gives the runnable threads against the CPUs and the threads waiting most" \
	"$(grep -A5 findings "$TMP/crowd.err")"
# The recorder's machine-wide count (/proc/loadavg) splits the waiting.
grep -q "^trainsample:     the machine: [0-9.]* threads runnable on average (every process's, /proc/loadavg), [0-9.]* of them other processes' on these CPUs$" "$TMP/crowd.err" &&
	grep -q "^trainsample:     of the [0-9.]* s waiting, about [0-9.]* s ([0-9]*%) is the job's own threads outnumbering its CPUs, [0-9.]* s ([0-9]*%) other processes' load$" "$TMP/crowd.err"
check $? "findings: CPU oversubscription says how much of the waiting is the job's own threads and how much others'" \
	"$(grep -A7 findings "$TMP/crowd.err")"
L=$(grep -n 'line = json.dumps(RECORD)' tests/python/hotspot_loop.py | cut -d: -f1)
grep -q "^trainsample:   \[[a-z]*\] python-hotspot, PID [0-9]*: main (hotspot_loop.py:$L) takes [0-9]*% of the step, outside the model" "$TMP/hotspot.err" &&
	grep -q "^trainsample:     in JSONEncoder.[a-z]*encode (encoder.py:[0-9]*): [0-9.]* ms a step$" "$TMP/hotspot.err"
check $? "findings: a Python hotspot in the step names the loop's line and the function under it" \
	"$(grep -A6 findings "$TMP/hotspot.err")"
$TS report "$TMP/restart.tsprof" --phases "$TMP/rules" --findings >"$TMP/restart.f" 2>&1
grep -q "^trainsample:     the loop making the loader's iterator (DataLoader.__iter__, its workers starting) [0-9.]* s in all, [0-9.]* ms an epoch$" "$TMP/restart.f" &&
	awk '/ending each pass \(_shutdown_workers: its workers joined\)/ { ms = $(NF - 3) } END { exit !(ms >= 150 && ms <= 300) }' "$TMP/restart.f"
check $? "findings: worker-restart gives each epoch's start and its workers' shutdown (200 ms an epoch)" \
	"$(cat "$TMP/restart.f")"
grep -q "worker-restart, PID [0-9]*: each epoch starts loader again: 3 epochs" "$TMP/restart.f" &&
	grep -q "^trainsample:     try: persistent_workers=True on loader keeps its workers" "$TMP/restart.f"
check $? "findings: worker-restart names the loader that restarts" "$(cat "$TMP/restart.f")"
grep -q "^trainsample:     [0-9]*% of the busy time inside the OpenMP runtime (its threads waiting at barriers, spinning" "$TMP/omp.err"
check $? "findings: an OpenMP team spinning on too few CPUs is named with its time in the OpenMP runtime" \
	"$(grep -A5 findings "$TMP/omp.err")"
L=$(grep -n 'lib.fake_aten_to(' tests/python/aten_copies.py | cut -d: -f1)
grep -q "^trainsample:   \[[a-z]*\] cpu-copies, PID [0-9]*: tensor copies and conversions on the CPU take [0-9]*% of its busy time$" "$TMP/aten_copies.err" &&
	grep -q "^trainsample:     called from convert_batch (aten_copies.py:$L): [0-9]*% of busy time$" "$TMP/aten_copies.err" &&
	awk '/cpu-copies, PID/ { v = $(NF - 4) + 0 } END { exit !(v >= 30 && v <= 50) }' "$TMP/aten_copies.err"
check $? "findings: cpu-copies gives the share in ATen's copies (20 of 50 ms, within 10 points) and the line that converts" \
	"$(grep -A4 findings "$TMP/aten_copies.err")"
$TS report "$TMP/plain.tsprof" --findings >"$TMP/none.f" 2>&1
rc=$?
[ $rc -eq 0 ] && [ "$(wc -l <"$TMP/none.f")" -eq 1 ] && grep -q "^trainsample: no findings: " "$TMP/none.f"
check $? "findings: a recording without any says so in one line" "exit $rc: $(cat "$TMP/none.f")"
