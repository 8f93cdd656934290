# The GPU agent against a fake libcupti (tests/cuda_fake, built from the
# real CUPTI headers): a Python program "launches" kernels, copies and a
# graph from named functions and threads (tests/python/gpu_launch.py)
# under record. Each kernel's time lands on the Python line that launched
# it, on the right device and stream tracks of the trace, with an arrow
# from its launch; report renders the same; CUPTI held by another tool,
# dropped records, os._exit, the real libcupti without a driver, --gpu=off.
. tests/integration/lib.sh
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)
FAKE=build/tests/fake/libcupti.so.13
if [ ! -f "$FAKE" ] || [ ! -f build/libtrainsample_cuda.so ]; then
	skip "gpu: the agent against a fake CUPTI" "no CUPTI headers here, so neither the agent nor the fake was built"
	exit 0
fi
STEPS=40

$TS record -r 500 -o "$TMP/g.folded" -o "$TMP/gpu.svg" -o "$TMP/g.trace.json" -o "$TMP/g.tsprof" \
	-o "$TMP/g.speedscope.json" -- \
	"$PY" tests/python/gpu_launch.py "$FAKE" $STEPS >"$TMP/out" 2>"$TMP/err"
rc=$?
# 500 Hz: a 2 ms period. Kernels: forward 2 ms, backward 4 ms, a graph of
# three 1 ms nodes; copies 0.5 ms (optimizer) and 0.1 ms (loader).
[ $rc = 0 ] && python3 - "$TMP/g.folded" $STEPS tests/python/gpu_launch.py >"$TMP/check" 2>&1 <<'EOT'
import re, sys
steps = int(sys.argv[2])
# The lines that launch them, from the program itself.
src = open(sys.argv[3]).read().splitlines()
launch_line = {w: 1 + next(i for i, l in enumerate(src) if w in l and "lib." in l)
        for w in ("backward_kernel", "graph_node_kernel")}
gpu = {}
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    if stack.startswith("[gpu];"):
        gpu[stack] = gpu.get(stack, 0) + int(n)
def weight(*frames):
    return sum(n for s, n in gpu.items() if all(f in s for f in frames))
want = {
    ("forward (gpu_launch.py:", "[kernel] gemm_kernel(float*, float*, float*, int)"): steps * 1,
    ("backward (gpu_launch.py:%d)" % launch_line["backward_kernel"], "[kernel] backward_kernel"): steps * 2,
    ("backward (gpu_launch.py:%d)" % launch_line["graph_node_kernel"], "[kernel] graph_node_kernel"):
        steps * 3 // 2,
    ("optimizer (gpu_launch.py:", "[memcpy HtoD]"): steps // 4,
    ("loader (gpu_launch.py:", "[memcpy HtoD]"): steps // 20,
    ("[gpu];[thread: autograd-dev]", "[kernel] native_kernel"): steps // 2,
}
for frames, n in want.items():
    got = weight(*frames)
    assert abs(got - n) <= max(1, n // 50), (frames, got, n)
assert all(s.split(";")[1].startswith(("<module>", "Thread.", "[thread: autograd-dev]"))
           for s in gpu), list(gpu)[:3]
print({k[1]: weight(*k) for k in want})
EOT
check $? "gpu: each kernel's and copy's time is on the Python line that launched it" \
	"rc $rc $(cat "$TMP/err" "$TMP/check" | tail -3)" "$(tail -1 "$TMP/check")"

grep -q "trainsample: GPU: $((STEPS * 6)) launches" "$TMP/err" &&
	grep -q "device 0, Fake GPU 9000.*busy" "$TMP/err" &&
	grep -Eq "0\.160 s +$STEPS x +4000\.0 us  backward_kernel" "$TMP/err" &&
	grep -q "memcpy HtoD: .* in $((STEPS * 2)) copies" "$TMP/err"
check $? "gpu: the summary gives launches, busy share, top kernels and copies" "$(grep -A8 'GPU:' "$TMP/err")"

# report --summary of the recording: the same busy time per device as the
# live summary (the union of its kernels and copies), the kernels
# counted; and in summary.json.
live=$(sed -n 's/.*device 0, Fake GPU 9000.*: busy .* (\([0-9.]*\) s of kernels and copies)$/\1/p' "$TMP/err")
$TS report "$TMP/g.tsprof" --summary -o "$TMP/g.summary.json" >"$TMP/gsum" 2>&1
again=$(sed -n 's/^trainsample: GPU 0: busy [0-9]*% of [0-9.]* s (\([0-9.]*\) s of kernels and copies).* \([0-9]*\) kernels.*$/\1 \2/p' "$TMP/gsum")
json=$(python3 -c 'import json, sys; g = json.load(open(sys.argv[1]))["gpus"][0]; print("%.3f" % g["busy_s"], g["kernels"])' \
	"$TMP/g.summary.json" 2>&1)
set -- $again
[ -n "$live" ] && [ "$1" = "$live" ] && [ "${2:-0}" -eq $((STEPS * 6)) ] && [ "$json" = "$again" ]
check $? "gpu: report --summary and summary.json give each device's busy time (as the live summary) and its kernels" \
	"live $live s; report: $(grep GPU "$TMP/gsum"); json: $json" "live $live s, report and json $again"

python3 tests/integration/trace_check.py "$TMP/g.trace.json" >"$TMP/tc" 2>&1 &&
	python3 - "$TMP/g.trace.json" $STEPS >"$TMP/tracks" 2>&1 <<'EOT'
import json, sys
steps = int(sys.argv[2])
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["name"] == "thread_name"}
procs = {e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}
gpu_pid = [p for p, n in procs.items() if n.startswith("GPU 0: Fake GPU 9000")]
assert len(gpu_pid) == 1, procs
g = gpu_pid[0]
x = [e for e in ev if e["ph"] == "X"]
on = lambda tid: [e for e in x if e["pid"] == g and e["tid"] == tid]
assert len([e for e in on(7) if e["cat"] == "kernel"]) == steps * 5, len(on(7))
assert len([e for e in on(13) if e["cat"] == "memcpy"]) == steps
assert len([e for e in on(14) if e["cat"] == "memcpy"]) == steps
assert names[(g, 7)] == "stream 7" and names[(g, 13)] == "stream 13"
assert len([e for e in on(9) if e["name"] == "native_kernel"]) == steps
k = [e for e in on(7) if e["name"] == "backward_kernel"]
assert all(abs(e["dur"] - 4000) < 0.01 for e in k), k[:2]
assert all(e["args"]["grid"] == "1024,1,1" for e in k)
api = [e for e in x if e["cat"] == "cuda_api"]
assert {e["name"] for e in api} >= {"__cudaLaunchKernel", "cudaGraphLaunch", "cudaMemcpyAsync"}
assert any(n.startswith("MainThread: CUDA API") for n in names.values()), names
assert any(n.startswith("loader: CUDA API") for n in names.values()), names
# Every kernel starts after the call that launched it began.
s = {e["id"]: e for e in ev if e["ph"] == "s"}
f = [e for e in ev if e["ph"] == "f"]
assert len(f) == steps * 8, len(f)
assert all(e["ts"] >= s[e["id"]]["ts"] for e in f)
print("ok")
EOT
check $? "gpu: the trace has a device process, stream tracks, API tracks and launch arrows" \
	"$(cat "$TMP/tc" "$TMP/tracks" | tail -2 | cut -c1-600); $(tail -2 "$TMP/err")" "$(cat "$TMP/tc")"

