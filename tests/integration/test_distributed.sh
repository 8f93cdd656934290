#!/bin/sh
# Communication as a phase (analysis/comm.c, the comm rules): a DDP job
# of two gloo ranks on the CPU (tests/python/ddp_ranks.py), rank 1's
# forward slowed so that rank 0 waits in backward for the gradients'
# allreduce, rank 0's metrics slowed so that rank 1 waits in an explicit
# all_reduce; each rank clocks its own waits. With Python frames alone,
# then with --native (c10d's frames, the comm threads beside the step).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

if ! torch_python; then
	skip "distributed: DDP ranks' comm within 5 points of their own clocks" "$torch_why"
	exit 0
fi
label=$torch_label
# The ranks' lines: "rank R pid P steps N comm_ms C total_ms T".
# Samples of process $2 in folded file $1 whose stack holds text $3.
with_text() { grep "^process $2 " "$1" | awk -v f="$3" 'index($0, f) { n += $NF } END { print n + 0 }'; }
rank_field() { sed -n "s/^rank $2 pid \([0-9]*\) steps \([0-9]*\) comm_ms \([0-9]*\) total_ms \([0-9]*\)$/\\$3/p" "$1"; }

timeout 120 $TS record -o "$TMP/ddp.summary.json" -o "$TMP/ddp.tsprof" -- \
	$torch_py tests/python/ddp_ranks.py 3 >"$TMP/ddp.out" 2>"$TMP/ddp.err"
rc=$?
pid0=$(rank_field "$TMP/ddp.out" 0 1) pid1=$(rank_field "$TMP/ddp.out" 1 1)

# Each rank's comm share of its steps (summary.json) against its own
# clock's share of its loop: "PID SHARE CLOCK" a line.
/usr/bin/python3 - "$TMP/ddp.summary.json" "$TMP/ddp.out" >"$TMP/ddp.shares" 2>&1 <<'EOT'
import json, re, sys
doc = json.load(open(sys.argv[1]))
for line in open(sys.argv[2]):
    m = re.match(r"rank (\d) pid (\d+) steps \d+ comm_ms (\d+) total_ms (\d+)", line)
    if not m:
        continue
    proc = [p for p in doc["processes"] if p["pid"] == int(m[2])][0]
    steps = (proc.get("loop") or {}).get("steps")
    clock = "%.1f" % (100 * int(m[3]) / int(m[4]))
    if not steps:  # not counted (the summary's steps line says why)
        print(m[2], "none", clock)
        continue
    ms = steps["phase_ms"]
    print(m[2], "%.1f" % (100 * ms["comm"] / sum(ms.values())), clock)
EOT
bad=$(awk '{ d = $2 - $3; if (d < 0) d = -d; if ($2 == "none" || d > 5) print }' "$TMP/ddp.shares")
[ $rc -eq 0 ] && [ -n "$pid0" ] && [ -n "$pid1" ] && [ "$(wc -l <"$TMP/ddp.shares")" -eq 2 ] && [ -z "$bad" ]
check $? "$label DDP on gloo, Python frames: each rank's comm share of its steps within 5 points of its own clock" \
	"exit $rc; pid share clock: $(cat "$TMP/ddp.shares"); $(grep "^trainsample: PID\|steps:" "$TMP/ddp.err")" \
	"$(awk '{ printf "%s%s%% (clock %s%%)", (NR > 1 ? ", " : ""), $2, $3 }' "$TMP/ddp.shares")"

# What comm holds: rank 0's wait under backward, rank 1's explicit
# all_reduce; never rank 1's slowed forward.
$TS report -q "$TMP/ddp.tsprof" --phase comm -o "$TMP/comm.folded"
r0=$(with_text "$TMP/comm.folded" "$pid0" ";Tensor.backward (")
r1=$(with_text "$TMP/comm.folded" "$pid1" ";all_reduce (torch/distributed/distributed_c10d.py:")
fwd=$(with_text "$TMP/comm.folded" "$pid1" ";Net.forward (")
# The handle's wait: blocked on the line itself (a C++ method).
line=$(grep -n "^ *work.wait()$" tests/python/ddp_ranks.py | cut -d: -f1)
w1=$(with_text "$TMP/comm.folded" "$pid1" ";train (ddp_ranks.py:$line);[idle: ")
[ "${r0:-0}" -gt 0 ] && [ "${r1:-0}" -gt 0 ] && [ "${w1:-0}" -gt 0 ] && [ "${fwd:-0}" -eq 0 ]
check $? "--phase comm: rank 0's wait under backward, rank 1's explicit all_reduce and work.wait(), not rank 1's slow forward" \
	"rank 0 under backward $r0, rank 1 in all_reduce $r1, in work.wait() $w1, in Net.forward $fwd" \
	"$r0, $r1 and $w1 samples"

