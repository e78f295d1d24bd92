"""TabArena's task metadata as the ``tabarena`` package ships it (one row per split) beside the
legacy one row per dataset: the rows of the per-1K times, through ``load_csv`` and the
``leaderboard`` command, and every mistake named."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import arenalite
from arenalite.formats import join_task_metadata

DATA = Path(__file__).parent / "data"
SPLITS = DATA / "tabarena_tasks_metadata.csv"
"""Real rows of tabarena 0.1.0's TabArena-v0.1 and BeyondArena files (its .md says which)."""
RESULTS = DATA / "tabarena_results.csv"
TABARENA_NAMES = {"credit-g": "credit-g", "blood-transfusion": "blood-transfusion-service-center",
                  "diabetes-130": "Diabetes130US", "houses": "houses", "splice": "splice",
                  "wine-quality": "wine_quality"}
"""The results fixture's datasets → TabArena-v0.1's task names."""
V01 = {"credit-g": 1000, "blood-transfusion-service-center": 748, "Diabetes130US": 71518,
       "houses": 20640, "splice": 3190, "wine_quality": 6497}
"""TabArena-v0.1's tasks → num_instances: each of its splits has 2/3 of them (train), 1/3
(test)."""
BEYOND = {"coffee_rating_prediction-5ff37781e0a3": ((2137 + 1868 + 1581 + 1302 + 1045) / 5,
                                                    (232 + 269 + 287 + 279 + 257) / 5),
          "wine_quality-6ad3969edbaa": ((6 * 4331 + 3 * 4332) / 9, (6 * 2166 + 3 * 2165) / 9)}
"""BeyondArena's tasks → (train rows, test rows) by hand: its splits differ in size, and a
task's rows are their mean (TabArena's rule)."""


def task_rows() -> dict[str, tuple[float, float]]:
    """Task → (train rows, test rows): v0.1's count as ``read_csv`` reads it from the file
    (as TabArena reads it, its default float parser), BeyondArena's means by hand."""
    first = pd.read_csv(SPLITS).groupby("tabarena_task_name").first()
    v01 = {t: tuple(first.loc[t, ["num_instances_train", "num_instances_test"]]) for t in V01}
    return {**v01, **BEYOND}


ROWS = task_rows()
COUNTS = ["n_samples_train_per_fold", "n_samples_test_per_fold"]
PER_1K = ["time_train_s_per_1K", "time_infer_s_per_1K"]


def results(names: dict[str, str] = TABARENA_NAMES) -> pd.DataFrame:
    """The TabArena results fixture without its own row counts, datasets renamed."""
    frame = pd.read_csv(RESULTS).drop(columns=COUNTS)
    return frame.assign(dataset=frame["dataset"].map(names))


