# PyTorch 2.x on the sid root's Python 3.14 (make sid-root-torch; not part
# of make sid-root, being 2 GB more), profiled from the host: a CPU
# training loop with a DataLoader of two worker processes
# (examples/torch_train.py). Without --native, forward, backward, the
# optimizer step and the wait for data each appear under the line of the
# loop that calls them, with torch's files and lines; with --native, ATen
# and autograd frames by name between them.
. tests/integration/lib.sh
if ! sid_root_ready || [ ! -f build/sid-root/.stamp-torch ]; then
	why=${sid_root_why:-no torch in the sid root (make sid-root-torch)}
	skip "sid-3.14 torch: forward, backward, optimizer step and data wait, by line" "$why"
	skip "sid-3.14 torch: --native names ATen and autograd frames under them" "$why"
	exit 0
fi
PY=tests/sid/python3.14
SRC=examples/torch_train.py
line_of() { grep -n "$1" "$SRC" | head -1 | cut -d: -f1; }
L_DATA=$(line_of 'for x, y in loader')
L_FWD=$(line_of 'loss = torch.nn.functional.mse_loss')
L_BWD=$(line_of 'loss.backward()')
L_STEP=$(line_of 'opt.step()')
L_MLP=$(line_of 'return self.b(torch.relu')

# Samples whose stack has the loop's line then (anywhere below) PATTERN.
under() {
	awk -v a="train (torch_train.py:$1);" -v b="$2" '
		{ i = index($0, a); if (i && index(substr($0, i), b)) n += $NF } END { print n + 0 }' "$3"
}

$TS record -q -r 200 -o "$TMP/t.folded" -- $PY "$SRC" 8
total=$(folded_total "$TMP/t.folded")
fwd=$(under "$L_FWD" "MLP.forward (torch_train.py:$L_MLP)" "$TMP/t.folded")
bwd=$(under "$L_BWD" "Tensor.backward (torch/_tensor.py:" "$TMP/t.folded")
# The step's own frames: torch 2's Optimizer wrapper (profile_hook_step)
# and SGD.step, both in torch/optim (a loaded run's few step samples all
# fell in the wrapper: SGD.step 0).
step=$(under "$L_STEP" "(torch/optim/" "$TMP/t.folded")
wait=$(awk -v a="train (torch_train.py:$L_DATA);_BaseDataLoaderIter.__next__ (torch/utils/data/dataloader.py:" \
	'index($0, a) && /\[idle/ { n += $NF } END { print n + 0 }' "$TMP/t.folded")
[ "$total" -gt 500 ] && [ "$fwd" -gt 0 ] && [ "$bwd" -gt 0 ] && [ "$step" -gt 0 ] && [ "$wait" -gt 0 ]
check $? "sid-3.14 torch: forward, backward, optimizer step and data wait, by line" \
	"$total samples: forward $fwd, backward $bwd, step $step, data wait $wait: $(grep 'train (torch_train' "$TMP/t.folded" | sort -t' ' -k2 -n | tail -3 | cut -c1-300)" \
	"of $total: forward $fwd, backward $bwd, step $step, data wait $wait"

$TS record -q --native -r 200 -o "$TMP/n.folded" -- $PY "$SRC" 6
total=$(folded_total "$TMP/n.folded")
unmerged=$(folded_with "$TMP/n.folded" "[unmerged]")
aten=$(awk -v a="MLP.forward (torch_train.py:$L_MLP);" '{ i = index($0, a); if (i && substr($0, i) ~ /at::_ops::[a-z_]+::call/) n += $NF } END { print n + 0 }' "$TMP/n.folded")
autograd=$(awk -v a="Tensor.backward (torch/_tensor.py:" '{ i = index($0, a); if (i && substr($0, i) ~ /torch::autograd::/) n += $NF } END { print n + 0 }' "$TMP/n.folded")
[ "$total" -gt 500 ] && [ "$aten" -gt 0 ] && [ "$autograd" -gt 0 ] && [ "$((unmerged * 100))" -le "$total" ]
check $? "sid-3.14 torch: --native names ATen and autograd frames under them" \
	"$total samples, at::_ops::*::call under MLP.forward $aten, torch::autograd:: under backward $autograd, $unmerged unmerged" \
	"of $total: ATen under forward $aten, autograd under backward $autograd, unmerged $unmerged"
