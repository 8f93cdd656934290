# Command line: options, outputs, exit statuses, report.
. tests/integration/lib.sh

$TS --version | grep -Eq '^trainsample [0-9]+\.[0-9]+\.[0-9]+$'
check $? "--version"

help=$($TS --help)
missing=""
for opt in --output --format --rate --duration --threads --idle --no-idle --stats --quiet \
	--stack-bytes --pid --help --version --native --native-all "attach PID" "report IN.tsprof"; do
	echo "$help" | grep -q -- "$opt" || missing="$missing $opt"
done
[ -z "$missing" ]
check $? "--help names every option" "missing$missing"

# One option table (cli/option_table.c) makes the parser, each command's
# --help and docs/options.md: the committed page is what it prints now.
$TS --help-markdown | cmp -s - docs/options.md
check $? "docs/options.md is what the option table prints (make docs-options)" \
	"$($TS --help-markdown | diff docs/options.md - | head -6)"
$TS dump --help >"$TMP/h.dump" && $TS report --help >"$TMP/h.report" && $TS record --help >"$TMP/h.record" &&
	grep -q -- '--locals' "$TMP/h.dump" && ! grep -q -- '--rate' "$TMP/h.dump" &&
	grep -q -- '--summary' "$TMP/h.report" && ! grep -q -- '--summary' "$TMP/h.record" &&
	grep -q -- '--rate HZ' "$TMP/h.record" && grep -q '^usage: trainsample report' "$TMP/h.report"
check $? "each command's --help lists its own options" "$(head -3 "$TMP/h.dump" "$TMP/h.report")"

# Usage errors: exit 2 and one line.
for args in "record" "record -r 0 -- true" "record -r abc -- true" "record --bogus -- true" \
	"attach" "attach 1 2" "record -d -1 -- true" "frobnicate" "record -o x.unknownext -- true"; do
	# shellcheck disable=SC2086
	$TS $args >/dev/null 2>"$TMP/err"
	rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ]
	check $? "usage error: $args" "exit $rc, $(wc -l <"$TMP/err") lines"
done

$TS record -q -o "$TMP/x.folded" -- sh -c 'exit 7'
rc=$?
[ $rc -eq 7 ]
check $? "record passes the exit status on" "got $rc"

# A command that is over within microseconds still gets its own status:
# its symbols are read while it is held at its exec, not after it is gone
# (read after, 9 of 60 runs of /bin/true exited 126 on a loaded machine).
statuses=""
for i in $(seq 40); do
	$TS record -q -o "$TMP/x.folded" -- /bin/true 2>"$TMP/true.err"
	statuses="$statuses $?"
done
[ -z "$(echo $statuses | tr -d ' 0')" ]
check $? "record of a command that exits at once: its status, 40 times out of 40" "$statuses; $(cat "$TMP/true.err")"

$TS record -q -o "$TMP/x.folded" -- sh -c 'kill -TERM $$'
rc=$?
[ $rc -eq 143 ]
check $? "record gives 128+N for a command killed by signal N" "got $rc"

