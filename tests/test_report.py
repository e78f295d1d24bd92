"""The HTML report at 80 models (issue 20): every model in the full leaderboard table, the
per-dataset view, pair tables by evidence, small CSVs, and figure files whose text is text
(PDF fonts TrueType/Type 42, SVG ``<text>``)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arenalite.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_scale import synthetic  # noqa: E402


class Tables(HTMLParser):
    """Each <table>'s header texts and its rows' cell texts, following section ids."""

    def __init__(self) -> None:
        super().__init__()
        self.section = ""
        self.tables: dict[str, list[dict]] = {}
        self.cell: list[str] | None = None
        self.row: list[str] = []
        self.current: dict | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attrs = dict(attrs)
        if tag == "h2":
            self.section = attrs.get("id", self.section)
        elif tag == "table":
            self.current = {"head": [], "rows": []}
            self.tables.setdefault(self.section, []).append(self.current)
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.row.append("".join(self.cell))
            self.cell = None
        elif tag == "tr" and self.current is not None:
            key = "rows" if self.current["head"] else "head"
            self.current[key].append(self.row) if key == "rows" else self.current.update(
                head=self.row)

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


@pytest.fixture(scope="module")
def report80(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``arenalite report`` on a synthetic 80-model × 30-dataset suite, every format."""
    import matplotlib

    matplotlib.use("Agg")
    folder = tmp_path_factory.mktemp("report80")
    frame = synthetic(80, 30, 2, seed=3)
    frame.to_csv(folder / "suite.csv", index=False)
    out = folder / "out"
    assert main(["report", str(folder / "suite.csv"), "--seed-col", "seed", "--norm-ref-low", "0",
                 "--norm-ref-high", "1", "--n-bootstrap", "50", "--format", "png,svg,pdf",
                 "-o", str(out)]) == 0
    return out


def test_every_model_is_in_the_leaderboard_table(report80: Path) -> None:
    page = (report80 / "report.html").read_text()
    parsed = Tables()
    parsed.feed(page)
    (board,) = parsed.tables["leaderboard"]
    models = [row[0] for row in board["rows"]]
    assert sorted(models) == sorted(f"model_{i}" for i in range(80))
    assert models == list(pd.read_csv(report80 / "leaderboard.csv")["model"])
    assert board["head"][:2] == ["model", "elo"]
    (view,) = parsed.tables["datasets"]
    assert [row[0] for row in view["rows"]] == models     # per dataset, leaderboard order
    assert len(view["head"]) == 2 + 30
    assert page.count('class="n best"') >= 30             # the best per dataset is marked
    (pairs,) = parsed.tables["frequentist"]
    assert len(pairs["rows"]) == 80 * 79 // 2              # every pair, none cut
    p = pd.read_csv(report80 / "frequentist.csv")["p_value"].to_numpy()
    assert (np.diff(p) >= 0).all()                         # strongest evidence first
    bayes = pd.read_csv(report80 / "bayesian.csv")
    evidence = np.maximum(bayes["p_a_better"], bayes["p_b_better"]).to_numpy()
    assert (np.diff(evidence) <= 0).all()
    assert "<script>" in page and "http" not in re.sub(r'href="[^"]*"', "", page.split(
        "<script>")[1])                                    # sorting/filtering need no network
    assert str(report80) not in page and "Results: suite.csv" in page
    assert "1 seeds" not in page and "2 seeds per dataset" in page
    assert "AUP, the area under a profile over log10" in page


def test_profiles_csv_holds_the_step_points_only(report80: Path) -> None:
    steps = pd.read_csv(report80 / "profiles.csv")
    assert len(steps) <= 80 * (30 + 1)                     # not 80 × (80 · 30) grid rows
    for _, group in steps.groupby("model"):
        assert group["tau"].iloc[0] == 1.0
        assert (np.diff(group["tau"]) > 0).all()
        assert (np.diff(group["fraction_within_tau"]) > 0).all()


def pdf_font_types(path: Path) -> set[str]:
    """The /Subtype of every font dictionary of a matplotlib PDF (its dictionaries are not
    compressed, only its streams); ``pdffonts`` agrees where poppler-utils is installed."""
    data = path.read_bytes()
    fonts = re.findall(rb"/Type\s*/Font\b(.*?)>>", data, flags=re.S)
    kinds = {m.decode() for f in fonts for m in re.findall(rb"/Subtype\s*/(\w+)", f)}
    return kinds


@pytest.mark.parametrize("name", ["bayesian", "leaderboard", "profiles"])
def test_figure_files_keep_text_as_text(report80: Path, name: str) -> None:
    kinds = pdf_font_types(report80 / f"{name}.pdf")
    assert kinds and "Type3" not in kinds, kinds           # Type 42: TrueType (CID) fonts
    assert kinds <= {"Type0", "CIDFontType2", "TrueType"}, kinds
    if shutil.which("pdffonts"):
        listing = subprocess.run(["pdffonts", str(report80 / f"{name}.pdf")], check=True,
                                 capture_output=True, text=True).stdout
        assert "Type 3" not in listing and "TrueType" in listing, listing
    svg = (report80 / f"{name}.svg").read_text()
    assert svg.count("<text") > 10 and "model_0" in svg
