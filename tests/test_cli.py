"""The command line: tables, figures and the HTML report written to --output."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from arenalite.cli import main, read_config


@pytest.fixture
def seeded_csv(tmp_path, seeded):
    path = tmp_path / "results.csv"
    seeded.to_csv(path, index=False)
    return path


def test_aggregate_writes_table_and_figure(tmp_path, seeded_csv, capsys):
    out = tmp_path / "out"
    assert main(["aggregate", str(seeded_csv), "--seed", "seed", "--norm-ref-low", "0",
                 "--norm-ref-high", "1", "-o", str(out)]) == 0
    table = pd.read_csv(out / "aggregate.csv")
    assert list(table.columns) == ["model", "score"]
    assert list(table["model"]) == ["A", "B", "C"]
    assert (out / "aggregate.png").stat().st_size > 1000
    assert "A" in capsys.readouterr().out


def test_elo_uses_bootstrap_options(tmp_path, seeded_csv):
    out = tmp_path / "out"
    assert main(["elo", str(seeded_csv), "--seed", "seed", "--norm-ref-low", "0",
                 "--norm-ref-high", "1", "--n-bootstrap", "50", "-o", str(out)]) == 0
    table = pd.read_csv(out / "elo.csv")
    assert list(table.columns) == ["model", "ELO", "CI_low", "CI_high"]
    assert (table["CI_low"] <= table["ELO"]).all() and (table["ELO"] <= table["CI_high"]).all()


def test_config_file_gives_load_options(tmp_path, seeded):
    renamed = seeded.rename(columns={"model": "backbone", "score": "value"})
    csv = tmp_path / "r.csv"
    renamed.to_csv(csv, index=False)
    config = tmp_path / "load.yaml"
    config.write_text("model: backbone  # the model column\nscore: value\nseed: seed\n"
                      "norm_ref_low: 0\nnorm_ref_high: 1.0\n")
    out = tmp_path / "out"
    assert main(["rank", str(csv), "--config", str(config), "-o", str(out)]) == 0
    assert "rank_spread" in pd.read_csv(out / "compare.csv").columns


def test_read_config_json_and_yaml(tmp_path):
    j = tmp_path / "c.json"
    j.write_text(json.dumps({"seed": "Seed", "metric_direction": {"d": "min"}}))
    assert read_config(j) == {"seed": "Seed", "metric_direction": {"d": "min"}}
    y = tmp_path / "c.yaml"
    y.write_text("seed: Seed\ndrop_incomplete: true\nnorm_ref_low: ~\n"
                 "metric_direction: {\"d\": \"min\"}\n")
    assert read_config(y) == {"seed": "Seed", "drop_incomplete": True, "norm_ref_low": None,
                              "metric_direction": {"d": "min"}}


def test_nested_yaml_is_rejected_with_line_number(tmp_path):
    y = tmp_path / "c.yaml"
    y.write_text("metric_direction:\n  d: min\n")
    with pytest.raises(ValueError, match="line 2"):
        read_config(y)


def test_unknown_config_option_is_an_error(tmp_path, seeded_csv):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"modle": "model"}))
    with pytest.raises(ValueError, match="modle"):
        main(["aggregate", str(seeded_csv), "--config", str(config), "-o", str(tmp_path)])


def test_report_writes_self_contained_html(tmp_path, seeded_csv):
    out = tmp_path / "out"
    assert main(["report", str(seeded_csv), "--seed", "seed", "--norm-ref-low", "0",
                 "--norm-ref-high", "1", "--n-bootstrap", "50", "-o", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") >= 5
    for name in ("aggregate", "iqm", "elo", "improvability", "compare", "frequentist"):
        assert (out / f"{name}.csv").exists(), name


def test_parse_model_options():
    from arenalite.cli import parse_model

    assert parse_model("knn") == {"name": "knn"}
    assert parse_model("knn:k=15,label=knn-15") == {"name": "knn", "k": 15, "label": "knn-15"}
    assert parse_model("attention:temperature=1.5") == {"name": "attention", "temperature": 1.5}
    with pytest.raises(ValueError, match="'k15' in 'knn:k15' must look like key=value"):
        parse_model("knn:k15")


def test_splits_then_run_then_rank(tmp_path):
    from arenalite import splits

    split_dir = tmp_path / "splits"
    assert main(["splits", "iris", "--n-repeats", "1", "-o", str(split_dir)]) == 0
    persisted = splits.load(split_dir / "iris.splits.json")
    assert persisted["dataset"] == "iris" and persisted["n_repeats"] == 1
    assert len(persisted["splits"]) == 3

    out = tmp_path / "run"
    assert main(["run", "iris", "--model", "knn:k=3", "--model", "attention",
                 "--splits-dir", str(split_dir), "-o", str(out)]) == 0
    results = pd.read_csv(out / "results.csv")
    assert sorted(results["model"].unique()) == ["attention", "knn(k=3)"]
    assert sorted(results["split_id"].unique()) == ["r0-f0", "r0-f1", "r0-f2"]
    assert len(pd.read_csv(out / "summary.csv")) == 2

    ranked = tmp_path / "ranked"
    assert main(["aggregate", str(out / "results.csv"), "--seed", "seed", "-o", str(ranked)]) == 0
    assert set(pd.read_csv(ranked / "aggregate.csv")["model"]) == {"attention", "knn(k=3)"}


def test_run_rejects_unknown_dataset(tmp_path):
    with pytest.raises(ValueError, match="unknown dataset 'mnist'"):
        main(["run", "mnist", "--model", "knn", "-o", str(tmp_path)])
