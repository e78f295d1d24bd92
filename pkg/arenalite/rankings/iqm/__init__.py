"""IQM ranking with bootstrap intervals (Agarwal et al. 2021, rliable). One concept a module:

- :mod:`.ranking`: :func:`iqm_ranking`, :class:`IQMResult` and the point IQM;
- :mod:`.dataset_bootstrap`: the default bootstrap, whole datasets redrawn (the IQM of
  runs repeated as their datasets were drawn, found from the runs at the two cut points);
- :mod:`.seed_bootstrap`: the stratified bootstrap, seeds redrawn within each cell (the
  general way and the equal-cells fast path with its count patterns and windows).
"""

from .dataset_bootstrap import cut_block_size, dataset_bootstrap_iqm, sorted_runs
from .ranking import RESAMPLING, IQMResult, iqm, iqm_ranking
from .seed_bootstrap import (
    SEQUENCE_LIMIT,
    cell_layout,
    draw_patterns,
    iqm_from_patterns,
    iqm_unordered,
    resampling_patterns,
    stratified_bootstrap_iqm,
    stratified_bootstrap_iqm_equal,
)

__all__ = [
    "IQMResult", "RESAMPLING", "SEQUENCE_LIMIT", "cell_layout", "cut_block_size",
    "dataset_bootstrap_iqm", "draw_patterns", "iqm", "iqm_from_patterns", "iqm_ranking",
    "iqm_unordered", "resampling_patterns", "sorted_runs", "stratified_bootstrap_iqm",
    "stratified_bootstrap_iqm_equal",
]