# An output of an earlier run at the same name is kept as it was.
echo earlier >"$TMP/x.folded"
$TS record -o "$TMP/x.folded" -o "$TMP/new.folded" -- /no/such/command 2>"$TMP/err"
rc=$?
[ $rc -eq 127 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "cannot run '/no/such/command'" "$TMP/err" \
	&& [ ! -e "$TMP/new.folded" ] && [ "$(cat "$TMP/x.folded")" = earlier ] &&
	[ -z "$(ls -A "$TMP" | grep '^\.')" ]
check $? "a command that does not exist: one line, exit 127, no output left, an earlier one kept" \
	"exit $rc: $(cat "$TMP/err")"

$TS record -o /nonexistent/dir/x.folded -- sh -c "touch $TMP/ran" 2>"$TMP/err"
rc=$?
[ $rc -ne 0 ] && [ ! -e "$TMP/ran" ] && grep -q "cannot write" "$TMP/err"
check $? "an unwritable output fails before the command starts" "exit $rc"

# Default outputs: NAME-YYYYmmdd-HHMMSS.tsprof and .svg in the current directory.
mkdir -p "$TMP/defaults"
top=$PWD
(cd "$TMP/defaults" && "$top/$TS" record -- "$top/$T/cpu_shares" 0.5 >/dev/null 2>"$TMP/err")
ts_file=$(ls "$TMP/defaults"/cpu_shares-*.tsprof 2>/dev/null)
fo_file=$(ls "$TMP/defaults"/cpu_shares-*.svg 2>/dev/null)
[ -n "$ts_file" ] && [ -n "$fo_file" ] && echo "$ts_file" | grep -Eq 'cpu_shares-[0-9]{8}-[0-9]{6}\.tsprof$' \
	&& grep -q "wrote cpu_shares-.*\.tsprof" "$TMP/err" && grep -q "wrote cpu_shares-.*\.svg" "$TMP/err"
check $? "no -o: NAME-date.tsprof and .svg written and named" "$(ls "$TMP/defaults") / $(cat "$TMP/err")"

# A recording re-renders to the same folded stacks.
$TS record -q -r 500 -t -o "$TMP/a.tsprof" -o "$TMP/a.folded" -- "$T/cpu_shares" 1 >/dev/null
$TS report -q -t "$TMP/a.tsprof" -o "$TMP/b.folded"
[ -s "$TMP/a.folded" ] && cmp -s "$TMP/a.folded" "$TMP/b.folded"
check $? "report re-renders a recording identically"

$TS report "$TMP/a.tsprof" >"$TMP/c.folded"
$TS report -q "$TMP/a.tsprof" -o "$TMP/d.folded"
[ -s "$TMP/c.folded" ] && cmp -s "$TMP/c.folded" "$TMP/d.folded"
check $? "report writes folded stacks to stdout by default"

grep -Eq '^thread [0-9]+ \(cpu_shares\);' "$TMP/a.folded"
check $? "-t adds a 'thread TID (name)' root frame"

$TS report -q -f folded "$TMP/a.tsprof" -o "$TMP/noext"
cmp -s "$TMP/noext" "$TMP/d.folded"
check $? "-f names the format of an output without extension"

# The formats and extensions the error messages list are those -f, file
# names and --help know: all come from one table (formats/output_writers.c).
names=$($TS report "$TMP/a.tsprof" -f bogus 2>&1 | sed -n "s/.*unknown format 'bogus' (\(.*\))$/\1/p" | tr -d ,)
exts=$($TS report "$TMP/a.tsprof" -o "$TMP/noext" 2>&1 | sed -n 's/.*end it in \(.*\), or give -f.*/\1/p' |
	sed 's/,//g; s/ or / /')
bad=""
for n in $names; do
	$TS report -q "$TMP/a.tsprof" -f "$n" -o "$TMP/f-$n" || bad="$bad -f:$n"
	echo "$help" | grep -qw -- "$n" || bad="$bad help:$n"
done
for e in $exts; do
	$TS report -q "$TMP/a.tsprof" -o "$TMP/e$e" || bad="$bad -o:$e"
	echo "$help" | grep -qF -- "$e" || bad="$bad help:$e"
done
[ -n "$names" ] && [ -n "$exts" ] && [ -z "$bad" ]
check $? "the listed formats and extensions work and --help names them" "names '$names', extensions '$exts':$bad"

# Damaged recordings: what is intact is rendered, with a warning. A 2.5 s
# recording is flushed in several chunks; the cut lands in the last ones.
$TS record -q -r 500 -o "$TMP/long.tsprof" -o "$TMP/long.folded" -- "$T/cpu_shares" 2.5 >/dev/null
size=$(wc -c <"$TMP/long.tsprof")
head -c $((size * 3 / 4)) "$TMP/long.tsprof" >"$TMP/cut.tsprof"
$TS report "$TMP/cut.tsprof" -o "$TMP/cut.folded" 2>"$TMP/err"
rc=$?
n_cut=$(folded_total "$TMP/cut.folded")
n_all=$(folded_total "$TMP/long.folded")
[ $rc -eq 0 ] && grep -q "warning.*truncated" "$TMP/err" && [ "$n_cut" -gt 0 ] && [ "$n_cut" -lt "$n_all" ]
check $? "report renders a truncated recording with a warning" \
	"exit $rc, $n_cut of $n_all: $(cat "$TMP/err")" "$n_cut of $n_all samples"
# One flipped byte inside the recording: the chunk's CRC catches it.
cp "$TMP/long.tsprof" "$TMP/flip.tsprof"
printf '\377' | dd of="$TMP/flip.tsprof" bs=1 seek=$((size * 3 / 4)) conv=notrunc 2>/dev/null
$TS report "$TMP/flip.tsprof" -o "$TMP/flip.folded" 2>"$TMP/err"
rc=$?
n_flip=$(folded_total "$TMP/flip.folded")
[ $rc -eq 0 ] && grep -q "warning" "$TMP/err" && [ "$n_flip" -lt "$n_all" ]
check $? "report stops at a corrupt chunk with a warning" \
	"exit $rc, $n_flip of $n_all: $(cat "$TMP/err")" "$n_flip of $n_all samples"
# Damaged in its first chunk: nothing to render is an error, not an empty file.
cp "$TMP/long.tsprof" "$TMP/flip0.tsprof"
printf '\377' | dd of="$TMP/flip0.tsprof" bs=1 seek=40 conv=notrunc 2>/dev/null
$TS report "$TMP/flip0.tsprof" -o "$TMP/flip0.folded" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && [ ! -e "$TMP/flip0.folded" ] && [ "$(grep -c . "$TMP/err")" = 1 ] &&
	grep -q "no sample could be read" "$TMP/err"
check $? "a recording damaged before its first sample: one line, exit 1, no file" "exit $rc: $(cat "$TMP/err")"

head -c 4000 /dev/urandom >"$TMP/junk.tsprof"
$TS report "$TMP/junk.tsprof" -o "$TMP/junk.folded" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ]
check $? "report refuses a file that is not a recording, in one line" "exit $rc: $(cat "$TMP/err")"

