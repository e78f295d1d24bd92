"""Plot tabular_fm's training log across its runs: loss, validation and the lr schedule.

    python scripts/plot_train_log.py build/tfm3/train_log.csv docs/training/

copies the log to ``docs/training/tabular_fm_train_log.csv`` (one row per step: a resumed run
logs the steps after its checkpoint again, and the later row is kept) and draws
``docs/training/tabular_fm_loss.png`` with the earlier runs' log
(``docs/training/tabular_fm_train_log_runs1-2.csv``, the 3,446 steps of the weights that run 3
started from) in front of it, on one axis of updates: training loss (mean over the logging
window), the held-out prior validation (runs 1–2: 12 batches of their prior; run 3: the 256
fixed tasks of ``train_tfm.validation_tasks``, weights and EMA), cross entropy for
classification and Gaussian NLL of the standardized target for regression, and the learning
rate of every update.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

PREVIOUS = "tabular_fm_train_log_runs1-2.csv"
PREVIOUS_STEPS = 3446  # runs 1–2 ended there (their log has every 10th step)
START = {"cls": 1.3856, "reg": 1.3699}  # the runs 1–2 weights on run 3's 256 fixed tasks


def main(argv: list[str]) -> int:
    log, out = Path(argv[0]), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.read_csv(log).drop_duplicates("step", keep="last").sort_values("step")
    frame.to_csv(out / "tabular_fm_train_log.csv", index=False)
    prev_path = out / PREVIOUS
    prev = pd.read_csv(prev_path) if prev_path.exists() else None
    offset = PREVIOUS_STEPS if prev is not None else 0
    fig, axes = plt.subplots(1, 3, figsize=(15, 4), sharex=True)
    for ax, kind, title in ((axes[0], "cls", "classification: cross entropy"),
                            (axes[1], "reg", "regression: Gaussian NLL (standardized y)")):
        if prev is not None:
            tr = prev[["step", f"train_loss_{kind}"]].dropna()
            ax.plot(tr["step"], tr[f"train_loss_{kind}"].rolling(10, min_periods=1).mean(),
                    color="#999999", label="runs 1–2 training")
            va = prev[["step", f"val_loss_{kind}"]].dropna()
            ax.plot(va["step"], va[f"val_loss_{kind}"], "s-", color="#555555", ms=3,
                    label="runs 1–2 validation (their batches)")
        tr = frame[["step", f"train_loss_{kind}"]].dropna()
        ax.plot(tr["step"] + offset, tr[f"train_loss_{kind}"].rolling(10, min_periods=1).mean(),
                color="#0072B2", label="run 3 training (rolling mean of 10 windows)")
        col = "val_ce" if kind == "cls" else "val_nll"
        for prefix, colour, name in (("", "#D55E00", "weights"), ("ema_", "#009E73", "EMA")):
            va = frame[["step", prefix + col]].dropna()
            ax.plot(va["step"] + offset, va[prefix + col], "o-", color=colour, ms=4,
                    label=f"run 3 validation, 256 fixed tasks ({name})")
        if prev is not None:
            ax.axhline(START[kind], color="#D55E00", ls=":", lw=1,
                       label="runs 1–2 weights on run 3's 256 tasks")
        ax.set_title(title)
        ax.set_xlabel("update")
        ax.set_ylabel("loss")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    if prev is not None:
        axes[2].plot(prev["step"], prev["lr"], color="#999999",
                     label="runs 1–2 (cosine in minutes)")
    axes[2].plot(frame["step"] + offset, frame["lr"], color="#0072B2",
                 label="run 3 (warm-up / hold / decay in steps)")
    axes[2].set_title("learning rate")
    axes[2].set_xlabel("update")
    axes[2].set_yscale("log")
    axes[2].grid(alpha=0.3)
    axes[2].legend(fontsize=7)
    fig.suptitle(f"tabular_fm training: runs 1–2 ({offset} steps), run 3 warm-started from them "
                 f"({int(frame['step'].max())} updates of ≥ 32 tasks, "
                 f"{frame['minutes'].max():.0f} min on 1 CPU core)")
    fig.tight_layout()
    fig.savefig(out / "tabular_fm_loss.png", dpi=110)
    print(f"wrote {out / 'tabular_fm_train_log.csv'} and {out / 'tabular_fm_loss.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
