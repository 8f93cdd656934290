# make check-sanitize, and part of make test: trainsample and the unit
# tests built with ASan and UBSan (build/san/), the unit tests run, then a
# short subset of record, report, diff and dump on C and Python targets
# with the sanitized trainsample (the targets are the normal ones). Any
# sanitizer report ends that run (halt_on_error) and fails its check.
# Skipped, saying why, where the compiler has no ASan/UBSan.
. tests/integration/lib.sh
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)
SAN=build/san
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
started=$(date +%s)

if ! echo 'int main(void) { return 0; }' |
	${CC:-cc} -x c -fsanitize=address,undefined -o "$TMP/probe" - 2>"$TMP/probe.err"; then
	skip "ASan/UBSan build and runs" "${CC:-cc} cannot build with -fsanitize=address,undefined: $(head -1 "$TMP/probe.err")"
	exit 0
fi

# The make that runs this script (make test) must not hand its variables
# and jobserver to these builds: env -u. -O1 is what the sanitizers are
# run at. gcc once stopped the build at -O1
# (cli/gpu.c) and -O3 (symbolize/debug_file.c) with false "null destination
# pointer" warnings under -Werror: the whole build covers -O1, and those two
# files are compiled at -O3 too.
units=$(ls tests/unit/test_*.c | sed 's|tests/unit/\(.*\)\.c|'"$SAN"'/tests/unit/\1|')
# The Makefile's sanitize-build (make test made it while fetching the
# roots: then nothing is left to build here).
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s sanitize-build >"$TMP/make.log" 2>&1
rc=$?
check $rc "trainsample and the unit tests build with ASan/UBSan at -O1 under -Werror" \
	"exit $rc: $(grep -m3 -A3 error "$TMP/make.log")"
[ $rc -eq 0 ] || exit 0
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s BUILD="$TMP/o3" CFLAGS="-O3 -g -fsanitize=address,undefined" \
	"$TMP/o3/obj/cli/gpu.o" "$TMP/o3/obj/symbolize/debug_file.o" >"$TMP/make3.log" 2>&1
rc=$?
check $rc "cli/gpu.c and symbolize/debug_file.c build with ASan/UBSan at -O3 under -Werror" \
	"exit $rc: $(grep -m3 -A3 error "$TMP/make3.log")"

sanitizer_said() { grep -m3 -E 'Sanitizer|runtime error:' "$1"; }

# The unit tests: one line per binary, its failures under it.
for bin in $units; do
	name=$(basename "$bin")
	"$bin" --tap=- -j1 >"$TMP/unit.out" 2>&1
	rc=$?
	n=$(grep -c '^ok ' "$TMP/unit.out")
	[ $rc -eq 0 ] && ! grep -q '^not ok' "$TMP/unit.out" && [ "$n" -gt 0 ] && ! sanitizer_said "$TMP/unit.out" >/dev/null
	check $? "ASan/UBSan: $name" \
		"exit $rc: $(grep -E '^not ok|Sanitizer|runtime error:' "$TMP/unit.out" | head -5)" "$n tests"
done

TSAN_BIN=$SAN/trainsample
# run NAME CMD...: the command exits 0 with no sanitizer report.
run() {
	name=$1
	shift
	"$@" >"$TMP/run.out" 2>"$TMP/run.err"
	rc=$?
	[ $rc -eq 0 ] && ! sanitizer_said "$TMP/run.err" >/dev/null
	check $? "ASan/UBSan: $name" "exit $rc: $(sanitizer_said "$TMP/run.err" || tail -3 "$TMP/run.err")"
}

o="$TMP/c"
run "record a C program to every format" $TSAN_BIN record -r 1000 --stats -o "$o.tsprof" -o "$o.svg" \
	-o "$o.folded" -o "$o.speedscope.json" -o "$o.trace.json" -o "$o.pb.gz" -- "$T/busy_threads" 4 0.5
run "record a program without frame pointers (DWARF unwinding), --idle" \
	$TSAN_BIN record -q -r 1000 -i -o "$TMP/nofp.folded" -- build/tests/nofp/nofp_shares
run "record a thread storm" $TSAN_BIN record -q -r 1000 -o "$TMP/storm.folded" -- "$T/thread_storm" 5000 4
run "report a recording to every format, filtered" $TSAN_BIN report -q "$o.tsprof" -t --from 0.1 \
	-o "$TMP/r.svg" -o "$TMP/r.folded" -o "$TMP/r.speedscope.json" -o "$TMP/r.trace.json" -o "$TMP/r.pb.gz"
run "diff two recordings" $TSAN_BIN diff "$o.tsprof" "$o.tsprof" -o "$TMP/d.svg"
# Nothing sampled: empty arrays (NULL) sorted and copied.
run "record a command that ends at once, to every format" $TSAN_BIN record -q -o "$TMP/e.tsprof" \
	-o "$TMP/e.svg" -o "$TMP/e.folded" -o "$TMP/e.speedscope.json" -o "$TMP/e.trace.json" \
	-o "$TMP/e.pb.gz" -o "$TMP/e.summary.json" -- /bin/true
run "report a recording without samples, to every format" $TSAN_BIN report -q "$TMP/e.tsprof" \
	-o "$TMP/e2.svg" -o "$TMP/e2.pb.gz" -o "$TMP/e2.speedscope.json" -o "$TMP/e2.trace.json"

if [ -x "$PY" ]; then
	run "record Python threads" $TSAN_BIN record -q -t -r 1000 -o "$TMP/py.tsprof" -o "$TMP/py.svg" \
		-- "$PY" tests/python/threads.py 1
	run "record Python --native" $TSAN_BIN record -q -r 500 --native -o "$TMP/pyn.folded" \
		-- "$PY" examples/train.py 1
	"$PY" tests/python/threads.py 5 >/dev/null &
	pid=$!
	reap_later $pid
	sleep 0.5
	run "dump a Python process, --locals --json" $TSAN_BIN dump --pid $pid --locals --json
	run "dump a Python process, --native" $TSAN_BIN dump --pid $pid --native
	run "attach to a Python process for 0.5 s" $TSAN_BIN attach $pid -q -r 1000 -d 0.5 -o "$TMP/att.folded"
	kill $pid 2>/dev/null
else
	skip "ASan/UBSan: Python runs" "no python3"
fi
echo "# sanitizer build and runs took $(( $(date +%s) - started )) s"
