#!/bin/sh
# Runs every test: the Criterion unit binaries (TAP output) and the
# integration scripts (which print TAP lines too), then one summary line
# "N passed, N failed". Exits non-zero when anything failed.
cd "$(dirname "$0")/.." || exit 1
results=$(mktemp /tmp/trainsample-results.XXXXXX)
trap 'rm -f "$results" "$results.err"' EXIT

# Criterion's TAP output follows a "not ok" with a YAML block:
#   ---, assertions: N, failures:, then per failed assertion
#   "  - FILE:LINE: |+" and its message lines indented six, then "  ...".
# Keeps the ok/not ok lines and turns each failure into "  FILE:LINE: MESSAGE"
# (continuation lines further in), so what failed shows under its test while
# the summary still counts lines that start with "ok " or "not ok ".
tap_details() {
	awk '/^(ok|not ok) / { fail = /^not ok/; print; next }
		!fail || /^  (---|\.\.\.|assertions:|failures:)/ { next }
		/^  - .*: \|\+$/ { loc = substr($0, 5, length($0) - 8); first = 1; next }
		/^      / { sub(/^      /, ""); print (first ? "  " loc ": " : "    ") $0; first = 0; next }
		/^ / { print }'
}

run_unit() {
	bin=$1
	out=$("$bin" --tap=- -j1 2>"$results.err")
	rc=$?
	lines=$(printf '%s\n' "$out" | tap_details)
	if [ -z "$lines" ]; then
		# Nothing ran: what the binary said is all there is to go on.
		lines="not ok - $(basename "$bin"): no test ran (exit $rc)"
		[ -s "$results.err" ] && lines="$lines
$(tail -5 "$results.err" | sed 's/^/  /')"
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
	start=$(date +%s)
	sh "$script" 2>&1 | while IFS= read -r line; do
		case "$line" in
		"ok "*|"not ok "*) printf '%s\n' "$line" >>"$results"; printf '  %s\n' "$line" ;;
		*) printf '    %s\n' "$line" ;;
		esac
	done
	# What each script costs the 20 minutes a fresh clone's run may take.
	echo "    ($(basename "$script" .sh): $(( $(date +%s) - start )) s)"
done

skipped=$(grep -c '^ok .*# SKIP' "$results")
passed=$(grep '^ok ' "$results" | grep -vc '# SKIP')
failed=$(grep -c '^not ok ' "$results")
if [ "$failed" -gt 0 ]; then
	echo "failed:"
	# Each failure with the detail lines under it (indented ones).
	awk '/^not ok / { p = 1; print "  " $0; next } /^ok / { p = 0 } p && /^ / { print "  " $0 }' "$results"
fi
[ "$skipped" -gt 0 ] && echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
