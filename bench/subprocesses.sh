#!/bin/sh
# make bench: the cost of following a tree of processes. A fixed amount of
# CPU work split over 4 worker processes (bench/pool4.py, a Pool under
# fork), alone and under `record` (which follows them) at 100 Hz and
# 1 kHz, alternating, the job pinned to CPU 1 and trainsample to CPU 0.
# Prints the median slowdown of the job's wall time, trainsample's CPU
# time and its peak memory, and both per followed process. Figures only.
#   PAIRS=10 sh bench/subprocesses.sh     (default 5)
cd "$(dirname "$0")/.." || exit 1
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)
pairs=${PAIRS:-5}
TS=${TS:-build/trainsample}
tmp=$(mktemp -d /tmp/trainsample-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if [ "$(nproc)" -lt 2 ]; then
	echo "bench: needs 2 CPUs to pin the job and trainsample apart; the figures will be unreliable"
fi
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "4 worker processes ($PY bench/pool4.py), alone and under record, $pairs pairs per rate:"
for rate in 100 1000; do
	: >"$tmp/ratios"; : >"$tmp/cpu"; : >"$tmp/mem"; : >"$tmp/procs"
	for i in $(seq "$pairs"); do
		t0=$(now)
		taskset -c 1 "$PY" bench/pool4.py >/dev/null
		t1=$(now)
		/usr/bin/time -f "%M" -o "$tmp/rss" taskset -c 0 "$TS" record -q --stats -r "$rate" \
			-o "$tmp/p.folded" -- taskset -c 1 "$PY" bench/pool4.py >/dev/null 2>"$tmp/stats"
		t2=$(now)
		alone=$(seconds "$t0" "$t1")
		traced=$(seconds "$t1" "$t2")
		awk -v a="$alone" -v b="$traced" 'BEGIN { printf "%.4f\n", b / a }' >>"$tmp/ratios"
		sed -n 's/^  trainsample cpu  *\([0-9.]*\) s.*/\1/p' "$tmp/stats" >>"$tmp/cpu"
		sed -n 's/^  processes  *\([0-9]*\) sampled.*/\1/p' "$tmp/stats" >>"$tmp/procs"
		tail -1 "$tmp/rss" >>"$tmp/mem"
	done
	ratio=$(median <"$tmp/ratios")
	cpu=$(median <"$tmp/cpu")
	mem=$(median <"$tmp/mem")
	procs=$(median <"$tmp/procs")
	awk -v r="$rate" -v x="$ratio" -v c="$cpu" -v m="$mem" -v p="$procs" 'BEGIN {
		printf "  %5d Hz: job %+.1f%% wall (median of pairs); trainsample %.3f s CPU, %.1f MB peak; %d processes followed: %.1f ms CPU and %.1f MB each\n",
			r, 100 * (x - 1), c, m / 1024, p, p ? 1000 * c / p : 0, p ? m / 1024 / p : 0 }'
done
