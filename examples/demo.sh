#!/bin/sh
# make demo: profile the bundled toy training loop and say where its time went.
cd "$(dirname "$0")/.." || exit 1
out=build/demo
mkdir -p "$out"
rm -f "$out"/train_loop.*
echo "== build/trainsample record --idle -t -r 500 --stats -o $out/train_loop.tsprof -o $out/train_loop.folded -- build/examples/train_loop 3"
build/trainsample record --idle -t -r 500 --stats \
	-o "$out/train_loop.tsprof" -o "$out/train_loop.folded" -- build/examples/train_loop 3 || exit 1
echo
echo "== where the time went, by the function on top of the stack (self time, all threads)"
awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); n = split(s, fr, ";")
	leaf[fr[n]] += c; total += c }
	END { for (f in leaf) printf "  %5.1f%%  %s\n", 100 * leaf[f] / total, f }' \
	"$out/train_loop.folded" | sort -rn | head -12
echo
echo "== the main thread's time by step of the loop (inclusive; device_sync is waiting)"
awk '$3 ~ /^\(train_loop\);/ {
	c = $NF; s = $0; sub(/ [0-9]+$/, "", s); all += c
	n = split(s, fr, ";"); step = "other"
	for (i = 1; i <= n; i++)
		if (fr[i] ~ /^(load_batch|forward|backward|optimizer_step|device_sync)$/) { step = fr[i]; break }
	by[step] += c
} END { for (st in by) printf "  %5.1f%%  %s\n", 100 * by[st] / all, st }' "$out/train_loop.folded" | sort -rn
echo
echo "== the hottest stacks (folded: thread;root;...;leaf count)"
sort -t' ' -k2 "$out/train_loop.folded" | awk '{ print $NF "\t" $0 }' | sort -rn | cut -f2 | head -6 | sed 's/^/  /'
echo
echo "== the recording renders again: build/trainsample report $out/train_loop.tsprof -t --idle -o $out/again.folded"
build/trainsample report "$out/train_loop.tsprof" -t --idle -o "$out/again.folded"
