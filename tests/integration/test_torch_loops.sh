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

# dump --locals of a running loop (TARGET): the batch's tensors by dtype,
# shape and device, in whichever frame holds them (the loop, train_step,
# evaluate); asked again while torch loads and the first batch is on its
# way (up to a minute).
tensor_locals() { # LABEL TARGET
	i=0
	while [ $i -lt 200 ]; do
		$TS dump --pid "$2" --locals >"$TMP/locals.txt" 2>&1
		grep -q '^ *x = <Tensor float32 (32, 1, 28, 28) cpu>$' "$TMP/locals.txt" &&
			grep -q '^ *y = <Tensor int64 (32,) cpu>$' "$TMP/locals.txt" && break
		sleep 0.3
		i=$((i + 1))
	done
	[ $i -lt 200 ]
	check $? "$1: dump --locals shows the batch's tensors by dtype, shape and device" \
		"$(grep -m4 ' [xy] = \|Tensor' "$TMP/locals.txt") $(head -c 400 "$TMP/locals.txt")"
}

run_loop() { # LABEL PYTHON ARGS...
	label=$1 py=$2
	shift 2
	$TS record -q -r 200 $NATIVE -o "$TMP/l.summary.json" -o "$TMP/l.trace.json" ${GROUPED:+-o "$TMP/l.tsprof"} -- \
		$py tests/python/train_cnn.py --steps 45 "$@" >"$TMP/l.truth" 2>"$TMP/l.err"
	out=$(NATIVE=$NATIVE /usr/bin/python3 tests/integration/loops_check.py "$TMP/l.summary.json" "$TMP/l.truth" \
		"$TMP/l.trace.json" 2>&1)
	check $? "$label: validation is eval, the steps train_loader's, val_loader's batches its own" \
		"$out $(tail -3 "$TMP/l.err")" "$(printf '%s' "$out" | head -1)"
}

# The pictures by phase (GROUPED=1: the recording also to a .tsprof): the
# validation pass's samples under [phase: eval] in --group-by phase, and
# all that --phase eval keeps, within 5 points of the loop of its own
# validation time, though inline validation runs on the training lines.
grouped_eval() { # LABEL
	label=$1
	$TS report -q "$TMP/l.tsprof" --group-by phase -o "$TMP/g.folded" &&
		$TS report -q "$TMP/l.tsprof" --phase eval -o "$TMP/e.folded"
	rc=$?
	# weights in 5 ms periods (-r 200)
	grouped=$(awk '/;\[phase: eval\];/ { n += $NF } END { printf "%.3f", n * 0.005 }' "$TMP/g.folded")
	kept=$(awk '{ n += $NF } END { printf "%.3f", n * 0.005 }' "$TMP/e.folded" 2>/dev/null)
	set -- $(awk '{ for (i = 1; i < NF; i++) if ($i == "loop_s" || $i == "val_s") print $(i + 1) }' "$TMP/l.truth")
	loop=$1 val=$2
	[ $rc -eq 0 ] && awk -v g="$grouped" -v k="$kept" -v v="$val" -v l="$loop" \
		'BEGIN { d = g - v; e = k - v; exit !(l > 0 && d * d <= (0.05 * l) ^ 2 && e * e <= (0.05 * l) ^ 2) }'
	check $? "$label: --group-by phase and --phase eval draw the validation pass as eval" \
		"grouped eval $grouped s, --phase eval $kept s, its own clock $val s of a loop of $loop s: $(grep -o '\[phase: [a-z]*\]' "$TMP/g.folded" | sort | uniq -c | tr '\n' ' ')" \
		"eval $grouped s grouped, $kept s kept; its own clock $val s"
}

if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	PY=/usr/bin/python3
	run_loop "torch 1.13: for loop, validation in a function, compute-bound" $PY --loop for --val function --bound compute
	GROUPED=1
	run_loop "torch 1.13: generator around the loader, validation inline, data-bound" $PY --loop gen --val inline --bound data
	grouped_eval "torch 1.13: validation inline"
	GROUPED=
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
	tensor_locals "torch 1.13" $target
	$TS attach $target -q -r 200 -d 4 -o "$TMP/a.summary.json" 2>"$TMP/a.err"
	kill_tree $target
	out=$(/usr/bin/python3 tests/integration/loops_check.py "$TMP/a.summary.json" - 2>&1)
	check $? "torch 1.13 attach: next(it), validation in a function: the steps train_loader's, the passes eval" \
		"$out $(tail -3 "$TMP/a.err")" "$(printf '%s' "$out" | head -1)"
else
	skip "torch 1.13 on python3.11: the loop shapes" "no torch for /usr/bin/python3 (make deps installs python3-torch)"
	skip "torch 1.13: dump --locals shows the batch's tensors" "no torch for /usr/bin/python3 (make deps installs python3-torch)"
	skip "torch 1.13: --group-by phase and --phase eval draw the validation pass as eval" "no torch for /usr/bin/python3 (make deps installs python3-torch)"
fi

if sid_root_ready && [ -f build/sid-root/.stamp-torch ]; then
	GROUPED=1
	run_loop "sid-3.14 torch 2: next(it), validation inline, data-bound" tests/sid/python3.14 --loop next --val inline --bound data
	grouped_eval "sid-3.14 torch 2: validation inline"
	GROUPED=
	run_loop "sid-3.14 torch 2: for loop, validation in a function, compute-bound" tests/sid/python3.14 --loop for --val function --bound compute
	run_loop "sid-3.14 torch 2: generator around the loader, validation inline, data-bound" tests/sid/python3.14 --loop gen --val inline --bound data
	tests/sid/python3.14 tests/python/train_cnn.py --loop for --val function --steps 400 >/dev/null 2>&1 &
	target=$!
	reap_later $target
	tensor_locals "sid-3.14 torch 2" $target
	kill_tree $target
else
	skip "sid-3.14 torch 2: the loop shapes" "${sid_root_why:-no torch in the sid root (make sid-root-torch)}"
	skip "sid-3.14 torch 2: dump --locals shows the batch's tensors" "${sid_root_why:-no torch in the sid root (make sid-root-torch)}"
	skip "sid-3.14 torch 2: --group-by phase and --phase eval draw the validation pass as eval" "${sid_root_why:-no torch in the sid root (make sid-root-torch)}"
fi