$TS report "$TMP/none.tsprof" 2>"$TMP/err" >/dev/null
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ]
check $? "report of a missing file: one line, exit 1" "exit $rc"

# --stats
$TS record -q --stats -o "$TMP/s.folded" -- "$T/cpu_shares" 0.5 >/dev/null 2>"$TMP/err"
grep -Eq 'target pause +p50 [0-9.]+ us, p99 [0-9.]+ us' "$TMP/err" && grep -Eq 'samples +[1-9]' "$TMP/err" \
	&& grep -q 'trainsample cpu' "$TMP/err" && grep -Eq 'ticks +[0-9]+ \(missed [0-9]+\)' "$TMP/err"
check $? "--stats prints samples, missed ticks, pause p50/p99 and CPU time" "$(cat "$TMP/err")"
stats_consistent "$TMP/err"
check $? "--stats: errors by kind add up, p99 never above max" "$(cat "$TMP/err")"
! grep -q "ticks were missed" "$TMP/err"
check $? "-q says nothing of missed ticks" "$(cat "$TMP/err")"

# Ticks missed over a twentieth: record's end says so, with what it does to
# the figures; 10 kHz on two spinning threads misses most on any machine.
$TS record --stats -r 10000 -o "$TMP/mt.folded" -- "$T/busy_threads" 2 0.3 >/dev/null 2>"$TMP/err"
share=$(sed -n 's/^ *ticks *\([0-9]*\) (missed \([0-9]*\)).*/\1 \2/p' "$TMP/err" | awk '{ if ($1 + $2) print int(100 * $2 / ($1 + $2)) }')
if [ "${share:-0}" -gt 5 ]; then
	grep -Eq "^trainsample: warning: [0-9]+ of [0-9]+ ticks were missed \([0-9]+%.*samples stand for .* shares stay right" "$TMP/err"
	check $? "record's end warns of missed ticks over 5% ($share% here), in one line" "$(cat "$TMP/err")"
else
	skip "record's end warns of missed ticks over 5%" "this machine kept up with 10 kHz (${share:-?}% missed)"
fi

# kill -9 of trainsample loses at most about a second of a streamed recording.
$TS record -q -r 1000 -o "$TMP/k.tsprof" -- "$T/cpu_shares" 3.5 >/dev/null &
tspid=$!
sleep 2.5
kill -9 $tspid
wait $tspid 2>/dev/null
$TS report "$TMP/k.tsprof" -o "$TMP/k.folded" 2>"$TMP/err"
rc=$?
n=$(folded_total "$TMP/k.folded")
[ $rc -eq 0 ] && at_least "$n" 1000 && grep -q "warning" "$TMP/err"
check $? "after kill -9 the recording holds all but the last second" \
	"exit $rc, $n samples: $(cat "$TMP/err")" "$n samples of ~2500"
