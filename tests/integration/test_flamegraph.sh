# The flamegraph SVG: valid XML from Python and C++ recordings, `report`
# renders what `record` wrote, and in a real browser (Debian's chromium,
# driven headless by playwright-core from npm, installed here into
# build/npm) it zooms, resets and searches without a script error. The
# screenshot stays in build/test-artifacts/flamegraph.png.
. tests/integration/lib.sh
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)
ART=build/test-artifacts
mkdir -p "$ART"

$TS record -q -r 500 -o "$TMP/p.svg" -o "$TMP/p.folded" -o "$TMP/p.tsprof" -- "$PY" tests/python/shares.py 2 "$TMP/p.truth"
xmllint --noout "$TMP/p.svg" 2>"$TMP/xml.err"
check $? "flamegraph of a Python recording is valid XML" "$(head -3 "$TMP/xml.err")"

# C++ names with templates and operators must be escaped.
$TS record -q -r 500 -o "$TMP/c.svg" -- build/tests/nofp/cxx_leaf >/dev/null
xmllint --noout "$TMP/c.svg" 2>"$TMP/xml.err" && grep -q '::' "$TMP/c.svg"
check $? "flamegraph of a C++ recording is valid XML" "$(head -3 "$TMP/xml.err")"

$TS report -q "$TMP/p.tsprof" -o "$TMP/r.svg"
cmp -s "$TMP/p.svg" "$TMP/r.svg"
check $? "report of the recording writes the flamegraph record wrote" "$(cmp "$TMP/p.svg" "$TMP/r.svg")"

$TS report -q "$TMP/p.tsprof" --inverted -t -o "$TMP/i.svg"
xmllint --noout "$TMP/i.svg" 2>/dev/null && grep -q 'inverted' "$TMP/i.svg" && grep -q '<title>thread [0-9]* (' "$TMP/i.svg"
check $? "report --inverted -t: an icicle with a frame per thread" \
	"$(xmllint --noout "$TMP/i.svg" 2>&1 | head -3; grep -o "<title>thread[^<]*" "$TMP/i.svg" | head -3)"

