# Accuracy: time shares measured by the target itself (thread CPU clock)
# against the profile, under record and attach, at 1 kHz.
. tests/integration/lib.sh

check_shares() {
	mode=$1 folded=$2 truth=$3
	a_ns=$(awk '{ print $2 }' "$truth")
	b_ns=$(awk '{ print $4 }' "$truth")
	t_ns=$(awk '{ print $6 }' "$truth")
	total=$(folded_total "$folded")
	sa=$(percent "$(folded_with "$folded" hot_a)" "$total")
	sb=$(percent "$(folded_with "$folded" hot_b)" "$total")
	ta=$(percent "$a_ns" "$t_ns")
	tb=$(percent "$b_ns" "$t_ns")
	main=$(percent "$(folded_with "$folded" main)" "$total")
	unres=$(percent "$(folded_unresolved "$folded")" "$total")
	echo "$mode: $total samples; hot_a $sa% (truth $ta%), hot_b $sb% (truth $tb%), main $main%, unresolved $unres%"
	at_least "$total" 3000
	check $? "$mode: at least 3000 samples" "$total"
	within "$sa" "$ta" 3
	check $? "$mode: hot_a share within 3 points" "$sa vs $ta"
	within "$sb" "$tb" 3
	check $? "$mode: hot_b share within 3 points" "$sb vs $tb"
	at_least "$main" 95
	check $? "$mode: >= 95% of samples rooted at main" "$main%"
	below "$unres" 1
	check $? "$mode: < 1% unresolved" "$unres%"
}

$TS record -q -r 1000 -o "$TMP/r.folded" -- "$T/cpu_shares" 4 >"$TMP/r.out"
check_shares record "$TMP/r.folded" "$TMP/r.out"

"$T/cpu_shares" 5 >"$TMP/a.out" &
pid=$!
sleep 0.3
$TS attach "$pid" -q -r 1000 -d 4 -o "$TMP/a.folded"
wait $pid
check_shares attach "$TMP/a.folded" "$TMP/a.out"
