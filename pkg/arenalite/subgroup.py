"""AUROC vs AUPRC audit: per-subgroup metrics and the gain of fixing each ranking mistake.

Following McDermott et al., "A Closer Look at AUROC and AUPRC under Class Imbalance":
AUROC weighs every ranking mistake equally, while AUPRC rewards fixing high-score
mistakes most and its chance level is the prevalence, so it can favour the
higher-prevalence subgroup. For context-free model comparison prefer AUROC.

Also importable as ``arenalite.metrics.subgroup_report`` / ``arenalite.metrics.mistake_gains``;
the input checks and the AUROC/AUPRC cores it shares with :mod:`arenalite.metrics` are
:mod:`arenalite.metric_core`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .metric_core import (
    average_precision_core,
    binary_labels,
    check_same_length,
    class_counts,
    labels_1d,
    numeric_1d,
    roc_auc_core,
)
from .results import Result

GUIDANCE = (
    "AUROC weighs every ranking mistake equally: fixing any adjacent mis-ordered "
    "(positive, negative) pair raises it by the same amount. AUPRC rewards fixing "
    "high-score mistakes most, and its chance level is the prevalence, so it can favour "
    "the higher-prevalence subgroup and widen disparities. For context-free model "
    "comparison prefer AUROC; use AUPRC only when false positives among the top-scored "
    "cases are what matters and no subgroup fairness is at stake."
)


class SubgroupReport(Result):
    """Per-group prevalence, AUROC and AUPRC (``.table``), pairwise ``.gaps`` and ``.guidance``."""

    method = "subgroup_report"

    def __init__(self, table: pd.DataFrame, gaps: pd.DataFrame, overall: dict[str, float],
                 guidance: str) -> None:
        super().__init__(table)
        self.gaps = gaps.reset_index(drop=True)
        self.overall = overall
        self.guidance = guidance

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None) -> Any:
        """Bars of AUROC and AUPRC per group, with each metric's chance level marked."""
        from .plots.subgroup import subgroup_bars

        return subgroup_bars(self.table, ax=ax, figsize=figsize, title=title)


class MistakeGains(Result):
    """One row per adjacent mis-ordered (positive below negative) pair and its metric gains."""

    method = "mistake_gains"

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None) -> Any:
        """AUROC and AUPRC gain of fixing each mistake against the mistake's score."""
        from .plots.subgroup import mistake_gain_lines

        return mistake_gain_lines(self.table, ax=ax, figsize=figsize, title=title)


def _binary_inputs(y: Any, score: Any) -> tuple[np.ndarray, np.ndarray]:
    labels = binary_labels(y, "y")
    s = numeric_1d(score, "score")
    check_same_length(labels, s, "y", "score")
    return labels, s


def subgroup_report(y: Any, score: Any, group: Any) -> SubgroupReport:
    """Prevalence, AUROC and AUPRC per subgroup, and the gaps higher- minus lower-prevalence.

    ``.table`` (groups by descending prevalence): group, n, n_positive, prevalence,
    auroc, auprc. ``.gaps``: one row per pair of groups: higher_group, lower_group,
    prevalence_gap, auroc_gap, auprc_gap (higher-prevalence group minus lower).
    ``.overall``: the same metrics on all rows. ``.guidance``: how to read them.
    Every group needs both classes (its AUROC is undefined otherwise).
    """
    labels, s = _binary_inputs(y, score)
    g = labels_1d(group, "group")
    check_same_length(labels, g, "y", "group")
    names, inverse = np.unique(g, return_inverse=True)
    if len(names) < 2:
        raise ValueError(f"group must hold at least two subgroups, got only {names.tolist()[0]!r}")
    rows = []
    for k, name in enumerate(names.tolist()):
        mask = inverse == k
        yk, sk = labels[mask], s[mask]
        n_pos = int(yk.sum())
        if n_pos == 0 or n_pos == len(yk):
            raise ValueError(
                f"group {name!r} has only {'positive' if n_pos else 'negative'} labels "
                f"({len(yk)} rows): its AUROC and AUPRC are undefined"
            )
        rows.append({"group": name,
                     "n": len(yk), "n_positive": n_pos, "prevalence": n_pos / len(yk),
                     "auroc": roc_auc_core(yk, sk, n_pos, len(yk) - n_pos),
                     "auprc": average_precision_core(yk, sk, n_pos)})
    table = pd.DataFrame(rows).sort_values("prevalence", ascending=False, kind="stable")
    table = table.reset_index(drop=True)
    gaps = _gaps(table)
    n_pos, n_neg = class_counts(labels, "y", "AUROC")
    overall = {"n": len(labels), "prevalence": n_pos / len(labels),
               "auroc": roc_auc_core(labels, s, n_pos, n_neg),
               "auprc": average_precision_core(labels, s, n_pos)}
    return SubgroupReport(table, gaps, overall, _guidance(table))


