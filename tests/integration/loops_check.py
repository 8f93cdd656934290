# SPDX-License-Identifier: MIT
# Checks summary.json against the loop's own clock (tests/python/train_cnn.py's
# "truth" line): the training loader gets the steps, the validation loader
# none; validation is eval, its share of the loop within 5 points of the
# loop's own; one epoch (training passes only); the metrics under each
# loader's own split. Prints what it measured, and each failure; exits 1
# on any.
#   loops_check.py SUMMARY.json TRUTH.txt
import json
import re
import sys

summary, truth_file = sys.argv[1], sys.argv[2]
text = open(truth_file).read()
if "truth" not in text:
    print("the program printed no truth line: " + text[-300:])
    sys.exit(1)
truth = {k: float(v) for k, v in re.findall(r"(\w+) ([\d.]+)", text.split("truth", 1)[1])}
d = json.load(open(summary))
p = d["processes"][0]
loop = p.get("loop") or {}
st = loop.get("steps")
bad = []
if not st:
    print("no steps counted: %s" % json.dumps(loop)[:400])
    sys.exit(1)
phases = loop["phases"]
in_loop = 1 - phases["startup"]
eval_share = 100 * phases["eval"] / in_loop
true_share = 100 * truth["val_s"] / truth["loop_s"]
loaders = {l["name"]: l for l in loop.get("loaders", [])}
metrics = loop.get("metrics", {})
steps = int(truth["steps"])
print("eval %.1f%% of the loop (its own clock %.1f%%), %d passes; steps %d (%d); epochs %d; "
      "loaders %s; step forward %.1f ms (%.1f)" % (
          eval_share, true_share, st["eval_passes"], st["count"], steps, st["epochs"],
          sorted((n, l["train_steps"], l["val_batches"]) for n, l in loaders.items()),
          st["phase_ms"]["forward"], truth["forward_ms"]))
if abs(eval_share - true_share) > 5:
    bad.append("eval %.1f%% against %.1f%%" % (eval_share, true_share))
if not steps - 2 <= st["count"] <= steps:
    bad.append("%d steps counted of %d" % (st["count"], steps))
if st["epochs"] != 1:
    bad.append("%d epochs, not 1" % st["epochs"])
train = loaders.get("train_loader")
if not train or train["train_steps"] < steps - 3:
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
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
