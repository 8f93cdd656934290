#!/bin/sh
# make bench: how far samples lean onto code that enters the kernel often.
# A stop comes where the interrupt reaches the thread, and one that enters
# a syscall meanwhile stops on its way out (docs/how-it-works.md). A Python
# loop calling os.getppid() every few microseconds (tests/python/
# syscall_line.py), and the same C loop: the share of samples in the
# syscall's frame by default, with --native, and with --nonblocking (which
# stops nothing, so does not lean), and --stats' share of the stops that
# came at a syscall's end. The gap between the rows is the lean; it grows
# with the time an interrupt takes to reach another CPU.
#   SECONDS_EACH=4 sh bench/lean.sh
cd "$(dirname "$0")/.." || exit 1
secs=${SECONDS_EACH:-4}
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)
[ -x build/tests/targets/syscall_loop ] || { echo "bench/lean.sh: build first (make build/tests/targets/syscall_loop)" >&2; exit 1; }
echo "samples in the syscall's frame, 1 kHz, ${secs} s each (a getppid() every few us):"
printf '%-24s %10s %14s\n' run "in getppid" "stops at exit"
run() {
	label=$1 frame=$2; shift 2
	${TS:-build/trainsample} record -q --stats -r 1000 -o "$out/l.folded" "$@" >/dev/null 2>"$out/err" || return
	awk -v f="$frame" -v label="$label" -v exits="$(sed -n 's/.*stops; \([0-9.]*\)% of them at a syscall.*/\1%/p' "$out/err")" '
		{ n = $NF; tot += n; if (index($0, f)) in_f += n }
		END { printf "%-24s %9.1f%% %14s\n", label, tot ? 100 * in_f / tot : 0, exits == "" ? "0%" : exits }' "$out/l.folded"
}
# Without --native, the line that calls it.
line="syscall_line.py:$(grep -n '^ *os.getppid()$' tests/python/syscall_line.py | cut -d: -f1))"
run "python" "$line" -- "$PY" tests/python/syscall_line.py sys "$secs"
run "python --nonblocking" "$line" --nonblocking -- "$PY" tests/python/syscall_line.py sys "$secs"
run "python --native" "getppid" --native -- "$PY" tests/python/syscall_line.py sys "$secs"
run "C" ";syscall" -- build/tests/targets/syscall_loop sys "$secs"
