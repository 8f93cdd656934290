#!/bin/sh
# dump without a tracer, on every CPython present: while another
# trainsample records the process, right after the interpreter starts, and
# without seizing a thread it need not stop (checked with strace).
. tests/integration/lib.sh
P=tests/python
LAUNCHES=${LAUNCHES:-40}
have_strace=$(command -v strace)

# dump while `trainsample attach` records the process: the stacks are read
# without a tracer, one line says why, --native says why it cannot, and the
# recording and the target go on unharmed.
under_record() {
	label=$1 py=$2
	# On the versions that span the walk's cost (the oldest layout, 3.12,
	# Debian's stripped 3.11 and the newest): reading without a tracer is
	# one code for all, the walk it does is just_started's on each.
	case $label in pyenv-3.8|pyenv-3.12|debian-3.11|sid-3.14) ;; *) return 0 ;; esac
	rm -f "$TMP/threads.out"
	"$py" $P/threads.py 3.5 >"$TMP/threads.out" &
	pid=$!
	reap_later $pid
	wait_file "$TMP/threads.out"
	sleep 0.5 # the threads reach their functions
	$TS attach $pid -q -r 200 -d 1.5 -o "$TMP/rec.folded" 2>"$TMP/rec.err" &
	rec=$!
	reap_later $rec
	wait_tracer $pid $rec
	traced=$(tracer_of $pid)
	$TS dump --pid $pid >"$TMP/u.txt" 2>"$TMP/u.err"
	rc=$?
	$TS dump --pid $pid --json >"$TMP/u.json" 2>/dev/null
	jrc=$?
	$TS dump --pid $pid --native >/dev/null 2>"$TMP/un.err"
	nrc=$?
	still=$(tracer_of $pid)
	wait $rec
	rrc=$?
	after=$(tracer_of $pid) state=$(proc_state $pid)
	wait $pid
	trc=$?
	[ "$traced" = "$rec" ] && [ "$still" = "$rec" ] && [ $rc -eq 0 ] &&
		grep -q '^Process [0-9]*: Python 3\.' "$TMP/u.txt" &&
		grep -q '^Thread [0-9]* "MainThread" ' "$TMP/u.txt" &&
		grep -q '^Thread [0-9]* "loader" ' "$TMP/u.txt" && grep -q '^    spin_loader (threads.py:' "$TMP/u.txt" &&
		grep -q '^Thread [0-9]* "trainer" ' "$TMP/u.txt" && grep -q '^    spin_trainer (threads.py:' "$TMP/u.txt" &&
		grep -q '^Thread [0-9]* "sleeper" (idle: ' "$TMP/u.txt" && grep -q '^    sleeper (threads.py:24)' "$TMP/u.txt"
	check $? "$label: dump while trainsample records the process lists every thread with its frames" \
		"tracer $traced then $still (record $rec), exit $rc: $(head -c 600 "$TMP/u.txt") $(cat "$TMP/u.err")"
	[ "$(grep -c . "$TMP/u.err")" = 1 ] &&
		grep -q "^trainsample: PID $pid is traced by PID $rec (trainsample): its stacks were read without stopping any thread$" "$TMP/u.err"
	check $? "$label: one line says the stacks were read without stopping, and who traces the process" \
		"$(cat "$TMP/u.err")"
	[ $jrc -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = {t["name"] for t in d["threads"]}
assert {"MainThread", "loader", "trainer", "sleeper"} <= names, names
' "$TMP/u.json" 2>"$TMP/u.jcheck"
	check $? "$label: dump --json while recorded" "exit $jrc: $(cat "$TMP/u.jcheck")"
	[ $nrc -eq 1 ] && grep -q "already traced by PID $rec (trainsample).*without --native, dump reads" "$TMP/un.err"
	check $? "$label: dump --native while recorded says why it cannot and what works" \
		"exit $nrc: $(cat "$TMP/un.err")"
	[ $rrc -eq 0 ] && [ "$(folded_with_prefix "$TMP/rec.folded" "spin_loader (")" -gt 0 ] &&
		[ "$after" = 0 ] && [ "$state" != t ] && [ $trc -eq 0 ]
	check $? "$label: the recording finishes normally and the target runs on to its end" \
		"record exit $rrc ($(cat "$TMP/rec.err")), $(folded_total "$TMP/rec.folded") samples, tracer after $after, state $state, target exit $trc"
}

# dump 5 ms after a launch: the interpreter may have no thread state yet
# (3 of 40 such dumps listed no thread before dump waited for one).
just_started() {
	label=$1 py=$2 bad=""
	for i in $(seq "$LAUNCHES"); do
		"$py" -c 'import time; time.sleep(30)' &
		p=$!
		# The sid root's interpreters start as a chain of execs (sh,
		# unshare, chroot): 5 ms after the interpreter's, not after
		# the chain's, as for the others.
		case $label in
		sid-*)
			j=0
			while [ $j -lt 200 ]; do
				case $(readlink /proc/$p/exe) in */python3.*) break ;; esac
				sleep 0.005
				j=$((j + 1))
			done
			;;
		esac
		sleep 0.005
		$TS dump --pid $p >"$TMP/s.txt" 2>&1
		rc=$?
		grep -q "^Thread $p " "$TMP/s.txt" && [ $rc -eq 0 ] ||
			bad="$bad $i (exit $rc: $(head -c 200 "$TMP/s.txt" | tr '\n' ' '))"
		kill $p 2>/dev/null
		wait $p 2>/dev/null
	done
	[ -z "$bad" ]
	check $? "$label: dump 5 ms after each of $LAUNCHES launches lists the main thread" "none in launch$bad"
}

