# Native stacks without frame pointers: DWARF unwinding of the stack copies.
. tests/integration/lib.sh
N=build/tests/nofp

# Accuracy: -O2 -fomit-frame-pointer, the leaves' shares against the
# target's own clock around each call (its wall time); one leaf in a
# shared library.
$TS record -q -r 1000 -o "$TMP/nofp.folded" -- "$N/nofp_shares" 4 >"$TMP/nofp.out"
total=$(folded_total "$TMP/nofp.folded")
sa=$(percent "$(folded_with_prefix "$TMP/nofp.folded" leaf_a)" "$total")
sb=$(percent "$(folded_with "$TMP/nofp.folded" lib_leaf_b)" "$total")
# The wall clock's shares (fields 10, 12, 14): the samples count a thread
# preempted in a leaf as there (beside another script the CPU clock's read
# 66.0 against the samples' 62.9).
ta=$(percent "$(awk '{ print $10 }' "$TMP/nofp.out")" "$(awk '{ print $14 }' "$TMP/nofp.out")")
tb=$(percent "$(awk '{ print $12 }' "$TMP/nofp.out")" "$(awk '{ print $14 }' "$TMP/nofp.out")")
main=$(percent "$(folded_with "$TMP/nofp.folded" main)" "$total")
unres=$(percent "$(folded_unresolved "$TMP/nofp.folded")" "$total")
echo "no frame pointers: $total samples; leaf_a $sa% (truth $ta%), lib_leaf_b $sb% (truth $tb%), main $main%, unresolved $unres%"
at_least "$total" 3000
check $? "no frame pointers: at least 3000 samples" "$total"
within "$sa" "$ta" 3
check $? "no frame pointers: leaf share within 3 points" "$sa vs $ta"
within "$sb" "$tb" 3
check $? "no frame pointers: shared-library leaf share within 3 points" "$sb vs $tb"
at_least "$main" 95
check $? "no frame pointers: >= 95% of samples unwound to main" "$main%"
below "$unres" 1
check $? "no frame pointers: < 1% unresolved" "$unres%"
grep -q '^_start;__libc_start_main;__libc_start_call_main;main;step;lib_entry;lib_leaf_b ' "$TMP/nofp.folded"
check $? "a leaf in a shared library unwinds whole, through libc to _start" \
	"$(grep lib_leaf_b "$TMP/nofp.folded" | head -2)"

# A leaf inside a signal handler unwinds through the signal frame.
$TS record -q -r 1000 -o "$TMP/sig.folded" -- "$N/signal_leaf" 2
in_handler=$(folded_with "$TMP/sig.folded" handler_spin)
through=$(awk '{ c = $NF } /;main;interrupted_loop;(.*;)?__restore_rt;(.*;)?handler_spin /{ n += c } END { print n + 0 }' "$TMP/sig.folded")
[ "$in_handler" -gt 100 ] && at_least "$(percent "$through" "$in_handler")" 95
check $? "a leaf in a signal handler unwinds through __restore_rt to the interrupted code" \
	"$through of $in_handler" "$through of $in_handler"

# 500 frames: whole with a copy large enough, cut with a marker otherwise.
$TS record -q -r 200 --stack-bytes 256K -o "$TMP/deep.folded" -- "$N/recursion" 500 1
$TS record -q -r 200 -o "$TMP/cut.folded" -- "$N/recursion" 500 1
depth() { awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, fr, ";"); n = 0
	for (i = 1; i <= k; i++) n += fr[i] == "recurse"
	if (c > best) { best = c; out = n "|" fr[1] } } END { print out }' "$1"; }
d=$(depth "$TMP/deep.folded")
[ "${d%%|*}" = 500 ] && [ "${d#*|}" = _start ]
check $? "a 500-frame recursion is reported whole" "$d"
d=$(depth "$TMP/cut.folded")
n=${d%%|*}
[ "${n:-0}" -gt 100 ] && [ "${n:-0}" -lt 500 ] && [ "${d#*|}" = "[truncated: beyond the stack copy]" ]
check $? "beyond the stack copy's cap: the frames it holds, under a truncation marker" "$d" "$n frames"