xmllint --noout "$TMP/gpu.svg" 2>/dev/null && grep -q '\[kernel\] backward_kernel' "$TMP/gpu.svg" &&
	! grep -q '<title>spin (gpu_launch.py' "$TMP/gpu.svg"
check $? "gpu: gpu.svg is a flamegraph of GPU time by launching stack, without CPU samples"

# speedscope: after the threads, an evented profile per GPU stream.
python3 - "$TMP/g.speedscope.json" $STEPS >"$TMP/sp" 2>&1 <<'EOT'
import json, sys
steps = int(sys.argv[2])
d = json.load(open(sys.argv[1]))
frames = d["shared"]["frames"]
ev = {p["name"]: p for p in d["profiles"] if p["type"] == "evented"}
assert set(ev) == {"GPU 0 stream 7", "GPU 0 stream 9", "GPU 0 stream 13", "GPU 0 stream 14"}, set(ev)
for p in ev.values():
    at, depth = 0, 0
    for e in p["events"]:
        assert e["at"] >= at, ("not sorted", p["name"])
        at = e["at"]
        depth += 1 if e["type"] == "O" else -1
        assert depth in (0, 1), ("unbalanced", p["name"])
    assert depth == 0 and p["endValue"] >= at
s7 = ev["GPU 0 stream 7"]["events"]
assert len(s7) == 2 * 5 * steps, len(s7)
assert frames[s7[0]["frame"]]["name"].startswith("[kernel] gemm_kernel"), frames[s7[0]["frame"]]
print("ok")
EOT
check $? "gpu: speedscope has an evented profile per GPU stream, sorted and balanced" "$(tail -2 "$TMP/sp")"
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
	skip "gpu: speedscope with GPU streams validates against speedscope's schema" "no node/npm"
elif { [ -d build/npm/node_modules/ajv ] && [ -d build/npm/node_modules/speedscope ]; } ||
     npm install --silent --no-audit --no-fund --prefix build/npm ajv@8 speedscope@1 >"$TMP/npm.log" 2>&1; then
	NODE_PATH=build/npm/node_modules node tests/browser/speedscope_schema.js "$TMP/g.speedscope.json" |
		sed 's/^\(n*o*t* *ok - \)speedscope:/\1gpu: speedscope/'
else
	skip "gpu: speedscope with GPU streams validates against speedscope's schema" "npm could not install ajv and speedscope: $(tail -1 "$TMP/npm.log")"
fi

$TS report -q "$TMP/g.tsprof" -o "$TMP/r.folded" -o "$TMP/r.trace.json"
cmp -s "$TMP/g.folded" "$TMP/r.folded" && cmp -s "$TMP/g.trace.json" "$TMP/r.trace.json"
check $? "gpu: report of the recording writes what record wrote"

# Another tool holds CUPTI: one line, no GPU data, the program unharmed.
FAKE_CUPTI_TAKEN=torch.profiler $TS record -q -o "$TMP/t.folded" -- \
	"$PY" tests/python/gpu_launch.py "$FAKE" 5 >"$TMP/tout" 2>"$TMP/terr"
rc=$?
[ $rc = 0 ] && grep -q "^init 1" "$TMP/tout" && [ "$(wc -l <"$TMP/terr")" = 1 ] &&
	grep -q "CUPTI is already in use by CUPTI for torch.profiler" "$TMP/terr" &&
	! grep -q '^\[gpu\]' "$TMP/t.folded"
check $? "gpu: CUPTI held by another tool: one line naming it, no GPU data, the program runs" \
	"rc $rc $(cat "$TMP/terr")"

# Exit handlers: the fake's runtime teardown (registered after the agent
# loaded, as a statically linked CUDA runtime's is) runs before the
# agent's first one and aborts on any later CUPTI call. A program that
# exits right after its launches keeps every record and exits 0; one that
# launches nothing too.
cat >"$TMP/short.py" <<'EOT'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.fake_cuda_launch.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_int]
print("init", lib.fake_cuda_init())
for _ in range(int(sys.argv[2])):
    lib.fake_cuda_launch(b"short_kernel", 0, 7, int(sys.argv[3]) if len(sys.argv) > 3 else 1000, 1)
if sys.argv[4:] == ["sync"]:
    lib.fake_cuda_stream_synchronize(7)
EOT
$TS record -q -o "$TMP/short.trace.json" -- "$PY" "$TMP/short.py" "$FAKE" 20 >/dev/null 2>"$TMP/serr"
rc=$?
[ $rc = 0 ] && [ "$(grep -o '"name":"short_kernel"' "$TMP/short.trace.json" | wc -l)" = 20 ]
check $? "gpu: a program that exits right after its launches exits 0 with all its kernels" \
	"rc $rc, $(grep -o '"name":"short_kernel"' "$TMP/short.trace.json" | wc -l) kernels $(cat "$TMP/serr")"
