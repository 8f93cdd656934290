#!/bin/sh
# make bench: the GPU agent's cost per launch (bench/gpu_launch.py), with
# and without the agent, at two Python stack depths. Figures only.
cd "$(dirname "$0")/.." || exit 1
FAKE=build/tests/fake/libcupti.so.13
AGENT=build/libtrainsample_cuda.so
PY=${PYTHON:-python3}
if [ ! -f "$FAKE" ] || [ ! -f "$AGENT" ]; then
	echo "gpu launch cost: skipped (no CUPTI headers: neither the agent nor the fake was built)"
	exit 0
fi
dir=$(mktemp -d)
echo "GPU agent, cost per launch ($PY, fake CUPTI, best of 5 x 20000 launches, microseconds):"
printf '%-7s %9s %9s %9s\n' depth without with agent
for depth in 5 40; do
	none=$("$PY" bench/gpu_launch.py "$FAKE" 20000 $depth | awk '{ print $2 }')
	rm -f "$dir"/*.gpu
	with=$(CUDA_INJECTION64_PATH=$AGENT TRAINSAMPLE_GPU_DIR=$dir "$PY" bench/gpu_launch.py "$FAKE" 20000 $depth |
		awk '{ print $2 }')
	awk -v d="$depth" -v a="$none" -v b="$with" 'BEGIN { printf "%-7s %9s %9s %9.2f\n", d, a, b, b - a }'
done
rm -rf "$dir"