sleep 1.2 # the orphaned command finishes on its own

# A thread id given as PID names its process.
"$T/heartbeat" "$TMP/hb" 3 >/dev/null &
pid=$!
sleep 0.3
tid=$(ls /proc/$pid/task | grep -v "^$pid\$" | head -1)
$TS attach "$tid" -d 0.5 -o "$TMP/tid.folded" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && [ -n "$tid" ] && [ "$(folded_with "$TMP/tid.folded" beat_work)" -gt 0 ]
check $? "attach TID profiles the whole process" "exit $rc: $(cat "$TMP/err")"

# Idle samples: blocked threads show as [idle: SYSCALL] leaves only with --idle.
$TS attach "$pid" -t --idle -d 0.5 -o "$TMP/idle.folded" 2>/dev/null
$TS attach "$pid" -t -d 0.5 -o "$TMP/busy.folded" 2>/dev/null
grep -q '^thread [0-9]* (heartbeat);.*;sleeper;epoll_wait;\[idle: epoll_wait\] ' "$TMP/idle.folded" \
	&& ! grep -q 'idle' "$TMP/busy.folded" && [ "$(folded_with "$TMP/busy.folded" beat_work)" -gt 0 ]
check $? "--idle keeps blocked threads as [idle: epoll_wait]; the default drops them" \
	"$(head -3 "$TMP/idle.folded")"
wait $pid

# Progress on a terminal, silent with -q. (The command's output goes
# elsewhere: a program writing to the terminal gets no progress line; see
# test_terminal.sh.)
if command -v script >/dev/null; then
	quiet_cmd="sh -c 'exec >/dev/null 2>&1; exec $T/cpu_shares 1.5'"
	script -qec "$TS record -r 200 -o $TMP/tty.folded -- $quiet_cmd" /dev/null >"$TMP/tty.out" 2>&1
	script -qec "$TS record -q -r 200 -o $TMP/tty.folded -- $quiet_cmd" /dev/null >"$TMP/tty-q.out" 2>&1
	grep -Eq '[0-9.]+ s \| [0-9]+ samples \| [0-9]+ threads \| [0-9]+ errors \| [0-9]+ missed' "$TMP/tty.out" \
		&& ! grep -q 'samples |' "$TMP/tty-q.out"
	check $? "a progress line on a terminal, none with -q" "$(tr '\r' '\n' <"$TMP/tty.out" | head -5)"
else
	skip "a progress line on a terminal, none with -q" "script(1) not installed"
fi
[ -s "$TMP/s.folded" ] && ! grep -q 'samples |' "$TMP/err"
check $? "no progress line when stderr is not a terminal"

# Libraries loaded after the exec are known from the first samples on.
$TS record -q -r 2000 -o "$TMP/start.folded" -- "$T/cpu_shares" 0.3 >/dev/null
[ -s "$TMP/start.folded" ] && ! grep -q '(\[unknown\])' "$TMP/start.folded"
check $? "no [unknown] frames while the dynamic loader maps libraries" \
	"$(grep -c unknown "$TMP/start.folded")"

# The command starts as it would without trainsample: same signal mask and
# dispositions, same descriptor limit, same timer slack.
probe='ulimit -Sn; grep -E "^Sig(Blk|Ign)" /proc/self/status; cat /proc/self/timerslack_ns'
(ulimit -Sn 512; sh -c "$probe") >"$TMP/env.alone"
(ulimit -Sn 512; $TS record -q -o "$TMP/env.folded" -- sh -c "$probe") >"$TMP/env.traced"
[ -s "$TMP/env.alone" ] && cmp -s "$TMP/env.alone" "$TMP/env.traced"
check $? "the command gets the signal mask, dispositions, limits and timer slack it would have alone" \
	"$(cat "$TMP/env.alone") / $(cat "$TMP/env.traced")"

