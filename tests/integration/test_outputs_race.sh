#!/bin/sh
# Outputs where another user can change the names (issue 30): that user
# keeps swapping what a name in their own folder is (a FIFO and a link to a
# file of root's; a folder and a link to a folder of root's) while root
# writes there again and again. Root's files must never be written, and
# every run either writes what it was given or refuses in one line.
. tests/integration/lib.sh

RUNS=${RUNS:-150}     # runs per race, each a fraction of a second
SECONDS_MAX=${SECONDS_MAX:-12}
PY3=/usr/bin/python3  # one the other user can run (pyenv's is under /root)
src=tests/data/h200/busy.tsprof

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1 ||
	[ ! -x $PY3 ]; then
	for n in "report -o through a FIFO swapped with a link" "record -o through a FIFO swapped with a link" \
		"report -o through a folder swapped with a link" \
		"a link of another user's on the way to an output is not followed" \
		"record -o NAME.tsprof at another user's link is refused" \
		"a device in another user's folder is not written" \
		"one's own link on the way to an output is followed" \
		"the GPU folder is made in one's own XDG_RUNTIME_DIR, in /tmp rather than another user's"; do
		skip "$n" "needs root, setpriv, user nobody and $PY3"
	done
	exit 0
fi
uid=$(id -u nobody)
gid=$(id -g nobody)
cp tests/integration/swap_names.py "$TMP/swap_names.py"
chmod 644 "$TMP/swap_names.py"
cp "$src" "$TMP/src.tsprof"

# race NAME MODE FOLDER LEAF TARGET WATCHED CMD...: the other user swaps
# FOLDER/LEAF between MODE (fifo, dir) and a link to TARGET while root runs
# CMD up to RUNS times (SECONDS_MAX at most); fails at the first run after
# which WATCHED (root's) changed, saying which run it was.
race() {
	name=$1 mode=$2 folder=$3 leaf=$4 target=$5 watched=$6
	shift 6
	before=$(cksum <"$watched")
	# setpriv execs: $! is the swapper itself.
	setpriv --reuid="$uid" --regid="$gid" --clear-groups $PY3 "$TMP/swap_names.py" "$mode" \
		"$folder" "$leaf" "$target" 2>"$TMP/swap.err" &
	spid=$!
	reap_later $spid
	sleep 0.3
	i=0 hit=0 wrote=0 refused=0 other=""
	end=$(( $(date +%s) + SECONDS_MAX ))
	while [ $i -lt "$RUNS" ] && [ "$(date +%s)" -lt $end ]; do
		i=$((i + 1))
		timeout 10 "$@" >/dev/null 2>"$TMP/run.err"
		rc=$?
		if [ "$(cksum <"$watched")" != "$before" ]; then
			hit=$i
			break
		fi
		if [ $rc = 0 ]; then
			wrote=$((wrote + 1))
		elif [ "$(wc -l <"$TMP/run.err")" = 1 ] && grep -q "^trainsample: error: " "$TMP/run.err"; then
			refused=$((refused + 1))
		else
			other="exit $rc: $(head -3 "$TMP/run.err")"
		fi
	done
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
	# Some runs found what they may write (the FIFO, the folder) and did.
	[ $hit = 0 ] && [ -z "$other" ] && [ ! -s "$TMP/swap.err" ] && [ $wrote -gt 0 ]
	check $? "$name" "$( [ $hit != 0 ] && echo "root's file written at run $hit of $i" ||
		echo "${other:-$wrote written; the swapper: $(cat "$TMP/swap.err")}")" \
		"$i runs: $wrote written, $refused refused in one line"
}

# A file of root's, only root's to read and write.
mkdir "$TMP/root" && chmod 700 "$TMP/root"
echo "root's own" >"$TMP/root/x.folded" && chmod 600 "$TMP/root/x.folded"
# Folders of the other user's, where they may do anything.
for d in theirs1 theirs2 theirs3; do
	mkdir "$TMP/$d" && chown "$uid:$gid" "$TMP/$d" && chmod 755 "$TMP/$d"
done

race "report -o through a FIFO swapped with a link" fifo "$TMP/theirs1" x.folded "$TMP/root/x.folded" \
	"$TMP/root/x.folded" $TS report -q "$TMP/src.tsprof" -o "$TMP/theirs1/x.folded"
