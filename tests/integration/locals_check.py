# Checks dump --locals outputs of tests/python/locals.py (test_locals.sh):
#   locals_check.py TEXT JSON NATIVE_TEXT PLAIN_TEXT CHURN_TEXT...
# Prints what it found; exits 1 with the first mismatch.
import json
import sys

KNOWN = [
    ("small", "int", "42"),
    ("big", "int", str(2 ** 100)),
    ("huge", "int", "<int of 401 bits>"),
    ("negative", "int", "-7"),
    ("zero", "int", "0"),
    ("ratio", "float", "3.14"),
    ("flag", "bool", "True"),
    ("off", "bool", "False"),
    ("nothing", "NoneType", "None"),
    ("text", "str", "'hello\\n\\'world\\'\\t\\\\'"),
    ("accented", "str", "'h\u00e9llo w\u00f6rld \u20ac'"),
    ("emoji", "str", "'\U0001f600!'"),
    ("long_text", "str", "'" + "x" * 100 + "'... (10485760 characters)"),
    ("data", "bytes", "<bytes of length 5>"),
    ("items", "list", "<list of length 3>"),
    ("pair", "tuple", "<tuple of length 2>"),
    ("table", "dict", "<dict of length 2>"),
    ("bag", "set", "<set of length 4>"),
    ("loop", "list", "<list of length 1>"),
    ("widget", "Widget", "<Widget object>"),
    ("inner", "function", "<function object>"),
    ("captured", "str", "'cell value'"),
]
# numpy's arrays, where the target could import numpy (else all three None)
NUMPY = [
    ("grid", "numpy.ndarray", "<ndarray float64 (3, 4)>"),
    ("row", "numpy.ndarray", "<ndarray int32 (3,)>"),
    ("point", "numpy.ndarray", "<ndarray float32 ()>"),
]
INNER = [("seen", "str", "'cell value'"), ("captured", "str", "'cell value'")]
CHURN = {"n = 7", "a = 7", "b = 'churn'", "c = <list of length 2>"}
CHURNER = {"total = 0", "total = 14"}
MARKER = "<locals unreadable>"


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def text_frames(path):
    """[(thread line, frame line, [local lines])] of a text dump."""
    out, thread = [], None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("Thread "):
            thread = line
        elif line.startswith("        "):
            if not out:
                fail("a local before any frame: %r" % line)
            out[-1][2].append(line.strip())
        elif line.startswith("    "):
            out.append((thread, line.strip(), []))
    return out


def frame(frames, prefix):
    for f in frames:
        if f[1].startswith(prefix):
            return f
    fail("no frame %r in %s" % (prefix, [f[1] for f in frames]))


def is_inner(name):
    return name == "inner" or name.endswith(".inner")


def with_numpy(got_lines):
    """KNOWN, and NUMPY unless the target had no numpy."""
    if "grid = None" in got_lines:
        return KNOWN
    return KNOWN + NUMPY


def check_text(path):
    frames = text_frames(path)
    got = frame(frames, "known (")[2]
    global KNOWN_HERE
    KNOWN_HERE = with_numpy(got)
    for name, _, value in KNOWN_HERE:
        want = "%s = %s" % (name, value)
        if want not in got:
            fail("known: %r missing from %s" % (want, got))
    inner = [f for f in frames if is_inner(f[1].split(" (")[0])]
    if not inner:
        fail("no inner frame")
    for name, _, value in INNER:
        if "%s = %s" % (name, value) not in inner[0][2]:
            fail("inner: %s = %s missing from %s" % (name, value, inner[0][2]))
    return frames


def check_json(path):
    d = json.load(open(path, encoding="utf-8"))
    fr = [f for t in d["threads"] for f in t["frames"]]
    known = [f for f in fr if f["name"] == "known"]
    if not known:
        fail("no known frame in the JSON")
    got = {v["name"]: (v["type"], v["value"]) for v in known[0]["locals"]}
    for name, typ, value in KNOWN_HERE:
        if got.get(name) != (typ, value):
            fail("JSON known: %s is %r, not %r" % (name, got.get(name), (typ, value)))
    inner = [f for f in fr if is_inner(f["name"])]
    got = {v["name"]: (v["type"], v["value"]) for v in inner[0]["locals"]}
    for name, typ, value in INNER:
        if got.get(name) != (typ, value):
            fail("JSON inner: %s is %r" % (name, got.get(name)))
    if any("locals" in f for f in fr if f["kind"] != "python"):
        fail("locals on a native frame")


def check_churn(path, counts):
    """The churning thread's frames: their locals as they were, or the marker."""
    for thread, line, local in text_frames(path):
        if '"churner"' not in thread:
            continue
        name = line.split(" (")[0]
        allowed = CHURN if name == "churn" else CHURNER if name == "churner" else None
        if allowed is None:
            continue
        counts[name] = counts.get(name, 0) + 1
        for v in local:
            if v == MARKER:
                counts["marker"] = counts.get("marker", 0) + 1
            elif v not in allowed:
                fail("%s: %r is not one of %s (%s)" % (name, v, sorted(allowed), path))


text, js, native, plain = sys.argv[1:5]
check_text(text)
check_json(js)
nf = text_frames(native)
if "small = 42" not in frame(nf, "known (")[2]:
    fail("--native: known's locals missing")
if any(f[2] for f in text_frames(plain)):
    fail("locals printed without --locals")
counts = {}
for path in sys.argv[5:]:
    check_churn(path, counts)
print("churn frames %d, churner frames %d, markers %d, numpy arrays %s" %
      (counts.get("churn", 0), counts.get("churner", 0), counts.get("marker", 0),
       "checked" if KNOWN_HERE != KNOWN else "absent"))