# report renders idle samples when the recording was made with --idle.
"$T/heartbeat" "$TMP/hb4" 2 >/dev/null &
pid=$!
sleep 0.2
$TS attach "$pid" -q -t --idle -d 0.5 -o "$TMP/ri.tsprof" -o "$TMP/ri.folded"
wait $pid
$TS report -q -t "$TMP/ri.tsprof" -o "$TMP/ri2.folded"
$TS report -q -t --no-idle "$TMP/ri.tsprof" -o "$TMP/ri3.folded"
grep -q '\[idle: ' "$TMP/ri.folded" && cmp -s "$TMP/ri.folded" "$TMP/ri2.folded" \
	&& [ -s "$TMP/ri3.folded" ] && ! grep -q '\[idle: ' "$TMP/ri3.folded"
check $? "report keeps idle samples of an --idle recording, --no-idle drops them"

# Nothing is lost to a mistyped command line: an output over the recording
# being read, or one file named twice, is refused before anything is written.
cp "$TMP/a.tsprof" "$TMP/keep.tsprof"
$TS report "$TMP/a.tsprof" -o "$TMP/a.tsprof" 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && cmp -s "$TMP/a.tsprof" "$TMP/keep.tsprof" && grep -q "recording being read" "$TMP/err"
check $? "report refuses to write over the recording it reads" "exit $rc"
ln -sf "$TMP/keep.tsprof" "$TMP/alias.tsprof"
$TS report "$TMP/keep.tsprof" -o "$TMP/alias.tsprof" 2>/dev/null
rc=$?
[ $rc -eq 2 ] && cmp -s "$TMP/a.tsprof" "$TMP/keep.tsprof"
check $? "... also through another name for it" "exit $rc"
$TS record -o "$TMP/twice.folded" -o "$TMP/twice.folded" -- sh -c "touch $TMP/ran2" 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && [ ! -e "$TMP/ran2" ] && grep -q "named as an output twice" "$TMP/err"
check $? "one file named as two outputs is refused before the command runs" "exit $rc"

# Outputs are written beside their name and renamed into place: no reader
# sees half a file, a link another user planted at the name is refused
# (its target untouched), one's own link or a dangling one is replaced
# (never followed: its target is neither written nor created), nothing is
# left behind, even by kill -9. (The targets here are files of this test,
# never system files.)
mkdir -p "$TMP/links" && chmod 1777 "$TMP/links"
echo precious >"$TMP/precious"
ln -s "$TMP/precious" "$TMP/links/planted.svg"
other=$(id -u nobody 2>/dev/null || echo 65534)
chown -h "$other" "$TMP/links/planted.svg" 2>/dev/null
$TS record -q -o "$TMP/links/planted.svg" -- /bin/true 2>"$TMP/err"
rc=$?
[ "$(id -u)" != 0 ] || { [ $rc != 0 ] && [ "$(cat "$TMP/precious")" = precious ] &&
	grep -q "link owned by another user" "$TMP/err"; }
check $? "an output at another user's link is refused, its target untouched" "exit $rc $(cat "$TMP/err")"
ln -s "$TMP/links/nowhere.svg" "$TMP/links/dangling.svg"
$TS record -q -o "$TMP/links/dangling.svg" -- /bin/true 2>"$TMP/err"
rc=$?
[ $rc = 0 ] && [ ! -e "$TMP/links/nowhere.svg" ] && [ -f "$TMP/links/dangling.svg" ] &&
	[ ! -L "$TMP/links/dangling.svg" ]
check $? "a dangling link at an output's name is replaced, its target not created" "exit $rc $(cat "$TMP/err")"
echo mine >"$TMP/mine"
ln -s "$TMP/mine" "$TMP/ownlink.folded"
$TS record -q -o "$TMP/ownlink.folded" -- /bin/true 2>"$TMP/err"
rc=$?
[ $rc = 0 ] && [ "$(cat "$TMP/mine")" = mine ] && [ -f "$TMP/ownlink.folded" ] && [ ! -L "$TMP/ownlink.folded" ]
check $? "an output at one's own link replaces the link, its target untouched" "exit $rc $(cat "$TMP/err"); $(ls -l "$TMP/ownlink.folded")"
$TS record -q -d 2 -o "$TMP/links/late.svg" -o "$TMP/links/late.tsprof" -- "$T/cpu_shares" 4 \
	>/dev/null 2>"$TMP/err" &
