#!/bin/sh
# make demo: profile the bundled toy training loop and say where its time went.
cd "$(dirname "$0")/.." || exit 1
out=build/demo
mkdir -p "$out"
rm -f "$out"/train_loop.*
echo "== trainsample record --idle -t -r 500 -- build/examples/train_loop 3"
build/trainsample record --idle -t -r 500 --stats \
	-o "$out/train_loop.tsprof" -o "$out/train_loop.folded" -- build/examples/train_loop 3 || exit 1
echo
echo "== the main thread's time by what main was calling (folded: $out/train_loop.folded)"
awk '
	$1 == "thread" && $3 ~ /^\(train_loop\);/ {
		c = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		n = split(s, fr, ";"); what = ""
		for (i = 1; i < n; i++) if (fr[i] == "main") { what = fr[i + 1]; break }
		if (what == "") what = fr[n]
		if (fr[n] ~ /^\[idle/) what = what " " fr[n]
		by[what] += c; total += c
	}
	END { for (w in by) printf "  %5.1f%%  %s\n", 100 * by[w] / total, w }' "$out/train_loop.folded" | sort -rn
echo
echo "== the same recording rendered again: build/trainsample report $out/train_loop.tsprof -t --idle -o $out/again.folded"
build/trainsample report "$out/train_loop.tsprof" -t --idle -o "$out/again.folded"