# What dump does to the process, as strace sees it: a blocked process is
# never seized; a running GIL holder is seized alone, walked, and let go;
# --nonblocking seizes nothing.
no_seize() {
	label=$1 py=$2
	if [ -z "$have_strace" ]; then
		skip "$label: dump seizes no thread of a blocked process" "strace is not installed"
		skip "$label: dump seizes a running GIL holder alone and lets it go" "strace is not installed"
		return
	fi
	rm -f "$TMP/sl.out"
	"$py" -c 'import time
def nap():
    print("ready", flush=True)
    time.sleep(30)
nap()' >"$TMP/sl.out" &
	sl=$!
	reap_later $sl
	"$py" -c 'import sys
def spin():
    print("ready", flush=True)
    while True:
        pass
spin()' >"$TMP/sp.out" &
	sp=$!
	reap_later $sp
	wait_file "$TMP/sl.out" && wait_file "$TMP/sp.out"
	strace -f -qq -e trace=ptrace -o "$TMP/sl.strace" $TS dump --pid $sl >"$TMP/sl.txt" 2>&1
	src=$?
	strace -f -qq -e trace=ptrace -o "$TMP/sp.strace" $TS dump --pid $sp >"$TMP/sp.txt" 2>&1
	prc=$?
	strace -f -qq -e trace=ptrace -o "$TMP/nb.strace" $TS dump --pid $sp --nonblocking >"$TMP/nb.txt" 2>&1
	nrc=$?
	sp_state=$(proc_state $sp) sp_tracer=$(tracer_of $sp) sl_tracer=$(tracer_of $sl)
	kill $sl $sp 2>/dev/null
	wait $sl $sp 2>/dev/null
	[ $src -eq 0 ] && ! grep -q 'PTRACE_\(SEIZE\|ATTACH\|INTERRUPT\)' "$TMP/sl.strace" &&
		grep -q "^Thread $sl .*(idle: " "$TMP/sl.txt" && grep -q '^    nap (<string>:4)' "$TMP/sl.txt" &&
		[ "$sl_tracer" = 0 ]
	check $? "$label: dump seizes no thread of a blocked process" \
		"exit $src, tracer $sl_tracer; $(grep -c . "$TMP/sl.strace") ptrace calls: $(head -c 300 "$TMP/sl.strace"); $(head -c 300 "$TMP/sl.txt")"
	seized=$(sed -n 's/.*ptrace(PTRACE_SEIZE, \([0-9]*\),.*/\1/p' "$TMP/sp.strace" | tr '\n' ' ')
	[ $prc -eq 0 ] && [ "$seized" = "$sp " ] && grep -q "ptrace(PTRACE_DETACH, $sp," "$TMP/sp.strace" &&
		grep -q "^Thread $sp .*holds the GIL" "$TMP/sp.txt" && grep -q '^    spin (<string>:[45])' "$TMP/sp.txt" &&
		[ "$sp_tracer" = 0 ] && [ "$sp_state" != t ] &&
		[ $nrc -eq 0 ] && ! grep -q 'PTRACE_SEIZE' "$TMP/nb.strace" && grep -q "^Thread $sp " "$TMP/nb.txt"
	check $? "$label: dump seizes a running GIL holder alone and lets it go; --nonblocking seizes nothing" \
		"exit $prc/$nrc, seized '$seized', tracer $sp_tracer, state $sp_state: $(head -c 300 "$TMP/sp.strace"); $(head -c 300 "$TMP/sp.txt"); $(head -c 200 "$TMP/nb.txt")"
}

python_interpreters >"$TMP/pythons"
while read -r label py; do
	case " ${ONLY:-$label} " in *" $label "*) ;; *) continue ;; esac
	if [ -z "$py" ]; then
		for t in "dump while recorded" "dump right after start" "dump seizes nothing it need not"; do
			skip "$label: $t" "$(python_missing_why "$label")"
		done
		continue
	fi
	under_record "$label" "$py"
	just_started "$label" "$py"
	no_seize "$label" "$py"
done <"$TMP/pythons"

# A native program is still seized whole for its native stacks, and let go.
# It runs 2 s, so that on a slow machine the dump (50 ms here) ends well
# before it does (a process that ends mid-dump is tested in test_unwind).
$T/busy_threads 2 2 >/dev/null &
bp=$!
reap_later $bp
sleep 0.2
$TS dump --pid $bp >"$TMP/n.txt" 2>&1
rc=$?
tracer=$(tracer_of $bp)
wait $bp
brc=$?
[ $rc -eq 0 ] && grep -q '^Process [0-9]*: no Python interpreter (native stacks)' "$TMP/n.txt" &&
	grep -q '^    main \[busy_threads\]' "$TMP/n.txt" && [ "$tracer" = 0 ] && [ $brc -eq 0 ]
check $? "a native program: dump prints its native stacks and lets it go" \
	"exit $rc, tracer $tracer, target exit $brc: $(head -c 400 "$TMP/n.txt")"

# A frame without a symbol shows its address and module once:
# "0x401136 (bt-stripped)", not "0x401136 (bt-stripped) [bt-stripped]".
cp $T/busy_threads "$TMP/bt-stripped" && strip -s "$TMP/bt-stripped"
"$TMP/bt-stripped" 2 5 >/dev/null &
bp=$!
reap_later $bp
sleep 0.2
$TS dump --pid $bp >"$TMP/st.txt" 2>&1
rc=$?
kill $bp 2>/dev/null
wait $bp
[ $rc -eq 0 ] && grep -q '^    0x[0-9a-f]* (bt-stripped)$' "$TMP/st.txt" && ! grep -q '(bt-stripped) \[' "$TMP/st.txt"
check $? "dump: a frame without a symbol shows its address and module once" \
	"exit $rc: $(head -c 600 "$TMP/st.txt")"