rpid=$!
sleep 1
mid=$(ls -A "$TMP/links" | tr '\n' ' ')
wait $rpid
end=$(ls -A "$TMP/links" | tr '\n' ' ')
# The .tsprof, a journal that outlives a kill -9, is in place from the
# start; the picture has no name until it is whole (an anonymous file, or
# .late.svg.XXXXXX where the file system has none).
case "$mid" in *"late.svg "*) false ;; *"late.tsprof "*) true ;; *) false ;; esac &&
	[ "$end" = "dangling.svg late.svg late.tsprof planted.svg " ] && $TS report -q "$TMP/links/late.tsprof" -o "$TMP/late.folded"
check $? "rendered outputs appear whole at the end, written beside their names meanwhile" \
	"during: $mid; after: $end"
$TS record -q -o "$TMP/links/never.svg" -o "$TMP/links/never.tsprof" -- /nonexistent/cmd 2>/dev/null
[ "$(ls -A "$TMP/links" | tr '\n' ' ')" = "dangling.svg late.svg late.tsprof planted.svg " ]
check $? "a run that never starts leaves no file, staged or not" "$(ls -A "$TMP/links")"
mkdir "$TMP/killed"
$TS record -q -o "$TMP/killed/k.svg" -o "$TMP/killed/k.speedscope.json" -o "$TMP/killed/k.tsprof" \
	-- "$T/cpu_shares" 4 >/dev/null 2>&1 &
rpid=$!
sleep 2 # the .tsprof's first second written
kill -9 $rpid
wait $rpid 2>/dev/null
left=$(ls -A "$TMP/killed" | tr '\n' ' ')
[ "$left" = "k.tsprof " ] && $TS report -q "$TMP/killed/k.tsprof" -o "$TMP/killed.folded" 2>/dev/null
check $? "kill -9 of record leaves its .tsprof (readable) and nothing else" "left: $left"
$TS report -q "$TMP/links/late.tsprof" -f folded -o /dev/stdout | grep -q . &&
	echo first >"$TMP/appended" && $TS report -q "$TMP/links/late.tsprof" -f folded -o /dev/stdout >>"$TMP/appended" &&
	[ "$(head -1 "$TMP/appended")" = first ] && [ "$(wc -l <"$TMP/appended")" -gt 1 ]
check $? "-o /dev/stdout writes to the pipe or the appended file as -o - does" "$(head -3 "$TMP/appended")"
$TS record -q -f folded -o /dev/null -- /bin/true && $TS report -q "$TMP/links/late.tsprof" -f folded -o - >/dev/null &&
	[ -c /dev/null ]
check $? "devices and stdout are written in place (-o /dev/null, -o -)"
mkfifo "$TMP/fifo.tsprof"
timeout 20 $TS report "$TMP/fifo.tsprof" -o "$TMP/f.svg" 2>"$TMP/err"
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] && grep -q "not a regular file" "$TMP/err" && [ ! -e "$TMP/f.svg" ]
check $? "report of a FIFO says it is not a recording, at once" "exit $rc $(cat "$TMP/err")"
$TS report "$TMP/links/late.tsprof" --summary >/dev/full 2>"$TMP/err"
rc=$?
$TS diff "$TMP/links/late.tsprof" "$TMP/links/late.tsprof" -q >/dev/full 2>"$TMP/err2"
rc2=$?
[ $rc = 1 ] && grep -q "writing the standard output: No space left on device" "$TMP/err" &&
	[ $rc2 != 0 ] && grep -q "writing the standard output" "$TMP/err2"
check $? "a summary or a table that cannot be written to stdout fails, and says why" \
	"report exit $rc: $(cat "$TMP/err"); diff exit $rc2: $(cat "$TMP/err2")"

# {pid}, {rank} and {host} in output names (one command line for every
# rank of a launch): a command's PID filled in once it started, RANK from
# its environment, the launcher's variables kept in the recording.
mkdir -p "$TMP/names"
(cd "$TMP/names" && RANK=3 LOCAL_RANK=1 WORLD_SIZE=4 "$top/$TS" record -q -o 'p-{pid}-{rank}-{host}.folded' \
	-o 'p-{pid}.tsprof' -- sh -c 'echo $$ >pid; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done')
