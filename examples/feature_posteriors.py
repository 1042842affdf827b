"""Watch the averaged models discover which features matter, record by record.

River's LED stream has 7 segments that encode a digit and 17 irrelevant ones. The posterior
probability that each feature is used rises to 1 for the segments and falls to 0 for the
others. Run: python examples/feature_posteriors.py [N_RECORDS] (writes feature_posteriors.png
when matplotlib is installed).
"""

import sys

from river.datasets import synth

from onlinebma.naive_bayes import BMANB, ModelAveragedNB

n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
stream = synth.LED(seed=42, noise_percentage=0.1, irrelevant_features=True)
features = [str(i) for i in range(24)]
models = {"ModelAveragedNB": ModelAveragedNB(), "BMANB (gamma=1.05)": BMANB(gamma=1.05)}
checkpoints = sorted({int(n * k / 20) for k in range(1, 21)})
history = {name: [] for name in models}
for i, (x, y) in enumerate(stream.take(n), 1):
    x = {str(k): str(v) for k, v in x.items()}  # segments are on/off categories
    for name, model in models.items():
        model.learn_one(x, y)
        if i in checkpoints:
            history[name].append(model.feature_posteriors())

for name, snaps in history.items():
    last = snaps[-1]
    relevant = features[:7]
    print(f"{name}: after {n} records, P(used) of the 7 segments:",
          [round(last[f], 2) for f in relevant],
          "| largest P(used) among the 17 irrelevant:",
          round(max(last[f] for f in features[7:]), 3))

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, axes = plt.subplots(1, len(models), figsize=(11, 4), sharey=True)
for ax, (name, snaps) in zip(axes, history.items()):
    for f in features:
        ax.plot(checkpoints, [s[f] for s in snaps], color="C0" if int(f) < 7 else "C3",
                alpha=0.8 if int(f) < 7 else 0.4)
    ax.set_title(name)
    ax.set_xlabel("records")
axes[0].set_ylabel("P(feature used | data)")
axes[0].plot([], [], color="C0", label="segment (relevant)")
axes[0].plot([], [], color="C3", label="irrelevant")
axes[0].legend()
fig.savefig("feature_posteriors.png", dpi=150, bbox_inches="tight")
print("wrote feature_posteriors.png")
