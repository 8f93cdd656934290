#!/bin/sh
# A set-user-ID, set-group-ID or unreadable set-user-ID child of a command
# recorded by a user without CAP_SYS_PTRACE (nobody), and one seen by
# attach -s: the kernel withholds the privilege from a traced exec, so the
# child is exec'd again untraced before its first instruction and keeps it,
# with one line; where that cannot be done, one line says which child ran
# without its privilege. The exit status comes through in every case.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

all_skip() {
	for n in "record: a set-user-ID child keeps its privilege" \
		"record: a set-group-ID child keeps its privilege" \
		"attach -s: a set-user-ID child keeps its privilege" \
		"record: an unreadable set-user-ID child is named in one line" \
		"record: the command's own exec of a set-user-ID program is named in one line"; do
		skip "$n" "$1"
	done
	exit 0
}
[ "$(id -u)" = 0 ] || all_skip "needs root to make set-user-ID copies"
id nobody >/dev/null 2>&1 || all_skip "no user nobody"
if command -v runuser >/dev/null; then
	NOBODY="runuser -u nobody --"
elif command -v setpriv >/dev/null; then
	NOBODY="setpriv --reuid=nobody --regid=$(id -g nobody) --clear-groups"
else
	all_skip "neither runuser nor setpriv"
fi
nobody_uid=$(id -u nobody)

# The programs, owned by root, and trainsample where nobody may run them;
# a folder nobody may write for the outputs.
D="$TMP/suid"
mkdir -p "$D/out" && chmod 755 "$D" && chmod 777 "$D/out"
cp "$TS" "$D/trainsample" && chmod 755 "$D/trainsample"
for f in suid sgid noread; do cp $T/suid_euid "$D/$f" && chown root:root "$D/$f"; done
chmod 4755 "$D/suid"
chmod 2755 "$D/sgid"
chmod 4711 "$D/noread"
$NOBODY "$D/trainsample" --version >/dev/null 2>&1 || all_skip "nobody cannot run $D/trainsample"

# record as nobody: $1 a name, $2 the shell command; sets rc.
record_nobody() {
	(cd "$D" && timeout 60 $NOBODY ./trainsample record -o "out/$1.folded" -- sh -c "$2") \
		>"$D/out/$1.out" 2>"$D/out/$1.err"
	rc=$?
}

record_nobody suid ./suid
[ $rc -eq 51 ] && grep -q "^uid=$nobody_uid euid=0 " "$D/out/suid.out" &&
	[ "$(grep -c "(suid) runs a set-user-ID program: let go before its first instruction" "$D/out/suid.err")" -eq 1 ] &&
	! grep -q "without its privilege" "$D/out/suid.err"
check $? "record: a set-user-ID child keeps its privilege" \
	"exit $rc; out: $(cat "$D/out/suid.out"); err: $(head -c 600 "$D/out/suid.err")"

record_nobody sgid ./sgid
[ $rc -eq 51 ] && grep -q "^uid=$nobody_uid euid=$nobody_uid gid=[0-9]* egid=0$" "$D/out/sgid.out" &&
	[ "$(grep -c "(sgid) runs a set-group-ID program: let go before its first instruction" "$D/out/sgid.err")" -eq 1 ]
check $? "record: a set-group-ID child keeps its privilege" \
	"exit $rc; out: $(cat "$D/out/sgid.out"); err: $(head -c 600 "$D/out/sgid.err")"

# attach -s to a shell of nobody's, which runs the child once traced.
(cd "$D" && exec $NOBODY sh -c "while [ ! -e $D/out/go ]; do sleep 0.05; done; ./suid; echo rc=\$?") \
	>"$D/out/attach.out" 2>&1 &
apid=$!
reap_later $apid
i=0
spid=""
while [ -z "$spid" ] && [ $i -lt 600 ]; do
	spid=$(pgrep -n -u "$nobody_uid" -f "^sh -c while \\[ ! -e $D/out/go")
	[ -n "$spid" ] || sleep 0.05
	i=$((i + 1))
done
(cd "$D" && timeout 60 $NOBODY ./trainsample attach "$spid" -s -o out/attach.folded) \
	2>"$D/out/attach.err" &
tpid=$!
reap_later $tpid
i=0
while [ "$(tracer_of "$spid")" = 0 ] || [ -z "$(tracer_of "$spid")" ]; do
	[ $i -lt 600 ] || break
	sleep 0.05; i=$((i + 1))
done
touch "$D/out/go"
wait $apid
wait $tpid
trc=$?
[ $trc -eq 0 ] && grep -q "^uid=$nobody_uid euid=0 " "$D/out/attach.out" && grep -q "^rc=51$" "$D/out/attach.out" &&
	[ "$(grep -c "(suid) runs a set-user-ID program: let go before its first instruction" "$D/out/attach.err")" -eq 1 ]
check $? "attach -s: a set-user-ID child keeps its privilege" \
	"trainsample exit $trc, shell $spid; out: $(cat "$D/out/attach.out"); err: $(head -c 600 "$D/out/attach.err")"

# Unreadable (4711): the traced exec makes it one we may not read, so it
# can be neither read nor exec'd again; the line says what it may have lost.
record_nobody noread ./noread
[ $rc -eq 51 ] && grep -q "^uid=$nobody_uid euid=$nobody_uid " "$D/out/noread.out" &&
	[ "$(grep -c "(noread) now runs a program trainsample may not read (if it is set-user-ID" "$D/out/noread.err")" -eq 1 ]
check $? "record: an unreadable set-user-ID child is named in one line" \
	"exit $rc; out: $(cat "$D/out/noread.out"); err: $(head -c 600 "$D/out/noread.err")"

# The command's own process (the root, which runs the loop) stays followed:
# it runs without its privilege, said in one line.
record_nobody own 'exec ./suid'
[ $rc -eq 51 ] && grep -q "^uid=$nobody_uid euid=$nobody_uid " "$D/out/own.out" &&
	[ "$(grep -c "(suid) runs a set-user-ID program without its privilege" "$D/out/own.err")" -eq 1 ]
check $? "record: the command's own exec of a set-user-ID program is named in one line" \
	"exit $rc; out: $(cat "$D/out/own.out"); err: $(head -c 600 "$D/out/own.err")"
