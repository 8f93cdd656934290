#!/bin/sh
# make bench: the overhead benchmark (figures only; see bench/overhead.c).
#   PAIRS=20 make bench     more pairs per rate (default 10)
cd "$(dirname "$0")/.." || exit 1
if [ "$(nproc)" -lt 2 ]; then
	echo "bench: needs 2 CPUs to pin target and profiler apart; the figures will be unreliable"
fi
pairs=${PAIRS:-10}
build/bench/overhead build/trainsample "$pairs" \
	"fp-spin=build/bench/spin:240" \
	"nofp-spin=build/bench/spin_nofp:240" \
	"nofp-chain=build/bench/chain:240" || exit 1

# Python: a CPU-bound call tree, Python stacks only (by default the GIL
# holder is stopped for its walk; --nonblocking stops nothing), with
# --native, and the same busy thread in a process of 100 threads.
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)
echo
echo "Python targets ($PY, bench/pyspin.py):"
build/bench/overhead build/trainsample "$pairs" \
	"py-spin=$PY bench/pyspin.py:3000" \
	"py-spin+--nonblocking=$PY bench/pyspin.py:3000" \
	"py-native+--native=$PY bench/pyspin.py:3000" \
	"py-100thr=$PY bench/pyspin.py 100:3000" | tail -n +10 || exit 1

# Austin reads Python <= 3.10: the same target on pyenv's 3.10, under
# trainsample and under Austin (Debian's package, installed if missing).
PY310=$(ls -d "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.10.*/bin/python3.10 2>/dev/null | tail -1)
if ! command -v austin >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q austin >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q austin >/dev/null 2>&1; }
fi
if [ -z "$PY310" ]; then
	echo "bench: no pyenv Python 3.10 here: no comparison with Austin"
elif ! command -v austin >/dev/null 2>&1; then
	echo "bench: austin is not installed (apt-get install austin): no comparison with Austin"
else
	echo
	echo "Python 3.10 ($PY310): trainsample, then Austin $(austin -V 2>&1 | head -1 | sed 's/^austin //') on the same target:"
	build/bench/overhead build/trainsample "$pairs" "py310-spin=$PY310 bench/pyspin.py:1500" | tail -n +10 || exit 1
	build/bench/overhead "$(command -v austin)" "$pairs" "py310-austin=$PY310 bench/pyspin.py:1500" | tail -n +10 || exit 1
fi