$TS record -q --gpu=on -o "$TMP/none.folded" -- "$PY" "$TMP/short.py" "$FAKE" 0 >/dev/null 2>"$TMP/serr"
check $? "gpu: a CUDA program that launches nothing exits 0" "$(cat "$TMP/serr")"

# Findings on the GPU's side: thousands of 2 us kernels launched one by
# one (launch-bound), a few kernels then a second of the CPU's own (the
# GPU idle), and neither on a second of 20 ms kernels queued at once (the
# GPU busy throughout, however slow the CPU).
cat >"$TMP/launches.py" <<'EOT'
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
lib.fake_cuda_launch.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_int]
lib.fake_cuda_init()
def launch_all(n, ns):
    for _ in range(n):
        lib.fake_cuda_launch(b"tiny_kernel", 0, 7, ns, 1)
launch_all(int(sys.argv[2]), int(sys.argv[3]))
time.sleep(float(sys.argv[4]))
EOT
$TS record -q -o "$TMP/tiny.tsprof" -- "$PY" "$TMP/launches.py" "$FAKE" 5000 2000 0.2 >/dev/null 2>&1
$TS record -q -o "$TMP/idle.tsprof" -- "$PY" "$TMP/launches.py" "$FAKE" 20 1000000 1 >/dev/null 2>&1
$TS record -q -o "$TMP/busy.tsprof" -- "$PY" "$TMP/launches.py" "$FAKE" 50 20000000 1.05 >/dev/null 2>&1
for f in tiny idle busy; do
	$TS report -q "$TMP/$f.tsprof" -o "$TMP/$f.summary.json"
done
got=$(python3 -c 'import json, sys
for f in sys.argv[1:]:
    print(" ".join(x["id"] for x in json.load(open(f))["findings"] if x["pid"] == 0) or "none")' \
	"$TMP/tiny.summary.json" "$TMP/idle.summary.json" "$TMP/busy.summary.json" 2>&1 | tr '\n' ' ')
$TS report "$TMP/tiny.tsprof" --findings >"$TMP/tiny.f" 2>&1
[ "$got" = "launch-bound gpu-idle none " ] &&
	grep -q "[0-9]* kernels, 100% of them under 10 us" "$TMP/tiny.f" &&
	grep -q "launched most from launch_all (launches.py:[0-9]*) ([0-9]* kernels)" "$TMP/tiny.f"
check $? "gpu findings: launch-bound on 5000 tiny kernels, gpu-idle on a few and a second of CPU, neither on a GPU kept busy" \
	"launch-bound/idle/steady: $got; $(cat "$TMP/tiny.f")" "$got"

# Copies: 150 synchronous copies of 4 ms from pageable memory (the host
# waits for each), the same copies pinned and asynchronous on a stream of
# their own (nothing to say), and pinned ones on the NULL stream (stream 7,
# as CUPTI names the legacy default stream) taking most of the run.
cat >"$TMP/copies.py" <<'EOT'
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
lib.fake_cuda_memcpy_kinds.argtypes = [ctypes.c_int] * 2 + [ctypes.c_longlong] + [ctypes.c_int] * 4 + [ctypes.c_longlong]
lib.fake_cuda_init()
mode = sys.argv[2]
def copy_batch():
    if mode == "pageable":
        lib.fake_cuda_memcpy_kinds(0, 7, 8 << 20, 1, 1, 3, 0, 4000000)
    else:
        lib.fake_cuda_memcpy_kinds(0, 7 if mode == "null" else 13, 8 << 20, 1, 2, 3, 1, 4000000)
for _ in range(150):
    copy_batch()
    time.sleep(0.001)
time.sleep(0.2)
EOT
for m in pageable pinned null; do
	$TS record -q -o "$TMP/copies-$m.tsprof" -- "$PY" "$TMP/copies.py" "$FAKE" $m >/dev/null 2>&1
	$TS report -q "$TMP/copies-$m.tsprof" -o "$TMP/copies-$m.summary.json" 2>/dev/null
	$TS report "$TMP/copies-$m.tsprof" --findings >"$TMP/copies-$m.f" 2>&1
done
got=$(python3 -c 'import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    c = d["gpus"][0]["copies"] if d["gpus"] else {}
    print("copies" in [x["id"] for x in d["findings"]], c.get("count"), c.get("pageable"),
          c.get("synchronous"), c.get("default_stream"))' \
	"$TMP/copies-pageable.summary.json" "$TMP/copies-pinned.summary.json" \
	"$TMP/copies-null.summary.json" 2>&1 | tr '\n' ' ')
[ "$got" = "True 150 150 150 150 False 150 0 0 0 True 150 0 0 150 " ] &&
	grep -q "\[high\] copies: copies between the host and GPU 0 that the host waits for take [0-9]*% of the time since its first kernel" "$TMP/copies-pageable.f" &&
	grep -q "150 from or to pageable memory (1.17 GiB)" "$TMP/copies-pageable.f" &&
	grep -q "copied most from copy_batch (copies.py:[0-9]*) (150 copies)" "$TMP/copies-pageable.f" &&
	grep -q "copies on GPU 0's default stream take [0-9]*% of the time since its first kernel" "$TMP/copies-null.f" &&
	! grep -q "pageable" "$TMP/copies-null.f"
check $? "gpu findings: copies from pageable memory and on the default stream named with their line, none for pinned copies on a stream of their own" \
	"pageable/pinned/null (finding, count, pageable, sync, null): $got; $(cat "$TMP/copies-pageable.f" "$TMP/copies-null.f")" "$got"

# A loop that waits for the GPU each step: host-sync when the GPU idles
# meanwhile (a 10 ms kernel launched after the step's 12 ms of CPU work,
# then waited for), nothing when it is busy throughout (a 40 ms kernel
# launched first: the GPU sets the pace, the wait costs nothing).
cat >"$TMP/gpu_sync.py" <<'EOT'
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
lib.fake_cuda_launch.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_int]
lib.fake_cuda_init()
late = sys.argv[2] == "late"
def spin(ms):
    end = time.thread_time() + ms / 1000
    while time.thread_time() < end:
        pass
def model_forward():
    if not late:
        lib.fake_cuda_launch(b"big_kernel", 0, 7, 40000000, 1)
    spin(6)
def model_backward():
    spin(4)
def optimizer_step():
    spin(2)
for _ in range(50):
    model_forward()
    model_backward()
    optimizer_step()
    if late:
        lib.fake_cuda_launch(b"late_kernel", 0, 7, 10000000, 1)
    lib.fake_cuda_synchronize()
EOT
for m in late busy; do
	$TS record -q -r 200 -o "$TMP/sync-$m.tsprof" -- "$PY" "$TMP/gpu_sync.py" "$FAKE" $m >/dev/null 2>&1
	$TS report -q "$TMP/sync-$m.tsprof" -o "$TMP/sync-$m.summary.json" 2>/dev/null
	$TS report "$TMP/sync-$m.tsprof" --summary --findings >"$TMP/sync-$m.f" 2>&1
done
got=$(python3 -c 'import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    print("host-sync" in [x["id"] for x in d["findings"]], "%.1f" % d["gpus"][0]["busy_active"])' \
	"$TMP/sync-late.summary.json" "$TMP/sync-busy.summary.json" 2>&1 | tr '\n' ' ')
# busy: 0.8 to 1.0 (the fake GPU's kernels last as long as they are
# told; on a loaded machine the host launches the next one later)
case "$got" in
"True 0."[1-6]" False 0."[89]" "|"True 0."[1-6]" False 1.0 ") true ;;
*) false ;;
esac
check $? "gpu findings: host-sync where the GPU idles while the loop waits, none where it is busy throughout" \
	"late/busy (host-sync, GPU busy since its first kernel): $got; $(cat "$TMP/sync-late.f" "$TMP/sync-busy.f")" "$got"