cpid=$(cat "$TMP/names/pid" 2>/dev/null)
host=$(hostname)
[ -n "$cpid" ] && [ -s "$TMP/names/p-$cpid-3-$host.folded" ] && [ -s "$TMP/names/p-$cpid.tsprof" ] &&
	[ "$(ls -A "$TMP/names" | wc -l)" = 3 ] &&
	$TS report "$TMP/names/p-$cpid.tsprof" -o "$TMP/names.trace.json" 2>/dev/null &&
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["otherData"]
assert (d["rank"], d["local_rank"], d["world_size"]) == ("3", "1", "4"), d' "$TMP/names.trace.json"
check $? "-o NAME-{pid}-{rank}-{host}: the command's PID, RANK and host; the launcher's variables in the recording" \
	"pid $cpid: $(ls -A "$TMP/names" | tr '\n' ' ')"
# The end says, per process, its label, samples, busy share and hottest
# function; the recording keeps the label (the trace's process name).
RANK=3 $TS record -o "$TMP/names/s.tsprof" -- "$T/cpu_shares" 1 >/dev/null 2>"$TMP/err"
spid=$(grep -o 'PID [0-9]* (rank 3): [0-9]* samples, busy [0-9]*%, idle [0-9]*%; hottest: hot_[ab] [0-9]*%' "$TMP/err" |
	awk '{ print $2 }')
[ -n "$spid" ] && $TS report "$TMP/names/s.tsprof" -o "$TMP/s.trace.json" 2>/dev/null &&
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["traceEvents"]
assert {"rank 3"} == {e["args"]["name"] for e in d if e.get("name") == "process_name" and e["pid"] == int(sys.argv[2])}, d[:3]' \
	"$TMP/s.trace.json" "$spid"
check $? "the end names each process (rank 3), its samples, busy share and hottest function; the trace too" \
	"$(cat "$TMP/err")"
RANK=7 "$T/heartbeat" "$TMP/hbn" >/dev/null &
hpid=$!
wait_file "$TMP/hbn"
(cd "$TMP/names" && "$top/$TS" attach $hpid -q -d 0.3 -o 'a-{pid}-{rank}.svg')
kill $hpid 2>/dev/null
wait $hpid 2>/dev/null
[ -s "$TMP/names/a-$hpid-7.svg" ]
check $? "attach -o NAME-{pid}-{rank}: the target's PID and the RANK of its environment" \
	"$(ls -A "$TMP/names" | tr '\n' ' ')"
$TS record -q -o "$TMP/names/x{epoch}.svg" -- sh -c "touch $TMP/ran5" 2>"$TMP/err"
rc=$?
[ $rc = 2 ] && [ ! -e "$TMP/ran5" ] && grep -q "unknown field {epoch}" "$TMP/err"
check $? "an unknown field in an output name is refused before anything runs" "exit $rc $(cat "$TMP/err")"
$TS record -q -o "$TMP/{pid}/x.svg" -- sh -c "touch $TMP/ran6" 2>"$TMP/err"
rc=$?
[ $rc = 2 ] && [ ! -e "$TMP/ran6" ] && grep -q "names the file, not its folder" "$TMP/err"
check $? "{pid} in a folder of a started command's output is refused" "exit $rc $(cat "$TMP/err")"
$TS report "$TMP/names/p-$cpid.tsprof" -o "$TMP/names/r-{pid}.svg" 2>"$TMP/err"
rc=$?
[ $rc = 2 ] && [ ! -e "$TMP/names/r-{pid}.svg" ] && grep -q "filled in by record and attach" "$TMP/err"
check $? "report refuses a field in an output name" "exit $rc $(cat "$TMP/err")"

# One file under two spellings is one output: refused before anything runs.
(cd "$TMP" && "$top/$TS" record -o dup.dat -f svg -o ./dup.dat -f folded -- sh -c "touch $TMP/ran3" 2>"$TMP/err")
rc=$?
[ $rc -eq 2 ] && [ ! -e "$TMP/ran3" ] && grep -q "named as an output twice" "$TMP/err"
check $? "out.dat and ./out.dat are one output, refused" "exit $rc $(cat "$TMP/err")"

# A full disk is named as such, and a run whose output failed does not exit 0.
if [ -c /dev/full ]; then
	$TS record -q -i -f svg -o /dev/full -- sleep 0.3 2>"$TMP/err"
	rc=$?
	[ $rc = 1 ] && grep -q "writing /dev/full: No space left on device" "$TMP/err"
	check $? "an output on a full disk: 'No space left on device', exit 1" "exit $rc $(cat "$TMP/err")"
fi

