#!/bin/sh
# Runs every test: the Criterion unit binaries (TAP output) and the
# integration scripts (which print TAP lines too), then one summary line
# "N passed, N failed". Exits non-zero when anything failed.
cd "$(dirname "$0")/.." || exit 1
results=$(mktemp /tmp/trainsample-results.XXXXXX)
trap 'rm -f "$results"' EXIT

run_unit() {
	bin=$1
	out=$("$bin" --tap=- -j1 2>/dev/null)
	rc=$?
	lines=$(printf '%s\n' "$out" | grep -E '^(ok|not ok) ')
	if [ -z "$lines" ]; then
		lines="not ok - $(basename "$bin"): no test ran (exit $rc)"
	elif [ $rc -ne 0 ] && ! printf '%s\n' "$lines" | grep -q '^not ok'; then
		lines="$lines
not ok - $(basename "$bin"): exited $rc"
	fi
	printf '%s\n' "$lines" | tee -a "$results" | sed 's/^/  /'
}

echo "== unit tests"
for bin in build/tests/unit/test_*; do
	[ -x "$bin" ] || continue
	case "$bin" in *.d) continue ;; esac
	run_unit "$bin"
done

for script in tests/integration/*.sh; do
	case "$script" in */lib.sh) continue ;; esac
	echo "== $(basename "$script" .sh)"
	sh "$script" 2>&1 | while IFS= read -r line; do
		case "$line" in
		"ok "*|"not ok "*) printf '%s\n' "$line" >>"$results"; printf '  %s\n' "$line" ;;
		*) printf '    %s\n' "$line" ;;
		esac
	done
done

skipped=$(grep -c '^ok .*# SKIP' "$results")
passed=$(grep '^ok ' "$results" | grep -vc '# SKIP')
failed=$(grep -c '^not ok ' "$results")
if [ "$failed" -gt 0 ]; then
	echo "failed:"
	grep '^not ok ' "$results" | sed 's/^/  /'
fi
[ "$skipped" -gt 0 ] && echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
