"""Calibrated completeness confidence (docs/benchmark.md §3.2): how well a run's stated
probabilities that its evidence is complete match how often it is.

Each statistic here is a function of a set of predictions, not a mean of per-task scores: the
confidences (`scores`), whether each task was complete (`labels`: 1 or 0; a task's share of
complete states where its repeats were judged in several) and how often each prediction is
counted (`weights`, one column per bootstrap resample: `_stats.bootstrap_statistic_intervals`
draws them). Every sum runs in one fixed order over predictions sorted by (confidence, label),
so a value is a function of the multiset of predictions: bit-identical in any row order.

- `expected_calibration_error`: over 10 equal-width bins of confidence ([0, 0.1), ..., [0.9,
  1]), the weighted mean over bins of |mean confidence - share complete|, each bin weighted by
  its share of the predictions;
- `auroc`: the probability that a complete task's confidence is above an incomplete one's
  (ties count half): the confidence as a score for "complete" (null where either class is
  absent).

The Brier score is a mean of per-task squared errors, a `mean` metric like any other.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]

BINS = 10
"""Equal-width bins of the expected calibration error."""


def _columns(weights: Floats) -> Floats:
    return weights if weights.ndim == 2 else weights[:, np.newaxis]


def expected_calibration_error(scores: Floats, labels: Floats, weights: Floats) -> Floats:
    """The ECE of the predictions (sorted by confidence) for each column of `weights` (n, R):
    sum over bins of |sum of w * (confidence - label)| over the sum of w. NaN where a column
    counts nothing."""
    w = _columns(weights)
    bins = np.minimum((scores * BINS).astype(np.int64), BINS - 1)
    starts = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]]) if scores.size else np.array([])
    if not scores.size:
        return np.full(w.shape[1], np.nan)
    gaps = np.add.reduceat(w * (scores - labels)[:, np.newaxis], starts, axis=0)
    total = w.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        result: Floats = np.cumsum(np.abs(gaps), axis=0)[-1] / total
    return np.where(total > 0, result, np.nan)


def auroc(scores: Floats, labels: Floats, weights: Floats) -> Floats:
    """The AUROC of confidence for completeness (predictions sorted by confidence) for each
    column of `weights` (n, R): the weighted share of (complete, incomplete) pairs the
    confidence orders right, ties counted half. NaN where a column counts no complete or no
    incomplete task."""
    w = _columns(weights)
    if not scores.size:
        return np.full(w.shape[1], np.nan)
    starts = np.flatnonzero(np.r_[True, scores[1:] != scores[:-1]])
    positive = np.add.reduceat(w * labels[:, np.newaxis], starts, axis=0)
    negative = np.add.reduceat(w * (1.0 - labels)[:, np.newaxis], starts, axis=0)
    below = np.cumsum(negative, axis=0) - negative  # incomplete weight strictly below each level
    ordered = np.cumsum(positive * (below + 0.5 * negative), axis=0)[-1]
    pairs = np.cumsum(positive, axis=0)[-1] * np.cumsum(negative, axis=0)[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        result: Floats = ordered / pairs
    return np.where(pairs > 0, result, np.nan)