# Recordings made on an H200 (tests/cuda/gpu_check_findings.sh, see
# docs/gpu-h200/), analysed again here: what real CUPTI records and real
# PyTorch runs look like to the findings.
H=tests/data/h200
got=$(for f in loader torch-pageable torch-pinned busy copies-pageable copies-null copies-pinned; do
	$TS report -q "$H/$f.tsprof" -o "$TMP/h200-$f.summary.json" 2>/dev/null
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(",".join(x["id"] for x in d["findings"]) or "none")' "$TMP/h200-$f.summary.json" 2>&1
done | tr '\n' ' ')
$TS report "$H/torch-pageable.tsprof" --findings >"$TMP/h200-pageable.f" 2>&1
$TS report "$H/torch-pinned.tsprof" --summary --findings >"$TMP/h200-pinned.f" 2>&1
[ "$got" = "data-bound copies copies none copies copies none " ] &&
	grep -q "copied most from to_gpu (torch_copies.py:18) (300 copies)" "$TMP/h200-pageable.f" &&
	grep -q "steps: not counted: backward is seen for" "$TMP/h200-pinned.f" &&
	! grep -q "pageable memory" "$TMP/h200-pinned.f"
check $? "H200 recordings: data-bound alone for a starved GPU loop (not launch-bound, no worker findings), pageable copies with their line, 2 ms steps at 100 Hz not counted, nothing for a GPU busy throughout" \
	"$got; $(cat "$TMP/h200-pinned.f" | grep -E 'steps|\[')" "$got"

# A wait for a stream spans the kernels it waits for (as on a GPU, where
# cudaStreamSynchronize's record covered the last graph's kernels and hid
# them): the wait has a track of its own, every kernel stays on the stream's.
$TS record -q -o "$TMP/wait.trace.json" -- "$PY" "$TMP/short.py" "$FAKE" 20 1000000 sync \
	>/dev/null 2>"$TMP/werr"
python3 tests/integration/trace_check.py "$TMP/wait.trace.json" >"$TMP/wcheck" 2>&1 &&
python3 - "$TMP/wait.trace.json" >>"$TMP/wcheck" 2>&1 <<'EOT'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
k = [e for e in ev if e["ph"] == "X" and e.get("cat") == "kernel"]
w = [e for e in ev if e["ph"] == "X" and e.get("cat") == "sync"]
assert len(k) == 20 and {names[(e["pid"], e["tid"])] for e in k} == {"stream 7"}, (len(k), k[:1])
assert len(w) == 1 and names[(w[0]["pid"], w[0]["tid"])] == "stream 7 waits", w
assert w[0]["ts"] < k[-1]["ts"] + k[-1]["dur"] <= w[0]["ts"] + w[0]["dur"] + 1, (w, k[-1])
EOT
check $? "gpu: a stream's wait has its own track and hides none of the kernels it spans" \
	"$(tail -n 3 "$TMP/wcheck") $(cat "$TMP/werr")"

# Kernels still running when the program exits come from CUPTI's forced
# flush without times: counted as dropped, never drawn at time zero.
$TS record -o "$TMP/unfinished.trace.json" -- "$PY" "$TMP/short.py" "$FAKE" 3 5000000000 \
	>/dev/null 2>"$TMP/uerr"
rc=$?
[ $rc = 0 ] && ! grep -q '"name":"short_kernel"' "$TMP/unfinished.trace.json" &&
	grep -q "3 launches.* 3 records dropped" "$TMP/uerr"
check $? "gpu: kernels unfinished at exit are counted as dropped, not drawn at time zero" \
	"rc $rc $(grep GPU "$TMP/uerr")"

# A burst well over the agent's stage (32768 records, written four times
# a second) within a quarter second: the flusher is woken early, nothing
# is dropped.
$TS record -o "$TMP/burst.trace.json" -- "$PY" "$TMP/short.py" "$FAKE" 40000 >/dev/null 2>"$TMP/berr"
# On a crowded machine the flusher can come late: then what is dropped is
# counted, to the record (launches + activities + dropped = 80000).
n=$(grep -o '"name":"short_kernel"' "$TMP/burst.trace.json" | wc -l)
sum=$(sed -n 's/.*GPU: \([0-9]*\) launches.*, \([0-9]*\) activities, \([0-9]*\) records dropped.*/\1 \2 \3/p' \
	"$TMP/berr" | awk '{ print $1 + $2 + $3 }')
[ "$sum" = 80000 ] && [ "$n" -ge 39000 ]
check $? "gpu: a burst of 40000 launches, every one recorded or counted as dropped" \
	"$n kernels; $(grep GPU "$TMP/berr")" "$(grep GPU "$TMP/berr" | cut -d: -f3)"

