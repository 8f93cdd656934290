#!/bin/sh
# make bench: the overhead benchmark (figures only; see bench/overhead.c).
#   PAIRS=20 make bench     more pairs per rate (default 10)
cd "$(dirname "$0")/.." || exit 1
if [ "$(nproc)" -lt 2 ]; then
	echo "bench: needs 2 CPUs to pin target and profiler apart; the figures will be unreliable"
fi
exec build/bench/overhead build/trainsample "${PAIRS:-10}" \
	"fp-spin=build/bench/spin:240" \
	"nofp-spin=build/bench/spin_nofp:240" \
	"nofp-chain=build/bench/chain:240"
