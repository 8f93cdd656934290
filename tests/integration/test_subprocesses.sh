#!/bin/sh
# Following a tree of processes: multiprocessing under fork, spawn and
# forkserver (each worker's shares against its own clocks), a tree of a
# multiprocessing child, a subprocess, a non-Python program and zombies, a
# shell that starts Python later, 50 short-lived children at 1 kHz, a
# set-user-ID child, --no-subprocesses, attach -s on a running tree, and
# a SIGKILLed trainsample leaving every process running and untraced.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

PY=tests/python
# Interpreters without pyenv's shim (a bash script that forks its own).
interps="debian-3.11 /usr/bin/python3.11"
root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
p=$(ls -d "$root"/versions/3.13.*/bin/python3.13 2>/dev/null | sort -V | tail -1)
[ -n "$p" ] && interps="$interps
pyenv-3.13 $p"

# The folded lines of process $2 (its root frame) of file $1, root cut off.
folded_of_process() {
	awk -v p="process $2" '{
		i = index($0, ";"); if (i == 0) next
		r = substr($0, 1, i - 1)
		if (r == p || index(r, p " (") == 1) print substr($0, i + 1)
	}' "$1"
}

echo "$interps" | while read -r label py; do
	[ -x "$py" ] || { skip "$label: pool shares" "$label is not installed here"; continue; }
	methods="fork spawn forkserver"
	[ "$label" = pyenv-3.13 ] && methods="fork"
	for m in $methods; do
		out="$TMP/pool-$label-$m"
		# 500 Hz: the workers run 1.5 s each; at 100 Hz 300 samples left a
		# share 2.5 points either way from run to run.
		timeout 120 $TS record -q -r 500 -o "$out.folded" -- "$py" $PY/pool_shares.py $m >"$out.txt" 2>"$out.err"
		rc=$?
		pids=$(sed -n 's/.* pids //p' "$out.txt" | tr ',' ' ')
		h=0; l=0; missing=""
		for w in $pids; do
			folded_of_process "$out.folded" "$w" >"$out.$w"
			wh=$(folded_with_prefix "$out.$w" "heavy (")
			wl=$(folded_with_prefix "$out.$w" "light (")
			[ "$wh" -gt 0 ] && [ "$wl" -gt 0 ] || missing="$missing $w"
			h=$((h + wh)); l=$((l + wl))
		done
		# heavy NS light NS wall_heavy NS wall_light NS pids P,Q: the
		# wall clock's, as the samples count a worker waiting for a CPU
		# where it waits (one beside another script: 62.7% against 66.7%
		# of the CPU clock's, 3 points off).
		set -- $(cat "$out.txt")
		truth=$(percent "$6" "$(( $6 + $8 ))")
		got=$(percent "$h" "$((h + l))")
		[ $rc -eq 0 ] && [ -n "$pids" ] && [ -z "$missing" ]
		check $? "$label $m: every pool worker's heavy and light are in the profile, under its process" \
			"exit $rc, workers '$pids', missing in:$missing; $(head -c 300 "$out.err")"
		[ $rc -eq 0 ] && [ $((h + l)) -gt 50 ] && within "$got" "$truth" 3
		check $? "$label $m: the workers' heavy share within 3 points of their own clocks" \
			"$got% of $((h + l)) samples against $truth% (of CPU time $(percent "$2" "$(( $2 + $4 ))")%)" \
			"$got% against $truth% (of CPU time $(percent "$2" "$(( $2 + $4 ))")%)"
	done
done

