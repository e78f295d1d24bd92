"""Plot tabular_fm's training log across its runs: loss, validation and the lr schedule.

    python scripts/plot_train_log.py build/tfm4/train_log.csv docs/training/ --run 4

copies the log to ``docs/training/tabular_fm_train_log_run4.csv`` (one row per step: a
resumed run logs the steps after its checkpoint again, and the later row is kept) and draws
``docs/training/tabular_fm_loss.png`` from every run's log on one axis of updates: runs 1–2
(``tabular_fm_train_log_runs1-2.csv``, the 3,446 steps of the weights that run 3 started
from), then run 3 (``tabular_fm_train_log_run3.csv``) and run 4
(``tabular_fm_train_log_run4.csv``, resumed from run 3's last checkpoint: its steps go on
from run 3's 460): training loss (mean over the logging window), the held-out prior
validation (runs 1–2: 12 batches of their prior; runs 3–4: the 256 fixed tasks of
``train_tfm.validation_tasks`` of the prior each run trained on — prior 3 for run 3, prior 4
for run 4 — weights and EMA), cross entropy for classification and Gaussian NLL of the
standardized target for regression, and the learning rate of every update.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

PREVIOUS = "tabular_fm_train_log_runs1-2.csv"
PREVIOUS_STEPS = 3446  # runs 1–2 ended there (their log has every 10th step)
START = {"cls": 1.3856, "reg": 1.3699}  # the runs 1–2 weights on run 3's 256 fixed tasks
COLOURS = {3: ("#0072B2", "#D55E00", "#009E73"), 4: ("#56B4E9", "#CC79A7", "#E69F00")}
PRIORS = {3: "prior 3", 4: "prior 4"}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--run", type=int, default=4)
    args = ap.parse_args(argv)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.read_csv(args.log).drop_duplicates("step", keep="last").sort_values("step")
    frame.to_csv(out / f"tabular_fm_train_log_run{args.run}.csv", index=False)
    runs = {}
    for run in sorted(COLOURS):
        path = out / f"tabular_fm_train_log_run{run}.csv"
        if path.exists():
            runs[run] = pd.read_csv(path)
    prev_path = out / PREVIOUS
    prev = pd.read_csv(prev_path) if prev_path.exists() else None
    offset = PREVIOUS_STEPS if prev is not None else 0
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5), sharex=True)
    for ax, kind, title in ((axes[0], "cls", "classification: cross entropy"),
                            (axes[1], "reg", "regression: Gaussian NLL (standardized y)")):
        if prev is not None:
            tr = prev[["step", f"train_loss_{kind}"]].dropna()
            ax.plot(tr["step"], tr[f"train_loss_{kind}"].rolling(10, min_periods=1).mean(),
                    color="#999999", label="runs 1–2 training")
            va = prev[["step", f"val_loss_{kind}"]].dropna()
            ax.plot(va["step"], va[f"val_loss_{kind}"], "s-", color="#555555", ms=3,
                    label="runs 1–2 validation (their batches)")
        for run, fr in runs.items():
            c_train, c_val, c_ema = COLOURS[run]
            tr = fr[["step", f"train_loss_{kind}"]].dropna()
            ax.plot(tr["step"] + offset,
                    tr[f"train_loss_{kind}"].rolling(10, min_periods=1).mean(),
                    color=c_train, label=f"run {run} training (rolling mean of 10 windows)")
            col = "val_ce" if kind == "cls" else "val_nll"
            for prefix, colour, name in (("", c_val, "weights"), ("ema_", c_ema, "EMA")):
                va = fr[["step", prefix + col]].dropna()
                ax.plot(va["step"] + offset, va[prefix + col], "o-", color=colour, ms=4,
                        label=f"run {run} validation, 256 tasks of {PRIORS[run]} ({name})")
        if prev is not None:
            ax.axhline(START[kind], color="#D55E00", ls=":", lw=1,
                       label="runs 1–2 weights on run 3's 256 tasks")
        ax.set_title(title)
        ax.set_xlabel("update")
        ax.set_ylabel("loss")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=6)
    if prev is not None:
        axes[2].plot(prev["step"], prev["lr"], color="#999999",
                     label="runs 1–2 (cosine in minutes)")
    for run, fr in runs.items():
        axes[2].plot(fr["step"] + offset, fr["lr"], color=COLOURS[run][0],
                     label=f"run {run} (warm-up / hold / decay in steps)")
    axes[2].set_title("learning rate")
    axes[2].set_xlabel("update")
    axes[2].set_yscale("log")
    axes[2].grid(alpha=0.3)
    axes[2].legend(fontsize=7)
    parts = [f"runs 1–2 ({offset} steps)"]
    for run, fr in runs.items():
        first = int(fr["step"].min()) - 10 if run > 3 else 0
        parts.append(f"run {run} (updates {first}–{int(fr['step'].max())})")
    fig.suptitle("tabular_fm training: " + ", ".join(parts)
                 + "; runs 3–4: ≥ 32 tasks per update on 1 CPU core")
    fig.tight_layout()
    fig.savefig(out / "tabular_fm_loss.png", dpi=110)
    print(f"wrote {out / f'tabular_fm_train_log_run{args.run}.csv'} and "
          f"{out / 'tabular_fm_loss.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