# Symbols only in a separate debug file, found through .gnu_debuglink.
if ! readelf -S "$N/stripped/nofp_shares" | grep -q '\.symtab'; then
	$TS record -q -r 500 -o "$TMP/strip.folded" -- "$N/stripped/nofp_shares" 1 >/dev/null
	[ "$(folded_with_prefix "$TMP/strip.folded" leaf_a)" -gt 100 ]
	check $? "symbols from a separate debug file (.gnu_debuglink)" "$(head -2 "$TMP/strip.folded")"
else
	not_ok "symbols from a separate debug file (.gnu_debuglink)" "the stripped target still has .symtab"
fi

# vdso: clock_gettime runs there.
$TS record -q -r 500 -o "$TMP/vdso.folded" -- "$N/vdso_spin" 1
v=$(percent "$(folded_with "$TMP/vdso.folded" __vdso_clock_gettime)" "$(folded_total "$TMP/vdso.folded")")
at_least "$v" 20 && grep -q 'read_clock_loop;clock_gettime;__vdso_clock_gettime ' "$TMP/vdso.folded"
check $? "vdso functions are named and unwound through" "$v%" "$v% in __vdso_clock_gettime"

# A blocked thread, sampled from pc and sp alone, unwinds whole through CFI...
$TS record -q -r 200 --idle -o "$TMP/blocked.folded" -- "$N/blocked" 1
grep -q '^clone3;start_thread;waiter_thread;blocked_waiter;epoll_wait;\[idle: epoll_wait\] ' "$TMP/blocked.folded"
check $? "a blocked thread without frame pointers unwinds whole from pc and sp" \
	"$(grep idle "$TMP/blocked.folded")"
# ... and where a rule needs a register it did not have, it says so.
"$T/heartbeat" "$TMP/hb" 2 >/dev/null &
pid=$!
sleep 0.2
$TS attach "$pid" -q --idle -d 0.5 -o "$TMP/fpblocked.folded"
wait $pid
grep -q '^\[truncated: needs registers of a stopped thread\];sleeper;epoll_wait;\[idle: epoll_wait\] ' "$TMP/fpblocked.folded"
check $? "a blocked frame-pointer frame ends the stack with a marker, not a wrong frame" \
	"$(grep idle "$TMP/fpblocked.folded")"

# The same target under perf record --call-graph dwarf: leaf shares agree.
# perf samples CPU time (its cpu-clock), ours wall time, in runs of their
# own: on a busy machine their truths differ (a fresh clone's run beside
# other scripts: perf 66.7 and ours 63.3, each right for its clock), so
# each tool's error against its own run's truth of its own clock must
# agree within 3 points.
if perf record -q -F 999 --call-graph dwarf -o "$TMP/perf.data" -- "$N/nofp_shares" 3 >"$TMP/perf.out" 2>"$TMP/perf.err" \
	&& perf report -i "$TMP/perf.data" --stdio --no-children --sort symbol -g none --percent-limit 0 \
		>"$TMP/perf.txt" 2>/dev/null; then
	pa=$(awk '/\] leaf_a/ { gsub("%", "", $1); print $1; exit }' "$TMP/perf.txt")
	pb=$(awk '/\] lib_leaf_b/ { gsub("%", "", $1); print $1; exit }' "$TMP/perf.txt")
	pta=$(percent "$(awk '{ print $2 }' "$TMP/perf.out")" "$(awk '{ print $6 }' "$TMP/perf.out")")
	ptb=$(percent "$(awk '{ print $4 }' "$TMP/perf.out")" "$(awk '{ print $6 }' "$TMP/perf.out")")
	echo "perf: leaf_a ${pa:-?}% (CPU truth $pta%), lib_leaf_b ${pb:-?}% (CPU truth $ptb%); trainsample: $sa% (wall truth $ta%), $sb% (wall truth $tb%)"
	errs() { awk -v a="$1" -v t="$2" -v p="$3" -v q="$4" 'BEGIN { printf "%.1f %.1f", a - t, p - q }'; }
	[ -n "$pa" ] && [ -n "$pb" ] && within $(errs "$sa" "$ta" "$pa" "$pta") 3 && within $(errs "$sb" "$tb" "$pb" "$ptb") 3
	check $? "leaf shares agree with perf record --call-graph dwarf: each one's error against its clock's truth within 3 points of the other's" \
		"perf $pa/$pb (truth $pta/$ptb), ours $sa/$sb (truth $ta/$tb)" \
		"errors: ours $(errs "$sa" "$ta" 0 0 | cut -d' ' -f1)/$(errs "$sb" "$tb" 0 0 | cut -d' ' -f1), perf's $(errs "$pa" "$pta" 0 0 | cut -d' ' -f1)/$(errs "$pb" "$ptb" 0 0 | cut -d' ' -f1)"
