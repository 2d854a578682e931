"""peb_core.scoring's statistics against textbook values, and the scorecard's interval columns."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from peb_core.runs import INTERVAL_KEYS, SCORECARD_KEYS, score_run_dirs
from peb_core.scoring import (
    METRICS,
    bootstrap_mean_interval,
    bootstrap_mean_intervals,
    mcnemar_exact,
    newcombe_paired_interval,
    paired_means,
    scorecard,
    wilson_interval,
    wilson_intervals,
)
from peb_core.scoring._stats import PERMUTATIONS

ROOT = Path(__file__).resolve().parents[2]
BASELINES = ROOT / "runs" / "baselines"
VALUES = [1.0, 0.0, 1.0, 0.5, 1.0, 0.25, 0.0, 1.0, 0.75, 1.0, 0.5, 1.0] * 2


# --- Wilson ------------------------------------------------------------------------------------


def test_wilson_at_the_edges() -> None:
    low, high = wilson_interval(0, 21)
    assert low == 0.0 and high == pytest.approx(0.1547, abs=1e-4)
    low, high = wilson_interval(21, 21)
    assert low == pytest.approx(0.8453, abs=1e-4) and high == 1.0


def test_wilson_textbook_case() -> None:
    # 81 of 263 (Newcombe 1998, Statistics in Medicine 17:857): 0.2553 to 0.3662.
    low, high = wilson_interval(81, 263)
    assert (round(low or 0, 4), round(high or 0, 4)) == (0.2553, 0.3662)


def test_wilson_empty_denominator_is_null() -> None:
    assert wilson_interval(0, 0) == (None, None)
    low, high = wilson_intervals([0, 3, 0], [0, 10, 5])
    assert np.isnan(low[0]) and np.isnan(high[0])
    assert (low[1], high[1]) == wilson_interval(3, 10)
    assert low[2] == 0.0


# --- bootstrap ---------------------------------------------------------------------------------


def test_bootstrap_contains_the_mean_and_is_deterministic() -> None:
    low, high = bootstrap_mean_interval(VALUES)
    assert low is not None and high is not None
    assert low < float(np.mean(VALUES)) < high
    assert bootstrap_mean_interval(VALUES) == (low, high)
    # A function of the multiset of values: row order does not matter.
    assert bootstrap_mean_interval(list(reversed(VALUES))) == (low, high)


def test_bootstrap_is_the_same_in_another_process() -> None:
    code = (
        "from peb_core.scoring._stats import bootstrap_mean_interval as b; "
        f"print(repr(b({VALUES!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.strip() == repr(bootstrap_mean_interval(VALUES))


def test_bootstrap_edge_cases() -> None:
    assert bootstrap_mean_interval([]) == (None, None)
    assert bootstrap_mean_interval([0.4]) == (0.4, 0.4)
    assert bootstrap_mean_interval([1.0] * 24) == (1.0, 1.0)


def test_bootstrap_of_many_groups_equals_one_at_a_time() -> None:
    groups = [np.array(VALUES), np.array([0.0, 1.0, 1.0]), np.array([]), np.array(VALUES[::-1])]
    low, high = bootstrap_mean_intervals(groups)
    for i, g in enumerate(groups):
        one = bootstrap_mean_interval(g)
        if one == (None, None):
            assert np.isnan(low[i]) and np.isnan(high[i])
        else:
            assert (low[i], high[i]) == one


# --- paired tests ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("only_a", "only_b", "p"),
    [
        (0, 6, 0.03125),  # 2 / 2**6
        (6, 0, 0.03125),
        (1, 9, 0.021484375),  # 2 * (1 + 10) / 2**10
        (6, 16, 0.052479),  # Fagerland, Lydersen, Laake: the Cavo et al. (2012) table
        (5, 5, 1.0),
        (0, 0, 1.0),
    ],
)
def test_mcnemar_exact(only_a: int, only_b: int, p: float) -> None:
    assert mcnemar_exact(only_a, only_b) == pytest.approx(p, abs=1e-6)


def test_newcombe_paired_interval() -> None:
    # Cavo et al. (2012) as in Fagerland et al.: p_a - p_b = -0.0621 (-0.1186 to -0.0046), so
    # B - A is 0.0621 (0.0046 to 0.1186).
    low, high = newcombe_paired_interval(59, 6, 16, 80)
    assert (round(low or 0, 4), round(high or 0, 4)) == (0.0046, 0.1186)
    low, high = newcombe_paired_interval(0, 58, 0, 0)  # every pair: A only
    assert low == -1.0 and high is not None and -1.0 < high < -0.9
    assert newcombe_paired_interval(0, 0, 0, 0) == (None, None)


def test_paired_means() -> None:
    same = paired_means(VALUES, VALUES)
    assert (same.difference, same.ci_low, same.ci_high, same.p_value) == (0.0, 0.0, 0.0, 1.0)
    better = paired_means(VALUES, [1.0] * len(VALUES))
    assert better.difference == pytest.approx(1.0 - float(np.mean(VALUES)))
    low, difference, high = better.ci_low, better.difference, better.ci_high
    assert low is not None and difference is not None and high is not None
    assert 0.0 < low < difference < high
    # 12 nonzero differences, all positive: the exact sign-flip p is 2 / 2**12 = 0.00049.
    assert better.p_value is not None and better.p_value < 0.002
    floor = paired_means([0.0] * 30, [1.0] * 30).p_value
    assert floor == pytest.approx(1 / (1 + PERMUTATIONS))  # (1 + 0 hits) / (1 + PERMUTATIONS)
    assert paired_means(VALUES, [1.0] * len(VALUES)) == better
    assert paired_means([], []).p_value is None
    with pytest.raises(ValueError, match="differ in length"):
        paired_means([1.0], [1.0, 0.0])


# --- scorecard intervals -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def baseline_scores() -> pl.DataFrame:
    scores, _ = score_run_dirs(sorted(BASELINES.iterdir()))
    return scores


def test_scorecard_carries_an_interval_around_every_rate_and_mean(
    baseline_scores: pl.DataFrame,
) -> None:
    card = scorecard(baseline_scores)
    with_interval = [m for m in METRICS if m.kind != "count"]
    assert set(INTERVAL_KEYS) <= set(card.columns) and len(INTERVAL_KEYS) == 2 * len(with_interval)
    assert card.select(SCORECARD_KEYS).columns == SCORECARD_KEYS
    for metric in {k.rsplit("_ci_", 1)[0] for k in INTERVAL_KEYS}:
        low, value, high = (pl.col(c) for c in (f"{metric}_ci_low", metric, f"{metric}_ci_high"))
        assert card.select(((low <= value) & (value <= high)).all()).item(), metric
    row = card.filter(system="silent_filter", family="due_diligence_v1").row(0, named=True)
    assert row["n_incomplete"] == 21 and row["unsafe_completeness_rate"] == 1.0
    assert row["unsafe_completeness_rate_ci_low"] == pytest.approx(0.8453, abs=1e-4)
    assert row["unsafe_completeness_rate_ci_high"] == 1.0


def test_scorecard_intervals_ignore_row_order(baseline_scores: pl.DataFrame) -> None:
    card = scorecard(baseline_scores)
    shuffled = scorecard(baseline_scores.sample(fraction=1.0, shuffle=True, seed=7))
    assert shuffled.equals(card)


def test_scorecard_empty_denominator_gives_null_interval(baseline_scores: pl.DataFrame) -> None:
    card = scorecard(baseline_scores.filter(pl.col("completeness") == "complete"))
    assert card["n_incomplete"].sum() == 0
    assert card["unsafe_completeness_rate"].null_count() == card.height
    assert card["unsafe_completeness_rate_ci_low"].null_count() == card.height
    assert card["unsafe_completeness_rate_ci_high"].null_count() == card.height
    assert card["answer_correctness_ci_low"].null_count() == 0
    assert scorecard(baseline_scores.head(0)).height == 0
