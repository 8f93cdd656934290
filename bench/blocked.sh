#!/bin/sh
# make bench: the cost of threads that exist but do not run. bench/blocked
# (500 threads blocked for good, one busy) recorded at 100 Hz and 1 kHz,
# natively and with --idle; the figures are trainsample's own --stats.
#   BLOCKED=1000 SECONDS_EACH=10 sh bench/blocked.sh
cd "$(dirname "$0")/.." || exit 1
n=${BLOCKED:-500}
secs=${SECONDS_EACH:-10}
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
echo "$n blocked threads and one busy one, ${secs} s each (trainsample --stats):"
printf '%-14s %10s %10s %10s %14s %7s %10s %10s\n' run "pause p50" "p99" max "missed ticks" walks "cpu" "after 1 s"
for args in "-r 100" "-r 1000" "-r 100 -i" "-r 1000 -i"; do
	# shellcheck disable=SC2086
	${TS:-build/trainsample} record $args --stats -o "$out/r.tsprof" -- \
		build/bench/blocked "$n" "$secs" >/dev/null 2>"$out/err"
	awk -v run="$args" '
		/^  ticks/ { gsub(/[);]/, "", $4); missed = $4 "/" $2; walks = $5 }
		/target pause/ { p50 = $4 $5; p99 = $7 $8; max = $10 $11 }
		/trainsample cpu/ { cpu = $5; sub(/\(/, "", cpu); sub(/%/, "", cpu)
			settled = "-"; if (match($0, /; [0-9.]+% after/)) settled = substr($0, RSTART + 2, RLENGTH - 9) }
		END { gsub(/,/, "", p50); gsub(/,/, "", p99)
		      printf "%-14s %10s %10s %10s %14s %7s %9s%% %10s\n", run, p50, p99, max, missed, walks, cpu, settled }
	' "$out/err"
done
