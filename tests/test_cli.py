"""The command line: tables, figures and the HTML report written to --output; every user
mistake ends with ``arenalite: error: <message>`` and exit status 2, never a traceback."""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from arenalite.cli import build_parser, flag_message, main, read_config
from arenalite.tables import csv_safe, format_column, html_table

FIXED = ["--norm-ref-low", "0", "--norm-ref-high", "1"]


@pytest.fixture
def seeded_csv(tmp_path, seeded):
    path = tmp_path / "results.csv"
    seeded.to_csv(path, index=False)
    return path


def png_dpi(path: Path) -> tuple[float, float]:
    """Horizontal and vertical dpi from a PNG's pHYs chunk (pixels per metre)."""
    data = path.read_bytes()
    start = data.index(b"pHYs") + 4
    x, y, unit = struct.unpack(">IIB", data[start:start + 9])
    assert unit == 1  # metres
    return x * 0.0254, y * 0.0254


def fails(argv: list[str], capsys) -> str:
    """Run the CLI expecting a user error; return its one ``arenalite: error:`` line."""
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own errors
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "error" in line]
    assert len(lines) == 1 and lines[0].startswith("arenalite: error: "), err
    return lines[0]


def test_aggregate_writes_table_and_figure(tmp_path, seeded_csv, capsys):
    out = tmp_path / "out"
    assert main(["aggregate", str(seeded_csv), "--seed-col", "seed", *FIXED,
                 "-o", str(out)]) == 0
    table = pd.read_csv(out / "aggregate.csv")
    assert list(table.columns) == ["model", "score"]
    assert list(table["model"]) == ["A", "B", "C"]
    assert (out / "aggregate.png").stat().st_size > 1000
    assert "A" in capsys.readouterr().out


def test_elo_uses_bootstrap_options(tmp_path, seeded_csv):
    out = tmp_path / "out"
    assert main(["elo", str(seeded_csv), "--seed-col", "seed", *FIXED, "--n-bootstrap", "50",
                 "-o", str(out)]) == 0
    table = pd.read_csv(out / "elo.csv")
    assert list(table.columns) == ["model", "ELO", "CI_low", "CI_high"]
    assert (table["CI_low"] <= table["ELO"]).all() and (table["ELO"] <= table["CI_high"]).all()


def test_format_writes_each_format_and_pngs_at_150_dpi(tmp_path, seeded_csv):
    out = tmp_path / "out"
    assert main(["aggregate", str(seeded_csv), "--seed-col", "seed", *FIXED,
                 "--format", "png,svg,pdf", "-o", str(out)]) == 0
    assert (out / "aggregate.svg").read_text().lstrip().startswith("<?xml")
    assert (out / "aggregate.pdf").read_bytes().startswith(b"%PDF")
    dpi = png_dpi(out / "aggregate.png")
    assert min(dpi) >= 149.9


def test_column_options_rename_columns(tmp_path, seeded):
    renamed = seeded.rename(columns={"model": "backbone", "dataset": "task", "score": "value",
                                     "seed": "split"})
    csv = tmp_path / "r.csv"
    renamed.to_csv(csv, index=False)
    out = tmp_path / "out"
    assert main(["aggregate", str(csv), "--model-col", "backbone", "--dataset-col", "task",
                 "--score-col", "value", "--seed-col", "split", *FIXED, "-o", str(out)]) == 0
    assert list(pd.read_csv(out / "aggregate.csv")["model"]) == ["A", "B", "C"]


def test_model_means_a_model_spec_everywhere():
    """--model is the model to run (run, tournament); the column option is --model-col in
    every command."""
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    for name, sub in commands.items():
        flags = {flag for action in sub._actions for flag in action.option_strings}
        if name in ("run", "tournament"):
            assert "--model" in flags
        else:
            assert "--model" not in flags, name
            if "csv" in {a.dest for a in sub._actions}:
                assert "--model-col" in flags, name


def test_every_option_has_help_with_its_default():
    commands = build_parser()._subparsers._group_actions[0].choices
    for name, sub in commands.items():
        for action in sub._actions:
            if not action.option_strings or action.dest == "help":
                continue
            assert action.help and "default" in action.help, (name, action.option_strings)


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


