# Sourced by gpu_check.sh (TS, OUT, PY, ok, not_ok set): what a real CUPTI
# hands the agent, the clock the kernels are on, attach to a dormant agent,
# NVML beside nvidia-smi, and a PyTorch training loop.
AGENT=$PWD/build/libtrainsample_cuda.so

# The agent alone, writing its record file with no trainsample reading it.
raw_run() { # NAME COMMAND...: the agent's file in $OUT/raw-NAME/
	d=$PWD/$OUT/raw-$1
	shift
	rm -rf "$d" && mkdir -p "$d"
	CUDA_INJECTION64_PATH=$AGENT TRAINSAMPLE_GPU_DIR=$d timeout 60 "$@"
}

# 5. The records a real CUPTI produces: kinds, devices, correlation ids.
raw_run va "$OUT/vector_add" >/dev/null 2>&1
raw_run loop "$OUT/kernel_loop" 500 >/dev/null 2>&1
raw_run graph "$OUT/graph" 20 >/dev/null 2>&1
for n in va loop graph; do
	python3 tests/cuda/gpu_records.py summary "$OUT"/raw-$n/*.gpu >"$OUT/raw-$n.txt" 2>&1
	sed 's/^/# /' "$OUT/raw-$n.txt"
done
if grep -q 'status started' "$OUT/raw-va.txt" && grep -q '^  device 0: .*cc [0-9]' "$OUT/raw-va.txt" &&
   grep -q 'kernel: .* 0 with no launch' "$OUT/raw-va.txt" &&
   grep -q 'memcpy: .* 0 with no launch.*HtoD.*DtoH\|memcpy: .* 0 with no launch.*DtoH.*HtoD' "$OUT/raw-va.txt"; then
	ok "raw records: a device record, every kernel and copy carries one of its launch's ids"
else not_ok "raw records: a device record, every kernel and copy carries one of its launch's ids"; fi

# What a launch costs over 400 000 of them (a short run also pays for
# loading symbols once): the loop alone, under the agent alone, under record.
"$OUT/kernel_loop" 200000 >"$OUT/cost.alone" 2>&1
raw_run cost "$OUT/kernel_loop" 200000 >"$OUT/cost.agent" 2>&1
rm -rf "$OUT/raw-cost"
$TS record -q --gpu=on --stats -o "$OUT/cost.folded" -- "$OUT/kernel_loop" 200000 >"$OUT/cost.record" \
	2>"$OUT/cost.stats"
echo "# alone:             $(cat "$OUT/cost.alone")"
echo "# agent, no sampler: $(cat "$OUT/cost.agent")"
echo "# record --gpu=on:   $(cat "$OUT/cost.record")"
grep -E 'target pause|ticks' "$OUT/cost.stats" | sed 's/^/# /'
awk '/per second/ { gsub(/[()]/, ""); r[FILENAME] = $(NF - 2) }
	END { for (f in r) if (f ~ /alone/) a = r[f]; else if (f ~ /agent/) g = r[f]; else o = r[f]
	      if (a && g && o) printf "# per launch: the agent %.2f us, under record %.2f us\n",
	             1e6 / g - 1e6 / a, 1e6 / o - 1e6 / a }' "$OUT/cost.alone" "$OUT/cost.agent" "$OUT/cost.record"

# 6. Kernels on the samples' clock: each between the CLOCK_MONOTONIC marks
# taken just before its launch and just after its sync.
raw_run marks "$OUT/marks" 200 >"$OUT/marks.txt" 2>&1
if python3 tests/cuda/gpu_records.py marks "$OUT"/raw-marks/*.gpu "$OUT/marks.txt" >"$OUT/marks.check" 2>&1; then
	ok "clock: every kernel starts after the mark before its launch and ends before the one after its sync"
else not_ok "clock: every kernel lies between its marks" "$(tail -n 2 "$OUT/marks.check")"; fi
sed 's/^/# /' "$OUT/marks.check"

# 7. attach to processes carrying the agent dormant (trainsample env).
attach_run() { # NAME SECONDS COMMAND...: attach for SECONDS after a second
	name=$1 secs=$2
	shift 2
	(eval "$($TS env)" && exec "$@") >"$OUT/attach-$name.out" 2>&1 &
	apid=$!
	sleep 2
	$TS attach "$apid" -q -d "$secs" -o "$OUT/attach-$name.trace.json" -o "$OUT/attach-$name.folded" \
		-o "$OUT/attach-$name-gpu.svg" >"$OUT/attach-$name.err" 2>&1
	kill "$apid" 2>/dev/null
	wait "$apid" 2>/dev/null
}
attach_run va 2 "$OUT/vector_add" 100000000
if grep -q '^\[gpu\];.*\[kernel\] vector_add(' "$OUT/attach-va.folded" &&
   grep -q '\[memcpy HtoD\]' "$OUT/attach-va.folded" && grep -q '\[memcpy DtoH\]' "$OUT/attach-va.folded"; then
	ok "attach, dormant agent: vector_add's kernels and copies"
else not_ok "attach, dormant agent: vector_add's kernels and copies" "$(tail -n 2 "$OUT/attach-va.err")"; fi
attach_run loop 2 "$OUT/kernel_loop" 100000000
if python3 - "$OUT/attach-loop.trace.json" >"$OUT/attach-loop.check" 2>&1 <<'EOT'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
k = [e for e in ev if e["ph"] == "X" and e.get("cat") == "kernel"]
flows = sum(1 for e in ev if e["ph"] == "f")
print("%d kernels, %d arrows in 2 s attached" % (len(k), flows))
assert len(k) > 1000 and flows > 1000
EOT
then ok "attach, dormant agent: kernel_loop's kernels with arrows ($(cat "$OUT/attach-loop.check"))"
else not_ok "attach, dormant agent: kernel_loop's kernels" "$(tail -n 2 "$OUT/attach-loop.check" "$OUT/attach-loop.err")"; fi
attach_run graph 2 "$OUT/graph" 100000000
if grep -q '^\[gpu\];.*\[kernel\] node_a' "$OUT/attach-graph.folded" && grep -q '\[kernel\] node_c' "$OUT/attach-graph.folded"; then
	ok "attach, dormant agent: a graph's kernels"
else not_ok "attach, dormant agent: a graph's kernels" "$(tail -n 2 "$OUT/attach-graph.err")"; fi
attach_run py 2 "$PY" tests/cuda/pylaunch.py "$OUT/libpylaunch.so" 100000000
if grep -q '^\[gpu\];<module> (pylaunch.py:[0-9]*);forward (pylaunch.py:[0-9]*);\[kernel\] py_forward_kernel' "$OUT/attach-py.folded" &&
   grep -q 'backward (pylaunch.py:' "$OUT/attach-py-gpu.svg"; then
	ok "attach, dormant agent: Python launch stacks"
else not_ok "attach, dormant agent: Python launch stacks" "$(grep gpu "$OUT/attach-py.folded" | head -2) $(tail -n 2 "$OUT/attach-py.err")"; fi

# 8. NVML beside nvidia-smi over the same busy seconds.
smi=$OUT/smi.csv
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used,power.draw,memory.reserved \
	--format=csv,noheader,nounits -lms 100 >"$smi" 2>&1 &
smipid=$!
$TS record --gpu=on -o "$OUT/busy.trace.json" -o "$OUT/busy.folded" -- "$OUT/busy" 4 2048 \
	>"$OUT/busy.out" 2>"$OUT/busy.err"
kill "$smipid" 2>/dev/null
wait "$smipid" 2>/dev/null
sed 's/^/# /' "$OUT/busy.err" "$OUT/busy.out"
if python3 - "$smi" "$OUT/busy.err" "$OUT/busy.trace.json" >"$OUT/nvml.check" 2>&1 <<'EOT'
import json, re, sys
rows = []
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(",")]
    try:
        rows.append((float(f[1]), float(f[2]), float(f[3]), f[4]))
    except (ValueError, IndexError):
        print("nvidia-smi said: %s" % line.strip())
busy = [r for r in rows if r[0] > 0]
smi_power = sum(r[2] for r in busy) / max(1, len(busy))
print("nvidia-smi: %d rows, %d busy; utilization %.0f%% on average while busy; memory.used peak %.0f MiB "
      "(reserved %s MiB); power %.0f W on average while busy"
      % (len(rows), len(busy), sum(r[0] for r in busy) / max(1, len(busy)), max(r[1] for r in rows),
         rows[-1][3], smi_power))
err = open(sys.argv[2]).read()
m = re.search(r"NVML device 0: utilization (\d+)% on average, memory peak (\d+) MiB(?:, ([\d.]+) J)?", err)
assert m, "no NVML line in the summary"
wall = float(re.search(r"busy [\d.]+% of ([\d.]+) s", err).group(1))
print("trainsample: utilization %s%%, memory peak %s MiB, energy %s J over %.2f s = %.0f W"
      % (m.group(1), m.group(2), m.group(3), wall, float(m.group(3) or 0) / wall))
ev = json.load(open(sys.argv[3]))["traceEvents"]
print("counter tracks: %s" % sorted({e["name"] for e in ev if e["ph"] == "C"}))
peak = float(m.group(2))
assert abs(peak - max(r[1] for r in rows)) < max(300, 0.1 * peak), "memory peaks differ"
assert peak > 2048, "the 2048 MiB held are not in the peak"
assert int(m.group(1)) > 50, "a busy GPU reported idle"
assert m.group(3) and abs(float(m.group(3)) / wall - smi_power) < 0.4 * smi_power, "energy and power differ"
EOT
then ok "NVML: utilization, memory and energy beside nvidia-smi"
else not_ok "NVML beside nvidia-smi" "$(tail -n 1 "$OUT/nvml.check")"; fi
sed 's/^/# /' "$OUT/nvml.check"

# 9. A PyTorch training loop (where torch sees the GPU).
if "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	"$PY" tests/cuda/torch_step.py 300 >"$OUT/torch.alone" 2>&1
	timeout 150 $TS record --gpu=on --stats -o "$OUT/torch.folded" -o "$OUT/torch-gpu.svg" \
		-o "$OUT/torch.trace.json" -o "$OUT/torch.tsprof" -- "$PY" tests/cuda/torch_step.py 300 \
		>"$OUT/torch.out" 2>"$OUT/torch.err"
	echo "# torch alone: $(tr '\n' ' ' <"$OUT/torch.alone")"
	echo "# torch under record: $(cat "$OUT/torch.out")"
	sed 's/^/# /' "$OUT/torch.err" | head -40
	if python3 - "$OUT/torch.folded" >"$OUT/torch.check" 2>&1 <<'EOT'
import sys
gpu = own = 0
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    if stack.startswith("[gpu];"):
        gpu += int(n)
        if "torch_step.py" in stack:
            own += int(n)
print("GPU time %d, on torch_step.py lines %d (%.0f%%)" % (gpu, own, 100.0 * own / max(1, gpu)))
assert gpu > 0 and own > 0.3 * gpu
EOT
	then ok "torch: kernels on the training loop's lines ($(cat "$OUT/torch.check"))"
	else not_ok "torch: kernels on the training loop's lines" "$(tail -n 1 "$OUT/torch.check")"; fi
else
	echo "ok - torch # SKIP no torch with CUDA for $PY"
fi
