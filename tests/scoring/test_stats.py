"""peb_core.scoring's statistics against textbook values, and the scorecard's interval columns."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from peb_core.results import INTERVAL_KEYS, SCORECARD_KEYS, score_run_dirs
from peb_core.scoring import (
    ALPHA,
    EXACT_BELOW,
    METRICS,
    PairedTest,
    _stats,
    bootstrap_mean_interval,
    bootstrap_mean_intervals,
    format_p,
    mcnemar_exact,
    paired_means,
    paired_rates,
    scorecard,
    wilson_interval,
    wilson_intervals,
)
from peb_core.scoring._stats import PERMUTATIONS, Z95, _sign_flips

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


def test_a_large_group_is_resampled_a_block_at_a_time_to_the_same_bits() -> None:
    """A group of 2,400 values (a family of 16,800 agent tasks) draws its resample counts a
    block of columns at a time (8 MiB, not the 38 MiB matrix, cached): the same means, bit for
    bit, as the whole matrix drawn at once from the same seed; a small group's matrix is drawn
    whole and cached, as before."""
    rng = np.random.default_rng(5)
    for n in (_stats._BLOCK // _stats.RESAMPLES, 2_400):
        values = np.sort(rng.choice([0.0, 0.25, 1 / 3, 0.5, 2 / 3, 1.0], size=n))
        draws = np.random.default_rng([_stats.SEED, n]).multinomial(
            n, np.full(n, 1.0 / n), size=_stats.RESAMPLES
        )
        whole = _stats._resample_means(values, np.ascontiguousarray(draws.T, dtype=np.float64))
        assert np.array_equal(_stats._bootstrap_means(values), whole)
    blocks = list(_stats._count_blocks(2_400))
    assert len(blocks) > 1 and max(b.size for b in blocks) <= _stats._BLOCK


# --- paired tests ------------------------------------------------------------------------------


def _excludes_zero(test: PairedTest) -> bool:
    assert test.ci_low is not None and test.ci_high is not None
    return test.ci_low > 0 or test.ci_high < 0


def _significant(test: PairedTest) -> bool:
    assert test.p_value is not None
    return test.p_value < ALPHA


def test_paired_rates_textbook_case() -> None:
    # Cavo et al. (2012) as in Fagerland, Lydersen and Laake (2014) and the R package
    # ContingencyTables: McNemar asymptotic P = 0.033006; Tango score interval for p_a - p_b:
    # -0.0621 (-0.1240 to -0.0054), so B - A is 0.0621 (0.0054 to 0.1240).
    # Its 22 discordant pairs are fewer than EXACT_BELOW: the score test is asked for here.
    test = paired_rates(59, 6, 16, 80, exact_below=0)
    assert test.p_value == pytest.approx(0.033006, abs=1e-6) and not test.exact
    assert test.difference == pytest.approx(10 / 161)
    assert (round(test.ci_low or 0, 4), round(test.ci_high or 0, 4)) == (0.0054, 0.1240)
    assert (test.value_a, test.value_b) == (65 / 161, 75 / 161)


def test_few_discordant_pairs_get_mcnemar_s_exact_test() -> None:
    """Issue 36: with 4 of 4 pairs discordant the score test gave p = 0.046 (a star); McNemar's
    exact test gives 0.125. Below EXACT_BELOW (25) discordant pairs the exact test decides,
    and the interval, Tango's, reaches 0 where the exact test keeps 0."""
    four = paired_rates(0, 0, 4, 20)
    assert four.exact and four.p_value == 0.125 and not _significant(four)
    assert paired_rates(0, 0, 4, 20, exact_below=0).p_value == pytest.approx(0.0455, abs=1e-4)
    assert four.ci_low == 0.0 and four.ci_high is not None and four.ci_high > 1 / 6
    # The same table as the textbook case: exact McNemar P = 0.052479 (ContingencyTables),
    # not significant, so its interval keeps 0; Tango's alone is 0.0054 to 0.1240.
    cavo = paired_rates(59, 6, 16, 80)
    assert cavo.exact and cavo.p_value == pytest.approx(0.052479, abs=1e-6)
    assert cavo.ci_low == 0.0 and round(cavo.ci_high or 0, 4) == 0.1240
    assert mcnemar_exact(6, 16) == cavo.p_value and mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(1, 5) == 2 * (1 + 6) / 2**6  # P(X <= 1) of 6 draws, twice
    # From EXACT_BELOW discordant pairs on, the score test.
    many = paired_rates(0, 0, EXACT_BELOW, 20)
    assert not many.exact
    assert many.p_value == pytest.approx(math.erfc(math.sqrt(EXACT_BELOW / 2)))


