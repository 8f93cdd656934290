# Thread storms (issue 13): a program starting thousands of short threads
# a second. Each new thread used to cost the target two ptrace stops, and
# most samples were new threads in clone3, "[truncated: no unwind info]".
# New threads' samples must unwind like any other, and the program must
# run as it does alone. (Its slowdown is a figure: bench/storm.sh.)
. tests/integration/lib.sh

# 20,000 threads, 4 at a time, each in storm_work for some tens of µs.
"$T/thread_storm" 20000 4 20000 >"$TMP/alone.out"
timeout 120 $TS record -q -r 1000 --stats -o "$TMP/storm.folded" -- \
	"$T/thread_storm" 20000 4 20000 >"$TMP/storm.out" 2>"$TMP/storm.err"
rc=$?
[ $rc -eq 0 ] && grep -q '^threads 20000 checksum ok$' "$TMP/storm.out" &&
	cmp -s "$TMP/alone.out" "$TMP/storm.out"
check $? "a storm of 20000 short threads runs to its end with its checksums intact" \
	"exit $rc: $(cat "$TMP/storm.out") $(tail -3 "$TMP/storm.err")"

samples=$(sed -n 's/^  samples *\([0-9]*\) .*/\1/p' "$TMP/storm.err")
truncated=$(sed -n 's/^  samples .*truncated \([0-9]*\).*/\1/p' "$TMP/storm.err")
errors=$(sed -n 's/^  errors *\([0-9]*\).*/\1/p' "$TMP/storm.err")
bad=$(( ${truncated:-0} + ${errors:-0} ))
at_least "${samples:-0}" 200 && below "$(percent "$bad" "${samples:-0}")" 2
check $? "under 2% of a storm's samples are truncated or errors" \
	"$bad of ${samples:-no} samples: $(grep -E '^  (samples|errors)' "$TMP/storm.err" | tr -s ' ')" \
	"$bad of $samples"

# In folded weights: the storm threads that ran were mostly in their work,
# under their own start (the rest is thread start and exit).
ran=$(folded_with "$TMP/storm.folded" start_thread)
work=$(awk '{ c = $NF; sub(/ [0-9]+$/, "") } /start_thread;storm_thread;storm_work$/ { n += c } END { print n + 0 }' "$TMP/storm.folded")
at_least "$work" 20 && at_least "$(percent "$work" "$ran")" 50
check $? "the storm threads' samples show their work: start_thread;storm_thread;storm_work" \
	"$work of $ran: $(sort -t' ' -k2 -rn "$TMP/storm.folded" | head -5)" "$(percent "$work" "$ran")% of $ran"

# A new thread that has not run yet is stopped at the return of clone3,
# where glibc has no CFI: that is its whole stack. (A few samples a few
# instructions later, before the child's CFI starts, stay truncated.)
whole=$(awk '/^clone3 [0-9]+$/ { n += $2 } END { print n + 0 }' "$TMP/storm.folded")
cut=$(awk '/^\[truncated[^;]*;clone3 [0-9]+$/ { n += $NF } END { print n + 0 }' "$TMP/storm.folded")
at_least "$whole" 20 && at_least "$whole" $((20 * cut))
check $? "a thread that has not run yet is sampled at clone3, its whole stack" \
	"$whole whole, $cut truncated: $(grep clone3 "$TMP/storm.folded" | grep -v start_thread)" \
	"$whole whole, $cut truncated"

grep -q 'a thread storm from' "$TMP/storm.err"
check $? "--stats says new threads were found at ticks" "$(grep '^  threads' "$TMP/storm.err")"

# A few threads at a time stay under the storm rate: seized as they start.
timeout 60 $TS record -q -r 1000 --stats -o "$TMP/few.folded" -- "$T/busy_threads" 8 0.5 \
	>"$TMP/few.out" 2>"$TMP/few.err"
rc=$?
[ $rc -eq 0 ] && ! grep -q 'thread storm' "$TMP/few.err" &&
	[ "$(folded_with_prefix "$TMP/few.folded" "busy_worker")" -gt 0 ]
check $? "eight threads are no storm, and are sampled" "exit $rc: $(grep '^  threads' "$TMP/few.err")"
