# pprof: decoded by the npm package pprof-format (installed here into
# build/npm), every referenced id present, samples adding up, labels; and
# report writes what record wrote.
. tests/integration/lib.sh
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)

$TS record -q -r 500 --stats -o "$TMP/t.pb.gz" -o "$TMP/t.tsprof" -- "$PY" examples/train.py 1.5 >"$TMP/trained" 2>"$TMP/stats"
samples=$(sed -n 's/^ *samples *\([0-9]*\).*/\1/p' "$TMP/stats")
gzip -t "$TMP/t.pb.gz" 2>/dev/null
check $? "pprof: the file is gzip"
$TS report -q "$TMP/t.tsprof" -o "$TMP/r.pb.gz"
cmp -s "$TMP/t.pb.gz" "$TMP/r.pb.gz"
check $? "pprof: report writes what record wrote"

# make demo's example at its rate (500 Hz) has its steps counted, even on a
# loaded machine that misses half the ticks (issue 29: they were "not
# counted" with steps of 7 ms); summary.json is the summary's name too.
trained=$(sed -n 's/^trained \([0-9]*\) steps$/\1/p' "$TMP/trained")
(cd "$TMP" && "$OLDPWD/$TS" report -q t.tsprof --phases "$OLDPWD/examples/train.phases" -o summary.json)
counted=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["processes"][0]["loop"]["steps"]["count"])' \
	"$TMP/summary.json" 2>/dev/null)
[ -n "$trained" ] && [ -n "$counted" ] && at_least "$counted" $((trained * 2 / 3)) && ! below $((trained + 1)) "$counted"
check $? "the demo's loop: its steps counted at 500 Hz" "${counted:-none} counted of ${trained:-?} trained"

if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
	skip "pprof: decoded by pprof-format" "no node/npm to install pprof-format"
elif [ -d build/npm/node_modules/pprof-format ] ||
     npm install --silent --no-audit --no-fund --prefix build/npm pprof-format@2 >"$TMP/npm.log" 2>&1; then
	NODE_PATH=build/npm/node_modules node tests/browser/pprof_check.js "$TMP/t.pb.gz" "$samples"
else
	skip "pprof: decoded by pprof-format" "npm could not install pprof-format: $(tail -1 "$TMP/npm.log")"
fi