FAKE_CUPTI_DROPPED=7 $TS record -o "$TMP/d.folded" -- "$PY" tests/python/gpu_launch.py "$FAKE" 5 \
	>/dev/null 2>"$TMP/derr"
grep -q "7 records dropped" "$TMP/derr"
check $? "gpu: records CUPTI dropped are reported" "$(grep GPU "$TMP/derr")"

# os._exit skips atexit: what the flusher wrote (4 times a second) stays.
$TS record -q -r 200 -o "$TMP/x.trace.json" -- "$PY" tests/python/gpu_launch.py "$FAKE" 300 exit \
	>/dev/null 2>&1
python3 - "$TMP/x.trace.json" >"$TMP/xc" 2>&1 <<'EOT'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
cpu_end = max(e["ts"] + e["dur"] for e in x if e.get("cat") in ("python", "native"))
api_end = max(e["ts"] + e["dur"] for e in x if e.get("cat") == "cuda_api")
print("last launch %.2f s before the last CPU sample" % ((cpu_end - api_end) / 1e6))
assert cpu_end - api_end <= 1.0e6, (cpu_end, api_end)
EOT
check $? "gpu: os._exit loses at most a second of records" "$(tail -2 "$TMP/xc")" "$(cat "$TMP/xc")"

# The real libcupti, with no driver: the agent gives up in one line.
REAL=$(ls /usr/local/cuda/lib*/libcupti.so.* /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.* 2>/dev/null | head -1)
if [ -z "$REAL" ]; then
	skip "gpu: the real libcupti without a driver leaves the program alone" "no libcupti in /usr/local/cuda"
else
	cat >"$TMP/real.py" <<EOT
import ctypes, os
ctypes.CDLL("$REAL")
agent = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
print("init", agent.InitializeInjection(), flush=True)
print("sum", sum(range(100000)))
EOT
	$TS record -q -o "$TMP/real.folded" -- "$PY" "$TMP/real.py" >"$TMP/rout" 2>"$TMP/rerr"
	rc=$?
	[ $rc = 0 ] && grep -q "^sum 4999950000" "$TMP/rout" && [ "$(wc -l <"$TMP/rerr")" -le 1 ] &&
		! grep -q '^\[gpu\]' "$TMP/real.folded"
	check $? "gpu: the real libcupti without a driver leaves the program alone" \
		"rc $rc $(cat "$TMP/rerr")" "$(cut -c1-90 "$TMP/rerr")"
fi

# --gpu=off: the variables are not set; nothing is left behind either way.
# The record folder goes to XDG_RUNTIME_DIR when set: a folder of this
# test's own, so other runs on the machine do not count.
mkdir -p "$TMP/xdg" && chmod 700 "$TMP/xdg"
XDG_RUNTIME_DIR=$TMP/xdg $TS record -q --gpu=off -o "$TMP/off.folded" -- \
	"$PY" tests/python/gpu_launch.py "$FAKE" 3 >"$TMP/off" 2>&1
XDG_RUNTIME_DIR=$TMP/xdg $TS record -q -o "$TMP/on.folded" -- \
	"$PY" tests/python/gpu_launch.py "$FAKE" 3 >"$TMP/on" 2>&1
grep -q "^init 0" "$TMP/off" && ! grep -q '^\[gpu\]' "$TMP/off.folded" && grep -q "^init 1" "$TMP/on" &&
	grep -q '^\[gpu\]' "$TMP/on.folded" && [ -z "$(ls -A "$TMP/xdg")" ]
check $? "gpu: --gpu=off loads no agent; no record folder is left behind" \
	"$(ls -A "$TMP/xdg") $(cat "$TMP/off")"

# trainsample env; a dormant agent that attach switches on, then off again.
# The program waits on a fifo before its steps and before saying whether
# CUPTI is still subscribed.
env_line=$($TS env)
agent=$(echo "$env_line" | sed -n "s/^export CUDA_INJECTION64_PATH='\(.*\)'$/\1/p")
[ -f "$agent" ]
check $? "gpu: env prints the variable that loads the agent" "$env_line"

# dormant_run NAME PY [setpriv args]: starts the program dormant, attaches
# for 2 s while it runs its steps; leaves NAME.out, NAME.attach, NAME.folded.
dormant_run() {
	name=$1 py=$2
	shift 2
	mkfifo "$TMP/$name.fifo"
	chmod 666 "$TMP/$name.fifo"
	CUDA_INJECTION64_PATH=$agent "$@" "$py" tests/python/gpu_launch.py "$FAKE" 20 dormant \
		<"$TMP/$name.fifo" >"$TMP/$name.out" 2>&1 &
	pid=$!
	reap_later $pid
	exec 7>"$TMP/$name.fifo"
	wait_file "$TMP/$name.out" 10
	sleep 0.3
	tpid=$(pgrep -P $pid -f gpu_launch.py || echo $pid) # setpriv execs, so it is $pid
	# The agent's own thread takes none of the process's signals.
	for t in /proc/$tpid/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = trainsample-ctl ] &&
			awk '/^SigBlk:/ { print $2 }' "$t/status" >"$TMP/$name.sigblk"
	done
	$TS attach "$tpid" -d 2 -o "$TMP/$name.folded" >"$TMP/$name.attach" 2>&1 &
	apid=$!
	sleep 0.7
	echo go >&7
	wait $apid
	echo "attach exit $?" >>"$TMP/$name.attach"
	echo go >&7
	exec 7>&-
	wait $pid
}
dormant_run dormant "$PY"
blocked=$(python3 -c "import sys; m = int(open(sys.argv[1]).read(), 16); print(all(m >> (s - 1) & 1 for s in (1, 2, 10, 12, 14, 15, 17)))" "$TMP/dormant.sigblk" 2>/dev/null)
[ "$blocked" = True ]
check $? "gpu: the agent's thread blocks every signal the process may get" \
	"SigBlk $(cat "$TMP/dormant.sigblk" 2>/dev/null)"
grep -q "^subscribed 0" "$TMP/dormant.out" && grep -q "^\[gpu\].*backward_kernel" "$TMP/dormant.folded" &&
	grep -q "^attach exit 0" "$TMP/dormant.attach" &&
	grep -q "trainsample: GPU: 120 launches" "$TMP/dormant.attach"
