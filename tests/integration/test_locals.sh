# dump --locals on every CPython present: a frame whose locals are known
# (each type rendered, a 10 MB str, a recursive list, a cell and a free
# variable), as text, as JSON and with --native; nothing without --locals;
# and a thread that calls and returns a function all along, dumped again
# and again: its frames show their locals as they were, or a marker.
. tests/integration/lib.sh
P=tests/python

locals_dump() {
	label=$1 py=$2
	rm -f "$TMP/ready"
	"$py" $P/locals.py "$TMP/ready" &
	pid=$!
	reap_later $pid
	wait_file "$TMP/ready" 20
	rcs=""
	$TS dump --pid $pid --locals >"$TMP/l.txt" 2>&1; rcs="$rcs $?"
	$TS dump --pid $pid --locals --json >"$TMP/l.json" 2>"$TMP/l.err"; rcs="$rcs $?"
	$TS dump --pid $pid --locals --native >"$TMP/ln.txt" 2>&1; rcs="$rcs $?"
	$TS dump --pid $pid >"$TMP/plain.txt" 2>&1; rcs="$rcs $?"
	churn=""
	for i in 1 2 3 4 5 6 7 8; do
		$TS dump --pid $pid --locals >"$TMP/c$i.txt" 2>&1; rcs="$rcs $?"
		churn="$churn $TMP/c$i.txt"
	done
	# Without the stop the holder's frames move under the read: no
	# promise on its values, only that dump finishes and says something.
	for i in 1 2 3 4; do
		$TS dump --pid $pid --locals --nonblocking >"$TMP/n$i.txt" 2>&1; rcs="$rcs $?"
	done
	state=$(proc_state $pid) tracer=$(tracer_of $pid)
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	[ -z "$(echo $rcs | tr -d ' 0')" ] && [ "$state" != t ] && [ "$tracer" = 0 ]
	check $? "$label: dump --locals runs to the end each time and leaves the process running" \
		"exits$rcs, state $state, tracer $tracer: $(head -c 300 "$TMP/l.txt")"
	# shellcheck disable=SC2086
	python3 tests/integration/locals_check.py "$TMP/l.txt" "$TMP/l.json" "$TMP/ln.txt" \
		"$TMP/plain.txt" $churn >"$TMP/check.out" 2>&1
	check $? "$label: each local's rendering, as text, JSON and with --native; none without --locals; the churning frames as they were" \
		"$(tail -c 800 "$TMP/check.out")" "$(tail -1 "$TMP/check.out")"
	grep -q '^Thread [0-9]* "churner"' "$TMP/n1.txt" && grep -q '^Thread [0-9]* "churner"' "$TMP/n4.txt"
	check $? "$label: dump --locals --nonblocking lists the churning thread" "$(head -c 600 "$TMP/n1.txt")"
}

python_interpreters >"$TMP/pythons"
while read -r label py; do
	case " ${ONLY:-$label} " in *" $label "*) ;; *) continue ;; esac
	if [ -z "$py" ]; then
		skip "$label: dump --locals" "$(python_missing_why "$label")"
		continue
	fi
	locals_dump "$label" "$py"
done <"$TMP/pythons"