def _gaps(table: pd.DataFrame) -> pd.DataFrame:
    hi, lo = np.triu_indices(len(table), k=1)
    cols = {"prevalence": "prevalence_gap", "auroc": "auroc_gap", "auprc": "auprc_gap"}
    out = pd.DataFrame({"higher_group": table["group"].to_numpy()[hi],
                        "lower_group": table["group"].to_numpy()[lo]})
    for col, gap in cols.items():
        values = table[col].to_numpy(dtype=float)
        out[gap] = values[hi] - values[lo]
    return out


def _guidance(table: pd.DataFrame) -> str:
    high, low = table.iloc[0], table.iloc[-1]
    auroc_gap = high["auroc"] - low["auroc"]
    auprc_gap = high["auprc"] - low["auprc"]
    lines = [
        f"Highest-prevalence group {high['group']!r} (prevalence {high['prevalence']:.3f}) "
        f"vs lowest {low['group']!r} ({low['prevalence']:.3f}): "
        f"AUROC gap {auroc_gap:+.3f}, AUPRC gap {auprc_gap:+.3f}."
    ]
    if auprc_gap > 0 and auprc_gap > abs(auroc_gap):
        lines.append(
            "The AUPRC gap exceeds the AUROC gap: part of it reflects the groups' prevalence "
            "(AUPRC's chance level), not how well the model ranks within each group."
        )
    elif auroc_gap * auprc_gap < 0:
        lines.append("AUROC and AUPRC disagree on which group the model serves better.")
    lines.append(GUIDANCE)
    return "\n".join(lines)


def mistake_gains(y: Any, score: Any) -> MistakeGains:
    """Each adjacent mis-ordered pair and how much AUROC and AUPRC gain by swapping its scores.

    A mistake (the paper's Definition 2.1) is a positive whose score is directly below a
    negative's in the score order. Swapping the two scores raises AUROC by
    1 / (n_pos · n_neg) whatever the pair (Theorem 2) and AUPRC by more the higher the
    pair's score. With tied scores, a mistake is a positive at one distinct score value
    and a negative at the next higher value; ``n_pairs`` counts the equivalent
    (positive, negative) choices, ``row_positive``/``row_negative`` name the first one,
    and the gains are exact for swapping that pair (AUROC then gains
    (n_a + n_b) / (2 n_pos n_neg), n_a and n_b the rows at the two values; AUPRC,
    which treats a tied block as one threshold, may then gain nothing or even lose).

    ``.table`` (ascending score): score_positive, score_negative, row_positive,
    row_negative, n_pairs, auroc_gain, auprc_gain.
    """
    labels, s = _binary_inputs(y, score)
    n_pos, n_neg = class_counts(labels, "y", "AUROC")
    values, inverse = np.unique(s, return_inverse=True)
    pos = np.bincount(inverse, weights=labels, minlength=len(values))
    total = np.bincount(inverse, minlength=len(values)).astype(np.float64)
    neg = total - pos
    low = np.flatnonzero((pos[:-1] > 0) & (neg[1:] > 0))  # value index of the positive
    high = low + 1
    # positives / rows with score >= each value (cumulative from the top)
    tp_at_or_above = np.cumsum(pos[::-1])[::-1]
    n_at_or_above = np.cumsum(total[::-1])[::-1]
    auprc_gain = ((tp_at_or_above[high] + pos[high] + 1) / n_at_or_above[high]
                  - tp_at_or_above[low] / n_at_or_above[low]) / n_pos
    auroc_gain = (total[low] + total[high]) / (2.0 * n_pos * n_neg)
    order = np.argsort(s, kind="stable")
    table = pd.DataFrame({
        "score_positive": values[low],
        "score_negative": values[high],
        "row_positive": _first_rows(order, inverse, labels == 1, len(values))[low],
        "row_negative": _first_rows(order, inverse, labels == 0, len(values))[high],
        "n_pairs": (pos[low] * neg[high]).astype(np.int64),
        "auroc_gain": auroc_gain,
        "auprc_gain": auprc_gain,
    })
    return MistakeGains(table, n_positive=n_pos, n_negative=n_neg)


def _first_rows(order: np.ndarray, inverse: np.ndarray, mask: np.ndarray,
                n_values: int) -> np.ndarray:
    """Per distinct score value, the lowest row index among ``mask`` rows (−1 if none)."""
    rows = order[mask[order]]
    first = np.full(n_values, -1, dtype=np.int64)
    value_idx, at = np.unique(inverse[rows], return_index=True)
    first[value_idx] = rows[at]
    return first
