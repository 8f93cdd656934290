# Job control in a real terminal: Ctrl-Z, fg, Ctrl-C (driven through a pty).
. tests/integration/lib.sh

if command -v python3 >/dev/null && command -v bash >/dev/null; then
	timeout 120 python3 tests/integration/terminal.py "$PWD/$TS" "$PWD/$T/interrupted" "$TMP"
else
	skip "Ctrl-Z / fg / Ctrl-C in a terminal" "needs python3 and bash to drive a pty"
fi