def test_yaml_block_mappings_and_lists_are_read(tmp_path):
    """The docs say YAML: a key alone on its line with indented key: value or - item lines
    (one level, what metric_type_bounds and metric_direction need) is read as YAML reads it."""
    y = tmp_path / "c.yaml"
    y.write_text("seed: seed  # the split column\nmetric_type_bounds:\n  roc_auc: [0.5, 1.0]\n"
                 "  rmse: [0, \"knn-1\"]\nmetric_direction:\n  'd 1': min\nextra:\n  - 1\n"
                 "  - two\n")
    assert read_config(y) == {"seed": "seed",
                              "metric_type_bounds": {"roc_auc": [0.5, 1.0], "rmse": [0, "knn-1"]},
                              "metric_direction": {"d 1": "min"}, "extra": [1, "two"]}


@pytest.mark.parametrize("text, where", [
    ("seed: seed\n  d: min\n", "line 2, column 1: indented line without a key"),
    ("seed: seed\nmetric_type_bounds: {\"rmse\": [0, 1}\n", "line 2, column 35: not a valid "
                                                           "flow value"),
    ("seed: seed\njust text\n", "line 2, column 1: expected 'key: value'"),
    ("seed: a\nseed: b\n", "line 2, column 1: 'seed' is set twice"),
])
def test_broken_yaml_config_names_file_line_and_column(tmp_path, text, where):
    y = tmp_path / "c.yaml"
    y.write_text(text)
    with pytest.raises(ValueError, match=f"config {re.escape(str(y))}, {re.escape(where)}"):
        read_config(y)


def test_broken_json_config_names_file_line_and_column(tmp_path, seeded_csv, capsys):
    j = tmp_path / "c.json"
    j.write_text('{"seed": "seed",\n "norm_ref_low": 0,,\n}')
    line = fails(["aggregate", str(seeded_csv), "--config", str(j), "-o", str(tmp_path)], capsys)
    assert line == (f"arenalite: error: config {j}, line 2, column 20: not valid JSON: "
                    "Expecting property name enclosed in double quotes")


# ---- user mistakes: exit 2, one line, no traceback -------------------------------------
def test_unknown_config_option(tmp_path, seeded_csv, capsys):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"modle": "model"}))
    line = fails(["aggregate", str(seeded_csv), "--config", str(config), "-o", str(tmp_path)],
                 capsys)
    assert "unknown load option(s) ['modle']" in line


def test_missing_results_file(tmp_path, capsys):
    line = fails(["aggregate", str(tmp_path / "nope.csv"), "-o", str(tmp_path)], capsys)
    assert line == f"arenalite: error: results file {str(tmp_path / 'nope.csv')!r} not found"


def test_missing_config_file(tmp_path, seeded_csv, capsys):
    line = fails(["aggregate", str(seeded_csv), "--config", "none.yaml", "-o", str(tmp_path)],
                 capsys)
    assert "config file 'none.yaml' (--config) not found" in line


def test_missing_column_names_the_flag(tmp_path, seeded_csv, capsys):
    line = fails(["aggregate", str(seeded_csv), "--seed-col", "run", "-o", str(tmp_path)], capsys)
    assert "column 'run' (given as --seed-col) not found" in line


