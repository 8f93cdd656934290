#!/bin/sh
# make demo: profile the bundled toy training job (examples/train.py: a
# loader thread and a forward/backward/optimizer loop, in pure Python) and
# say where its time went.
cd "$(dirname "$0")/.." || exit 1
out=build/demo
PY=${PYTHON:-python3}
mkdir -p "$out"
rm -f "$out"/train.*
echo "== build/trainsample record -r 500 --stats -o $out/train.tsprof -o $out/train.folded -- $PY examples/train.py 3"
build/trainsample record -r 500 --stats \
	-o "$out/train.tsprof" -o "$out/train.folded" -- "$PY" examples/train.py 3 || exit 1
echo
echo "== the training loop's time by step (main thread; 'waiting' is an idle sample: blocked)"
awk 'index($0, "train (train.py:") {
	c = $NF; s = $0; sub(/ [0-9]+$/, "", s); all += c
	n = split(s, fr, ";"); step = "other"
	for (i = 1; i <= n; i++) {
		if (fr[i] ~ /^(forward|backward|optimizer_step) \(/) { step = fr[i]; sub(/ \(.*/, "", step); break }
		if (fr[i] ~ /^Queue\.get \(/) { step = "waiting for a batch (Queue.get)"; break }
	}
	if (fr[n] ~ /^\[idle/ && step !~ /^waiting/) step = step " (blocked: the GIL)"
	by[step] += c
} END { for (st in by) printf "  %5.1f%%  %s\n", 100 * by[st] / all, st }' "$out/train.folded" | sort -rn
echo
build/trainsample report -q "$out/train.tsprof" -t -g -o "$out/gil.folded"
echo "== who holds the GIL (report -t -g: only the holder's samples), as a share of the run"
awk 'NR == FNR { if (index($0, "train (train.py:")) ticks += $NF; next }
	{ who = index($0, "loader (train.py:") ? "the loader thread" : (index($0, "train (train.py:") ? "the training loop" : "other")
	  held[who] += $NF }
	END { for (w in held) printf "  %5.1f%%  %s\n", 100 * held[w] / ticks, w }' \
	"$out/train.folded" "$out/gil.folded" | sort -rn
echo "  (the rest of the time nobody runs Python: the loop waits for a batch while"
echo "   the loader is between bytecodes, e.g. handing over the GIL)"
echo
echo "== the functions on top of the stack while holding the GIL (self time)"
awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); n = split(s, fr, ";")
	leaf[fr[n]] += c; total += c }
	END { for (f in leaf) printf "  %5.1f%%  %s\n", 100 * leaf[f] / total, f }' "$out/gil.folded" | sort -rn | head -8
echo
echo "Data loading is the bottleneck: the loop waits in Queue.get while the loader,"
echo "in pure Python, competes with it for the GIL. Open $out/train.folded in"
echo "speedscope (https://speedscope.app) or feed it to flamegraph.pl; render it"
echo "again with: build/trainsample report $out/train.tsprof --function -o OUT.folded"
