#!/bin/sh
# Real PyTorch training loops written the ways people write them
# (tests/python/train_cnn.py: a small CNN, a train_loader and a val_loader
# with two workers each, a validation pass every 15 steps with
# model.eval() and torch.no_grad()), on Debian's torch (python3.11) and
# the sid root's torch 2.x (Python 3.14), recorded, with --native and by
# attach. Each run is compared with the loop's own clock
# (tests/integration/loops_check.py): validation is eval, its time within
# 5 points of the loop of its own validation time; the steps and their
# metrics belong to train_loader whatever the loop's shape (a for loop,
# next() on an iterator, a generator around the loader, the loader in an
# attribute under enumerate(islice(...)), the tutorial's loop by phase;
# --loop attr, iter(self.train_loader), is next(it)'s case again); val_loader has evaluation batches and
# no training steps; one epoch (validation passes are not epochs); the
# trace's phase track draws the same eval time.
. tests/integration/lib.sh
NATIVE=

run_loop() { # LABEL PYTHON ARGS...
	label=$1 py=$2
	shift 2
	$TS record -q -r 200 $NATIVE -o "$TMP/l.summary.json" -o "$TMP/l.trace.json" -- \
		$py tests/python/train_cnn.py --steps 45 "$@" >"$TMP/l.truth" 2>"$TMP/l.err"
	out=$(NATIVE=$NATIVE /usr/bin/python3 tests/integration/loops_check.py "$TMP/l.summary.json" "$TMP/l.truth" \
		"$TMP/l.trace.json" 2>&1)
	check $? "$label: validation is eval, the steps train_loader's, val_loader's batches its own" \
		"$out $(tail -3 "$TMP/l.err")" "$(printf '%s' "$out" | head -1)"
}

if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	PY=/usr/bin/python3
	run_loop "torch 1.13: for loop, validation in a function, compute-bound" $PY --loop for --val function --bound compute
	run_loop "torch 1.13: generator around the loader, validation inline, data-bound" $PY --loop gen --val inline --bound data
	run_loop "torch 1.13: next(it), validation in a function, data-bound" $PY --loop next --val function --bound data
	run_loop "torch 1.13: enumerate(islice(self.train_loader)), validation in a function" $PY --loop enumerate --val function --bound compute
	run_loop "torch 1.13: the tutorial's loop by phase (one inner loop, one model line for both)" $PY --loop phases --bound compute
	# --native reads the loaders as the default does (right after the tick).
	NATIVE=--native
	run_loop "torch 1.13 --native: next(it), validation in a function" $PY --loop next --val function --bound compute
	NATIVE=
	# attach, once the loop runs (its workers started): the iterators were
	# made before, and are known by the loader's __iter__ met first.
	$PY tests/python/train_cnn.py --loop next --val function --steps 400 >/dev/null 2>&1 &
	target=$!
	reap_later $target
	i=0
	while [ -z "$(pgrep -P $target)" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	$TS attach $target -q -r 200 -d 4 -o "$TMP/a.summary.json" 2>"$TMP/a.err"
	kill $target 2>/dev/null
	out=$(/usr/bin/python3 tests/integration/loops_check.py "$TMP/a.summary.json" - 2>&1)
	check $? "torch 1.13 attach: next(it), validation in a function: the steps train_loader's, the passes eval" \
		"$out $(tail -3 "$TMP/a.err")" "$(printf '%s' "$out" | head -1)"
else
	skip "torch 1.13 on python3.11: the loop shapes" "no torch for /usr/bin/python3 (make deps installs python3-torch)"
fi

if sid_root_ready && [ -f build/sid-root/.stamp-torch ]; then
	run_loop "sid-3.14 torch 2: next(it), validation inline, data-bound" tests/sid/python3.14 --loop next --val inline --bound data
else
	skip "sid-3.14 torch 2: the loop shapes" "${sid_root_why:-no torch in the sid root (make sid-root-torch)}"
fi