check $? "gpu: attach switches a dormant agent on for its run and off at the end" \
	"$(cat "$TMP/dormant.out" "$TMP/dormant.attach" | tail -4)"

if [ ! -x /usr/bin/python3.11 ] || ! command -v setpriv >/dev/null; then
	skip "gpu: another user's agent cannot be switched" "needs /usr/bin/python3.11 and setpriv"
else
	dormant_run nobody /usr/bin/python3.11 setpriv --reuid=65534 --regid=65534 --clear-groups
	grep -q "only the process's own user may switch its GPU agent" "$TMP/nobody.attach" &&
		grep -q "^attach exit 0" "$TMP/nobody.attach" &&
		! grep -q '^\[gpu\]' "$TMP/nobody.folded" && grep -q "^subscribed 0" "$TMP/nobody.out"
	check $? "gpu: another user's agent cannot be switched (one line), sampling goes on" \
		"attach said: $(cat "$TMP/nobody.attach"); the program: $(cat "$TMP/nobody.out")"
fi

# NVML (a fake libnvidia-ml: 37% busy, memory growing, 25 J a reading):
# counters on the GPU's process in the trace, a line in the summary, kept
# in the .tsprof for report.
NVML=build/tests/fake/libnvidia-ml.so.1
TRAINSAMPLE_NVML=$NVML $TS record -r 200 -o "$TMP/n.trace.json" -o "$TMP/n.tsprof" -- \
	"$PY" tests/python/gpu_launch.py "$FAKE" 40 >/dev/null 2>"$TMP/nerr"
$TS report -q "$TMP/n.tsprof" -o "$TMP/nr.trace.json"
grep -Eq "NVML device 0: utilization 37% on average, memory peak 10[0-9][0-9] MiB, [0-9.]+ J" "$TMP/nerr" &&
	python3 tests/integration/trace_check.py "$TMP/n.trace.json" >/dev/null 2>&1 &&
	python3 - "$TMP/n.trace.json" >"$TMP/nc" 2>&1 <<'EOT' && cmp -s "$TMP/n.trace.json" "$TMP/nr.trace.json"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}
c = [e for e in ev if e["ph"] == "C"]
names = {e["name"] for e in c}
assert names == {"utilization %", "memory used MiB", "power W"}, names
assert all(procs[e["pid"]].startswith("GPU 0") for e in c)
u = [e["args"]["value"] for e in c if e["name"] == "utilization %"]
assert len(u) >= 3 and all(v == 37 for v in u), u
m = [e["args"]["value"] for e in c if e["name"] == "memory used MiB"]
assert m == sorted(m) and m[-1] > m[0], m
print(len(c))
EOT
check $? "gpu: NVML counters in the trace and the summary, kept for report" \
	"$(grep NVML "$TMP/nerr") $(tail -2 "$TMP/nc")" "$(cat "$TMP/nc") counter samples"

# report --summary: each device's energy, its power readings (250 W in the
# fake) integrated over the run.
$TS report "$TMP/n.tsprof" --summary >"$TMP/nsum" 2>&1
energy=$(sed -n 's/^trainsample: GPU 0: .*, \([0-9.]*\) J$/\1/p' "$TMP/nsum")
python3 - "$TMP/n.trace.json" "${energy:-x}" >"$TMP/ne" 2>&1 <<'EOT'
import json, sys
c = sorted((e["ts"], e["args"]["value"]) for e in json.load(open(sys.argv[1]))["traceEvents"]
           if e["ph"] == "C" and e["name"] == "power W")
want = sum((b[0] - a[0]) / 1e6 * (a[1] + b[1]) / 2 for a, b in zip(c, c[1:]))
got = float(sys.argv[2])
print("%.1f J, the readings say %.1f J" % (got, want))
assert c and all(v == 250 for _, v in c) and abs(got - want) <= 0.01 * want + 0.1
EOT
check $? "gpu: report --summary gives each device's energy, its power readings integrated" \
	"$(grep GPU "$TMP/nsum"); $(tail -2 "$TMP/ne")" "$(tail -1 "$TMP/ne")"

# Without NVML: nothing said about it.
if ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
	skip "gpu: no NVML, no word about it" "this machine has NVML"
else
	! grep -q "NVML" "$TMP/err"
	check $? "gpu: no NVML, no word about it" "$(grep NVML "$TMP/err")"
fi

# trainsample killed while the agent collects: under attach the lease
# breaks, under record the agent sees trainsample gone; either way it stops
# by itself and removes its file, and the program goes on.
mkfifo "$TMP/k.fifo"
CUDA_INJECTION64_PATH=$agent "$PY" tests/python/gpu_launch.py "$FAKE" 20 dormant <"$TMP/k.fifo" >"$TMP/k.out" 2>&1 &
kpid=$!
reap_later $kpid
exec 7>"$TMP/k.fifo"
wait_file "$TMP/k.out" 10
sleep 0.3
$TS attach $kpid -d 30 -o "$TMP/k.folded" >/dev/null 2>&1 &
apid=$!
sleep 1
gpu_files=$(ls /tmp/trainsample-gpu-*/$kpid.gpu 2>/dev/null | wc -l)
# Only this run's folder is removed at the end: other runs may be using theirs.
kdir=$(dirname "$(ls /tmp/trainsample-gpu-*/$kpid.gpu 2>/dev/null | head -1)")
{ kill -9 $apid; wait $apid; } 2>/dev/null
echo go >&7
sleep 0.5
echo go >&7
exec 7>&-
wait $kpid
left=$(ls /tmp/trainsample-gpu-*/$kpid.gpu 2>/dev/null | wc -l)
[ "$gpu_files" = 1 ] && [ "$left" = 0 ] && grep -q "^subscribed 0" "$TMP/k.out" && [ ! -e "$kdir" ]
check $? "gpu: attach killed: the agent stops by itself and leaves no file nor folder; the program goes on" \
	"files $gpu_files then $left, folder $(ls -d "$kdir" 2>/dev/null); $(cat "$TMP/k.out")"

