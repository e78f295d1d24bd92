"""Coverage of the 95 % intervals: Elo's three resampling schemes and the IQM's two.

Run ``python bench/bench_coverage.py`` (``--help`` for options); it prints a markdown
table and writes it to ``bench/coverage.md``.

Generator (accuracy-like scores, 8 models, 5 seeds per dataset):

    score = 0.8 + dataset difficulty + model ability + model × dataset effect + seed noise

with abilities evenly spaced over ±0.03, difficulty ~ N(0, 0.04), seed noise ~ N(0, σ_s)
and the per-dataset model effect ~ N(0, σ_e). Two scenarios: with a per-dataset effect
(σ_e = σ_s = 0.02) and without one (σ_e = 0, σ_s = 0.028: the same total noise).
Normalization uses fixed references (0 and 1), so it does not depend on the suite.

The population value of each model (its Elo rating, its IQM) is computed once per
scenario on a very large suite from the same generator (20,000 datasets). Then, for
each suite size, ``--reps`` suites are drawn and every method's 95 % interval is checked
against the population value of every model; coverage = share of (suite, model) pairs
covered. The question is "on datasets like these": only an interval that resamples
datasets can answer it when models are better on some datasets than on others.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import arenalite

HERE = Path(__file__).resolve().parent
N_MODELS = 8
N_SEEDS = 5
POPULATION_DATASETS = 20_000
SCENARIOS = {"per-dataset effect": (0.02, 0.02), "no per-dataset effect": (0.0, 0.02 * 2**0.5)}
SCHEMES = ("battle", "split", "dataset")
IQM_SCHEMES = {"iqm": "seed", "iqm-dataset": "dataset"}
LABELS = {"iqm": "IQM seed", "iqm-dataset": "IQM dataset"}
ABILITY = np.linspace(-0.03, 0.03, N_MODELS)


def suite(n_datasets: int, effect: float, noise: float, rng: np.random.Generator,
          n_seeds: int = N_SEEDS) -> pd.DataFrame:
    """A long score table of ``n_datasets`` datasets drawn from the generator."""
    difficulty = rng.normal(0.0, 0.04, (1, n_datasets, 1))
    per_dataset = rng.normal(0.0, effect, (N_MODELS, n_datasets, 1)) if effect else 0.0
    seed_noise = rng.normal(0.0, noise, (N_MODELS, n_datasets, n_seeds))
    score = np.clip(0.8 + ABILITY[:, None, None] + difficulty + per_dataset + seed_noise, 0, 1)
    m, d, s = np.meshgrid(np.arange(N_MODELS), np.arange(n_datasets), np.arange(n_seeds),
                          indexing="ij")
    return pd.DataFrame({"model": np.char.add("m", m.ravel().astype(str)),
                         "dataset": np.char.add("d", d.ravel().astype(str)),
                         "seed": s.ravel(), "metric": "accuracy", "score": score.ravel()})


def load(frame: pd.DataFrame) -> arenalite.Benchmark:
    return arenalite.load_df(frame, seed="seed", norm_ref_low=0.0, norm_ref_high=1.0)


def population(effect: float, noise: float) -> dict[str, pd.Series]:
    """Population Elo and IQM per model, from one very large suite."""
    bench = load(suite(POPULATION_DATASETS, effect, noise, np.random.default_rng(12345)))
    elo = bench.elo_ranking(n_bootstrap=0).table.set_index("model")["ELO"]
    iqm = bench.iqm_ranking(n_bootstrap=1, random_state=0,
                            resampling="seed").table.set_index("model")["IQM"]
    return {"elo": elo, "iqm": iqm}


def covered(table: pd.DataFrame, truth: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Per model: whether [CI_low, CI_high] holds the population value, and the width."""
    t = table.set_index("model").loc[truth.index]
    hit = (t["CI_low"] <= truth) & (truth <= t["CI_high"])
    return hit.to_numpy(), (t["CI_high"] - t["CI_low"]).to_numpy()


def run(sizes: list[int], reps: int, n_bootstrap: int,
        seeds: tuple[int, ...] = (N_SEEDS,)) -> tuple[pd.DataFrame, dict[str, float]]:
    """Coverage rows per scenario, seeds per dataset and suite size. With one seed the
    IQM's seed bootstrap has nothing to resample ("–")."""
    rows = []
    seconds = dict.fromkeys((*SCHEMES, *IQM_SCHEMES), 0.0)
    cells = [(sc, n_seeds, size) for sc in SCENARIOS for n_seeds in seeds for size in sizes]
    truths = {sc: population(*SCENARIOS[sc]) for sc in SCENARIOS}
    for scenario, n_seeds, n_datasets in cells:
        effect, noise = SCENARIOS[scenario]
        truth = truths[scenario]
        rng = np.random.default_rng(n_datasets + 1000 * (n_seeds != N_SEEDS))
        keys = [k for k in seconds if n_seeds > 1 or k != "iqm"]
        hits: dict[str, list] = {k: [] for k in keys}
        widths: dict[str, list] = {k: [] for k in keys}
        for rep in range(reps):
            bench = load(suite(n_datasets, effect, noise, rng, n_seeds))
            for key in keys:
                start = time.perf_counter()
                if key in IQM_SCHEMES:
                    table = bench.iqm_ranking(n_bootstrap=n_bootstrap, random_state=rep,
                                              resampling=IQM_SCHEMES[key]).table
                else:
                    table = bench.elo_ranking(n_bootstrap=n_bootstrap, random_state=rep,
                                              resampling=key).table
                seconds[key] += time.perf_counter() - start
                hit, width = covered(table, truth["iqm" if key in IQM_SCHEMES else "elo"])
                hits[key].append(hit)
                widths[key].append(width)
        row = {"scenario": scenario, "seeds": n_seeds, "datasets": n_datasets}
        for key in seconds:
            label = LABELS.get(key, f"Elo {key}")
            row[label] = (f"{100 * np.mean(hits[key]):.0f} % "
                          f"({np.mean(widths[key]):.3g})" if key in hits else "–")
        rows.append(row)
        print(pd.DataFrame([row]).to_string(index=False, header=len(rows) == 1), flush=True)
    return pd.DataFrame(rows), seconds


def markdown(table: pd.DataFrame) -> str:
    head = "| " + " | ".join(table.columns) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    body = ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=60, help="suites per cell (default 60)")
    parser.add_argument("--n-bootstrap", type=int, default=500,
                        help="replicates per interval (default 500)")
    parser.add_argument("--sizes", default="10,30,100",
                        help="datasets per suite (default 10,30,100)")
    parser.add_argument("--seeds", default="5,1",
                        help="seeds per dataset, one set of rows each (default 5,1)")
    parser.add_argument("--out", default=str(HERE / "coverage.md"), help="markdown output file")
    args = parser.parse_args(argv)
    sizes = [int(v) for v in args.sizes.split(",")]
    seeds = tuple(int(v) for v in args.seeds.split(","))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table, seconds = run(sizes, args.reps, args.n_bootstrap, seeds)
    total = time.perf_counter() - start
    note = (f"Coverage of 95 % intervals of {N_MODELS} models' population values; cells: "
            f"coverage (mean interval width: Elo points, IQM normalized units). "
            f"{args.reps} suites per row, {args.n_bootstrap} bootstrap replicates each, "
            f"seeds per dataset as in the column; {total:.0f} s in all. Seconds spent per method: "
            + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items()) + ".")
    text = markdown(table) + "\n\n" + note + "\n"
    print("\n" + text)
    Path(args.out).write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