# -d with a command ends it when the time is up, as py-spy does: SIGINT,
# then SIGTERM 2 s later; and says so. SIGINT is restored to its default
# first: a shell that runs the tests in the background ignores it, and the
# command would inherit that (the next check).
start=$(date +%s)
env --default-signal=INT $TS record -d 0.5 -o "$TMP/d1.folded" -- sleep 30 2>"$TMP/err"
rc=$?
grep -q "the duration is up; ending sleep (PID [0-9]*) with SIGINT$" "$TMP/err" && [ $rc = 130 ] &&
	[ $(($(date +%s) - start)) -lt 20 ]
check $? "-d N with a command: SIGINT when the time is up, its status passed on" "exit $rc $(cat "$TMP/err")"

# A command that ignores SIGINT gets SIGTERM at once, not 2 s later.
env --ignore-signal=INT $TS record -d 0.3 -o "$TMP/d1.folded" -- sleep 30 2>"$TMP/err"
rc=$?
[ $rc = 143 ] && grep -q "the duration is up; ending sleep (PID [0-9]*) with SIGTERM (it ignores SIGINT)" "$TMP/err" &&
	! grep -q "still running" "$TMP/err"
check $? "-d N with a command that ignores SIGINT: SIGTERM at once" "exit $rc $(cat "$TMP/err")"
# One that catches SIGINT and goes on gets SIGTERM 2 s later.
env --default-signal=INT $TS record -d 0.5 -o "$TMP/d2.folded" -- \
	sh -c 'trap "echo caught >&2" INT; while :; do sleep 0.1; done' 2>"$TMP/err"
rc=$?
grep -q "caught" "$TMP/err" && grep -q "still running 2 s later; ending sh (PID [0-9]*) with SIGTERM" "$TMP/err" && [ $rc = 143 ]
check $? "-d N: a command that catches SIGINT and goes on gets SIGTERM 2 s later" "exit $rc $(cat "$TMP/err")"

# attach to a stopped process: said at attach and at the end instead of
# "never on a CPU", and the process is left stopped.
sleep 60 &
spid=$!
reap_later $spid
kill -STOP $spid
# The stop takes effect when the process next runs: on a loaded machine
# that is not at once (the attach then saw it running).
for _ in $(seq 200); do [ "$(proc_state $spid)" = T ] && break; sleep 0.05; done
$TS attach $spid -d 1 -o "$TMP/stopped.folded" 2>"$TMP/stopped.err"
state=$(proc_state $spid)
said=$(grep -c "PID $spid is stopped (SIGSTOP/Ctrl-Z): it will not run until continued (kill -CONT $spid)" "$TMP/stopped.err")
[ "$said" -eq 2 ] && ! grep -q "never on a CPU" "$TMP/stopped.err" && [ "$state" = T ]
check $? "attach to a stopped process says so, at attach and at the end, and leaves it stopped" \
	"state $state: $(cat "$TMP/stopped.err")"
kill -9 $spid 2>/dev/null

# A setuid program run by a user without CAP_SYS_PTRACE loses its privilege
# under tracing: one line says so (and the program still runs).
if [ "$(id -u)" != 0 ]; then
	skip "record of a setuid program warns that it runs without its privilege" "needs root to make a setuid copy"
elif ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
	skip "record of a setuid program warns that it runs without its privilege" "setpriv or user nobody missing"
else
	sd=$(mktemp -d /tmp/trainsample-suid.XXXXXX)
	chmod 777 "$sd" && cp /usr/bin/id "$sd/id" && chmod 4755 "$sd/id"
	setpriv --reuid=nobody --regid=nogroup --clear-groups $TS record -o "$sd/x.folded" -- "$sd/id" \
		>"$sd/out" 2>"$sd/err"
	rc=$?
	$TS record -o "$sd/y.folded" -- "$sd/id" >/dev/null 2>"$sd/root.err"
	[ $rc -eq 0 ] && [ "$(grep -c "$sd/id runs without its setuid privilege" "$sd/err")" -eq 1 ] &&
		grep -q '^uid=65534' "$sd/out" && ! grep -q 'privilege' "$sd/root.err"
	check $? "record of a setuid program warns that it runs without its privilege" \
		"exit $rc: $(cat "$sd/err" "$sd/out"); as root: $(cat "$sd/root.err")"
	rm -rf "$sd"
fi
