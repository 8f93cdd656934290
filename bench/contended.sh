#!/bin/sh
# make bench: the pause of --native while CPU-bound processes compete for
# every core (one per CPU): trainsample then waits for a CPU like everyone
# else, and a stopped thread stays stopped meanwhile. Figures from
# trainsample's own --stats, at 100 Hz and 1 kHz, quiet and contended.
#   SECONDS_EACH=10 sh bench/contended.sh
cd "$(dirname "$0")/.." || exit 1
secs=${SECONDS_EACH:-5}
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)
out=$(mktemp -d) || exit 1
hogs=""
trap 'for h in $hogs; do kill "$h" 2>/dev/null; done; rm -rf "$out"' EXIT
echo "--native pause on bench/churn.py, ${secs} s each, quiet then with $(nproc) CPU hogs:"
printf '%-22s %10s %10s %10s %14s\n' run "pause p50" "p99" max "missed ticks"
for load in quiet contended; do
	if [ $load = contended ]; then
		for _ in $(seq "$(nproc)"); do
			"$PY" -c 'while 1: pass' &
			hogs="$hogs $!"
		done
	fi
	for rate in 100 1000; do
		build/trainsample record -r $rate -d "$secs" --native --stats -o "$out/r.tsprof" -- \
			"$PY" bench/churn.py $((secs + 5)) >/dev/null 2>"$out/err"
		awk -v run="$load -r $rate" '
			/^  ticks/ { gsub(/[);]/, "", $4); missed = $4 "/" $2; walks = $5 }
			/target pause/ { p50 = $4 $5; p99 = $7 $8; max = $10 $11 }
			END { gsub(/,/, "", p50); gsub(/,/, "", p99)
			      printf "%-22s %10s %10s %10s %14s\n", run, p50, p99, max, missed }
		' "$out/err"
	done
done
