"""The charts of score frames and scorecards, shared by the notebooks, the paper and the CLI. Each
is laid out for print (`_print`), its series and verdicts styled alike in every chart
(`_styles`), its data aggregated in polars and carried inline; nothing here touches altair's
global settings.

- `confusion_heatmap(scores)`: true x claimed completeness of each series, each matrix coloured
  by the share of its row (normalised within its run), the counts printed;
- `operating_profile(card)`: over-blocking against unsafe completeness, one panel per family,
  every point at its value with its 95% intervals as error bars; up to `MAX_RINGS` points at
  the same value are nested rings, so each stays in sight, and more are one grey mark whose
  series the subtitle lists;
- `outcome_grid(scores)`: one cell per task and series, coloured by verdict, one panel per
  family, series named on every panel, at most `MAX_HEIGHT` tall;
- `metric_bars(card)`: the four scored surfaces per series and family, with 95% intervals;
- `reliability_diagram(scores)`: stated confidence against the share complete, per bin of
  confidence and series, with 95% intervals (runs that state a confidence only);
- `intervention_frontier(card)`: each intervention's run of each system at its over-blocking
  against its unsafe completeness and its answer correctness, with 95% intervals.

A faceted chart gives each panel its own x axis, so a short last row leaves empty space, never
an axis under no panel.
"""

from ...scoring import CLAIMED, TRUTH
from .._print import FONT, MAX_HEIGHT, ONE_COLUMN, PX_PER_INCH, TWO_COLUMNS, X_AXIS, print_width
from .._styles import PALETTE, SHAPES, series_column, series_styles
from ._bars import METRICS, MIN_BAR, metric_bars, metric_long, titles
from ._confusion import BAND, INK, confusion_heatmap
from ._frontier import frontier_points, intervention_frontier
from ._grid import MAX_GRID_CELLS, outcome_grid
from ._profile import CROWD, MAX_RINGS, RATES, RING, nest, operating_profile
from ._reliability import reliability_bins, reliability_diagram

__all__ = [
    "BAND",
    "CLAIMED",
    "CROWD",
    "FONT",
    "INK",
    "MAX_GRID_CELLS",
    "MAX_HEIGHT",
    "MAX_RINGS",
    "METRICS",
    "MIN_BAR",
    "ONE_COLUMN",
    "PALETTE",
    "PX_PER_INCH",
    "RATES",
    "RING",
    "SHAPES",
    "TRUTH",
    "TWO_COLUMNS",
    "X_AXIS",
    "confusion_heatmap",
    "frontier_points",
    "intervention_frontier",
    "metric_bars",
    "metric_long",
    "nest",
    "operating_profile",
    "outcome_grid",
    "print_width",
    "reliability_bins",
    "reliability_diagram",
    "series_column",
    "series_styles",
    "titles",
]
