#!/bin/sh
# make gpu-check: the real CUDA path, wherever there is a GPU. Builds the
# programs of tests/cuda with nvcc, runs each under record --gpu=on and
# checks what the agent recorded: kernels and copies on their stream
# tracks, launch arrows, a graph's kernels on the graph launch, Python
# launch stacks; prints the agent's cost on a loop of small kernels.
# Without nvcc or a GPU it says so and skips (exit 0). Outputs are kept in
# build/gpu-check as evidence. Ends with "N passed, N failed".
cd "$(dirname "$0")/../.." || exit 1
TS=build/trainsample
OUT=build/gpu-check
PY=${PYTHON:-python3}
pass=0
fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
not_ok() { echo "not ok - $1${2:+: $2}"; fail=$((fail + 1)); }
mkdir -p "$OUT"
built=yes
for p in vector_add kernel_loop graph marks busy copies libpylaunch.so; do
	[ -x "$OUT/$p" ] || built=
done
if [ -z "$built" ] && ! command -v nvcc >/dev/null; then
	echo "ok - gpu-check # SKIP no nvcc on PATH"
	exit 0
fi
# Built once (a GPU machine may have the programs brought, built elsewhere).
for p in vector_add kernel_loop graph marks busy copies; do
	[ "$OUT/$p" -nt "tests/cuda/$p.cu" ] || nvcc -O2 -o "$OUT/$p" "tests/cuda/$p.cu" ||
		{ not_ok "nvcc builds tests/cuda/$p.cu"; exit 1; }
done
[ "$OUT/libpylaunch.so" -nt tests/cuda/pylaunch.cu ] ||
	nvcc -O2 -shared -Xcompiler -fPIC -o "$OUT/libpylaunch.so" tests/cuda/pylaunch.cu ||
	{ not_ok "nvcc builds tests/cuda/pylaunch.cu"; exit 1; }
ok "nvcc builds the programs of tests/cuda"
if [ ! -e /dev/nvidiactl ] && ! nvidia-smi -L >/dev/null 2>&1; then
	echo "ok - gpu-check: the runs # SKIP no GPU on this machine"
	echo "$pass passed, $fail failed"
	exit 0
fi
nvidia-smi -L 2>/dev/null | head -4

# 1. A vector add: two copies in, a kernel, a copy out.
$TS record -q --gpu=on -o "$OUT/va.folded" -o "$OUT/va.trace.json" -- "$OUT/vector_add" \
	>"$OUT/va.out" 2>"$OUT/va.err"
if grep -q '^\[gpu\];.*\[kernel\] vector_add(float const\*, float const\*, float\*, int)' "$OUT/va.folded" &&
   grep -q '\[memcpy HtoD\]' "$OUT/va.folded" && grep -q '\[memcpy DtoH\]' "$OUT/va.folded" &&
   python3 tests/integration/trace_check.py "$OUT/va.trace.json" >"$OUT/va.check" 2>&1; then
	ok "vector_add: its kernel and copies, a valid trace ($(cat "$OUT/va.check"))"
else not_ok "vector_add: its kernel and copies, a valid trace" "$(cat "$OUT/va.err" "$OUT/va.check" | tail -3)"; fi

# 2. 40 000 small kernels: all recorded, and what the agent costs.
"$OUT/kernel_loop" 20000 >"$OUT/loop.alone" 2>&1
$TS record -q --gpu=off -o "$OUT/loop-off.folded" -- "$OUT/kernel_loop" 20000 >"$OUT/loop.off" 2>&1
$TS record -q --gpu=on -o "$OUT/loop.trace.json" -o "$OUT/loop.folded" -- "$OUT/kernel_loop" 20000 \
	>"$OUT/loop.on" 2>"$OUT/loop.err"
