#!/bin/sh
# make bench: memory on a long run. bench/churn.py (stacks change at nearly
# every sample) recorded at 1 kHz with every output for MINUTES minutes:
# trainsample's RSS and the .tsprof's size each minute, the peak RSS with
# the writing at the end, each output's size; then the peak RSS of report
# rendering that recording again.
#   MEMORY_MINUTES=1 sh bench/memory.sh
cd "$(dirname "$0")/.." || exit 1
minutes=${MEMORY_MINUTES:-10}
py=${PYTHON:-/usr/bin/python3}
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
secs=$((minutes * 60))
echo "memory: bench/churn.py, record -r 1000 with every output, $minutes min ($py):"
/usr/bin/time -f '%M %e' -o "$out/time" build/trainsample record -q -r 1000 \
	-o "$out/m.svg" -o "$out/m.trace.json" -o "$out/m.speedscope.json" \
	-o "$out/m.pb.gz" -o "$out/m.folded" -o "$out/m.tsprof" \
	-- "$py" bench/churn.py "$((secs + 20))" >/dev/null 2>"$out/err" &
sleep 1
ts=$(pgrep -n -f "trainsample record -q -r 1000 -o $out/m.svg")
printf '%8s %10s %12s\n' minute "rss MiB" "tsprof MiB"
i=0
while [ $i -lt "$minutes" ]; do
	sleep 60
	i=$((i + 1))
	rss=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$ts/status" 2>/dev/null)
	size=$(stat -c %s "$out/m.tsprof" 2>/dev/null || echo 0)
	printf '%8s %10s %12s\n' "$i" "${rss:-ended}" "$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }')"
done
wait
read -r peak wall <"$out/time"
echo "peak RSS with the writing: $(awk -v k="$peak" 'BEGIN { printf "%.1f", k / 1024 }') MiB (wall ${wall} s)"
grep -h 'left out' "$out/err"
for f in "$out"/m.*; do
	printf '  %-18s %8.1f MiB\n' "${f##*/}" "$(stat -c %s "$f" | awk '{ print $1 / 1048576 }')"
done
/usr/bin/time -f '%M %e' -o "$out/time" build/trainsample report "$out/m.tsprof" \
	-o "$out/r.trace.json" -o "$out/r.svg" 2>"$out/report.err" || cat "$out/report.err"
read -r peak wall <"$out/time"
echo "report of it to .trace.json and .svg: peak RSS $(awk -v k="$peak" 'BEGIN { printf "%.1f", k / 1024 }') MiB, ${wall} s"