else
	skip "leaf shares agree with perf record --call-graph dwarf: each one's error against its clock's truth within 3 points of the other's" "perf cannot record here: $(head -1 "$TMP/perf.err")"
fi

# When unwinding falls behind (here: room for only 4 copies while 16
# threads run), new samples are dropped and counted; nothing stalls.
$TS record -q -r 200 --unwind-queue 4 --stats -o "$TMP/q.folded" -- "$T/busy_threads" 16 1 >"$TMP/q.out" 2>"$TMP/q.err"
rc=$?
dropped=$(sed -n 's/.*dropped \([0-9]*\)).*/\1/p' "$TMP/q.err")
samples=$(sed -n 's/^ *samples *\([0-9]*\).*/\1/p' "$TMP/q.err")
[ $rc -eq 0 ] && grep -q '16 threads done' "$TMP/q.out" && [ "${dropped:-0}" -gt 0 ] && [ "${samples:-0}" -gt 0 ]
check $? "a full unwind queue drops and counts samples" \
	"exit $rc, dropped ${dropped:-?}, samples ${samples:-?}" "$dropped dropped, $samples kept"
$TS record -q -r 200 --stats -o "$TMP/q2.folded" -- "$T/busy_threads" 16 1 >/dev/null 2>"$TMP/q2.err"
dropped=$(sed -n 's/.*dropped \([0-9]*\)).*/\1/p' "$TMP/q2.err")
[ "${dropped:-1}" -eq 0 ]
check $? "with the default queue nothing is dropped" "${dropped:-?}"

# C++ without frame pointers: demangled names.
$TS record -q -r 500 -o "$TMP/cxx.folded" -- "$N/cxx_leaf" 1
grep -q ';main;trainsample_test::dispatch(unsigned long);trainsample_test::Kernel<int>::spin(unsigned long) ' "$TMP/cxx.folded"
check $? "a leaf reached through C++ calls shows demangled names" "$(head -2 "$TMP/cxx.folded")"

# JIT code: named by the target's perf map, unwound by its frame pointer.
$TS record -q -r 500 -o "$TMP/jit.folded" -- "$T/jit_perfmap" 1
j=$(percent "$(folded_with "$TMP/jit.folded" jitted_spin_loop)" "$(folded_total "$TMP/jit.folded")")
at_least "$j" 80 && grep -q ';main;run_jit;jitted_spin_loop ' "$TMP/jit.folded"
check $? "JIT code is named from /tmp/perf-PID.map and unwound out of" \
	"$j%: $(head -2 "$TMP/jit.folded")" "$j%"

# --native-lines: native frames as function (file:line), from the debug info.
$TS record -q -r 500 --native-lines -o "$TMP/lines.folded" -- "$N/nofp_shares" 1 >/dev/null
first=$(grep -n '^__attribute__((noinline)) static uint64_t leaf_a' tests/nofp/nofp_shares.c | cut -d: -f1)
line=$(grep -o 'leaf_a[^;]* (tests/nofp/nofp_shares.c:[0-9]*) ' "$TMP/lines.folded" | head -1 | sed 's/.*:\([0-9]*\)) $/\1/')
[ -n "$line" ] && [ "$line" -gt "$first" ] && [ "$line" -lt $((first + 8)) ]
check $? "--native-lines gives the leaf's source line" \
	"line ${line:-none}, function from $first" "$line, function from line $first"