$TS record -q -o "$TMP/rk.folded" -- "$PY" tests/python/gpu_launch.py "$FAKE" 300 >"$TMP/rk.out" 2>&1 &
rpid=$!
sleep 1.5
prog=$(pgrep -P $rpid -f gpu_launch.py)
gpu_files=$(ls /tmp/trainsample-gpu-*/$prog.gpu "${XDG_RUNTIME_DIR:-/nonexistent}"/trainsample-gpu-*/$prog.gpu 2>/dev/null | wc -l)
rdir=$(dirname "$(ls /tmp/trainsample-gpu-*/$prog.gpu "${XDG_RUNTIME_DIR:-/nonexistent}"/trainsample-gpu-*/$prog.gpu 2>/dev/null | head -1)")
{ kill -9 $rpid; wait $rpid; } 2>/dev/null
for i in $(seq 50); do kill -0 "$prog" 2>/dev/null || break; sleep 0.1; done
left=$(ls /tmp/trainsample-gpu-*/$prog.gpu "${XDG_RUNTIME_DIR:-/nonexistent}"/trainsample-gpu-*/$prog.gpu 2>/dev/null | wc -l)
[ -n "$prog" ] && [ "$gpu_files" = 1 ] && [ "$left" = 0 ] && [ ! -e "$rdir" ]
check $? "gpu: record killed: the agent stops by itself and removes its file and folder" \
	"program $prog, files $gpu_files then $left, folder $(ls -d "$rdir" 2>/dev/null)"

# A record killed before its command used CUDA leaves its folder (no agent
# to remove it): the next record removes it, and no live run's folder.
mkdir -p "$TMP/xdg2" && chmod 700 "$TMP/xdg2"
XDG_RUNTIME_DIR=$TMP/xdg2 $TS record -q -o "$TMP/k2.folded" -- sleep 20 &
kpid=$!
XDG_RUNTIME_DIR=$TMP/xdg2 $TS record -q -o "$TMP/k3.folded" -- sleep 20 &
lpid=$!
sleep 1
kchild=$(pgrep -P $kpid)
{ kill -9 $kpid; wait $kpid; } 2>/dev/null
[ -n "$kchild" ] && kill $kchild 2>/dev/null
before=$(ls "$TMP/xdg2" | tr '\n' ' ')
XDG_RUNTIME_DIR=$TMP/xdg2 $TS record -q -o "$TMP/k4.folded" -- "$PY" -c 'pass' 2>/dev/null
after=$(ls "$TMP/xdg2" | tr '\n' ' ')
{ kill $lpid; wait $lpid; } 2>/dev/null
case "$before" in *"trainsample-gpu-$kpid-"*"trainsample-gpu-$lpid-"*|*"trainsample-gpu-$lpid-"*"trainsample-gpu-$kpid-"*) true ;; *) false ;; esac &&
	case "$after" in "trainsample-gpu-$lpid-"*) [ "$(echo $after | wc -w)" = 1 ] ;; *) false ;; esac
check $? "gpu: the next record removes the folder a killed one left, never a live run's" \
	"before: $before; after: $after"

# Two child processes using the GPU (data-parallel workers): an agent and
# a record file each, all merged; on the shared device each process gets
# its own streams (stream ids are a process's own).
$TS record -r 200 -o "$TMP/kids.trace.json" -o "$TMP/kids.folded" -- \
	"$PY" tests/python/gpu_children.py "$FAKE" 10 >/dev/null 2>"$TMP/kids.err"
grep -q "trainsample: GPU: 120 launches" "$TMP/kids.err" &&
	python3 tests/integration/trace_check.py "$TMP/kids.trace.json" >/dev/null 2>&1 &&
	python3 - "$TMP/kids.trace.json" >"$TMP/kc" 2>&1 <<'EOT'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
gpus = [e["args"]["name"] for e in ev if e["name"] == "process_name" and e["args"]["name"].startswith("GPU 0")]
assert len(gpus) == 2 and all(", pid " in g for g in gpus), gpus
assert sorted(g.split(" (")[-1].split(",")[0] for g in gpus) == ["rank 0", "rank 1"], gpus
print("ok")
EOT
check $? "gpu: two processes on one GPU: both merged, each with its own streams, named by its rank" \
	"$(cat "$TMP/kids.err" "$TMP/kc" | tail -3)"

# The agent reads launch stacks in-process with the layout module: every
# CPython present, 3.8 to 3.13.
root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
for minor in 8 9 10 11 12 13; do
	py=$(ls -d "$root"/versions/3.$minor.*/bin/python3 2>/dev/null | head -1)
	if [ -z "$py" ]; then
		skip "gpu: launch stacks under Python 3.$minor" "no pyenv 3.$minor here"
		continue
	fi
	$TS record -q -r 200 -o "$TMP/v$minor.folded" -- "$py" tests/python/gpu_launch.py "$FAKE" 10 >/dev/null 2>&1
	grep -q '^\[gpu\];<module> (gpu_launch.py:[0-9]*);backward (gpu_launch.py:[0-9]*);\[kernel\] backward_kernel 8$' "$TMP/v$minor.folded"
	check $? "gpu: launch stacks under Python 3.$minor" \
		"$(grep '^\[gpu\]' "$TMP/v$minor.folded" | head -2)"
done

# A GPU flamegraph that is not an .svg is refused before anything runs.
$TS record --gpu-flamegraph "$TMP/x.folded" -- "$PY" -c 'open("'"$TMP"'/ran", "w")' 2>"$TMP/gf.err"
rc=$?
[ $rc = 2 ] && [ ! -e "$TMP/ran" ] && grep -q "a GPU flamegraph is an .svg" "$TMP/gf.err"
check $? "gpu: --gpu-flamegraph with a name that is not .svg fails before the command runs" \
	"rc $rc $(cat "$TMP/gf.err")"

