#!/bin/sh
# make demo: profile the bundled toy training job (examples/train.py: a
# data worker process, a loader thread and a forward/backward/optimizer
# loop, in pure Python) and let trainsample say where its time went; then,
# where the sid root has Debian's python3-torch (make sid-root-torch), a
# small PyTorch loop (examples/torch_train.py) by the built-in rules alone.
cd "$(dirname "$0")/.." || exit 1
out=build/demo
# The interpreter itself, not a wrapper that starts it (pyenv's shim is
# a shell script, whose commands would show as processes of their own).
PY=${PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}
mkdir -p "$out"
rm -f "$out"/train.* "$out"/torch.*
run() {
	echo "== $*"
	"$@"
}
run build/trainsample record -t -r 500 --phases examples/train.phases --time Queue.get \
	-o "$out/train.tsprof" -o "$out/train.svg" -o "$out/train.speedscope.json" \
	-o "$out/train.trace.json" -o "$out/train.summary.json" \
	-- "$PY" examples/train.py 3 --workers 1 || exit 1
cat <<EOF

The end of record above is trainsample's summary: each process (record
follows the command's children: the data worker is one), the training
process's threads with their GIL share, its top functions, the loop's time
by phase (examples/train.phases names this toy job's functions; PyTorch's,
Hugging Face Trainer's and Lightning's are built in), its steps, the
findings (the bottleneck named, its evidence and what usually fixes it)
and how long each wait for a batch (Queue.get) took. A loop that waits
for data while its loader works all the time is bound by data loading; a
loader in pure Python also takes the GIL from the loop. While a job runs,
build/trainsample top PID shows the same live.

EOF
run build/trainsample report "$out/train.tsprof" --phases examples/train.phases --group-by phase \
	-o "$out/train.phases.svg"
if [ -f build/sid-root/.stamp-torch ]; then
	echo
	run build/trainsample record -r 1000 -o "$out/torch.tsprof" -o "$out/torch.svg" \
		-o "$out/torch.summary.json" -- tests/sid/python3.14 examples/torch_train.py 5
else
	echo
	echo "(With Debian's python3-torch in the sid root, make sid-root-torch, a small"
	echo "PyTorch loop, examples/torch_train.py, is profiled here too.)"
fi
cat <<EOF

Open $out/train.svg in a browser (click a frame to zoom, Search or Ctrl-F to
find a function), $out/train.phases.svg for the same by phase,
$out/train.speedscope.json at https://www.speedscope.app, or
$out/train.trace.json at https://ui.perfetto.dev (the threads over time).
$out/train.summary.json holds the summary's figures for a program.
Render it again, e.g. the GIL holder's picture by function:
  build/trainsample report $out/train.tsprof -g --function -o $out/gil.svg
EOF
