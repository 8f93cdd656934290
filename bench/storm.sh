#!/bin/sh
# make bench: thread storms. A C program starting 100,000 short threads
# (tests/targets/thread_storm, 4 at a time) and a Python one starting
# 20,000 (bench/pystorm.py), each alone and under `record -r 1000`, in
# alternating pairs; prints the wall times and the slowdown (fastest runs,
# and medians), and the share of truncated samples of the last run.
# The goal is a storm at most 1.5x as long.
#   PAIRS=5 STORM=100000 PYSTORM=20000 sh bench/storm.sh
# TS=path/to/trainsample measures another build (an older one, before).
cd "$(dirname "$0")/.." || exit 1
pairs=${PAIRS:-3}
TS=${TS:-build/trainsample}
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT

wall() { # wall seconds of a command, its output to $out/run.out
	s=$(date +%s.%N)
	"$@" >"$out/run.out" 2>"$out/run.err"
	e=$(date +%s.%N)
	grep -q 'checksum ok' "$out/run.out" || echo "  (run failed: $(cat "$out/run.out" "$out/run.err" | tail -2))" >&2
	awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f\n", e - s }'
}

storm() { # LABEL CMD...: PAIRS alternating pairs, alone and recorded
	label=$1
	shift
	: >"$out/alone"
	: >"$out/traced"
	for i in $(seq "$pairs"); do
		wall "$@" >>"$out/alone"
		wall "$TS" record -q -r 1000 --stats -o "$out/s.folded" -- "$@" >>"$out/traced"
		cp "$out/run.err" "$out/stats"
	done
	awk -v label="$label" -v alone="$out/alone" -v traced="$out/traced" '
		function load(f, v,   n, x) { n = 0; while ((getline x < f) > 0) v[++n] = x + 0; return n }
		function sort(v, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t } }
		function med(v, n) { return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
		BEGIN {
			n = load(alone, a); m = load(traced, b); sort(a, n); sort(b, m)
			printf "%-28s alone %6.2f s (median %6.2f)  -r 1000 %6.2f s (median %6.2f)  slowdown %.2fx (median %.2fx)\n",
				label, a[1], med(a, n), b[1], med(b, m), b[1] / a[1], med(b, m) / med(a, n)
		}'
	awk '/^  samples/ { gsub(/[(,]/, ""); printf "%-28s last run: %d samples, %d truncated (%.1f%%)\n", "", $2, $6, $2 ? 100 * $6 / $2 : 0 }
	     /^  threads/ { sub(/^  threads +/, ""); printf "%-28s threads %s\n", "", $0 }' "$out/stats"
}

echo "thread storms, $pairs alternating pairs (wall time):"
storm "C, ${STORM:-100000} threads" build/tests/targets/thread_storm "${STORM:-100000}" 4
if command -v python3 >/dev/null; then
	storm "Python, ${PYSTORM:-20000} threads" python3 bench/pystorm.py "${PYSTORM:-20000}" 4
fi
