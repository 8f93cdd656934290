#!/bin/sh
# Runs the .tsprof fuzzer for $1 seconds (default 60) from a corpus seeded
# with a real recording, after replaying every saved regression input.
# Prints one TAP line; a crash leaves its input in build/fuzz/ (add it to
# tests/fuzz/regressions/ once fixed).
cd "$(dirname "$0")/../.." || exit 1
secs=${1:-60}
F=build/fuzz/fuzz_tsprof
corpus=build/fuzz/corpus
mkdir -p "$corpus"
if [ -z "$(ls "$corpus")" ]; then
	build/trainsample record -q -t -r 500 -o "$corpus/seed.tsprof" -- build/tests/targets/busy_threads 3 0.3 >/dev/null
fi
# A recording with GPU activities, where the fake CUPTI was built.
if [ ! -f "$corpus/gpu.tsprof" ] && [ -f build/tests/fake/libcupti.so.13 ]; then
	build/trainsample record -q -r 200 -o "$corpus/gpu.tsprof" -- python3 tests/python/gpu_launch.py \
		build/tests/fake/libcupti.so.13 3 >/dev/null 2>&1
fi
for r in tests/fuzz/regressions/*; do
	[ -f "$r" ] || continue
	if ! "$F" "$r" >build/fuzz/regression.log 2>&1; then
		echo "not ok - fuzz: regression input $r: $(grep -m1 ERROR build/fuzz/regression.log)"
		exit 1
	fi
done
if "$F" -max_total_time="$secs" -print_final_stats=1 -max_len=65536 -artifact_prefix=build/fuzz/ "$corpus" >build/fuzz/fuzz.log 2>&1; then
	echo "ok - fuzz: the .tsprof reader and every writer survive $secs s of libFuzzer ($(grep -o 'stat::number_of_executed_units: [0-9]*' build/fuzz/fuzz.log | grep -o '[0-9]*$') runs)"
else
	echo "not ok - fuzz: a crash in $secs s of libFuzzer: $(grep -m1 'ERROR\|SUMMARY' build/fuzz/fuzz.log) (input in build/fuzz/)"
	exit 1
fi
