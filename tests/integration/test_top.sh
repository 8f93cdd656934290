#!/bin/sh
# trainsample top in a pseudo-terminal (tests/integration/top.py): the
# live view of a running Python process's threads and functions, a key to
# sort, q to quit and leave it running untraced; top -- CMD to its end.
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

PY=/usr/bin/python3.11
[ -x $PY ] || PY=$(command -v python3)
rm -f "$TMP/threads.out"
$PY tests/python/threads.py 60 >"$TMP/threads.out" &
pid=$!
reap_later $pid
wait_file "$TMP/threads.out"
timeout 120 python3 tests/integration/top.py "$PWD/$TS" $pid $PY
kill $pid 2>/dev/null
wait $pid 2>/dev/null