# A program's start-up, while ld.so maps and relocates a score of
# libraries (LD_BIND_NOW and LD_DEBUG make it take about 0.3 s): the
# stacks end at ld.so's entry point, named _start, and are whole. Debian's
# ld.so has no CFI and no symbol there: they were "[truncated: no unwind
# info];0x1ab77 (ld-linux-x86-64.so.2);_dl_start;...".
LD_BIND_NOW=1 LD_DEBUG=all LD_DEBUG_OUTPUT="$TMP/ld.debug" $TS record -q -r 1000 -o "$TMP/ld.folded" -- "$T/many_libs"
ld_all=$(awk '{ c = $NF } /;_dl_start;/ { n += c } END { print n + 0 }' "$TMP/ld.folded")
ld_whole=$(awk '{ c = $NF } /^_start;_dl_start;/ { n += c } END { print n + 0 }' "$TMP/ld.folded")
[ "$ld_all" -ge 20 ] && [ "$ld_whole" -eq "$ld_all" ]
check $? "a program's start-up in ld.so: stacks rooted at ld.so's _start, none marked truncated" \
	"$ld_whole of $ld_all under _dl_start rooted at _start; $(grep _dl_start "$TMP/ld.folded" | grep -v '^_start;' | head -2)" \
	"$ld_whole of $ld_all samples"

# Python with numpy (Debian's, none of it built with frame pointers): a
# matrix product unwinds from the BLAS kernel through numpy and the
# interpreter (the evaluator frames replaced by the Python frames) to
# _start (--native-all: --native would hide the interpreter's own frames,
# _start among them).
PY=/usr/bin/python3.11
if [ -x "$PY" ] && "$PY" -c 'import numpy' 2>/dev/null; then
	$TS record -q -r 1000 --native-all --stats -o "$TMP/np.folded" -- "$PY" -c \
		'import numpy; a = numpy.random.rand(300, 300); [a @ a for _ in range(60)]' 2>"$TMP/np.err"
	total=$(folded_total "$TMP/np.folded")
	whole=$(awk '{ c = $NF } /^_start;__libc_start_main;.*;<module> \(<string>:1\);<listcomp> \(<string>:1\);.*;cblas_dgemm;dgemm_ / { n += c } END { print n + 0 }' "$TMP/np.folded")
	share=$(percent "$whole" "$total")
	# Of the samples that ran: one blocked (ending in [idle...]) is unwound
	# from its pc and sp alone, and ld.so's frames, in a page fault while
	# numpy's modules load (cold or loaded machines: 39 of 1023 samples
	# once), need other registers; it says so at its root.
	trunc=$(awk '{ c = $NF } /^\[truncated/ && !/;\[idle[^;]* [0-9]+$/ { n += c } END { print n + 0 }' "$TMP/np.folded")
	idle=$(awk '{ c = $NF } /^\[truncated/ && /;\[idle[^;]* [0-9]+$/ { n += c } END { print n + 0 }' "$TMP/np.folded")
	trunc=$(percent "$trunc" "$total")
	echo "numpy: $total samples, $share% in dgemm_ unwound to _start, $trunc% truncated while running, $idle blocked samples truncated"
	at_least "$share" 30 && below "$trunc" 2
	check $? "numpy's BLAS kernel unwinds through numpy and the interpreter to _start, less than 2% of running samples truncated" \
		"$share%, $trunc% truncated while running" "$share%, $trunc% truncated"
else
	skip "numpy's BLAS kernel unwinds through numpy and the interpreter to _start" "no $PY with numpy (python3-numpy)"
fi

