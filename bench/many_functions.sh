#!/bin/sh
# make bench: many distinct functions. bench/newfuncs.py (a new function
# for every call, on short threads) recorded at 1 kHz for SECONDS (default
# 60): trainsample's RSS while recording (its largest, polled) and its peak
# with the writing at the end, the time from the target's exit to
# trainsample's (the end summary and the outputs); then report of that
# recording, --summary against folded, in time and peak RSS. Then the same
# on a recording made by tests/integration/craft_tsprof.py with FUNCS
# (default 1040000) distinct functions over 12670 threads.
#   MANY_SECONDS=60 MANY_FUNCS=1040000 TRAINSAMPLE=build/trainsample sh bench/many_functions.sh
cd "$(dirname "$0")/.." || exit 1
secs=${MANY_SECONDS:-60}
funcs=${MANY_FUNCS:-1040000}
ts=${TRAINSAMPLE:-build/trainsample}
py=${PYTHON:-/usr/bin/python3}
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

echo "many functions: bench/newfuncs.py $secs s, record -r 1000 -o .svg -o .tsprof ($ts):"
/usr/bin/time -f '%M %e' -o "$out/time" "$ts" record -r 1000 -o "$out/m.svg" -o "$out/m.tsprof" \
	-- "$py" bench/newfuncs.py "$secs" >"$out/target" 2>"$out/err" &
sleep 1
pid=$(pgrep -n -f "record -r 1000 -o $out/m.svg")
rec=0
while kill -0 "$pid" 2>/dev/null; do
	# The target's line is printed as it exits: the RSS before it is the recording's.
	[ -s "$out/target" ] && break
	r=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	[ -n "$r" ] && [ "$r" -gt "$rec" ] && rec=$r
	sleep 0.5
done
wait
read -r peak wall <"$out/time"
own=$(awk '{ print $NF == "s" ? $(NF - 1) : 0 }' "$out/target")
echo "  $(cat "$out/target")"
grep -h 'samples' "$out/err" | head -2 | sed 's/^/  /'
echo "  RSS while recording $(mib "$rec") MiB, peak with the writing $(mib "$peak") MiB"
echo "  trainsample's wall $wall s, the target's $own s: $(awk -v a="$wall" -v b="$own" 'BEGIN { printf "%.1f", a - b }') s after it (summary, outputs)"

report() { # NAME FILE ARGS...
	name=$1 file=$2
	shift 2
	/usr/bin/time -f '%M %e' -o "$out/time" "$ts" report "$file" "$@" >/dev/null 2>"$out/rerr" ||
		{ printf '  %-10s failed: ' "$name"; tail -1 "$out/rerr"; return; }
	read -r peak wall <"$out/time"
	printf '  %-10s %7.2f s  peak RSS %8s MiB\n' "$name" "$wall" "$(mib "$peak")"
}
echo "report of that recording ($(du -k "$out/m.tsprof" | cut -f1) KiB):"
report --summary "$out/m.tsprof" --summary
report folded "$out/m.tsprof" -o "$out/r.folded"

echo "a crafted recording: $funcs distinct functions, 12670 threads (craft_tsprof.py many):"
"$py" tests/integration/craft_tsprof.py many "$funcs" 12670 "$out/c.tsprof" || exit 1
echo "  $(du -k "$out/c.tsprof" | cut -f1) KiB"
report --summary "$out/c.tsprof" --summary
report folded "$out/c.tsprof" -o "$out/c.folded"
report svg "$out/c.tsprof" -o "$out/c.svg"