# In the browser: the share the search must show is the folded output's.
total=$(folded_total "$TMP/p.folded")
share=$(percent "$(folded_with_prefix "$TMP/p.folded" "heavy (")" "$total")
if [ ! -x /usr/bin/chromium ]; then
	skip "flamegraph in a browser" "no /usr/bin/chromium (apt-get install chromium)"
elif ! command -v npm >/dev/null; then
	skip "flamegraph in a browser" "no npm to install playwright-core"
elif [ ! -d build/npm/node_modules/playwright-core ] &&
     ! npm install --silent --no-audit --no-fund --prefix build/npm playwright-core@1.49 >"$TMP/npm.log" 2>&1; then
	skip "flamegraph in a browser" "npm could not install playwright-core: $(tail -1 "$TMP/npm.log")"
else
	NODE_PATH=build/npm/node_modules timeout 120 node tests/browser/flamegraph.js "$TMP/p.svg" \
		"Trainer.step" "^heavy" "$share" "$ART/flamegraph.png"
fi

# The script every SVG carries is formats/flamegraph.js as the tree has it
# (taken in at build time), and it parses as JavaScript.
sed -n '/<!\[CDATA\[$/,/^\]\]><\/script>$/p' "$TMP/p.svg" | sed '1d;$d' >"$TMP/embedded.js"
why=$(cmp "$TMP/embedded.js" formats/flamegraph.js 2>&1)
check $? "flamegraph: the SVG's script is formats/flamegraph.js" "$why"
if ! command -v node >/dev/null; then
	skip "flamegraph: formats/flamegraph.js parses as JavaScript" "no node (apt-get install nodejs)"
else
	why=$(node --check formats/flamegraph.js 2>&1 | head -5)
	[ -z "$why" ]
	check $? "flamegraph: formats/flamegraph.js parses as JavaScript" "$why"
fi

# A 300-frame recursion makes a page ~5,000 px tall with its roots at the
# bottom: the flamegraph, the differential one (same writer) and the
# icicle (roots on top) must each open with the roots in the first screen.
if [ ! -x build/tests/nofp/recursion ]; then
	skip "flamegraph: a deep one opens on its roots" "no build/tests/nofp/recursion (make check builds it)"
elif [ ! -x /usr/bin/chromium ] || [ ! -d build/npm/node_modules/playwright-core ]; then
	skip "flamegraph: a deep one opens on its roots" "no chromium or playwright-core (see the browser test above)"
else
	$TS record -q -r 200 --stack-bytes 256K -o "$TMP/deep.svg" -o "$TMP/deep.tsprof" -- build/tests/nofp/recursion 300 1
	$TS report -q "$TMP/deep.tsprof" --inverted -o "$TMP/deep-inverted.svg"
	$TS diff "$TMP/p.tsprof" "$TMP/deep.tsprof" -o "$TMP/deep-diff.svg" >/dev/null 2>"$TMP/diff.err"
	NODE_PATH=build/npm/node_modules timeout 120 node tests/browser/flamegraph_roots.js \
		"$TMP/deep.svg" "$TMP/deep-diff.svg" "$TMP/deep-inverted.svg"
fi

# By default the picture shows where the job's time goes: every thread's
# work and the training loop's waits (its data wait, its step time). A
# loop beside four helper threads and two worker processes idle
# throughout (tests/python/helpers_loop.py, as a PyTorch job has them):
# forward and backward, 5 of each 7-unit step, cover most of the page;
# the helpers' and workers' waits are left out (no "[idle threads]" root,
# as until issue 29 part 4, where they took ~85% of the page) and one
# line on stderr says how much; --idle brings them back, and a report of
# chosen threads (--thread) keeps their waits.
cat >"$TMP/hl.rules" <<'EOR'
data       load_batch
forward    model_forward
backward   model_backward
EOR
$TS record -r 500 --phases "$TMP/hl.rules" -o "$TMP/hl.svg" -o "$TMP/hl.folded" -o "$TMP/hl.tsprof" -- \
	"$PY" tests/python/helpers_loop.py 1.2 >/dev/null 2>"$TMP/hl.err"
rc=$?
$TS report -q --phases "$TMP/hl.rules" --idle "$TMP/hl.tsprof" -o "$TMP/hl-idle.svg" -o "$TMP/hl-idle.folded"
$TS report -q --phases "$TMP/hl.rules" --thread helper0 "$TMP/hl.tsprof" -o "$TMP/hl-h0.folded"
$TS report -q --phases "$TMP/hl.rules" --group-by phase "$TMP/hl.tsprof" -o "$TMP/hl-phase.svg"
python3 - "$TMP/hl.svg" "$TMP/hl-idle.svg" "$TMP/hl-phase.svg" >"$TMP/hl.check" 2>&1 <<'EOT'
import re, sys
def share(path):
    svg = open(path).read()
    frames = re.findall(r'<g class="f" data-x="\d+" data-w="(\d+)" data-d="\d+"><title>([^\n<]*)', svg)
    page = max(int(w) for w, _ in frames)
    fb = sum(int(w) for w, t in frames if t.startswith(("model_forward (", "model_backward (")))
    return 100.0 * fb / page, svg
default, svg = share(sys.argv[1])
every, _ = share(sys.argv[2])
print("forward+backward %.0f%% of the page, %.0f%% with --idle" % (default, every))
assert "[idle threads]" not in svg, "idle helpers shown"
assert default >= 55 and every <= 35, (default, every)
# --group-by phase: the loop's data, forward and backward roots each wide
# enough for its whole label on the 1200 px page (a window of 1400 px
# shows it all), without a click.
svg = open(sys.argv[3]).read()
page = int(re.search(r'<svg [^>]*width="(\d+)"', svg).group(1))
pad, cw = float(re.search(r'data-pad="([\d.]+)"', svg).group(1)), float(re.search(r'data-charwidth="([\d.]+)"', svg).group(1))
total = int(re.search(r'data-total="(\d+)"', svg).group(1))
roots = {t: int(w) * (page - 2 * pad) / total for w, t in
         re.findall(r'<g class="f" data-x="\d+" data-w="(\d+)" data-d="1"><title>(\[phase: [a-z]+\])', svg)}
print("phase roots (px): " + ", ".join("%s %.0f" % (t, w) for t, w in sorted(roots.items())))
for name in ("data", "forward", "backward"):
    label = "[phase: %s]" % name
    assert roots.get(label, 0) >= (len(label) + 1) * cw, (label, roots)
EOT
prc=$?
# Each condition by name, so a failure says which.
why=""
[ $rc -eq 0 ] || why="$why exit $rc;"
[ $prc -eq 0 ] || why="$why the picture's check;"
grep -q "load_batch (helpers_loop.py:[0-9]*);.*\[idle: " "$TMP/hl.folded" || why="$why no load_batch wait;"
# The workers wait in os.read at this line; the loop's own process may
# read too (its imports, under load), and its waits are kept.
wl=$(grep -n "os.read(r, 1)" tests/python/helpers_loop.py | cut -d: -f1)
! grep -q "main (helpers_loop.py:$wl);\[idle: read\]" "$TMP/hl.folded" ||
	why="$why a worker's read kept: $(grep "\[idle: read\]" "$TMP/hl.folded" | cut -c1-200 | tr '\n' '|');"
grep -q "main (helpers_loop.py:$wl);\[idle: read\]" "$TMP/hl-idle.folded" || why="$why no worker's read with --idle;"
grep -q "^trainsample: left out [0-9.]* s of idle threads' time.*(--idle keeps it)" "$TMP/hl.err" ||
	why="$why no 'left out' line;"
! grep -q "Thread.run (.*Event.wait (.*\[idle: " "$TMP/hl.folded" || why="$why a helper's wait kept;"
grep -q "Thread.run (.*Event.wait (.*\[idle: " "$TMP/hl-idle.folded" || why="$why no helper wait with --idle;"
grep -q "Thread.run (.*Event.wait (.*\[idle: " "$TMP/hl-h0.folded" || why="$why no helper wait with --thread;"
[ -z "$why" ]
check $? "flamegraph: by default every thread's work and the loop's waits: forward and backward most of the page, idle helpers and workers left out and counted on stderr; --idle (or --thread) keeps them" \
	"$why $(cat "$TMP/hl.check" | tail -3); $(grep 'left out' "$TMP/hl.err"); waits: $(grep -o '\[idle: [a-z_0-9]*\]' "$TMP/hl.folded" | sort | uniq -c | tr '\n' ' ')" \
	"$(head -2 "$TMP/hl.check" | tr "\n" " ")"
