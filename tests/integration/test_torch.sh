# PyTorch 2.x on the sid root's Python 3.14 (make sid-root-torch; not part
# of make sid-root, being 2 GB more): Python stacks of a training step, and
# --native merging them with torch's own frames.
. tests/integration/lib.sh
if ! sid_root_ready || [ ! -f build/sid-root/.stamp-torch ]; then
	why=${sid_root_why:-no torch in the sid root (make sid-root-torch)}
	skip "sid-3.14 torch: Python stacks of a training step" "$why"
	skip "sid-3.14 torch: --native merges torch's frames between the Python ones" "$why"
	exit 0
fi
PY=tests/sid/python3.14
$TS record -q -r 200 -o "$TMP/t.folded" -- $PY tests/python/torch_step.py 4
total=$(folded_total "$TMP/t.folded")
fwd=$(folded_with_prefix "$TMP/t.folded" "forward (torch_step.py:")
[ "$total" -gt 200 ] && [ "$fwd" -gt 0 ] && grep -q ';train (torch_step.py:[0-9]*);' "$TMP/t.folded"
check $? "sid-3.14 torch: Python stacks of a training step" \
	"$total samples, $fwd in forward: $(sort -t' ' -k2 -n "$TMP/t.folded" | tail -2 | cut -c1-400)" "$fwd of $total in forward"
$TS record -q --native -r 200 -o "$TMP/n.folded" -- $PY tests/python/torch_step.py 4
total=$(folded_total "$TMP/n.folded")
unmerged=$(folded_with "$TMP/n.folded" "[unmerged]")
# A torch frame (libtorch*) under forward's Python frame.
merged=$(awk '{ c = $NF; if ($0 ~ /forward \(torch_step\.py:[0-9]*\);.*\(libtorch/ || $0 ~ /forward \(torch_step\.py:[0-9]*\);.*at::/) n += c } END { print n + 0 }' "$TMP/n.folded")
[ "$total" -gt 200 ] && [ "$merged" -gt 0 ] && [ "$((unmerged * 100))" -le "$total" ]
check $? "sid-3.14 torch: --native merges torch's frames between the Python ones" \
	"$total samples, $merged with torch under forward, $unmerged unmerged: $(grep 'forward (' "$TMP/n.folded" | sort -t' ' -k2 -n | tail -1 | cut -c1-600)" \
	"$merged of $total, $unmerged unmerged"