$TS report -q "$TMP/ddp.tsprof" --group-by phase -o "$TMP/phase.folded" -o "$TMP/ddp.trace.json"
/usr/bin/python3 - "$TMP/ddp.summary.json" docs/summary.schema.json "$TMP/ddp.trace.json" \
	>"$TMP/json.out" 2>&1 <<'EOT'
import json, sys, jsonschema
doc = json.load(open(sys.argv[1]))
jsonschema.validate(doc, json.load(open(sys.argv[2])))
keys = [k for p in doc["processes"] for k in ((p.get("loop") or {}).get("metrics") or {})
        if k.endswith("/time_comm_ms")]
assert any(k.startswith("profile/train/dl_") for k in keys), keys
tr = json.load(open(sys.argv[3]))
ev = tr["traceEvents"] if isinstance(tr, dict) else tr
assert any(e.get("cat") == "phase" and e.get("name") == "comm" for e in ev), "no comm on a phase track"
EOT
jrc=$?
grep -q "^process $pid0 [^;]*;\[phase: comm\];" "$TMP/phase.folded" && [ $jrc -eq 0 ]
check $? "--group-by phase has a [phase: comm] root; summary.json (time_comm_ms) validates; the trace's phase tracks show comm" \
	"$(cat "$TMP/json.out"); $(cut -d';' -f2 "$TMP/phase.folded" | sort -u | tr '\n' ' ')"

# --native: c10d's frames name the wait, and the steps line says what the
# step waited for and what ran beside it.
timeout 120 $TS record --native -o "$TMP/nat.folded" -- \
	$torch_py tests/python/ddp_ranks.py 2 >"$TMP/nat.out" 2>"$TMP/nat.err"
rc=$?
pid0=$(rank_field "$TMP/nat.out" 0 1)
fin=$(with_text "$TMP/nat.folded" "$pid0" ";c10d::Reducer::finalize_backward")
line=$(grep -A8 "^trainsample: PID $pid0 " "$TMP/nat.err" | grep "steps:.*; comm: the step waited [0-9.]* ms, [0-9.]* ms ran hidden")
[ $rc -eq 0 ] && [ "${fin:-0}" -gt 0 ] && [ -n "$line" ]
check $? "$label DDP with --native: the Reducer's finalize_backward on rank 0, its steps line with the comm waited and hidden" \
	"exit $rc, finalize_backward $fin; $(grep -A8 "^trainsample: PID $pid0 " "$TMP/nat.err")" \
	"$(echo "$line" | sed 's/.*; comm: //')"

# NCCL's kernels are the GPU's comm time (the fake libcupti, as
# test_gpu.sh): 3 ms of allreduce kernel a step, on its own stream.
FAKE=build/tests/fake/libcupti.so.13
if [ ! -f "$FAKE" ] || [ ! -f build/libtrainsample_cuda.so ]; then
	skip "distributed: NCCL kernels as the GPU's comm" "no CUPTI headers here, so neither the agent nor the fake was built"
	exit 0
fi
$TS record -r 500 -o "$TMP/g.summary.json" -o "$TMP/g.tsprof" -- \
	/usr/bin/python3 tests/python/gpu_nccl.py "$FAKE" 40 >"$TMP/g.out" 2>"$TMP/g.err"
rc=$?
comm_s=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["gpus"][0]["comm_s"])' \
	"$TMP/g.summary.json" 2>&1)
$TS report -q "$TMP/g.tsprof" --phase comm -o "$TMP/g.folded"
gcomm=$(awk '/^\[gpu\];.*\[kernel\] ncclDevKernel_AllReduce/ { n += $NF } END { print n + 0 }' "$TMP/g.folded")
gother=$(awk '/^\[gpu\];/ && !/\[kernel\] nccl/ { n += $NF } END { print n + 0 }' "$TMP/g.folded")
$TS report "$TMP/g.tsprof" --summary >"$TMP/g.report" 2>&1
[ $rc -eq 0 ] && [ "$comm_s" = "0.12" ] && [ "$gcomm" -gt 0 ] && [ "$gother" -eq 0 ] &&
	grep -q "^trainsample: GPU 0: .* 120 kernels (0.120 s of them communication)" "$TMP/g.report"
check $? "fake NCCL kernels: the GPU's comm time in summary.json and report, in --phase comm's GPU stacks alone" \
	"exit $rc, comm_s $comm_s, --phase comm's GPU stacks: NCCL $gcomm, others $gother; $(grep "GPU 0" "$TMP/g.report")" \
	"comm_s $comm_s for 40 x 3 ms"
