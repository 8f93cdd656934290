# Sourced by gpu_check.sh (TS, OUT, PY, ok, not_ok set), or run alone from
# the repository root after it built the programs: what CUPTI records of
# copies (memory kinds, flags, the NULL stream's id), and the findings on
# real work: copies, launch-bound, none on a busy GPU, and a PyTorch loop's.
if ! command -v ok >/dev/null 2>&1; then
	TS=build/trainsample OUT=build/gpu-check PY=${PYTHON:-python3} pass=0 fail=0 alone=1
	ok() { echo "ok - $1"; pass=$((pass + 1)); }
	not_ok() { echo "not ok - $1${2:+: $2}"; fail=$((fail + 1)); }
fi
AGENT=$PWD/build/libtrainsample_cuda.so
[ "$OUT/copies" -nt tests/cuda/copies.cu ] || nvcc -O2 -o "$OUT/copies" tests/cuda/copies.cu ||
	not_ok "nvcc builds tests/cuda/copies.cu"

# What the findings of a recording are: "id id ..." or "none".
finding_ids() { # TSPROF
	$TS report -q "$1" -o "$1.summary.json" 2>/dev/null
	python3 -c 'import json, sys
print(" ".join(x["id"] for x in json.load(open(sys.argv[1]))["findings"]) or "none")' "$1.summary.json" 2>&1
}

# 6. Copies: CUPTI's records of each way, then record's findings.
for m in pageable pageable-async pinned null per-thread; do
	d=$PWD/$OUT/raw-copies-$m
	rm -rf "$d" && mkdir -p "$d"
	CUDA_INJECTION64_PATH=$AGENT TRAINSAMPLE_GPU_DIR=$d timeout 60 "$OUT/copies" $m 40 32 >/dev/null 2>&1
	python3 tests/cuda/gpu_records.py summary "$d"/*.gpu >"$OUT/raw-copies-$m.txt" 2>&1
	echo "# copies $m, raw:"
	sed 's/^/#   /' "$OUT/raw-copies-$m.txt"
done
if grep -q "memory {'pageable to device': 40}, async 0" "$OUT/raw-copies-pageable.txt" &&
   grep -q "memory {'pinned to device': 40}, async 40" "$OUT/raw-copies-pinned.txt"; then
	ok "raw copies: CUPTI gives pageable/pinned memory kinds and the async flag"
else not_ok "raw copies: CUPTI gives pageable/pinned memory kinds and the async flag" \
	"$(grep memcpy "$OUT"/raw-copies-pageable.txt "$OUT"/raw-copies-pinned.txt)"; fi
null_id=$(sed -n 's/^  stream \([0-9]*\) of context [0-9]*: NULL$/\1/p' "$OUT/raw-copies-null.txt" | head -1)
if [ -n "$null_id" ] && grep -q "memcpy: .*streams {$null_id: 40}" "$OUT/raw-copies-null.txt"; then
	ok "raw copies: a NULL stream record names the stream the default stream's copies are on ($null_id)"
else not_ok "raw copies: a NULL stream record names the stream the default stream's copies are on" \
	"null stream id '${null_id}'; $(grep -E 'stream|memcpy' "$OUT/raw-copies-null.txt")"; fi

for m in pageable pinned null; do
	$TS record -q --gpu=on -o "$OUT/copies-$m.tsprof" -- "$OUT/copies" $m 150 32 \
		>"$OUT/copies-$m.out" 2>"$OUT/copies-$m.err"
	$TS report "$OUT/copies-$m.tsprof" --findings >"$OUT/copies-$m.findings" 2>&1
	$TS report "$OUT/copies-$m.tsprof" --summary >"$OUT/copies-$m.summary" 2>&1
	echo "# copies $m under record: $(cat "$OUT/copies-$m.out")"
	sed 's/^/#   /' "$OUT/copies-$m.findings" "$OUT/copies-$m.summary" | grep -v '^#   $'
done
got=$(for m in pageable pinned null; do finding_ids "$OUT/copies-$m.tsprof"; done | tr '\n' '/')
case "$got" in
*copies*/*/*copies*/) pinned_has=$(echo "$got" | cut -d/ -f2) ;;
*) pinned_has=copies ;;
esac
if [ "${pinned_has#*copies}" = "$pinned_has" ] && grep -q 'pageable memory' "$OUT/copies-pageable.findings" &&
   grep -q "default stream\|default (NULL) stream" "$OUT/copies-null.findings"; then
	ok "copies findings: pageable and NULL-stream copies named, none for pinned copies on a stream of their own ($got)"