@pytest.mark.parametrize("alpha", [0.01, ALPHA, 0.1])
def test_the_exact_test_never_rejects_where_the_score_test_keeps_0(alpha: float) -> None:
    """Why Tango's interval, stretched to 0 where the exact test keeps it, agrees with the exact
    test: wherever the exact p is below alpha (fewer than EXACT_BELOW discordant pairs), so is
    the score test's, and Tango's interval, which inverts it, already excludes 0."""
    for only_a in range(EXACT_BELOW):
        for only_b in range(EXACT_BELOW - only_a):
            exact = paired_rates(3, only_a, only_b, 3, alpha)
            score = paired_rates(3, only_a, only_b, 3, alpha, exact_below=0)
            assert exact.exact and exact.p_value is not None and score.p_value is not None
            if exact.p_value < alpha:
                assert score.p_value < alpha, (only_a, only_b)
                assert (exact.ci_low, exact.ci_high) == (score.ci_low, score.ci_high)


def test_the_old_methods_disagreed_on_it_and_the_new_ones_agree() -> None:
    # The same table under the old methods: exact McNemar P = 0.052479 (not significant) beside a
    # Newcombe interval of 0.0046 to 0.1186 (excluding 0). Now the test and its interval agree
    # (the exact test: not significant, the interval reaching 0).
    test = paired_rates(59, 6, 16, 80)
    assert not _significant(test) and not _excludes_zero(test)
    # Means: 4 of 24 differences 0.25, the rest 0. The percentile bootstrap excludes 0 (a
    # resample without a nonzero difference has probability (20/24)**24, about 1.3%), while the
    # sign-flip p is 2 / 2**4. The interval that inverts the sign-flip test keeps 0.
    a, b = [0.0] * 24, [0.25] * 4 + [0.0] * 20
    low, _ = bootstrap_mean_interval(np.subtract(b, a))
    assert low is not None and low > 0
    means = paired_means(a, b)
    assert means.p_value == pytest.approx(0.125, abs=0.01)
    assert not _significant(means) and not _excludes_zero(means)


def test_paired_rates_edges() -> None:
    every = paired_rates(0, 20, 0, 0)  # every pair: A only
    assert every.difference == -1.0 and every.ci_low == -1.0
    assert every.ci_high is not None and -1.0 < every.ci_high < -0.5
    assert every.p_value == 2 / 2**20  # exact: 20 discordant pairs
    many = paired_rates(0, 30, 0, 0)
    assert many.p_value == pytest.approx(math.erfc(math.sqrt(30) / math.sqrt(2)))
    assert paired_rates(0, 0, 20, 0).ci_high == 1.0
    same = paired_rates(10, 0, 0, 14)  # no discordant pair: p is 1, the interval symmetric
    assert (same.difference, same.p_value) == (0.0, 1.0)
    assert same.ci_high == pytest.approx(-(same.ci_low or 0))
    assert same.ci_high == pytest.approx(Z95**2 / (24 + Z95**2))  # Tango with no discordance
    assert paired_rates(0, 0, 0, 0) == PairedTest(0, None, None, None, None, None, None)


def test_paired_rates_interval_excludes_zero_exactly_when_significant() -> None:
    for only_a in range(40):
        for only_b in range(40):
            for concordant in (0, 1, 30):
                if only_a + only_b + concordant == 0:
                    continue
                test = paired_rates(concordant, only_a, only_b, concordant)
                assert _excludes_zero(test) == _significant(test), (only_a, only_b, concordant)
                low, high, d = test.ci_low, test.ci_high, test.difference
                assert low is not None and high is not None and d is not None
                assert -1.0 <= low <= d <= high <= 1.0


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
    assert paired_means(VALUES[::-1], [1.0] * len(VALUES)) == better  # a function of the pairs
    few = paired_means([0.0, 0.0, 0.0], [1.0, 0.0, 0.5])  # 3 pairs: no sign-flip p below 0.05
    assert (few.ci_low, few.ci_high) == (-1.0, 1.0)
    assert paired_means([], []).p_value is None
    with pytest.raises(ValueError, match="differ in length"):
        paired_means([1.0], [1.0, 0.0])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.2, 1 / 3, 0.5, 0.75, 1.0]), st.floats(0.0, 1.0)),
        min_size=1,
        max_size=40,
    )
)
def test_paired_means_interval_is_the_shifts_the_test_keeps(
    pairs: list[tuple[float, float]],
) -> None:
    a, b = [a for a, _ in pairs], [b for _, b in pairs]
    test = paired_means(a, b)
    assert _excludes_zero(test) == _significant(test)
    low, high, d = test.ci_low, test.ci_high, test.difference
    assert low is not None and high is not None and d is not None
    assert -1.0 <= low <= d <= high <= 1.0
    # The same sign flips, shifted by hand: p just inside an end is at least alpha, just
    # outside it below. (A flip whose |sum| equals the observed one is a hit: in floats, up to
    # rounding.)
    differences = np.sort(np.subtract(b, a))
    signs = _sign_flips(len(pairs))

    def p_at(shift: float) -> float:
        moved = differences - shift
        hits = np.count_nonzero(np.abs(signs @ moved) >= abs(moved.sum()) - 1e-9)
        return (1 + hits) / (1 + PERMUTATIONS)

    assert test.p_value == p_at(0.0)
    step = 1e-6
    if low > -1.0:
        assert p_at(low - step) < ALPHA
        assert low + step > d or p_at(low + step) >= ALPHA
    if high < 1.0:
        assert p_at(high + step) < ALPHA
        assert high - step < d or p_at(high - step) >= ALPHA