def load(frame: pd.DataFrame, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return arenalite.load_df(frame, **kwargs)


def by_hand(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    rows = {k: frame["dataset"].map({d: r[i] for d, r in ROWS.items()})
            for i, k in enumerate(("train", "infer"))}
    return {f"time_{k}_s_per_1K": (frame[f"time_{k}_s"] * 1000 / rows[k]).to_numpy()
            for k in ("train", "infer")}


def per_dataset() -> pd.DataFrame:
    """The legacy layout with the same counts: one row per task (``name``,
    ``n_samples_*_per_fold``), in another order than the results."""
    names = list(ROWS)[::-1]
    return pd.DataFrame({"tid": range(len(names)), "name": names,
                         "n_samples_train_per_fold": [ROWS[n][0] for n in names],
                         "n_samples_test_per_fold": [ROWS[n][1] for n in names]})


def test_fixture_has_the_shipped_layout():
    splits = pd.read_csv(SPLITS)
    assert splits.shape == (32, 47)
    assert {"dataset_name", "tabarena_task_name", "repeat", "fold", "num_instances_train",
            "num_instances_test", "split_index"} <= set(splits.columns)
    assert not {"name", *COUNTS} & set(splits.columns)  # none of the legacy layout's columns


def test_fixture_v01_rows_are_two_thirds_and_one_third_in_every_split():
    splits = pd.read_csv(SPLITS).iloc[:18]
    spread = splits.groupby("tabarena_task_name")[["num_instances_train",
                                                    "num_instances_test"]].nunique()
    assert (spread == 1).all().all()
    for task, n in V01.items():
        np.testing.assert_allclose(ROWS[task], (n * 2 / 3, n / 3), rtol=1e-15)


def test_rows_per_task_are_the_mean_over_its_splits():
    frame = pd.DataFrame({"dataset": list(ROWS)})
    joined = join_task_metadata(frame, "dataset", pd.read_csv(SPLITS))
    for i, column in enumerate(COUNTS):
        np.testing.assert_array_equal(joined[column], [r[i] for r in ROWS.values()])


def test_both_layouts_give_the_same_per_1k_columns():
    frame = results()
    new = load(frame, task_metadata=SPLITS)
    old = load(frame, task_metadata=per_dataset())
    for column, expected in by_hand(frame).items():
        np.testing.assert_array_equal(new.long_.loc[frame.index, column], expected)
        np.testing.assert_array_equal(old.long_.loc[frame.index, column], expected)
    new_table = new.leaderboard(n_bootstrap=0).table.set_index("model")
    old_table = old.leaderboard(n_bootstrap=0).table.set_index("model")
    for column in [*PER_1K, *(f"median_{c}" for c in PER_1K)]:
        np.testing.assert_array_equal(new_table[column], old_table[column])


def test_beyondarena_tasks_by_their_hashed_names():
    names = {"credit-g": "coffee_rating_prediction-5ff37781e0a3",
             "houses": "wine_quality-6ad3969edbaa"}
    frame = results(names).dropna(subset=["dataset"]).reset_index(drop=True)
    bench = load(frame, task_metadata=SPLITS)
    for column, expected in by_hand(frame).items():
        np.testing.assert_array_equal(bench.long_.loc[frame.index, column], expected)
    plain = results({"credit-g": "coffee_rating_prediction"}).dropna(subset=["dataset"])
    with pytest.raises(ValueError, match=r"no row for dataset\(s\) 'coffee_rating_prediction' "
                                         r".*; 'coffee_rating_prediction' is in its column "
                                         r"'dataset_name' \(task "
                                         r"'coffee_rating_prediction-5ff37781e0a3'\), but "
                                         r"TabArena matches the results' dataset to "
                                         r"'tabarena_task_name'"):
        load(plain, task_metadata=SPLITS)


def test_the_leaderboard_command_accepts_the_shipped_file(tmp_path, capsys):
    from arenalite.cli import main

    frame = results()
    frame.to_csv(tmp_path / "results.csv", index=False)
    frame = pd.read_csv(tmp_path / "results.csv")  # the times as the command reads them
    out = tmp_path / "out"
    assert main(["leaderboard", str(tmp_path / "results.csv"), "--task-metadata", str(SPLITS),
                 "--n-bootstrap", "0", "-o", str(out)]) == 0
    capsys.readouterr()
    table = pd.read_csv(out / "leaderboard.csv", float_precision="round_trip").set_index("model")
    folds = frame.assign(**by_hand(frame)).groupby(["method", "dataset"])[PER_1K].mean()
    for column in PER_1K:
        by_model = folds[column].groupby(level="method")
        models = sorted(by_model.groups)
        np.testing.assert_array_equal(table[column].loc[models], by_model.mean().loc[models])
        np.testing.assert_array_equal(table[f"median_{column}"].loc[models],
                                      by_model.median().loc[models])
    # the fixture's own counts (90 % / 10 % folds) disagree with TabArena's 2/3 and 1/3
    pd.read_csv(RESULTS).assign(dataset=results()["dataset"]).to_csv(tmp_path / "own.csv",
                                                                      index=False)
    assert main(["leaderboard", str(tmp_path / "own.csv"), "--task-metadata", str(SPLITS),
                 "--n-bootstrap", "0", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert ("column 'n_samples_train_per_fold' of the results has 900 in row 0 (dataset "
            "'credit-g'), but --task-metadata says 666.6666666666666, the mean of "
            "'num_instances_train' over the 3 split(s) of that task; drop one of them") in err


def test_a_frame_with_both_layouts_is_read_per_split():
    """TabArena's ``to_dataframe(add_old_minimal_metadata=True)``: per split, with ``name`` and
    ``n_samples_*_per_fold`` equal to that split's counts."""
    splits = pd.read_csv(SPLITS)
    both = splits.assign(name=splits["tabarena_task_name"],
                         n_samples_train_per_fold=splits["num_instances_train"],
                         n_samples_test_per_fold=splits["num_instances_test"])
    frame = pd.DataFrame({"dataset": list(ROWS)})
    joined = join_task_metadata(frame, "dataset", both)
    np.testing.assert_array_equal(joined["n_samples_train_per_fold"],
                                  [r[0] for r in ROWS.values()])


def test_keyed_by_dataset_name_without_a_task_name_and_a_split_twice_alike():
    splits = pd.read_csv(SPLITS).drop(columns="tabarena_task_name").iloc[:23]  # no BeyondArena
    twice = pd.concat([splits, splits.iloc[[18]]])  # wine_quality; a coffee split again, alike
    frame = pd.DataFrame({"dataset": ["credit-g", "coffee_rating_prediction"]})
    joined = join_task_metadata(frame, "dataset", twice)
    np.testing.assert_array_equal(joined["n_samples_test_per_fold"],
                                  [ROWS["credit-g"][1], 264.8])


def _edit(column, value, row=0):
    def edit(m):
        m = m.copy()
        m[column] = m[column].astype(object)
        m.loc[row, column] = value
        return m
    return edit


@pytest.mark.parametrize("edit, match", [
    (lambda m: m.drop(columns=["fold", "num_instances_test"]),
     r"task_metadata has neither layout of TabArena's task metadata: as one row per dataset it "
     r"lacks the column\(s\) 'name' \(or 'dataset'\), 'n_samples_train_per_fold', "
     r"'n_samples_test_per_fold'; as one row per split \(TabArena's "
     r"<suite>_tasks_metadata.csv\) it lacks 'fold', 'num_instances_test'; its columns are "
     r"\['dataset_name', "),
    (lambda m: m.drop(columns=["tabarena_task_name", "dataset_name"]),
     r"as one row per split .* it lacks 'tabarena_task_name' \(or 'dataset_name'\); "),
    (lambda m: pd.concat([m, m.iloc[[19]].assign(num_instances_train=1900)],
                         ignore_index=True),
     r"task_metadata lists split repeat 1, fold 0 of task "
     r"'coffee_rating_prediction-5ff37781e0a3' \(column 'tabarena_task_name'\) more than once "
     r"with different 'num_instances_train': 1868.0 \(row 19\), 1900.0 \(row 32\); one row "
     r"per split"),
    (_edit("num_instances_test", 0, 4),
     r"task_metadata column 'num_instances_test' has the row count 0 in row 4 \(task "
     r"'blood-transfusion-service-center'\); per-1K times need row counts > 0"),
    (_edit("num_instances_train", "many", 2),
     r"task_metadata column 'num_instances_train' holds row counts, but has the non-numeric "
     r"value 'many' in row 2"),
    (_edit("fold", np.nan, 20),
     r"task_metadata column 'fold' has nan in row 20 \(task "
     r"'coffee_rating_prediction-5ff37781e0a3'\); every split row needs its 'repeat' and "
     r"'fold'"),
    (_edit("tabarena_task_name", None, 3),
     r"task_metadata column 'tabarena_task_name' has a missing task name in row 3"),
])
def test_per_split_mistakes_name_the_culprit(edit, match):
    with pytest.raises(ValueError, match=match):
        load(results(), task_metadata=edit(pd.read_csv(SPLITS)))