else not_ok "copies findings: pageable and NULL-stream copies named, none for pinned copies on a stream of their own" "$got"; fi

# 7. Launch-bound: 40 000 tiny kernels; a GPU kept busy says nothing.
$TS record -q --gpu=on -o "$OUT/tiny.tsprof" -- "$OUT/kernel_loop" 20000 >/dev/null 2>&1
$TS record -q --gpu=on -o "$OUT/busy.tsprof" -- "$OUT/busy" 2 512 >/dev/null 2>&1
for n in tiny busy; do
	$TS report "$OUT/$n.tsprof" --summary --findings >"$OUT/$n.findings" 2>&1
	sed 's/^/# '"$n"': /' "$OUT/$n.findings"
done
got="$(finding_ids "$OUT/tiny.tsprof")/$(finding_ids "$OUT/busy.tsprof")"
case "$got" in
*launch-bound*/none) ok "gpu findings on a GPU: launch-bound on 40 000 tiny kernels, none on a busy GPU ($got)" ;;
*) not_ok "gpu findings on a GPU: launch-bound on 40 000 tiny kernels, none on a busy GPU" "$got" ;;
esac

# 8. PyTorch: batches copied from pageable memory, then from pinned memory.
if "$PY" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	for m in pageable pinned; do
		d=$PWD/$OUT/raw-torch-$m
		rm -rf "$d" && mkdir -p "$d"
		CUDA_INJECTION64_PATH=$AGENT TRAINSAMPLE_GPU_DIR=$d timeout 120 "$PY" tests/cuda/torch_copies.py $m 100 \
			>/dev/null 2>&1
		python3 tests/cuda/gpu_records.py summary "$d"/*.gpu 2>&1 | grep -E 'memcpy|stream' | sed "s/^/# torch $m raw: /"
		$TS record -q --gpu=on -o "$OUT/torch-$m.tsprof" -- "$PY" tests/cuda/torch_copies.py $m 300 \
			>"$OUT/torch-$m.out" 2>"$OUT/torch-$m.err"
		$TS report "$OUT/torch-$m.tsprof" --summary --findings >"$OUT/torch-$m.findings" 2>&1
		echo "# torch $m: $(cat "$OUT/torch-$m.out")"
		sed 's/^/#   /' "$OUT/torch-$m.findings"
	done
	if grep -q 'pageable memory' "$OUT/torch-pageable.findings" &&
	   grep -q 'copied most from to_gpu (torch_copies.py:[0-9]*)' "$OUT/torch-pageable.findings" &&
	   ! grep -q 'pageable memory' "$OUT/torch-pinned.findings"; then
		ok "torch copies: .to(cuda) from pageable memory named with its line, not from pinned memory"
	else not_ok "torch copies: .to(cuda) from pageable memory named with its line, not from pinned memory" \
		"$(cat "$OUT/torch-pageable.err" | tail -3)"; fi
	# 9. A DataLoader that cannot keep up with the GPU.
	$TS record -q -r 200 --gpu=on -o "$OUT/loader.tsprof" -o "$OUT/loader.trace.json" \
		-o "$OUT/loader.summary.json" -- "$PY" tests/cuda/torch_loader.py 8 \
		>"$OUT/loader.out" 2>"$OUT/loader.err"
	$TS report "$OUT/loader.tsprof" --summary --findings >"$OUT/loader.findings" 2>&1
	echo "# torch loader: $(cat "$OUT/loader.out")"
	sed 's/^/#   /' "$OUT/loader.findings"
	got=$(python3 -c 'import json, sys
print(" ".join(x["id"] for x in json.load(open(sys.argv[1]))["findings"]) or "none")' "$OUT/loader.summary.json" 2>&1)
	case " $got " in
	*" data-bound "*) ok "torch loader on a GPU: data-bound ($got)" ;;
	*) not_ok "torch loader on a GPU: data-bound" "$got $(tail -3 "$OUT/loader.err")" ;;
	esac
else
	echo "ok - torch copies # SKIP no PyTorch with CUDA for $PY"
fi
if [ -n "${alone:-}" ]; then
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
fi
