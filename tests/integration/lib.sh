# Helpers for the integration scripts: TAP lines, temp files, folded-stack
# arithmetic. Sourced; POSIX sh.
TS=${TS:-build/trainsample}
T=build/tests/targets
TMP=$(mktemp -d /tmp/trainsample-test.XXXXXX)
chmod 755 "$TMP"
cleanup_pids=""
cleanup() {
	for p in $cleanup_pids; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1${2:+: $2}"; }
skip() { echo "ok - $1 # SKIP $2"; }
# check STATUS NAME [DETAIL [NOTE]]: one TAP line for the check that just
# ran, given its exit status ($?): "ok - NAME", or "ok - NAME (NOTE)" when a
# NOTE is given (what was measured), else "not ok - NAME: DETAIL". The check
# stays plain shell on the line before (compound, heredoc and all), and DETAIL
# and NOTE can show what it wrote. It sets no variable but its own check_*.
#   [ "$rc" -eq 0 ] && grep -q done "$TMP/out"
#   check $? "the command finishes" "exit $rc: $(cat "$TMP/out")"
# With TEST_TIMES=1 each line ends with the seconds since the one before
# (what each check costs the run).
check() {
	if [ -n "$TEST_TIMES" ]; then
		check_now=$(date +%s.%N)
		set -- "$1" "$2 [$(awk -v a="$check_now" -v b="${check_last:-$check_start}" 'BEGIN { printf "%.1f s", a - b }')]" "$3" ${4+"$4"}
		check_last=$check_now
	fi
	if [ "$1" -eq 0 ]; then ok "$2${4+ ($4)}"; else not_ok "$2" "$3"; fi
}
check_start=$(date +%s.%N)
reap_later() { cleanup_pids="$cleanup_pids $1"; }
# Kills process $1 and every process under it (a torch program's
# multiprocessing forkserver and resource tracker outlive it otherwise).
kill_tree() {
	for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done
	kill "$1" 2>/dev/null
}

# Sum of all counts in a folded file.
folded_total() { awk '{ n += $NF } END { print n + 0 }' "$1"; }
# Sum of counts of stacks that contain frame $2 (exact frame match).
folded_with() {
	awk -v f="$2" '{
		c = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		k = split(s, fr, ";")
		for (i = 1; i <= k; i++) if (fr[i] == f) { n += c; break }
	} END { print n + 0 }' "$1"
}
# Sum of counts of stacks with an unresolved native frame ("0x... (").
folded_unresolved() {
	awk '{
		c = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		k = split(s, fr, ";")
		for (i = 1; i <= k; i++) if (fr[i] ~ /^0x[0-9a-f]+ \(/) { n += c; break }
	} END { print n + 0 }' "$1"
}
# 100 * a / b, with one decimal.
percent() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "0.0"; else printf "%.1f\n", 100 * a / b }'; }
# |a - b| <= tol (decimals allowed)
within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# The state letter of a process or thread.
proc_state() { sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null; }
tracer_of() { awk '/^TracerPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
# Waits up to $2 seconds (default 5) for a file to exist and be non-empty.
wait_file() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt $(( ${2:-5} * 20 )) ]; do sleep 0.05; i=$((i + 1)); done
	[ -s "$1" ]
}
# Waits up to $3 seconds for the tracer of PID $1 to become $2.
wait_tracer() {
	i=0
	while [ "$(tracer_of "$1")" != "$2" ] && [ $i -lt $(( ${3:-5} * 20 )) ]; do sleep 0.05; i=$((i + 1)); done
	[ "$(tracer_of "$1")" = "$2" ]
}

# Sum of counts of stacks with a frame that starts with $2 ("heavy (").
folded_with_prefix() {
	awk -v f="$2" '{
		c = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		k = split(s, fr, ";")
		for (i = 1; i <= k; i++) if (index(fr[i], f) == 1) { n += c; break }
	} END { print n + 0 }' "$1"
}
# The CPython interpreters to test, "LABEL PATH" per line, or "LABEL" alone
# for one that is not on this machine: pyenv's 3.8-3.13, Debian's 3.11,
# and Debian sid's 3.14 and 3.15 run in the root of `make sid-root`
# (tests/sid/python3.X chroots into it).
python_interpreters() {
	root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
	for m in 8 9 10 11 12 13; do
		p=$(ls -d "$root"/versions/3.$m.*/bin/python3.$m 2>/dev/null | sort -V | tail -1)
		echo "pyenv-3.$m${p:+ $p}"
	done
	if [ -x /usr/bin/python3.11 ]; then echo "debian-3.11 /usr/bin/python3.11"; else echo "debian-3.11"; fi
	for m in 14 15; do
		if sid_root_ready; then echo "sid-3.$m tests/sid/python3.$m"; else echo "sid-3.$m"; fi
	done
}

# Why interpreter LABEL has no path in python_interpreters' list.
python_missing_why() {
	case $1 in
	sid-*) sid_root_ready || echo "$sid_root_why" ;;
	*) echo "$1 is not installed here" ;;
	esac
}

# Whether the sid root is built (make sid-root) and runs its programs here;
# sid_root_why says why not.
sid_root_ready() {
	if [ ! -f build/sid-root/.stamp ]; then
		sid_root_why="no sid root (make sid-root; it needs network and root)"
		return 1
	fi
	if ! tests/sid/run-in-root.sh /bin/true 2>/dev/null; then
		sid_root_why="the sid root does not run here (unshare and chroot need root)"
		return 1
	fi
	return 0
}

# The Python with PyTorch that the torch checks run: Debian's python3.11
# with its python3-torch (a test dependency), else the sid root's 3.14
# with torch (make sid-root-torch). Sets torch_py and torch_label ("debian-3.11
# torch"), or returns 1 with torch_why.
torch_python() {
	if /usr/bin/python3.11 -c 'import torch' 2>/dev/null; then
		torch_py=/usr/bin/python3.11 torch_label="debian-3.11 torch"
		return 0
	fi
	if sid_root_ready && [ -f build/sid-root/.stamp-torch ]; then
		torch_py=tests/sid/python3.14 torch_label="sid-3.14 torch"
		return 0
	fi
	torch_why="no torch: neither Debian's python3-torch (make deps) nor the sid root's (make sid-root-torch)"
	torch_label="torch"
	return 1
}

# --stats' errors line in file $1 is "errors N" or "errors N (KIND n, ...)"
# with the kinds adding up to N; and no p99 above its max.
stats_consistent() {
	awk '/^  errors / {
		n = $2; line = $0; sum = 0
		if (sub(/^[^(]*\(/, "", line)) {
			sub(/\)$/, "", line)
			k = split(line, kinds, ", ")
			for (i = 1; i <= k; i++) { m = split(kinds[i], w, " "); sum += w[m] }
		}
		if (sum != n) bad = 1
		found = 1
	}
	/^  target pause / {
		split($0, a, /p99 |, max | us \(/)
		if (a[2] + 0 > a[3] + 0) bad = 1
	}
	END { exit !(found && !bad) }' "$1"
}