if python3 - "$OUT/loop.trace.json" >"$OUT/loop.check" 2>&1 <<'EOT'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
k = [e for e in ev if e["ph"] == "X" and e.get("cat") == "kernel"]
names = {e["name"] for e in k}
streams = {(e["pid"], e["tid"]) for e in k}
flows = sum(1 for e in ev if e["ph"] == "f")
print("%d kernels on %d stream(s), %d arrows" % (len(k), len(streams), flows))
assert len(k) == 40000 and len(streams) == 1, (len(k), streams)
assert any(n.startswith("scale(") for n in names) and any(n.startswith("shift(") for n in names), names
assert flows >= 40000
EOT
then ok "kernel_loop: every kernel on its stream with its arrow ($(cat "$OUT/loop.check"))"
else not_ok "kernel_loop: every kernel on its stream with its arrow" "$(tail -n 2 "$OUT/loop.check" "$OUT/loop.err")"; fi
echo "# alone:      $(cat "$OUT/loop.alone")"
echo "# --gpu=off:  $(cat "$OUT/loop.off")"
echo "# --gpu=on:   $(head -1 "$OUT/loop.on")"
awk '/per second/ { gsub(/[()]/, ""); r[FILENAME] = $(NF - 2) }
	END { for (f in r) if (f ~ /alone/) a = r[f]; else if (f ~ /on$/) o = r[f]
	      if (a && o) printf "# the agent costs %.2f us per launch (%.1f%% slower launching)\n",
	             1e6 / o - 1e6 / a, 100 * (a / o - 1) }' "$OUT/loop.alone" "$OUT/loop.on"

# 3. A graph: 300 kernels from 100 launches, each on the graph launch.
$TS record --gpu=on -o "$OUT/graph.trace.json" -- "$OUT/graph" >/dev/null 2>"$OUT/graph.err"
if python3 - "$OUT/graph.trace.json" >"$OUT/graph.check" 2>&1 <<'EOT'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
k = [e for e in ev if e["ph"] == "X" and e.get("cat") == "kernel" and e["name"].startswith("node_")]
api = [e for e in ev if e["ph"] == "X" and e.get("cat") == "cuda_api" and "GraphLaunch" in e["name"]]
print("%d graph kernels, %d graph launches" % (len(k), len(api)))
assert len(k) == 300 and len(api) == 100, (len(k), len(api))
EOT
then ok "graph: its kernels arrive, each tied to a graph launch ($(cat "$OUT/graph.check"))"
else not_ok "graph: its kernels arrive, each tied to a graph launch" "$(tail -n 1 "$OUT/graph.check"; grep GPU "$OUT/graph.err")"; fi

# 4. Kernels launched from Python functions land on their lines.
$TS record -q --gpu=on -o "$OUT/py.folded" -o "$OUT/py-gpu.svg" -o "$OUT/py.trace.json" -- \
	"$PY" tests/cuda/pylaunch.py "$OUT/libpylaunch.so" 200 >/dev/null 2>"$OUT/py.err"
if grep -q '^\[gpu\];<module> (pylaunch.py:[0-9]*);forward (pylaunch.py:[0-9]*);\[kernel\] py_forward_kernel' "$OUT/py.folded" &&
   grep -q '^\[gpu\];<module> (pylaunch.py:[0-9]*);backward (pylaunch.py:[0-9]*);\[kernel\] py_backward_kernel' "$OUT/py.folded"; then
	ok "pylaunch: each kernel's time on the Python function that launched it"
else not_ok "pylaunch: each kernel's time on the Python function that launched it" "$(grep gpu "$OUT/py.folded" | head -3) $(cat "$OUT/py.err")"; fi
if grep -q 'forward (pylaunch.py:' "$OUT/py-gpu.svg" && grep -q 'backward (pylaunch.py:' "$OUT/py-gpu.svg"; then
	ok "pylaunch: gpu.svg shows the launching Python lines"
else not_ok "pylaunch: gpu.svg shows the launching Python lines"; fi
sed 's/^/# /' "$OUT/py.err"
. tests/cuda/gpu_check_more.sh
. tests/cuda/gpu_check_findings.sh
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