# attach trusts no socket it finds (run as root against processes of
# `nobody`, whose folder /tmp/trainsample-65534 no other test uses): a
# folder that is a link or open to all, a socket another process holds,
# an agent that trickles or sends control sequences.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	NB="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	NDIR=/tmp/trainsample-$(id -u nobody)
	rm -rf "$NDIR"
	$NB sleep 30 &
	spid=$!
	mkdir -p "$TMP/elsewhere"
	ln -s "$TMP/elsewhere" "$NDIR"
	$TS attach "$spid" -q --gpu=on -d 0.2 -o "$TMP/n1.folded" 2>"$TMP/n1.err"
	grep -q "not trusted: $NDIR is a link" "$TMP/n1.err"
	check $? "gpu: attach refuses an agent folder that is a link" "$(cat "$TMP/n1.err")"
	rm -f "$NDIR" && mkdir -m 0777 "$NDIR" && chown nobody "$NDIR" && chmod 0777 "$NDIR"
	$TS attach "$spid" -q --gpu=on -d 0.2 -o "$TMP/n2.folded" 2>"$TMP/n2.err"
	grep -q "not trusted: $NDIR is not uid [0-9]*'s private folder (owner [0-9]*, mode 777)" "$TMP/n2.err"
	check $? "gpu: attach refuses an agent folder open to all" "$(cat "$TMP/n2.err")"
	chmod 0700 "$NDIR"
	cat >"$TMP/agentish.py" <<'EOT'
# Listens where PID's agent would (argv[1]: the socket) and answers badly:
# "trickle" sends control sequences, then a byte every 2 s.
import os, socket, sys, time
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(1)
open(sys.argv[2], "w").close()
c, _ = s.accept()
c.sendall(b"error: \x1b[2J\x1b[31mred\x9b2J\xc2\x9b0m")
for _ in range(20):
    time.sleep(2)
    c.sendall(b".")
EOT
	chmod 644 "$TMP/agentish.py" && chmod 755 "$TMP"
	$NB /usr/bin/python3 "$TMP/agentish.py" "$NDIR/$spid.sock" "$NDIR/ready" &
	fpid=$!
	for _ in $(seq 100); do [ -e "$NDIR/ready" ] && break; sleep 0.05; done
	$TS attach "$spid" -q --gpu=on -d 0.2 -o "$TMP/n3.folded" 2>"$TMP/n3.err"
	grep -q "not trusted: $NDIR/$spid.sock is held by process $fpid, not by $spid's own agent" "$TMP/n3.err"
	check $? "gpu: attach refuses a socket held by another process" "$(cat "$TMP/n3.err")"
	kill $fpid $spid 2>/dev/null
	wait $fpid $spid 2>/dev/null
	rm -f "$NDIR"/*
	# The target itself answers, slowly and with escapes: one deadline, text only.
	cat >"$TMP/self.sh" <<EOT
exec /usr/bin/python3 "$TMP/agentish.py" "$NDIR/\$\$.sock" "$NDIR/ready"
EOT
	$NB sh "$TMP/self.sh" &
	tpid=$!
	for _ in $(seq 100); do [ -e "$NDIR/ready" ] && break; sleep 0.05; done
	t0=$(date +%s)
	$TS attach "$tpid" -q --gpu=on -d 0.2 -o "$TMP/n4.folded" 2>"$TMP/n4.err"
	t1=$(date +%s)
	kill $tpid 2>/dev/null
	wait $tpid 2>/dev/null
	# C1 controls (0x9b, an 8-bit CSI, raw and in UTF-8) as well as ESC.
	[ $((t1 - t0)) -le 12 ] && ! grep -q "$(printf '\033')" "$TMP/n4.err" &&
		! LC_ALL=C grep -q "$(printf '\233')" "$TMP/n4.err" &&
		grep -q "did not start: error: ?\[2J?\[31mred?2J??0m" "$TMP/n4.err"
	check $? "gpu: an agent that trickles is given up within one deadline, its escapes not printed" \
		"$((t1 - t0)) s: $(cat -v "$TMP/n4.err")"
	# A socket of a process that is gone is removed by the next attach.
	: >"$NDIR/ready"
	python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$NDIR/999999.sock" 2>/dev/null
	chown -h nobody "$NDIR/999999.sock" 2>/dev/null
	$NB sleep 5 &
	spid=$!
	sleep 0.3 # setpriv has made it nobody's
	$TS attach "$spid" -q -d 0.2 -f folded -o /dev/null 2>/dev/null
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
	[ ! -e "$NDIR/999999.sock" ]
	check $? "gpu: attach removes the sockets of processes that are gone" "$(ls -la "$NDIR")"
	rm -rf "$NDIR"
else
	skip "gpu: attach's checks of the agent's socket" "needs root, setpriv and a nobody user"
fi

# The agent's in-process walk on the sid root's 3.14 and 3.15 (the root
# sees this folder at the same path, so the agent and the fake load there).
for m in 14 15; do
	label=sid-3.$m
	if ! sid_root_ready; then
		skip "$label: gpu: each launch on its Python line, read by the agent" "$sid_root_why"
		continue
	fi
	# One process's picture: the wrapper's helpers are left out.
	$TS record -q -r 500 --no-subprocesses -o "$TMP/s$m.folded" -- tests/sid/python3.$m tests/python/gpu_launch.py \
		"$FAKE" $STEPS >/dev/null 2>"$TMP/s$m.err"
	rc=$?
	line=$(grep -n 'lib\..*backward_kernel' tests/python/gpu_launch.py | cut -d: -f1)
	n=$(folded_with "$TMP/s$m.folded" "backward (gpu_launch.py:$line)")
	g=$(folded_with "$TMP/s$m.folded" "forward (gpu_launch.py:$(grep -n 'lib\..*gemm_kernel' tests/python/gpu_launch.py | cut -d: -f1))")
	[ $rc = 0 ] && grep -q '^\[gpu\];<module> (gpu_launch.py:[0-9]*);backward (gpu_launch.py:'"$line"');\[kernel\] backward_kernel ' "$TMP/s$m.folded" &&
		[ "$(awk '/^\[gpu\];.*\[kernel\] backward_kernel / { n += $NF } END { print n + 0 }' "$TMP/s$m.folded")" = $((STEPS * 2)) ] &&
		[ "$n" -gt 0 ] && [ "$g" -gt 0 ]
	check $? "$label: gpu: each launch on its Python line, read by the agent" \
		"rc $rc, $n/$g: $(grep '^\[gpu\]' "$TMP/s$m.folded" | head -3) $(tail -3 "$TMP/s$m.err")"
done
