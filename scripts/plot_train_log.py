"""Plot tabular_fm's training log: the loss per step, classification and regression apart.

    python scripts/plot_train_log.py build/tfm/train_log.csv docs/training/

copies the log to ``docs/training/tabular_fm_train_log.csv`` (one row per step: a resumed run
logs the steps after its checkpoint again, and the later row is kept) and draws
``docs/training/tabular_fm_loss.png``: training loss (mean over the logging window) and the
held-out prior validation loss, cross entropy for classification tasks and Gaussian NLL of the
standardized target for regression tasks.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def main(argv: list[str]) -> int:
    log, out = Path(argv[0]), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.read_csv(log).drop_duplicates("step", keep="last").sort_values("step")
    frame.to_csv(out / "tabular_fm_train_log.csv", index=False)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharex=True)
    for ax, kind, title in ((axes[0], "cls", "classification: cross entropy"),
                            (axes[1], "reg", "regression: Gaussian NLL (standardized y)")):
        train = frame[["step", f"train_loss_{kind}"]].dropna()
        val = frame[["step", f"val_loss_{kind}"]].dropna()
        ax.plot(train["step"], train[f"train_loss_{kind}"].rolling(10, min_periods=1).mean(),
                color="#0072B2", label="training (rolling mean of 10 windows)")
        ax.plot(val["step"], val[f"val_loss_{kind}"], "o-", color="#D55E00",
                label="held-out prior tasks")
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"tabular_fm training on the synthetic prior ({int(frame['step'].max())} steps, "
                 f"{frame['minutes'].max():.0f} min on 2 CPU cores)")
    fig.tight_layout()
    fig.savefig(out / "tabular_fm_loss.png", dpi=120)
    print(f"wrote {out / 'tabular_fm_train_log.csv'} and {out / 'tabular_fm_loss.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