# A tree: a multiprocessing child, a subprocess running Python, a C
# program, zombies for a second, and the parent.
py=/usr/bin/python3.11
if [ -x $py ]; then
	timeout 120 $TS record -o "$TMP/tree.folded" -o "$TMP/tree.tsprof" --stats -- $py $PY/tree.py \
		"$T/cpu_shares" 1 >"$TMP/tree.out" 2>"$TMP/tree.err"
	rc=$?
	n=$(cut -d';' -f1 "$TMP/tree.folded" | sort -u | grep -c '^process ')
	missing=""
	for f in "parent_spin (" "mp_child_spin (" "popen_child_spin (" "hot_a"; do
		[ "$(folded_with_prefix "$TMP/tree.folded" "$f")" -gt 0 ] || missing="$missing '$f'"
	done
	[ $rc -eq 0 ] && grep -q done "$TMP/tree.out" && [ -z "$missing" ]
	check $? "a tree: the parent, a multiprocessing child, a Python subprocess and a C program each in the profile" \
		"exit $rc, missing:$missing; $(head -c 400 "$TMP/tree.err")"
	hot=$(folded_of_process "$TMP/tree.folded" "$(sed -n 's/^trainsample: PID \([0-9]*\) (cpu_shares 1): .*/\1/p' "$TMP/tree.err")" |
		grep -c 'hot_a')
	[ "$n" -ge 4 ] && [ "$hot" -gt 0 ]
	check $? "a tree: a process root per process, the C program's under its own label" \
		"$n roots, hot_a lines under cpu_shares: $hot"
	grep -q "^trainsample: PID [0-9]* (cpu_shares 1): [0-9]* samples" "$TMP/tree.err" &&
		grep -q "^  processes  *[4-9][0-9]* sampled\|^  processes  *[4-9] sampled" "$TMP/tree.err"
	check $? "a tree: a summary line per process, and --stats counts them" "$(grep -E 'PID|processes' "$TMP/tree.err")"

	# Each output names the processes by label; report keeps one by it.
	cpid=$(sed -n 's/^trainsample: PID \([0-9]*\) (cpu_shares 1): .*/\1/p' "$TMP/tree.err")
	$TS report -q "$TMP/tree.tsprof" --process "cpu_shares 1" -o "$TMP/one.folded" \
		-o "$TMP/tree.speedscope.json" -o "$TMP/tree.pb.gz"
	$TS report -q "$TMP/tree.tsprof" -o "$TMP/all.speedscope.json" -o "$TMP/all.pb.gz"
	roots=$(cut -d';' -f1 "$TMP/one.folded" | sort -u | tr '\n' '|')
	names=$(python3 -c 'import json, sys; print("|".join(p["name"] for p in json.load(open(sys.argv[1]))["profiles"]))' \
		"$TMP/all.speedscope.json")
	labels=$(python3 tests/integration/pprof_count.py "$TMP/all.pb.gz" --by process | cut -d' ' -f1-2 | sort -u | tr '\n' '|')
	[ -n "$cpid" ] && [ "$roots" = "process $cpid (cpu_shares 1)|" ] &&
		case "$names" in *"cpu_shares 1 ($cpid) / "*) true ;; *) false ;; esac &&
		case "$labels" in *"cpu_shares 1|"*) true ;; *) false ;; esac
	check $? "a tree: report --process keeps one process; speedscope and pprof name each by its label" \
		"roots '$roots'; speedscope '$names'; pprof process labels '$labels'"

	# The same without following: the end says how many were left out.
	timeout 120 $TS record --no-subprocesses -o "$TMP/one.folded" -- $py $PY/tree.py "$T/cpu_shares" 1 \
		>"$TMP/one.out" 2>"$TMP/one.err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(folded_with_prefix "$TMP/one.folded" "popen_child_spin (")" -eq 0 ] &&
		[ "$(folded_with_prefix "$TMP/one.folded" "parent_spin (")" -gt 0 ] &&
		! grep -q '^process ' "$TMP/one.folded" &&
		grep -q "child processes were not profiled; -s (--subprocesses) includes them" "$TMP/one.err"
	check $? "--no-subprocesses: the command's process only, and the end says how many were left out" \
		"exit $rc; $(tail -3 "$TMP/one.err")"
else
	skip "a tree of processes" "/usr/bin/python3.11 is not installed here"
fi

# A shell script that starts Python after a while.
cat >"$TMP/later.sh" <<EOS
#!/bin/sh
sleep 0.5
$py -c 'import time
def started_later():
    end = time.thread_time() + 0.8
    while time.thread_time() < end:
        pass
started_later()'
echo later-done
EOS
chmod +x "$TMP/later.sh"
timeout 60 $TS record -o "$TMP/later.folded" -- sh "$TMP/later.sh" >"$TMP/later.out" 2>"$TMP/later.err"
rc=$?
[ $rc -eq 0 ] && grep -q later-done "$TMP/later.out" &&
	[ "$(folded_with_prefix "$TMP/later.folded" "started_later (")" -gt 20 ]
check $? "a shell that starts Python later: its Python frames are in the profile" \
	"exit $rc, $(folded_with_prefix "$TMP/later.folded" "started_later (") samples; $(tail -3 "$TMP/later.err")"

# 50 short-lived children while sampling at 1 kHz; the exit status is the command's.
timeout 120 $TS record -r 1000 --stats -o "$TMP/many.folded" -- \
	sh -c 'for i in $(seq 50); do sh -c "i=0; while [ \$i -lt 3000 ]; do i=\$((i+1)); done"; done; exit 7' \
	>"$TMP/many.out" 2>"$TMP/many.err"
rc=$?
n=$(sed -n 's/^  processes  *\([0-9]*\) sampled.*/\1/p' "$TMP/many.err")
[ $rc -eq 7 ] && [ "${n:-0}" -ge 51 ] && ! grep -q "child processes were not profiled" "$TMP/many.err"
check $? "50 short-lived children at 1 kHz: each followed, the command's status kept" \
	"exit $rc (want 7), processes '${n}'; $(tail -5 "$TMP/many.err")" "${n} processes"
roots=$(cut -d';' -f1 "$TMP/many.folded" | sort -u | grep -c '^process ')
[ "$roots" -ge 20 ]
check $? "50 short-lived children: at least 20 of them sampled, each under its own root" "$roots roots"
grep -q "^trainsample: and [0-9]* more processes with [0-9]* samples in all$" "$TMP/many.err" &&
	[ "$(grep -c '^trainsample: PID [0-9]* (' "$TMP/many.err")" -eq 12 ]
check $? "50 short-lived children: the end names the 12 busiest processes and counts the rest" \
	"$(grep '^trainsample: \(PID\|and\)' "$TMP/many.err" | tail -3)"

# DataLoader workers are named from their worker loop's worker_id (a
# stand-in with torch's file path and arguments: no torch needed here).
timeout 60 $TS record -o "$TMP/fw.folded" -o "$TMP/fw.pb.gz" -- $py $PY/fake_workers.py \
	>"$TMP/fw.out" 2>"$TMP/fw.err"
rc=$?
set -- $(cat "$TMP/fw.out")
w0=$(grep -c "^process $2 (DataLoader worker 0);.*fetch_item (" "$TMP/fw.folded")
w1=$(grep -c "^process $3 (DataLoader worker 1);.*fetch_item (" "$TMP/fw.folded")
ids=$(python3 tests/integration/pprof_count.py "$TMP/fw.pb.gz" --by worker | cut -d' ' -f1 | tr '\n' ' ')
[ $rc -eq 0 ] && [ "$w0" -gt 0 ] && [ "$w1" -gt 0 ] && [ "$ids" = "0 1 " ]
check $? "worker processes running torch's worker loop are labelled 'DataLoader worker 0' and '1'" \
	"exit $rc, workers $2 $3: lines $w0 $w1, pprof worker labels '$ids'; $(grep PID "$TMP/fw.err")"

# A set-user-ID child (run as root, the kernel honours it under ptrace):
# left alone with one line, and it runs as its owner.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	cp "$(command -v id)" "$TMP/suid-id"
	chown nobody "$TMP/suid-id" && chmod 4755 "$TMP/suid-id"
	timeout 60 $TS record -o "$TMP/suid.folded" -- sh -c "\"$TMP/suid-id\" -u; echo suid-done" \
		>"$TMP/suid.out" 2>"$TMP/suid.err"
	rc=$?
	[ $rc -eq 0 ] && grep -qx "$(id -u nobody)" "$TMP/suid.out" && grep -q suid-done "$TMP/suid.out" &&
		grep -q "runs as another user (set-user-ID" "$TMP/suid.err"
	check $? "a set-user-ID child is left alone with one line, and runs as its owner" \
		"exit $rc; out: $(cat "$TMP/suid.out"); err: $(head -c 400 "$TMP/suid.err")"
else
	skip "a set-user-ID child" "needs root and a user nobody"
fi

# attach -s to a running tree: workers started before attach are found.
if [ -x $py ]; then
	$py $PY/spin_workers.py 2 30 >"$TMP/tree.pids" &
	parent=$!
	reap_later $parent
	wait_file "$TMP/tree.pids" 10
	kids=$(cat "$TMP/tree.pids")
	for k in $kids; do reap_later "$k"; done
	timeout 60 $TS attach -s "$parent" -d 1.5 -o "$TMP/attach.folded" 2>"$TMP/attach.err"
	rc=$?
	found=0
	for k in $kids; do
		[ "$(folded_of_process "$TMP/attach.folded" "$k" | grep -c 'worker_spin (')" -gt 0 ] &&
			found=$((found + 1))
	done
	left=""
	for p in $parent $kids; do
		[ "$(tracer_of "$p")" = 0 ] && [ "$(proc_state "$p")" != t ] || left="$left $p"
	done
	[ $rc -eq 0 ] && [ $found -eq 2 ] && [ -z "$left" ]
	check $? "attach -s: both running workers sampled under their processes, and every process let go" \
		"exit $rc, $found of 2 workers; still traced or stopped:$left; $(tail -3 "$TMP/attach.err")"

	# Without -s: the end says the two workers were not profiled.
	timeout 60 $TS attach "$parent" -d 0.5 -o "$TMP/attach1.folded" 2>"$TMP/attach1.err"
	grep -q "2 child processes were not profiled; -s (--subprocesses)" "$TMP/attach1.err"
	check $? "attach without -s: the end counts the children left out" "$(tail -3 "$TMP/attach1.err")"

	# SIGKILL of trainsample mid-run: nothing stays stopped or traced.
	$TS record -o "$TMP/killed.folded" -- $py $PY/spin_workers.py 3 20 sleepy \
		>"$TMP/killed.pids" 2>"$TMP/killed.err" &
	ts=$!
	reap_later $ts
	wait_file "$TMP/killed.pids" 10
	sleep 1
	kids=$(cat "$TMP/killed.pids")
	for k in $kids; do reap_later "$k"; done
	traced=0
	for k in $kids; do [ "$(tracer_of "$k")" = "$ts" ] && traced=$((traced + 1)); done
	kill -9 $ts
	wait $ts 2>/dev/null
	sleep 0.3
	bad=""
	for k in $kids; do
		st=$(proc_state "$k")
		{ [ -n "$st" ] && [ "$st" != t ] && [ "$st" != T ] && [ "$(tracer_of "$k")" = 0 ]; } ||
			bad="$bad $k:${st:-gone}:$(tracer_of "$k")"
	done
	[ -n "$kids" ] && [ $traced -eq 3 ] && [ -z "$bad" ]
	check $? "SIGKILL of trainsample: every followed process runs on, untraced" \
		"workers '$kids', $traced of 3 traced before the kill; bad:$bad"
	for k in $kids; do kill "$k" 2>/dev/null; done
fi

# Ctrl-Z (SIGTSTP) of trainsample: the whole tree is let go while it is
# stopped, and followed again once it is continued.
if [ -x $py ]; then
	$TS record -o "$TMP/tstp.folded" -- $py $PY/spin_workers.py 2 6 >"$TMP/tstp.pids" 2>"$TMP/tstp.err" &
	ts=$!
	reap_later $ts
	wait_file "$TMP/tstp.pids" 10
	sleep 0.5
	kids=$(cat "$TMP/tstp.pids")
	for k in $kids; do reap_later "$k"; done
	kill -TSTP $ts
	i=0
	while [ "$(proc_state $ts)" != T ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	during=""
	for k in $kids; do during="$during $(tracer_of "$k")"; done
	kill -CONT $ts
	after=""
	for k in $kids; do wait_tracer "$k" "$ts" 5; after="$after $(tracer_of "$k")"; done
	wait $ts
	rc=$?
	[ $rc -eq 0 ] && [ "$during" = " 0 0" ] && [ "$after" = " $ts $ts" ]
	check $? "Ctrl-Z: every followed process is let go while trainsample is stopped, and followed again after" \
		"exit $rc, tracers while stopped:$during, after SIGCONT:$after (trainsample $ts)"
fi

# Two recordings of a tree made with {rank} names, merged: every process
# of both, each under its own label.
if [ -x $py ]; then
	for r in 0 1; do
		RANK=$r timeout 120 $TS record -q -o "$TMP/m-{rank}.tsprof" -o "$TMP/m$r.folded" -- \
			$py $PY/tree.py >/dev/null 2>&1
	done
	$TS report -q "$TMP/m-0.tsprof" "$TMP/m-1.tsprof" -o "$TMP/m.folded"
	roots() { cut -d';' -f1 "$1" | grep '^process ' | sort -u | wc -l; }
	n0=$(roots "$TMP/m0.folded"); n1=$(roots "$TMP/m1.folded"); n=$(roots "$TMP/m.folded")
	l0=$(cut -d';' -f1 "$TMP/m.folded" | grep -c '^process [0-9]* (rank 0)$')
	l1=$(cut -d';' -f1 "$TMP/m.folded" | grep -c '^process [0-9]* (rank 1)$')
	[ -s "$TMP/m-0.tsprof" ] && [ -s "$TMP/m-1.tsprof" ] && [ "$n" -eq $((n0 + n1)) ] && [ "$n0" -ge 3 ] &&
		[ "$l0" -gt 0 ] && [ "$l1" -gt 0 ] &&
		within "$(folded_total "$TMP/m.folded")" $(( $(folded_total "$TMP/m0.folded") + $(folded_total "$TMP/m1.folded") )) 3
	check $? "report of two {rank} recordings of trees: every process of both, labelled by rank" \
		"roots $n0 + $n1 -> $n, rank 0 lines $l0, rank 1 lines $l1, totals (rounded per line) $(folded_total "$TMP/m0.folded") + $(folded_total "$TMP/m1.folded") -> $(folded_total "$TMP/m.folded")"
fi

# PyTorch (the sid root's, make sid-root-torch): DataLoader workers and
# torchrun's ranks, each labelled by its role.
if ! sid_root_ready || [ ! -f build/sid-root/.stamp-torch ]; then
	why=${sid_root_why:-no torch in the sid root (make sid-root-torch)}
	skip "sid-3.14 torch: DataLoader workers labelled, persistent and not" "$why"
	skip "sid-3.14 torchrun --nproc-per-node 2 (gloo): rank 0 and rank 1" "$why"
	exit 0
fi
for mode in persistent transient; do
	timeout 120 $TS record -r 200 -o "$TMP/dl-$mode.folded" -o "$TMP/dl-$mode.pb.gz" -- \
		tests/sid/python3.14 $PY/torch_workers.py 3 $mode >"$TMP/dl-$mode.out" 2>"$TMP/dl-$mode.err"
	rc=$?
	epochs=$(sed -n 's/^epochs //p' "$TMP/dl-$mode.out")
	bad=""
	for w in 0 1; do
		n=$(grep "^process [0-9]* (DataLoader worker $w);" "$TMP/dl-$mode.folded" |
			grep -c "SlowItems.__getitem__ (torch_workers.py:")
		[ "$n" -gt 0 ] || bad="$bad worker-$w"
	done
	procs=$(grep -o "^process [0-9]* (DataLoader worker [01]);" "$TMP/dl-$mode.folded" | sort -u | wc -l)
	want=2
	[ $mode = transient ] && want=$((2 * ${epochs:-1}))
	lab=$(python3 tests/integration/pprof_count.py "$TMP/dl-$mode.pb.gz" --by worker | wc -l)
	[ $rc -eq 0 ] && [ -z "$bad" ] && [ "${epochs:-0}" -ge 2 ] && [ "$procs" -ge "$want" ] && [ "$lab" -eq 2 ]
	check $? "sid-3.14 torch $mode: __getitem__ under 'DataLoader worker 0' and '1', every worker process labelled" \
		"exit $rc, epochs ${epochs}, missing:$bad, $procs labelled worker processes (want $want), pprof worker values $lab; $(grep PID "$TMP/dl-$mode.err" | head -8)" \
		"$procs worker processes over ${epochs} epochs"
done

USE_LIBUV=0 timeout 180 $TS record -r 100 -o "$TMP/ranks.folded" -o "$TMP/ranks.pb.gz" \
	-o "$TMP/ranks.trace.json" -- tests/sid/python3.14 $PY/torchrun_nolibuv.py --nproc-per-node 2 \
	--master-port $((29500 + $$ % 400)) $PY/torch_ranks.py 2 >"$TMP/ranks.out" 2>"$TMP/ranks.err"
rc=$?
r0=$(grep "^process [0-9]* (rank 0);" "$TMP/ranks.folded" | grep -c "rank_work (torch_ranks.py:")
r1=$(grep "^process [0-9]* (rank 1);" "$TMP/ranks.folded" | grep -c "rank_work (torch_ranks.py:")
ranks=$(python3 tests/integration/pprof_count.py "$TMP/ranks.pb.gz" --by rank | cut -d' ' -f1 | tr '\n' ' ')
tracks=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
print(" ".join(sorted({e["args"]["name"] for e in ev if e.get("name") == "process_name" and e["args"]["name"].startswith("rank ")})))' \
	"$TMP/ranks.trace.json")
[ $rc -eq 0 ] && grep -q "rank 0 done" "$TMP/ranks.out" && [ "$r0" -gt 0 ] && [ "$r1" -gt 0 ] &&
	[ "$ranks" = "0 1 " ] && [ "$tracks" = "rank 0 rank 1" ]
check $? "sid-3.14 torchrun --nproc-per-node 2 (gloo): rank 0 and rank 1 in the flamegraph, pprof and trace" \
	"exit $rc, rank_work lines: rank 0 $r0, rank 1 $r1; pprof ranks '$ranks'; trace processes '$tracks'; $(grep -i 'error\|exception\|exitcode' "$TMP/ranks.err" | head -4)"
