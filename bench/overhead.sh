#!/bin/sh
# make bench: the overhead benchmark (figures only; see bench/overhead.c).
cd "$(dirname "$0")/.." || exit 1
if [ "$(nproc)" -lt 2 ]; then
	echo "bench: needs 2 CPUs to pin target and profiler apart; running unpinned figures anyway"
fi
exec build/bench/overhead build/trainsample build/bench/spin "${PAIRS:-10}" "${ROUNDS:-240}"