def test_empty_file(tmp_path, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    line = fails(["aggregate", str(empty), "-o", str(tmp_path)], capsys)
    assert "is empty: no header row and no data" in line


def test_header_only_file(tmp_path, capsys):
    header = tmp_path / "header.csv"
    header.write_text("model,dataset,metric,score\n")
    assert "the score frame is empty" in fails(["aggregate", str(header), "-o", str(tmp_path)],
                                                capsys)


def test_non_numeric_score_names_the_value_and_row(tmp_path, seeded, capsys):
    frame = seeded.astype({"score": object})
    frame.loc[5, "score"] = "abc"
    csv = tmp_path / "bad.csv"
    frame.to_csv(csv, index=False)
    line = fails(["aggregate", str(csv), "--seed-col", "seed", "-o", str(tmp_path)], capsys)
    assert "column 'score' has a non-numeric value 'abc' in row 5" in line


def test_repeated_rows_without_seed_name_the_flag(tmp_path, seeded_csv, capsys):
    line = fails(["aggregate", str(seeded_csv), *FIXED, "-o", str(tmp_path)], capsys)
    assert "pass --seed-col <column>" in line
    assert "seed=" not in line


@pytest.mark.parametrize("flag", ["--candidate", "--reference"])
def test_unknown_gate_model_names_the_flag(tmp_path, seeded_csv, capsys, flag):
    models = {"--candidate": "A", "--reference": "B", flag: "Z"}
    line = fails(["gate", str(seeded_csv), "--seed-col", "seed", *FIXED,
                  "--candidate", models["--candidate"], "--reference", models["--reference"],
                  "-o", str(tmp_path)], capsys)
    assert line.startswith(f"arenalite: error: {flag} 'Z' not found in score matrix")


def test_negative_n_bootstrap(tmp_path, seeded_csv, capsys):
    line = fails(["elo", str(seeded_csv), "--n-bootstrap", "-5", "-o", str(tmp_path)], capsys)
    assert "argument --n-bootstrap: must be 0 or more, got -5" in line


def test_unknown_format(tmp_path, seeded_csv, capsys):
    line = fails(["elo", str(seeded_csv), "--format", "png,jpg", "-o", str(tmp_path)], capsys)
    assert "argument --format: unknown figure format(s) ['jpg']" in line


def test_margin_error_names_the_flag(tmp_path, seeded, capsys):
    message = ("no default margin for metric 'mape': no natural scale; pass margin= as a number "
               "or a {'mape': margin} dict")
    assert "pass --margin as a number" in flag_message(message)
    csv = tmp_path / "mape.csv"
    seeded.assign(metric="mape").to_csv(csv, index=False)  # the library's own message
    line = fails(["gate", str(csv), "--seed-col", "seed", *FIXED, "--candidate", "A",
                  "--reference", "B", "-o", str(tmp_path)], capsys)
    assert "no default margin for metric 'mape'" in line and "pass --margin as a number" in line


def test_flag_message_leaves_column_values_alone():
    message = ("duplicate rows for (model='A', dataset='D1') in rows [0, 5]; pass seed=<column>; "
               "n_bootstrap must be at least 1; norm_ref_low/norm_ref_high give low = 2")
    assert flag_message(message) == (
        "duplicate rows for (model='A', dataset='D1') in rows [0, 5]; pass --seed-col <column>; "
        "--n-bootstrap must be at least 1; --norm-ref-low/--norm-ref-high give low = 2")


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        main(["aggregate", str(tmp_path / "nope.csv"), "--debug", "-o", str(tmp_path)])


@pytest.mark.needs_processes
def test_console_error_has_no_traceback(tmp_path):
    """The real entry point (python -m arenalite): one line on stderr, exit status 2."""
    run = subprocess.run([sys.executable, "-m", "arenalite", "aggregate", "nope.csv", "-o",
                          str(tmp_path)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr == "arenalite: error: results file 'nope.csv' not found\n"


def test_warnings_are_one_line_with_flags(tmp_path, seeded_csv, capsys):
    assert main(["aggregate", str(seeded_csv), "--seed-col", "seed", "-o", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "arenalite: warning: --norm-ref-low and --norm-ref-high not given" in err
    assert "UserWarning" not in err


# ---- files ------------------------------------------------------------------------------
def test_csv_cells_cannot_start_a_formula(tmp_path, seeded, capsys):
    names = {"A": "=HYPERLINK(\"http://x\")", "B": "+cmd", "C": "@SUM(A1)"}
    frame = seeded.assign(model=seeded["model"].map(names))
    csv = tmp_path / "r.csv"
    frame.to_csv(csv, index=False)
    out = tmp_path / "out"
    assert main(["aggregate", str(csv), "--seed-col", "seed", *FIXED, "-o", str(out)]) == 0
    written = pd.read_csv(out / "aggregate.csv")
    assert set(written["model"]) == {"'" + name for name in names.values()}
    assert written["score"].dtype == float


def test_csv_safe_leaves_numbers_and_plain_text():
    frame = pd.DataFrame({"model": ["-x", "a-b", "ok"], "score": [-1.5, 2.0, 0.0],
                          "note": ["-1", None, "=1"]})
    safe = csv_safe(frame)
    assert list(safe["model"]) == ["'-x", "a-b", "ok"]
    assert list(safe["score"]) == [-1.5, 2.0, 0.0]
    assert safe["note"].iloc[0] == "'-1" and safe["note"].iloc[2] == "'=1"
    assert pd.isna(safe["note"].iloc[1])


def test_number_format_prints_round_off_as_zero():
    assert format_column(pd.Series([0.9599, 1.746e-16, 0.5])) == ["0.9599", "0", "0.5000"]
    assert format_column(pd.Series([1091.71, 908.29])) == ["1091.7", "908.3"]
    assert format_column(pd.Series([0.0312, 3.2e-05])) == ["0.0312", "3.2e-05"]


def test_report_writes_self_contained_html(tmp_path, seeded_csv):
    out = tmp_path / "out"
    assert main(["report", str(seeded_csv), "--seed-col", "seed", *FIXED, "--n-bootstrap", "50",
                 "-o", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") >= 5
    for name in ("aggregate", "iqm", "elo", "improvability", "compare", "frequentist"):
        assert (out / f"{name}.csv").exists(), name
    assert page.index('id="summary"') < page.index('id="aggregate"')
    assert "Best model by method" in page
    assert "Datasets and their normalization" in page and "normalized 0 at" in page
    assert '<a href="profiles.csv">profiles.csv</a>' in page and (out / "profiles_aup.csv").exists()
    assert "e-16" not in page and "e-17" not in page
    assert '<td class="t">A</td>' in page and "<script>" in page
    assert str(tmp_path) not in page and "Results: results.csv" in page
    assert "webgpu" not in page.lower()  # outside the site there is no WebGPU page to link


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
    assert main(["aggregate", str(out / "results.csv"), "--seed-col", "seed",
                 "-o", str(ranked)]) == 0
    assert set(pd.read_csv(ranked / "aggregate.csv")["model"]) == {"attention", "knn(k=3)"}


def test_run_rejects_unknown_dataset(tmp_path, capsys):
    assert "unknown dataset 'mnist'" in fails(["run", "mnist", "--model", "knn", "-o",
                                               str(tmp_path)], capsys)


def test_output_folder_is_created(tmp_path, seeded_csv):
    out = Path(tmp_path) / "a" / "b"
    assert main(["aggregate", str(seeded_csv), "--seed-col", "seed", *FIXED, "-o", str(out)]) == 0
    assert (out / "aggregate.csv").exists()


@pytest.mark.needs_sockets
@pytest.mark.needs_processes
def test_build_serve_checks_the_port_before_building():
    """``python build.py serve`` on a busy port: one line naming --port, and no build."""
    import socket

    root = Path(__file__).resolve().parents[1]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        run = subprocess.run([sys.executable, str(root / "build.py"), "serve", "--port",
                              str(port)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith(f"build: cannot serve on 127.0.0.1:{port} (")
    assert "pass --port N" in run.stderr and run.stderr.count("\n") == 1


def test_results_show_in_notebooks_like_the_report(four_models):
    import arenalite

    bench = arenalite.load_df(four_models, norm_ref_low=0.0, norm_ref_high=1.0)
    page = bench.performance_profiles()._repr_html_()
    assert '<th class="text" style="text-align:left">model</th>' in page
    long_table = html_table(pd.DataFrame({"model": [f"m{i}" for i in range(50)]}))
    assert "First 40 of 50 rows; the full table is <code>.table</code>" in long_table


class _Terminal:
    """A stream that says it is a terminal and keeps what is written."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("enabled", [None, True])
def test_progress_bars_only_on_a_terminal(enabled):
    import io

    from arenalite.progress import Progress

    log, terminal = io.StringIO(), _Terminal()
    for stream in (log, terminal):
        with Progress(3, "work", enabled=enabled, stream=stream) as bar:
            bar.update(3)
    assert log.getvalue() == ""  # a log file or pipe gets no \r bars
    assert "\rwork [" in terminal.text and terminal.text.endswith("\n")
    with Progress(3, "work", enabled=False, stream=terminal) as bar:
        bar.update(3)
    assert terminal.text.count("\rwork [") == 1


def test_report_says_in_flags_why_a_section_does_not_apply(tmp_path, seeded_csv, capsys):
    out = tmp_path / "out"
    assert main(["report", str(seeded_csv), "--seed-col", "seed", *FIXED, "--n-bootstrap", "0",
                 "-o", str(out)]) == 0
    assert "iqm: skipped (--n-bootstrap must be a positive integer, got 0)" in (
        capsys.readouterr().err)
    assert "Not applicable: --n-bootstrap must be a positive integer" in (
        out / "report.html").read_text()


def test_output_folder_that_cannot_be_made(tmp_path, seeded_csv, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    line = fails(["aggregate", str(seeded_csv), "-o", str(blocker / "out")], capsys)
    assert line.startswith(f"arenalite: error: cannot create the output folder "
                           f"{str(blocker / 'out')!r} (--output): ")


def test_splits_of_the_gate_protocol_kinds(tmp_path, capsys):
    from arenalite import splits

    assert main(["splits", "iris", "--kind", "kfold", "-o", str(tmp_path / "k")]) == 0
    kfold = splits.load(tmp_path / "k" / "iris.splits.json")
    assert (kfold["kind"], kfold["n_folds"], kfold["n_repeats"]) == ("kfold", 5, 2)
    assert main(["splits", "iris", "--kind", "random", "--n-repeats", "4", "--test-fraction",
                 "0.25", "-o", str(tmp_path / "r")]) == 0
    random = splits.load(tmp_path / "r" / "iris.splits.json")
    assert (random["kind"], random["test_fraction"], len(random["splits"])) == ("random", 0.25, 4)
    assert len(random["splits"][0]["test"]) == 38  # floor(0.25 · 150 + ½)
    message = fails(["splits", "iris", "--kind", "random", "--test-fraction", "1.5",
                     "-o", str(tmp_path / "bad")], capsys)
    assert "--test-fraction must be strictly between 0 and 1, got 1.5" in message
    message = fails(["splits", "iris", "--n-folds", "4", "-o", str(tmp_path / "bad")], capsys)
    assert "--n-folds" in message and "kfold" in message


@pytest.mark.parametrize("command", ["elo", "leaderboard"])
def test_calibration_flags_anchor_the_elo_scale(tmp_path, seeded_csv, command):
    out = tmp_path / "out"
    column = "ELO" if command == "elo" else "elo"
    base = ["--seed-col", "seed", *FIXED, "--n-bootstrap", "20"]
    assert main([command, str(seeded_csv), *base, "-o", str(out / "plain")]) == 0
    assert main([command, str(seeded_csv), *base, "--calibration-model", "C",
                 "--calibration-elo", "1656", "-o", str(out / "anchored")]) == 0
    plain = pd.read_csv(out / "plain" / f"{command}.csv").set_index("model")[column]
    anchored = pd.read_csv(out / "anchored" / f"{command}.csv").set_index("model")[column]
    assert anchored["C"] == pytest.approx(1656.0)
    pd.testing.assert_series_equal(anchored - anchored["C"], plain - plain["C"])
    assert main([command, str(seeded_csv), *base, "--calibration-model", "C",
                 "-o", str(out / "default")]) == 0
    default = pd.read_csv(out / "default" / f"{command}.csv").set_index("model")[column]
    assert default["C"] == pytest.approx(1000.0)


def test_report_says_which_model_anchors_the_scale(tmp_path, seeded_csv):
    out = tmp_path / "out"
    assert main(["report", str(seeded_csv), "--seed-col", "seed", *FIXED, "--n-bootstrap", "20",
                 "--calibration-model", "B", "--calibration-elo", "1200", "-o", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert page.count("Elo scale: anchored on <b>B</b> at 1200.") == 2  # leaderboard and Elo
    assert pd.read_csv(out / "elo.csv").set_index("model").loc["B", "ELO"] == pytest.approx(1200)
    assert pd.read_csv(out / "leaderboard.csv").set_index("model").loc["B", "elo"] == (
        pytest.approx(1200))


@pytest.mark.parametrize("argv, message", [
    (["--calibration-elo", "1200"], "--calibration-elo 1200 needs --calibration-model"),
    (["--calibration-model", "Nobody"], "--calibration-model 'Nobody' not found"),
])
def test_calibration_mistakes_are_one_line(tmp_path, seeded_csv, capsys, argv, message):
    line = fails(["elo", str(seeded_csv), "--seed-col", "seed", *FIXED, *argv,
                  "-o", str(tmp_path)], capsys)
    assert message in line


TABARENA = Path(__file__).parent / "data" / "tabarena_results.csv"
TABARENA_ORDER = ["GBM-tuned", "TabICL", "GBM-default", "Linear"]


def test_tabarena_file_needs_no_options(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["leaderboard", str(TABARENA), "--n-bootstrap", "20", "--style", "tabarena",
                 "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "arenalite: note: recognised TabArena's per-split results" in err
    assert "chance level" not in err and "named like an error" not in err
    table = pd.read_csv(out / "leaderboard.csv")
    assert table.columns[0] == "method" and table["method"].tolist() == TABARENA_ORDER
    assert "median_time_infer_s_per_1K" in table.columns
    assert (out / "leaderboard_pareto.png").stat().st_size > 1000


def test_direction_flag_fixes_the_issues_attempt(tmp_path, capsys):
    base = ["leaderboard", str(TABARENA), "--input-format", "long", "--model-col", "method",
            "--score-col", "metric_error", "--seed-col", "fold", "--n-bootstrap", "0"]
    assert main([*base, "-o", str(tmp_path / "wrong")]) == 0
    err = capsys.readouterr().err
    assert "arenalite: warning: score column 'metric_error' is named like an error" in err
    assert "--direction roc_auc=min" in err and "below its chance level 0.5" in err
    assert pd.read_csv(tmp_path / "wrong" / "leaderboard.csv")["model"].tolist() != (
        TABARENA_ORDER)
    assert main([*base, "--direction", "roc_auc=min", "-o", str(tmp_path / "right")]) == 0
    err = capsys.readouterr().err
    assert "arenalite: note: metric_direction: read 'roc_auc' as lower-is-better" in err
    assert "chance level" not in err and "named like an error" not in err
    assert pd.read_csv(tmp_path / "right" / "leaderboard.csv")["model"].tolist() == (
        TABARENA_ORDER)


def test_direction_flag_merges_with_the_config(tmp_path):
    config = tmp_path / "load.json"
    config.write_text(json.dumps({"metric_direction": {"rmse": "min"}}))
    args = build_parser().parse_args(["elo", str(TABARENA), "--config", str(config),
                                      "--direction", "roc_auc=min,log_loss=min"])
    assert args.direction == [{"roc_auc": "min", "log_loss": "min"}]


@pytest.mark.parametrize("value", ["roc_auc", "roc_auc=lower", "=min"])
def test_bad_direction_flag_is_one_line(tmp_path, capsys, value):
    line = fails(["elo", str(TABARENA), "--direction", value, "-o", str(tmp_path)], capsys)
    assert "--direction" in line and "expected METRIC=min or METRIC=max" in line


def test_report_shows_the_pareto_figure(tmp_path):
    out = tmp_path / "out"
    assert main(["report", str(TABARENA), "--n-bootstrap", "20", "-o", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert 'alt="leaderboard_pareto figure"' in page
    assert (out / "leaderboard_pareto.png").exists() and (out / "iqm.csv").exists()
# ---- messages that name the culprit and the fix (issue 20) ---------------------------
def test_latin1_file_names_the_file_and_the_encoding_option(tmp_path, seeded, capsys):
    path = tmp_path / "latin.csv"
    seeded.assign(model=seeded["model"] + "é").to_csv(path, index=False, encoding="latin-1")
    line = fails(["aggregate", str(path), "--seed-col", "seed", *FIXED, "-o", str(tmp_path)],
                 capsys)
    assert line.startswith(f"arenalite: error: {str(path)!r} is not utf-8 text (byte 0xe9 at ")
    assert line.endswith("pass the file's encoding with --encoding <name>, e.g. latin-1 or cp1252")
    out = tmp_path / "out"
    assert main(["aggregate", str(path), "--seed-col", "seed", *FIXED, "--encoding", "latin-1",
                 "-o", str(out)]) == 0
    assert pd.read_csv(out / "aggregate.csv")["model"].str.endswith("é").all()


def test_semicolon_file_is_read_by_its_separator_and_others_get_the_sep_hint(
        tmp_path, seeded, capsys):
    semi = tmp_path / "semi.csv"
    seeded.to_csv(semi, index=False, sep=";")
    out = tmp_path / "out"
    assert main(["aggregate", str(semi), "--seed-col", "seed", *FIXED, "-o", str(out)]) == 0
    colon = tmp_path / "colon.csv"
    seeded.to_csv(colon, index=False, sep=":")
    line = fails(["aggregate", str(colon), "--seed-col", "seed", *FIXED, "-o", str(tmp_path)],
                 capsys)
    assert line == (f"arenalite: error: {str(colon)!r} reads as one column, "
                    f"{':'.join(seeded.columns)!r}: its separator is not ','; pass it with "
                    "--sep <character>, e.g. ';' or a tab")
    assert main(["aggregate", str(colon), "--sep", ":", "--seed-col", "seed", *FIXED,
                 "-o", str(out)]) == 0


def test_a_directory_is_named_as_a_directory(tmp_path, seeded_csv, capsys):
    line = fails(["aggregate", str(tmp_path), "-o", str(tmp_path / "out")], capsys)
    assert line == (f"arenalite: error: results file {str(tmp_path)!r} is a directory, not a "
                    "CSV file (it holds results.csv)")
    line = fails(["aggregate", str(seeded_csv), "--config", str(tmp_path), "-o",
                  str(tmp_path / "out")], capsys)
    assert line == (f"arenalite: error: config file {str(tmp_path)!r} (--config) is a directory, "
                    "not a file")


def test_a_typo_in_metric_type_bounds_lists_the_known_names(tmp_path, seeded_csv, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("metric_type_bounds:\n  acuracy: [0, 1]\n")
    line = fails(["aggregate", str(seeded_csv), "--seed-col", "seed", "--config", str(config),
                  "-o", str(tmp_path)], capsys)
    assert line.startswith("arenalite: error: metric_type_bounds names metric(s) ['acuracy'] "
                           "that are neither in the data nor registered; metrics in the data: "
                           "['accuracy']; registered: [")
    assert "'roc_auc'" in line


def test_each_warning_is_printed_once(tmp_path, seeded_csv, capsys):
    """The leaderboard and Elo resample the same data and warn alike: one line."""
    from arenalite.cli import warning_printer

    lines: list[str] = []
    show = warning_printer(lines.append)
    for _ in range(2):
        show(UserWarning("norm_ref_low and norm_ref_high not given"), UserWarning, "f.py", 1)
    show(UserWarning("n_bootstrap too small"), UserWarning, "f.py", 2)
    assert lines == ["arenalite: warning: --norm-ref-low and --norm-ref-high not given",
                     "arenalite: warning: --n-bootstrap too small"]
    assert main(["report", str(seeded_csv), "--seed-col", "seed", "--n-bootstrap", "20",
                 "-o", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err.splitlines()
    warned = [line for line in err if line.startswith("arenalite: warning:")]
    assert warned and len(warned) == len(set(warned)), warned


def test_site_build_report_warns_about_nothing_the_user_did_not_do(tmp_path, capsys):
    """The site's demo report gives the bounds the README gives: no --norm-ref-* warning."""
    from sitebuild import pages

    pages.build_report(tmp_path / "report", 20)
    err = capsys.readouterr().err
    warned = [line for line in err.splitlines() if "warning" in line]
    assert "--norm-ref" not in err and len(warned) == len(set(warned)) <= 1, err
    page = (tmp_path / "report" / "report.html").read_text()
    assert '<a href="../webgpu/index.html">WebGPU timing page</a>' in page
    assert str(Path(__file__).resolve().parents[1]) not in page