@pytest.mark.parametrize(
    ("p", "text"),
    [
        (0.0, "< 0.0001"),
        (1 / (1 + PERMUTATIONS), "< 0.0001"),  # the sign-flip floor
        (0.0000999999, "< 0.0001"),
        (0.0001, "0.0001"),
        (0.0003, "0.0003"),  # 0.0003 * 10_000 is 2.9999999999999996 in floats
        (0.00019, "0.0001"),  # truncated, not rounded
        (0.049996, "0.0499"),  # never 0.0500 beside a significance mark
        (0.05, "0.0500"),
        (0.123456, "0.1234"),
        (1.0, "1.0000"),
    ],
)
def test_format_p(p: float, text: str) -> None:
    assert format_p(p) == text


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
    assert card.select(list(SCORECARD_KEYS)).columns == list(SCORECARD_KEYS)
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


def _naive_ece(scores: list[float], labels: list[float]) -> float:
    """The expected calibration error written plainly: 10 equal-width bins, the last closed."""
    bins: dict[int, list[tuple[float, float]]] = {}
    for s, y in zip(scores, labels, strict=True):
        bins.setdefault(min(int(s * 10), 9), []).append((s, y))
    return sum(
        len(b) / len(scores) * abs(sum(s for s, _ in b) / len(b) - sum(y for _, y in b) / len(b))
        for b in bins.values()
    )


def _naive_auroc(scores: list[float], labels: list[float]) -> float:
    """The AUROC written plainly: over every (complete, incomplete) pair, 1 ordered, 0.5 tied."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y == 1]
    neg = [s for s, y in zip(scores, labels, strict=True) if y == 0]
    won = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return won / (len(pos) * len(neg))


def test_the_calibration_statistics_are_their_definitions_in_any_order() -> None:
    from peb_core.scoring import (
        auroc,
        bootstrap_statistic_interval,
        expected_calibration_error,
        statistic_value,
    )

    rng = random.Random(7)
    for n in (5, 40, 300):
        scores = [rng.choice([0.0, 0.05, 0.3, 0.5, 0.95, 1.0, rng.random()]) for _ in range(n)]
        labels = [float(rng.random() < s) for s in scores]
        labels[0], labels[1] = 0.0, 1.0  # both classes
        for stat, naive in ((expected_calibration_error, _naive_ece), (auroc, _naive_auroc)):
            assert statistic_value(stat, scores, labels) == pytest.approx(naive(scores, labels))
            interval = bootstrap_statistic_interval(stat, scores, labels)
            order = list(range(n))
            rng.shuffle(order)
            shuffled = bootstrap_statistic_interval(
                stat, [scores[i] for i in order], [labels[i] for i in order]
            )
            assert interval == shuffled  # a function of the multiset of predictions
            low, high = interval
            assert low is not None and high is not None and low <= high
    assert math.isnan(statistic_value(auroc, [0.2, 0.9], [1.0, 1.0]))  # one class: undefined
    assert bootstrap_statistic_interval(auroc, [0.2, 0.9], [1.0, 1.0]) == (None, None)


def test_a_paired_statistic_s_interval_excludes_zero_exactly_when_p_is_below_alpha() -> None:
    from peb_core.scoring import auroc, expected_calibration_error, paired_statistic

    rng = random.Random(11)
    seen = {True: 0, False: 0}
    for trial in range(40):
        n = rng.choice([12, 30, 80])
        labels = [float(rng.random() < 0.5) for _ in range(n)]
        noise = rng.choice([0.0, 0.2, 0.5])
        a = [min(1.0, max(0.0, y + rng.uniform(-noise, noise))) for y in labels]
        b = [rng.random() if trial % 2 else min(1.0, max(0.0, s + 0.01)) for s in a]
        for stat in (expected_calibration_error, auroc):
            test = paired_statistic(stat, (a, labels), (b, labels))
            if test.p_value is None:
                continue
            assert test.ci_low is not None and test.ci_high is not None
            excludes = test.ci_low > 0 or test.ci_high < 0
            assert excludes == (test.p_value < 0.05), (trial, test)
            seen[excludes] += 1
    assert seen[True] > 0 and seen[False] > 0
