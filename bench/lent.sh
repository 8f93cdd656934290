#!/bin/sh
# The figures issues 12 and 13 still need from a lent machine (a quiet
# bare-metal-like host with more CPUs than this VM), in one run of about
# five minutes, with the built tree carried along (build/):
#   sh bench/lent.sh             (writes a copy to $OUT/lent.txt if set)
#   PAIRS=10 SECONDS_EACH=10     the defaults
# - the GIL holder's pause and the slowdown at 100 Hz and 1 kHz (issue 12:
#   <= 1% and <= 3%, pause p50 <= 30 us), beside --nonblocking and a
#   native program;
# - 500 blocked threads and one busy one at 100 Hz and 1 kHz, and the same
#   with none (issue 13: pause p50 <= 50 us, trainsample <= 5% of a core
#   at 100 Hz);
# - how far samples lean onto a line that makes a syscall every few
#   microseconds (it grows with the time an interrupt takes to arrive).
cd "$(dirname "$0")/.." || exit 1
pairs=${PAIRS:-10}
out=${OUT:-}
[ -x build/trainsample ] && [ -x build/bench/overhead ] && [ -x build/bench/blocked ] && [ -x build/tests/targets/syscall_loop ] || {
	echo "bench/lent.sh: build first (make build/trainsample build/bench/overhead build/bench/blocked build/tests/targets/syscall_loop)" >&2
	exit 1
}
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)
{
	echo "host: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
	echo "python: $PY ($("$PY" -V 2>&1))"
	echo
	build/bench/overhead build/trainsample "$pairs" \
		"fp-spin=build/bench/spin:240" \
		"py-spin=$PY bench/pyspin.py:3000" \
		"py-spin+--nonblocking=$PY bench/pyspin.py:3000"
	echo
	sh bench/blocked.sh
	echo
	BLOCKED=0 sh bench/blocked.sh
	echo
	sh bench/lean.sh
} 2>&1 | tee ${out:+"$out/lent.txt"}
