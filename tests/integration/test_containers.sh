#!/bin/sh
# Processes in other PID and mount namespaces (containers): Python frames,
# thread names and shares of a target attached from the host by its host
# PID, and of one started by `record -- unshare ...`; --native names the
# symbols of the container root's own files (build/ns-root: Debian
# bullseye, glibc 2.31 and Python 3.9, built by scripts/ns-root.sh), never
# the host's.
. tests/integration/lib.sh
P=tests/python
ROOT=${NS_ROOT:-build/ns-root}

all_skip() {
	skip "processes in other PID and mount namespaces" "$1"
	exit 0
}
[ "$(id -u)" = 0 ] || all_skip "needs root (PID namespaces)"
unshare -p -f --mount-proc true 2>/dev/null || all_skip "unshare -p -f --mount-proc fails here"

# The id of a process in its innermost PID namespace.
ns_pid() { awk '/^NSpid:/ { print $NF }' "/proc/$1/status"; }
# Waits up to 30 s (a container's start on a loaded machine) for one
# process whose command line starts with $1: its pid; empty, and status 1,
# when none came.
wait_pgrep() {
	i=0
	while [ $i -lt 600 ]; do
		p=$(pgrep -f "^$1" | head -1)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# shares FOLDED TRUTH: "heavy light truth_heavy truth_light samples"
shares_of() {
	total=$(folded_total "$1")
	read -r h_ns l_ns t_ns <"$2"
	echo "$(percent "$(folded_with_prefix "$1" "heavy (")" "$total")" \
		"$(percent "$(folded_with_prefix "$1" "light (")" "$total")" \
		"$(percent "$h_ns" "$t_ns")" "$(percent "$l_ns" "$t_ns")" "$total"
}
shares_ok() {
	set -- $1
	at_least "$5" "$6" && within "$1" "$3" 3 && within "$2" "$4" 3
}

# Host interpreters in new PID and mount namespaces: before 3.11 threads
# are matched through glibc's struct pthread, from 3.11 by
# native_thread_id; both hold the container's own thread ids.
host_interpreter() {
	label=$1 py=$2
	# attach by host PID
	unshare -p -f --mount-proc "$py" $P/shares.py 4 "$TMP/$label.a.truth" &
	launcher=$!
	reap_later $launcher
	pid=$(wait_pgrep "$py $P/shares.py 4 $TMP/$label.a.truth")
	sleep 0.5
	inner=$(ns_pid "$pid")
	$TS attach "$pid" -q -r 1000 -d 2 -o "$TMP/$label.a.folded" 2>"$TMP/$label.a.err"
	wait $launcher # shares.py runs 4 s of its own CPU time: longer under load
	s=$(shares_of "$TMP/$label.a.folded" "$TMP/$label.a.truth")
	[ "$inner" = 1 ] && shares_ok "$s 1000"
	check $? "$label: attach by host PID to PID 1 of a new namespace: Python frames, shares within 3 points" \
		"pid $pid is $inner inside; heavy light truth samples: $s; $(head -3 "$TMP/$label.a.err")" \
		"heavy light truth samples: $s"

	# thread names and frames, dump and attach -t
	unshare -p -f --mount-proc "$py" $P/threads.py 6 >"$TMP/$label.t.out" &
	reap_later $!
	wait_file "$TMP/$label.t.out"
	pid=$(wait_pgrep "$py $P/threads.py 6")
	sleep 0.5
	$TS dump --pid "$pid" >"$TMP/$label.dump" 2>&1
	ok=0
	for f in loader:spin_loader trainer:spin_trainer sleeper:sleeper; do
		awk -v n="\"${f%%:*}\"" -v fn="${f#*:} (" '
			/^Thread / { cur = index($0, n) > 0 }
			cur && index($0, fn) { found = 1 }
			END { exit !found }' "$TMP/$label.dump" || ok=1
	done
	$TS dump --json --pid "$pid" >"$TMP/$label.json" 2>&1
	[ $ok = 0 ] && head -1 "$TMP/$label.dump" | grep -q "^Process $pid (PID 1 in its PID namespace): Python " &&
		python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["pid"] == int(sys.argv[2]) and d["pid_in_namespace"] == 1, d' \
			"$TMP/$label.json" "$pid"
	check $? "$label: dump by host PID names the threads, each with its Python frames, and the PID inside (text and JSON)" \
		"$(cat "$TMP/$label.dump" "$TMP/$label.json")"
	# --idle: the main thread waits in join throughout (the default keeps
	# a main thread's waits only where no loop was found; --idle keeps
	# them all).
	$TS attach "$pid" -q -t --idle -r 500 -d 1 -o "$TMP/$label.t.folded" 2>/dev/null
	[ "$(folded_with_prefix "$TMP/$label.t.folded" "thread $pid (MainThread)")" -gt 0 ] &&
		grep -q "^thread [0-9]* (loader);.*spin_loader (" "$TMP/$label.t.folded" &&
		grep -q "^thread [0-9]* (trainer);.*spin_trainer (" "$TMP/$label.t.folded"
	check $? "$label: attach -t shows host thread ids with Python's thread names" \
		"$(cut -c1-160 "$TMP/$label.t.folded" | head -8)"

	# record -- unshare: the traced child of unshare -f is followed
	$TS record -q -r 1000 -o "$TMP/$label.r.folded" -- unshare -p -f --mount-proc \
		"$py" $P/shares.py 3.3 "$TMP/$label.r.truth" 2>"$TMP/$label.r.err"
	rc=$?
	s=$(shares_of "$TMP/$label.r.folded" "$TMP/$label.r.truth")
	[ $rc = 0 ] && shares_ok "$s 2000"
	check $? "$label: record -- unshare -p -f: Python frames, shares within 3 points" \
		"exit $rc; heavy light truth samples: $s; $(head -3 "$TMP/$label.r.err")" \
		"heavy light truth samples: $s"
	$TS record -q -t --idle -o "$TMP/$label.rt.folded" -- unshare -p -f --mount-proc \
		"$py" $P/threads.py 1 >/dev/null 2>&1
	# The launcher sampled before the move (a loaded machine) is a
	# process of its own: roots are left out here.
	sed 's/^process [^;]*;//' "$TMP/$label.rt.folded" >"$TMP/$label.rt.threads"
	grep -q "^thread [0-9]* (loader);.*spin_loader (" "$TMP/$label.rt.threads" &&
		grep -q "^thread [0-9]* (sleeper);.*sleeper (" "$TMP/$label.rt.threads"
	check $? "$label: record -t -- unshare -p -f: thread names" \
		"$(cut -c1-160 "$TMP/$label.rt.folded" | head -8)"
}

for want in pyenv-3.10 pyenv-3.12 debian-3.11; do
	line=$(python_interpreters | grep "^$want ")
	if [ -z "$line" ]; then
		skip "$want: processes in a new PID namespace" "$want is not installed here"
		continue
	fi
	host_interpreter $line
done

# The command's exit status comes through unshare, which outlives the
# child that was sampled.
py=$(python_interpreters | awk 'NF == 2 { print $2; exit }')
$TS record -q -o "$TMP/exit.folded" -- unshare -p -f "$py" -c 'import sys; sys.exit(3)' 2>/dev/null
rc=$?
[ $rc = 3 ]
check $? "record -- unshare -p -f python3 -c 'sys.exit(3)' exits 3, unshare's status" "exit $rc"

# ---- a root filesystem of its own ----
if ! sh scripts/ns-root.sh "$ROOT" >"$TMP/root.err" 2>&1; then
	for t in "Python 3.9 found" "the root's library, not the host's" "the root's libc and python3.9 symbols" \
		"attach --native" "record -- unshare -R: shares within 3 points" "record --native -- a pivot_root container"; do
		skip "container root: $t" "no $ROOT: $(tail -1 "$TMP/root.err")"
	done
	exit 0
fi
# The same path names the root's copy of the library inside the container
# and the host's copy outside: only the name inside tells which was read.
LIB=$PWD/build/tests/nslib/host/libnsside.so
mkdir -p "$ROOT/ts" "$ROOT$(dirname "$LIB")"
cp build/tests/nslib/root/libnsside.so "$ROOT$LIB"
cp $P/ns_native.py $P/shares.py "$ROOT/ts/"

# A container as Docker makes one: new PID and mount namespaces, the root
# made the namespace's own by pivot_root and the host's unmounted, so the
# maps name files by their paths inside it.
cat >"$TMP/container.sh" <<'EOF'
root=$1
shift
exec unshare -m -p -f sh -c '
	r=$1; shift
	mount --bind "$r" "$r" && mount -t proc proc "$r/proc" && cd "$r" && mkdir -p .old &&
		pivot_root . .old &&
		exec /usr/sbin/chroot . /bin/sh -c "umount -l /.old && exec \"\$@\"" sh "$@"' sh "$root" "$@"
EOF

sh "$TMP/container.sh" "$ROOT" /usr/bin/python3.9 /ts/ns_native.py "$LIB" 20 "$TMP" >"$TMP/c.out" 2>&1 &
reap_later $!
wait_file "$TMP/c.out" 10
pid=$(wait_pgrep "/usr/bin/python3.9 /ts/ns_native.py $LIB 20 $TMP")
sleep 0.5
grep -q "/usr/lib/x86_64-linux-gnu/libc-2.31.so" "/proc/$pid/maps" && [ "$(ns_pid "$pid")" = 1 ]
check $? "container root: the target maps the root's libc by its path inside, as PID 1" \
	"$(grep libc "/proc/$pid/maps" | head -2; cat "$TMP/c.out")"
# About 1 dump in 100 catches native_worker in the root's glibc 2.31
# clock_gettime and its native unwind stops short after now()
# ("[truncated: no unwind info]": a gap of the unwinder, not of the
# symbols this checks, seen neither on the host's glibc nor in 300 dumps
# there). Such a dump says nothing of which file named the frames: the
# next is taken, five at most.
for i in 1 2 3 4 5; do
	$TS dump --pid "$pid" --native >"$TMP/c.dump" 2>&1
	awk '/^Thread .*"native_worker"/ { cur = 1; next } /^Thread / { cur = 0 }
		cur && /\[truncated/ { t = 1 } END { exit t }' "$TMP/c.dump" && break
done
head -1 "$TMP/c.dump" | grep -q "Python 3.9 (python3.9)" &&
	awk '/^Thread .*"native_worker"/ { cur = 1; next } /^Thread / { cur = 0 }
		cur && /native_worker \(ns_native.py:/ { py = 1 } END { exit !py }' "$TMP/c.dump"
check $? "container root: Python 3.9 found in the root's python3.9, its threads named" "$(cat "$TMP/c.dump")"
grep -q "^    spin_in_root \[libnsside.so\]" "$TMP/c.dump" && ! grep -q "spin_in_host" "$TMP/c.dump"
check $? "container root: the root's library, not the host's at the same path" "$(cat "$TMP/c.dump")"
# The sleeper waits in the root's glibc 2.31 select(): the host's 2.36 has
# other code at that address, and python3.9 is not on the host at all.
awk '/^Thread .*"sleeper"/ { cur = 1; next } /^Thread / { cur = 0 }
	cur && /^    [^ ]*select[^ ]* \[libc-2\.31\.so\]$/ { s = 1 }
	/^    start_thread \[libpthread-2\.31\.so\]$/ { t = 1 }
	/^    PyThread_acquire_lock_timed \[python3\.9\]$/ { p = 1 }
	END { exit !(s && t && p) }' "$TMP/c.dump"
check $? "container root: the root's libc, libpthread and python3.9 symbols" "$(cat "$TMP/c.dump")"
$TS attach "$pid" -q --native -t -r 500 -d 1 -o "$TMP/c.folded" 2>"$TMP/c.err"
grep -q "^thread [0-9]* (native_worker);.*native_worker (ns_native.py:[0-9]*);.*spin_in_root" "$TMP/c.folded" &&
	! grep -q spin_in_host "$TMP/c.folded"
check $? "container root: attach --native: the worker's Python and native frames, the root's" \
	"$(cut -c1-200 "$TMP/c.folded" | head; cat "$TMP/c.err")"
kill "$pid" 2>/dev/null

# record -- unshare -R (a chroot: the maps name files by their host paths)
$TS record -q -r 1000 -o "$TMP/cr.folded" -- unshare -m -p -f --mount-proc -R "$ROOT" \
	/usr/bin/python3.9 /ts/shares.py 3.3 /ts/truth 2>"$TMP/cr.err"
rc=$?
s=$(shares_of "$TMP/cr.folded" "$ROOT/ts/truth")
[ $rc = 0 ] && shares_ok "$s 2000"
check $? "container root: record -- unshare -R: Python frames, shares within 3 points" \
	"exit $rc; heavy light truth samples: $s; $(head -3 "$TMP/cr.err")" "heavy light truth samples: $s"

# record --native -- a pivot_root container
$TS record -q --native -t --no-subprocesses -o "$TMP/cn.folded" -- sh "$TMP/container.sh" "$ROOT" \
	/usr/bin/python3.9 /ts/ns_native.py "$LIB" 1.5 >"$TMP/cn.out" 2>&1
rc=$?
# The launcher may be sampled before the move: roots are left out.
sed -i 's/^process [^;]*;//' "$TMP/cn.folded"
[ $rc = 0 ] && grep -q "^thread [0-9]* (native_worker);.*native_worker (ns_native.py:[0-9]*);.*spin_in_root" "$TMP/cn.folded" &&
	! grep -q spin_in_host "$TMP/cn.folded"
check $? "container root: record --native -- a pivot_root container: the root's library, thread names" \
	"exit $rc: $(cat "$TMP/cn.out"); $(cut -c1-200 "$TMP/cn.folded" | head)"

# Rootless: a user's own chroot'ed container (unshare -r), attached by that
# user, who may not open /proc/PID/map_files: symbols come from the path
# the maps give, which only the host can reach (its root does not hold it).
if ! command -v setpriv >/dev/null 2>&1 ||
	! setpriv --reuid=65534 --regid=65534 --clear-groups unshare -r -p -f true 2>/dev/null; then
	skip "rootless container: dump --native as its user" "setpriv missing, or user namespaces not allowed for nobody"
	exit 0
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
mkdir -p "$TMP/nobody" && chmod 777 "$TMP/nobody"
as_nobody unshare -r -p -f --mount-proc -R "$PWD/$ROOT" /usr/bin/python3.9 /ts/ns_native.py "$LIB" 20 "$TMP/nobody" \
	>"$TMP/nobody/out" 2>&1 &
reap_later $!
wait_file "$TMP/nobody/out" 10
pid=$(wait_pgrep "/usr/bin/python3.9 /ts/ns_native.py $LIB 20 $TMP/nobody")
if [ -z "$pid" ]; then
	not_ok "rootless container (unshare -r -R, as nobody): dump --native without privilege reads its root's files" \
		"its python3.9 never showed in 30 s: $(cat "$TMP/nobody/out")"
	exit 0
fi
sleep 0.5
# As above: a dump whose native_worker unwind stopped short in glibc 2.31's
# clock_gettime is taken again, five times at most.
for i in 1 2 3 4 5; do
	as_nobody $TS dump --pid "$pid" --native >"$TMP/nobody/dump" 2>&1
	awk '/^Thread .*"native_worker"/ { cur = 1; next } /^Thread / { cur = 0 }
		cur && /\[truncated/ { t = 1 } END { exit t }' "$TMP/nobody/dump" && break
done
head -1 "$TMP/nobody/dump" | grep -q "Python 3.9 (python3.9)" &&
	grep -q "^    spin_in_root \[libnsside.so\]" "$TMP/nobody/dump" &&
	grep -q "^    start_thread \[libpthread-2.31.so\]" "$TMP/nobody/dump"
check $? "rootless container (unshare -r -R, as nobody): dump --native without privilege reads its root's files" \
	"$(cat "$TMP/nobody/dump")"
kill "$pid" 2>/dev/null
