# Bad input: one line saying what is wrong and what to do, non-zero exit.
. tests/integration/lib.sh

one_line_error() {
	name=$1 pattern=$2
	shift 2
	"$@" >/dev/null 2>"$TMP/err"
	rc=$?
	[ $rc -ne 0 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -Eq "$pattern" "$TMP/err"
	check $? "$name" "exit $rc: $(cat "$TMP/err")" "exit $rc"
}

max=$(cat /proc/sys/kernel/pid_max)
nopid=$((max - 1))
while [ -e /proc/$nopid ]; do nopid=$((nopid - 1)); done
one_line_error "attach to a PID that does not exist" "no process with PID $nopid" $TS attach $nopid -o "$TMP/x.folded"
one_line_error "record --pid of a PID that does not exist" "no process with PID" $TS record --pid $nopid -o "$TMP/x.folded"
# kthreadd, PID 2 wherever the PID namespace is the machine's.
if [ "$(cat /proc/2/comm 2>/dev/null)" = kthreadd ]; then
	one_line_error "attach to a kernel thread says what it is" "PID 2 \\(kthreadd\\) is a kernel thread" \
		$TS attach 2 -o "$TMP/x.folded"
	one_line_error "dump of a kernel thread says what it is" "PID 2 \\(kthreadd\\) is a kernel thread" \
		$TS dump --pid 2
else
	skip "attach to a kernel thread says what it is" "PID 2 is not kthreadd here (a PID namespace)"
	skip "dump of a kernel thread says what it is" "PID 2 is not kthreadd here (a PID namespace)"
fi
one_line_error "a command that does not exist" "cannot run" $TS record -o "$TMP/x.folded" -- no-such-command-xyz

"$T/heartbeat" "$TMP/hb" >/dev/null &
pid=$!
reap_later $pid
sleep 0.2

if command -v strace >/dev/null; then
	strace -p $pid -o /dev/null &
	spid=$!
	reap_later $spid
	if wait_tracer "$pid" "$spid" 5; then
		one_line_error "a process already traced names its tracer" "already traced by PID $spid \(strace\)" \
			$TS attach $pid -d 1 -o "$TMP/x.folded"
	else
		not_ok "a process already traced names its tracer" "strace did not attach"
	fi
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
else
	skip "a process already traced names its tracer" "strace not installed"
fi
wait_tracer "$pid" 0 5

if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	cp "$TS" "$TMP/trainsample"
	chmod 755 "$TMP/trainsample"
	mkdir -p "$TMP/out" && chmod 777 "$TMP/out"
	one_line_error "a process of another user: why and what to do" "permission denied.*uid 0.*run trainsample as that user or as root" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/trainsample" attach $pid -d 1 -o "$TMP/out/x.folded"
	[ ! -e "$TMP/out/x.folded" ]
	check $? "no output file left by a refused attach"
else
	skip "a process of another user: why and what to do" "needs root and setpriv"
fi
[ "$(tracer_of $pid)" = 0 ] && [ "$(proc_state $pid)" != T ]
check $? "the refused target runs on untouched"
kill -9 $pid 2>/dev/null

# 32-bit programs are refused, clearly, before anything runs.
if [ -x build/tests/targets32/spin32 ]; then
	one_line_error "record of a 32-bit program" "32-bit program" $TS record -o "$TMP/x.folded" -- build/tests/targets32/spin32
	build/tests/targets32/spin32 &
	pid=$!
	reap_later $pid
	sleep 0.2
	one_line_error "attach to a 32-bit program" "PID $pid runs a 32-bit program" $TS attach $pid -d 0.5 -o "$TMP/x.folded"
	[ "$(proc_state $pid)" = R ] && [ "$(tracer_of $pid)" = 0 ]
	check $? "the 32-bit program runs on untouched" "state $(proc_state $pid)"
	kill -9 $pid 2>/dev/null
else
	skip "record of a 32-bit program" "gcc cannot build 32-bit code here"
	skip "attach to a 32-bit program" "gcc cannot build 32-bit code here"
	skip "the 32-bit program runs on untouched" "gcc cannot build 32-bit code here"
fi

# Recordings (issue 30): what trainsample is asked to read.
PY=$(command -v python3)
CRAFT=tests/integration/craft_tsprof.py
peak_kib() { awk '/Maximum resident set size/ { print $NF }' "$1"; }
if [ -n "$PY" ]; then
	# 10,000 unique strings of 60 kB in well under a megabyte: 600 MB once
	# read. Refused past its limit, in one line, its memory bounded.
	"$PY" $CRAFT strings 10000 60000 "$TMP/strings.tsprof"
	size=$(wc -c <"$TMP/strings.tsprof")
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -v -o "$TMP/time" $TS report "$TMP/strings.tsprof" -o "$TMP/s.folded" 2>"$TMP/err"
		rc=$?
		rss=$(peak_kib "$TMP/time")
	else
		$TS report "$TMP/strings.tsprof" -o "$TMP/s.folded" 2>"$TMP/err"
		rc=$? rss=0
	fi
	[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && [ ! -e "$TMP/s.folded" ] &&
		grep -q "strings.tsprof is refused: its strings pass 64 MiB" "$TMP/err" && below "${rss:-0}" 200000
	check $? "a recording whose strings would take 600 MB: refused in one line" \
		"exit $rc, peak RSS ${rss:-?} KiB: $(cat "$TMP/err")" \
		"$((size / 1024)) KiB on disk, peak RSS $((${rss:-0} / 1024)) MiB"

	# The same file twice would count every sample twice.
	"$PY" $CRAFT many 2000 20 "$TMP/a.tsprof"
	ln -s "$TMP/a.tsprof" "$TMP/b.tsprof"
	one_line_error "report of one recording twice is refused" "a.tsprof and .*a.tsprof are the same recording" \
		$TS report "$TMP/a.tsprof" "$TMP/a.tsprof" -o "$TMP/twice.folded"
	one_line_error "report of one recording under two names is refused" "the same recording" \
		$TS report "$TMP/a.tsprof" "$TMP/b.tsprof" -o "$TMP/twice.folded"
	[ ! -e "$TMP/twice.folded" ]
	check $? "no output left by report A A"

	# Damaged in its first chunk, so no sample at all: with --from too,
	# the damage is said, not "the filters".
	cp "$TMP/a.tsprof" "$TMP/flip0.tsprof"
	printf '\377' | dd of="$TMP/flip0.tsprof" bs=1 seek=40 conv=notrunc 2>/dev/null
	for w in "--from 0.5" "--to 1"; do
		$TS report "$TMP/flip0.tsprof" $w -o "$TMP/flip0.folded" 2>"$TMP/err"
		rc=$?
		[ $rc -eq 1 ] && [ ! -e "$TMP/flip0.folded" ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
			grep -q "no sample could be read" "$TMP/err" && ! grep -q filters "$TMP/err"
		check $? "a recording damaged before its first sample, with $w: one line on the damage" \
			"exit $rc: $(cat "$TMP/err")"
	done
	# A window that leaves nothing of an intact recording is the filters'.
	$TS report "$TMP/a.tsprof" --from 100 -o "$TMP/late.folded" 2>"$TMP/err"
	rc=$?
	[ $rc -eq 1 ] && grep -q "no sample is left after the filters" "$TMP/err"
	check $? "an intact recording cut to nothing by --from: the filters" "exit $rc: $(cat "$TMP/err")"
else
	for n in "a recording whose strings would take 600 MB: refused in one line" \
		"report of one recording twice is refused" "report of one recording under two names is refused" \
		"no output left by report A A" \
		"a recording damaged before its first sample, with --from 0.5: one line on the damage" \
		"a recording damaged before its first sample, with --to 1: one line on the damage" \
		"an intact recording cut to nothing by --from: the filters"; do
		skip "$n" "no python3 to craft the recordings"
	done
fi
