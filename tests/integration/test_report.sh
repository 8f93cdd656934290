# report's filters: --tid, --thread NAME, --pid, and a time window
# --from/--to, on a recording of named Python threads.
. tests/integration/lib.sh
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)

$TS record -q -t -r 200 -o "$TMP/t.tsprof" -o "$TMP/t.folded" -- "$PY" tests/python/threads.py 2 >/dev/null
loader=$(sed -n 's/^thread \([0-9]*\) (loader);.*/\1/p' "$TMP/t.folded" | head -1)

$TS report -q -t "$TMP/t.tsprof" --thread loader -o "$TMP/l.folded"
others=$(grep -vc '^thread [0-9]* (loader);' "$TMP/l.folded")
if [ -s "$TMP/l.folded" ] && [ "$others" = 0 ] && grep -q 'spin_loader (' "$TMP/l.folded"; then ok "report --thread NAME keeps that thread alone"
else not_ok "report --thread NAME keeps that thread alone" "$others other lines"; fi

$TS report -q -t "$TMP/t.tsprof" --tid "${loader:-1}" -o "$TMP/tid.folded"
if [ -n "$loader" ] && cmp -s "$TMP/tid.folded" "$TMP/l.folded"; then ok "report --tid TID is the same thread"
else not_ok "report --tid TID is the same thread" "tid ${loader:-none}"; fi

$TS report -q "$TMP/t.tsprof" --pid 1 -o "$TMP/none.folded"
if [ ! -s "$TMP/none.folded" ]; then ok "report --pid of another process keeps nothing"
else not_ok "report --pid of another process keeps nothing"; fi

all=$(folded_total "$TMP/t.folded")
$TS report -q "$TMP/t.tsprof" -t --from 0.5 --to 1.0 -o "$TMP/w.folded"
part=$(folded_total "$TMP/w.folded")
share=$(percent "$part" "$all")
# Half a second of a run of about two: a fifth to a third of the samples.
if at_least "$share" 15 && below "$share" 35; then ok "report --from 0.5 --to 1.0 keeps that half second ($share%)"
else not_ok "report --from 0.5 --to 1.0 keeps that half second" "$share% of the samples"; fi

if $TS record -q --from 1 -o "$TMP/x.folded" -- true 2>"$TMP/err"; then not_ok "record refuses --from"
elif grep -q "options of report" "$TMP/err"; then ok "record refuses --from, saying it belongs to report"
else not_ok "record refuses --from" "$(cat "$TMP/err")"; fi