# A command that runs long enough to be sampled: an empty output would
# leave root's file as it was even when opened.
race "record -o through a FIFO swapped with a link" fifo "$TMP/theirs2" x.folded "$TMP/root/x.folded" \
	"$TMP/root/x.folded" $TS record -q -r 1000 -o "$TMP/theirs2/x.folded" -- \
	sh -c 'i=0; while [ $i -lt 5000 ]; do i=$((i+1)); done' 
race "report -o through a folder swapped with a link" dir "$TMP/theirs3" sub "$TMP/root" \
	"$TMP/root/x.folded" $TS report -q "$TMP/src.tsprof" -o "$TMP/theirs3/sub/x.folded"

# The same refusals without a race, each in one line, root's file intact.
# one_line NAME PATTERN CMD...: CMD fails with one line matching PATTERN.
one_line() {
	name=$1 pattern=$2
	shift 2
	"$@" >/dev/null 2>"$TMP/err"
	rc=$?
	[ $rc != 0 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -Eq "$pattern" "$TMP/err" &&
		[ "$(cat "$TMP/root/x.folded")" = "root's own" ]
	check $? "$name" "exit $rc: $(cat "$TMP/err")"
}
mkdir "$TMP/theirs4" && chown "$uid:$gid" "$TMP/theirs4"
ln -s "$TMP/root" "$TMP/theirs4/sub" && chown -h "$uid:$gid" "$TMP/theirs4/sub"
one_line "a link of another user's on the way to an output is not followed" \
	"theirs4/sub/x.folded: sub is a link that uid $uid owns: not followed" \
	$TS report -q "$TMP/src.tsprof" -o "$TMP/theirs4/sub/x.folded"
ln -s "$TMP/root/x.folded" "$TMP/theirs4/x.tsprof" && chown -h "$uid:$gid" "$TMP/theirs4/x.tsprof"
one_line "record -o NAME.tsprof at another user's link is refused" "link owned by another user" \
	$TS record -q -o "$TMP/theirs4/x.tsprof" -- /bin/true
mknod "$TMP/theirs4/dev.folded" c 1 3 2>/dev/null
if [ -c "$TMP/theirs4/dev.folded" ]; then
	one_line "a device in another user's folder is not written" \
		"a device of uid 0 in a folder uid $uid owns: not written" \
		$TS report -q "$TMP/src.tsprof" -o "$TMP/theirs4/dev.folded"
else
	skip "a device in another user's folder is not written" "mknod refused here"
fi
# One's own link, in one's own folder, is followed to the folder it names.
ln -s "$TMP/root" "$TMP/mine"
$TS report -q "$TMP/src.tsprof" -o "$TMP/mine/y.folded" 2>"$TMP/err" && [ -s "$TMP/root/y.folded" ]
check $? "one's own link on the way to an output is followed" "$(cat "$TMP/err")"

# The GPU records' folder goes where no other user can change a name:
# not into another user's XDG_RUNTIME_DIR (kept by sudo), /tmp instead.
if [ -f build/libtrainsample_cuda.so ]; then
	mkdir -m 700 "$TMP/runtime"
	XDG_RUNTIME_DIR="$TMP/theirs4" $TS record -q --gpu=on -o "$TMP/g1.folded" -- \
		sh -c 'echo "$TRAINSAMPLE_GPU_DIR"' >"$TMP/g1" 2>&1
	XDG_RUNTIME_DIR="$TMP/runtime" $TS record -q --gpu=on -o "$TMP/g2.folded" -- \
		sh -c 'echo "$TRAINSAMPLE_GPU_DIR"' >"$TMP/g2" 2>&1
	grep -q "^/tmp/trainsample-gpu-[0-9]*-[0-9a-f]*$" "$TMP/g1" &&
		grep -q "^$TMP/runtime/trainsample-gpu-[0-9]*-[0-9a-f]*$" "$TMP/g2" &&
		[ -z "$(ls -A "$TMP/theirs4" | grep trainsample-gpu)" ] && [ -z "$(ls -A "$TMP/runtime")" ]
	check $? "the GPU folder is made in one's own XDG_RUNTIME_DIR, in /tmp rather than another user's" \
		"another's: $(cat "$TMP/g1"); own: $(cat "$TMP/g2")"
else
	skip "the GPU folder is made in one's own XDG_RUNTIME_DIR, in /tmp rather than another user's" \
		"no libtrainsample_cuda.so (no CUPTI headers)"
fi
