#!/bin/sh
# make demo: profile the bundled toy training job (examples/train.py: a
# data worker process, a loader thread and a forward/backward/optimizer
# loop, in pure Python) and say where its time went.
cd "$(dirname "$0")/.." || exit 1
out=build/demo
# The interpreter itself, not a wrapper that starts it (pyenv's shim is
# a shell script, whose commands would show as processes of their own).
PY=${PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}
mkdir -p "$out"
rm -f "$out"/train.* "$out"/gil.*
echo "== build/trainsample record -t -r 500 --stats --phases examples/train.phases -o $out/train.tsprof -o $out/train.svg -o $out/train.speedscope.json -o $out/train.trace.json -o $out/train.folded -- $PY examples/train.py 3 --workers 1"
build/trainsample record -t -r 500 --stats --phases examples/train.phases -o "$out/train.tsprof" -o "$out/train.svg" \
	-o "$out/train.speedscope.json" -o "$out/train.trace.json" -o "$out/train.folded" \
	-- "$PY" examples/train.py 3 --workers 1 || exit 1
echo
echo "== the processes (record follows the command's children), samples each"
awk '{ p = $0; sub(/;.*/, "", p); n[p] += $NF } END { for (k in n) printf "  %6d  %s\n", n[k], k }' \
	"$out/train.folded" | sort -rn
# Below, threads by name: the process roots are left out.
sed 's/^process [^;]*;//' "$out/train.folded" >"$out/train.threads.folded"
echo
echo "== the threads (named by Python's threading), samples each"
awk '{ t = $0; sub(/;.*/, "", t); n[t] += $NF } END { for (k in n) printf "  %6d  %s\n", n[k], k }' \
	"$out/train.threads.folded" | sort -rn
echo
echo "== MainThread, the training loop: its time by step ('waiting' = blocked, an idle sample)"
awk '/^thread [0-9]* \(MainThread\);/ && index($0, "train (train.py:") {
	c = $NF; s = $0; sub(/ [0-9]+$/, "", s); all += c
	n = split(s, fr, ";"); step = "other"
	for (i = 1; i <= n; i++) {
		if (fr[i] ~ /^(forward|backward|optimizer_step) \(/) { step = fr[i]; sub(/ \(.*/, "", step); break }
		if (fr[i] ~ /^Queue\.get \(/) { step = "waiting for a batch (Queue.get)"; break }
	}
	if (fr[n] ~ /^\[idle/ && step !~ /^waiting/) step = step " (blocked: the GIL)"
	by[step] += c
} END { for (st in by) printf "  %5.1f%%  %s\n", 100 * by[st] / all, st }' "$out/train.threads.folded" | sort -rn
echo
build/trainsample report -q "$out/train.tsprof" -t -g -o "$out/gil.folded"
sed -i 's/^process [^;]*;//' "$out/gil.folded"
echo "== loader, the data loading thread"
awk '/^thread [0-9]* \(loader\);/ {
	c = $NF; s = $0; sub(/ [0-9]+$/, "", s); all += c
	n = split(s, fr, ";"); what = "working"
	if (fr[n] ~ /^\[idle/) what = index(s, "Queue.put (") ? "waiting for room in the queue" : \
		index(s, "Queue.get (") ? "waiting for a data worker'"'"'s batch" : "blocked (the GIL)"
	by[what] += c
} END { for (w in by) printf "  %5.1f%%  %s\n", 100 * by[w] / all, w }' "$out/train.threads.folded" | sort -rn
echo
echo "== data worker 0, a process of its own (as a DataLoader worker)"
awk '/^thread [0-9]* \(data worker 0\);/ {
	c = $NF; s = $0; sub(/ [0-9]+$/, "", s); all += c
	n = split(s, fr, ";"); what = "working (augment)"
	if (fr[n] ~ /^\[idle/) what = "waiting (the queue to the loader is full)"
	else if (!index(s, "augment (")) what = "working (other)"
	by[what] += c
} END { for (w in by) printf "  %5.1f%%  %s\n", 100 * by[w] / all, w }' "$out/train.threads.folded" | sort -rn
echo
echo "== who holds the training process's GIL (report -t -g keeps only the holder's samples), share of the run"
awk 'NR == FNR { if (/^thread [0-9]* \(MainThread\);/) ticks += $NF; next }
	/^thread [0-9]* \(data worker/ { next }
	{ t = $0; sub(/;.*/, "", t); sub(/^thread [0-9]* /, "", t); held[t] += $NF }
	END { for (w in held) printf "  %5.1f%%  %s\n", 100 * held[w] / ticks, w }' \
	"$out/train.threads.folded" "$out/gil.folded" | sort -rn
echo
echo "== the functions on top of the stack while holding the training process's GIL (self time)"
awk '/^thread [0-9]* \(data worker/ { next }
	{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); n = split(s, fr, ";")
	leaf[fr[n]] += c; total += c }
	END { for (f in leaf) printf "  %5.1f%%  %s\n", 100 * leaf[f] / total, f }' "$out/gil.folded" | sort -rn | head -8
echo
echo "A loop that waits in Queue.get while its loader works all the time is bound by"
echo "data loading; a loader in pure Python also takes the GIL from the loop."
echo
echo "Open $out/train.svg in a browser (click a frame to zoom, Search or Ctrl-F to"
echo "find a function), $out/train.speedscope.json at https://www.speedscope.app, or"
echo "$out/train.trace.json at https://ui.perfetto.dev (the threads over time)."
echo "Render it again, e.g. the GIL holder's picture by function:"
echo "  build/trainsample report $out/train.tsprof -g --function -o $out/gil.svg"