# Code without CFI that uses rbp for something else: the stack ends there
# with a marker; no caller is guessed from rbp or from the word at sp.
for rbp in 0 0x1234; do
	$TS record -q -r 500 -o "$TMP/nocfi.folded" -- "$N/nocfi" 0.6 $rbp
	grep -q '^\[truncated: no unwind info\];nocfi_tramp;spin_leaf ' "$TMP/nocfi.folded" \
		&& ! grep -q 'nocfi_tramp;spin_leaf' "$TMP/nocfi.folded" | grep -qv '^\[truncated'
	check $? "code without CFI (rbp=$rbp): the stack ends there, marked" "$(head -3 "$TMP/nocfi.folded")"
done

# A leaf stopped in its epilogue after popping rbp, which its CFI still
# says lies at cfa-16 (under sp now), below a caller whose CFA is rbp+16:
# the red zone copied with the stack gives rbp, and the stack is whole
# (it ended in "[truncated: no unwind info]" every time before).
$TS record -q -r 1000 -o "$TMP/epi.folded" -- "$N/epilogue" 1
in_leaf=$(folded_with "$TMP/epi.folded" popped_leaf)
whole=$(awk '/^_start;__libc_start_main;__libc_start_call_main;main;framed_caller;popped_leaf / { n += $NF } END { print n + 0 }' "$TMP/epi.folded")
[ "$in_leaf" -gt 300 ] && at_least "$(percent "$whole" "$in_leaf")" 99
check $? "a leaf in its epilogue, rbp popped: the caller found through the red zone, to _start" \
	"$whole of $in_leaf whole: $(grep popped_leaf "$TMP/epi.folded" | grep -v '^_start' | head -2)" "$whole of $in_leaf"

# CFI that loops forever: unwinding gives up; trainsample and the target
# carry on (the target starts a thread afterwards).
timeout 30 $TS record -q -r 500 -o "$TMP/loop.folded" -- "$N/cfi_loop" >"$TMP/loop.out"
rc=$?
[ $rc -eq 0 ] && grep -q 'thread joined' "$TMP/loop.out" && grep -q 'bad_spin' "$TMP/loop.folded"
check $? "a CFI expression that loops forever: unwinding gives up, nothing hangs" "exit $rc"

# Blocked threads: the same syscall, sp and pc from two call sites.
$TS record -q -r 200 --idle -o "$TMP/waits.folded" -- "$N/two_waits" 10
h=$(folded_with "$TMP/waits.folded" wait_header)
b=$(folded_with "$TMP/waits.folded" wait_body)
[ "$h" -gt 20 ] && [ "$b" -gt 20 ] && within "$(percent "$h" "$((h + b))")" 50 15
check $? "two call sites blocked at one depth are told apart" "$h / $b" "$h / $b"

# A library unloaded and another loaded at its address: its own names.
$TS record -q -r 200 -o "$TMP/swap.folded" -- "$N/plugins" "$PWD/$N/libplugin_alpha.so" 1 "$PWD/$N/libplugin_betaa.so" 1
a=$(folded_with "$TMP/swap.folded" alpha_inner)
b=$(folded_with "$TMP/swap.folded" betaa_inner)
[ "$a" -gt 50 ] && [ "$b" -gt 50 ] && within "$(percent "$a" "$((a + b))")" 50 15
check $? "dlclose then dlopen at the same address: each library's own names" "$a / $b" "$a / $b"

# A library replaced on disk after it was mapped: names of the mapped file.
if [ "$(id -u)" = 0 ]; then
	cp "$N/libplugin_alpha.so" "$TMP/plug.so"
	"$N/plugins" -w 1 "$TMP/plug.so" 1.5 &
	pid=$!
	sleep 0.3
	cp "$N/libplugin_betaa.so" "$TMP/plug.new" && mv "$TMP/plug.new" "$TMP/plug.so"
	$TS attach "$pid" -q -r 200 -o "$TMP/replaced.folded"
	wait $pid
	[ "$(folded_with "$TMP/replaced.folded" alpha_inner)" -gt 50 ] && [ "$(folded_with "$TMP/replaced.folded" betaa_inner)" = 0 ]
	check $? "a library replaced on disk: names from the file that is mapped" \
		"$(head -2 "$TMP/replaced.folded")"
else
	skip "a library replaced on disk: names from the file that is mapped" "map_files needs root"
fi
