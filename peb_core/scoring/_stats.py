"""Interval estimates and paired tests for scorecards and run comparisons.

Rates get a Wilson score interval; means get a seeded percentile bootstrap. Every random draw
comes from a fixed seed and the sample size alone, values are sorted before resampling, and
every sum of floats is exact (`exact_mean`) or taken in one fixed order with no BLAS kernel
(whose blocking depends on a row's place in a matrix), so an interval is a function of the
multiset of values: bit-identical in every process, whatever the row order or thread count.

Paired tests give a p-value and an interval that agrees with it, excluding 0 exactly when
p < ALPHA: for rates McNemar's score test with Tango's score interval, which inverts it, or, with
fewer than EXACT_BELOW discordant pairs, McNemar's exact test with Tango's interval stretched to
0 where the exact test keeps 0; for means a sign-flip permutation test with the interval of
shifts it does not reject.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal
from functools import lru_cache
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

Z95 = 1.959963984540054
"""The standard normal 97.5% quantile: a two-sided 95% interval."""
RESAMPLES = 2_000
"""Bootstrap resamples per interval."""
PERMUTATIONS = 10_000
"""Random sign flips per permutation p-value."""
ALPHA = 0.05
"""The level of every paired test: a difference is significant when p < ALPHA, exactly when its
1 - ALPHA interval excludes 0."""
EXACT_BELOW = 25
"""Paired rates with fewer discordant pairs than this are tested by McNemar's exact (binomial)
test, whose p the score test's normal approximation undershoots when they are few (4 of 4
discordant: 0.125 exact, 0.046 by the score test)."""
SEED = 20_261_202
"""The base seed of every draw; the draws for n values use the seed sequence (SEED, n)."""
_CHUNK = 2_048  # distinct groups whose resample means are held at once: ~33 MB

Floats = npt.NDArray[np.float64]


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float | None, float | None]:
    """Wilson score interval of `successes` out of `n`; (None, None) when n is 0."""
    if n == 0:
        return None, None
    low, high = wilson_intervals(np.array([successes]), np.array([n]), z)
    return float(low[0]), float(high[0])


def wilson_intervals(
    successes: npt.ArrayLike, n: npt.ArrayLike, z: float = Z95
) -> tuple[Floats, Floats]:
    """Wilson score intervals, elementwise; NaN where n is 0. Clipped to [0, 1] (the formula
    gives exactly 0 and 1 at the edges, up to rounding)."""
    k = np.asarray(successes, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / m
        denom = 1.0 + z * z / m
        centre = (p + z * z / (2.0 * m)) / denom
        half = z * np.sqrt(p * (1.0 - p) / m + z * z / (4.0 * m * m)) / denom
    low = np.where(k == 0, 0.0, np.clip(centre - half, 0.0, 1.0))
    high = np.where(k == m, 1.0, np.clip(centre + half, 0.0, 1.0))
    empty = m == 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


_BLOCK = 1 << 20
"""Most entries of a resample-count matrix held at once (8 MiB): a group of more values than
_BLOCK / RESAMPLES (524) draws its resamples a block of columns at a time, never cached, so a
row of 16,800 tasks takes 8 MiB, not 270 MiB cached for each of its sizes."""


def _count_blocks(n: int, resamples: int = RESAMPLES) -> Iterator[Floats]:
    """The (n, resamples) matrix of how often each of n sorted values is drawn in each bootstrap
    resample (a column), a block of at most _BLOCK entries at a time, in column order: the
    draws of one seeded generator, so the blocks joined are the whole matrix drawn at once."""
    rng = np.random.default_rng([SEED, n])
    columns = max(1, _BLOCK // n)
    for start in range(0, resamples, columns):
        draws = rng.multinomial(n, np.full(n, 1.0 / n), size=min(columns, resamples - start))
        yield np.ascontiguousarray(draws.T, dtype=np.float64)


@lru_cache(maxsize=64)
def _resample_counts(n: int) -> Floats:
    """The whole resample-count matrix of a small group (n * RESAMPLES <= _BLOCK), cached."""
    (counts,) = _count_blocks(n)
    counts.setflags(write=False)
    return counts


def _bootstrap_means(values: Floats) -> Floats:
    """The mean of each bootstrap resample of the sorted `values` (`_resample_means`), its
    counts drawn a block at a time for a large group."""
    if values.size * RESAMPLES <= _BLOCK:
        return _resample_means(values, _resample_counts(values.size))
    return np.concatenate([_resample_means(values, c) for c in _count_blocks(values.size)])


def _percentiles(means: Floats, level: float) -> tuple[Floats, Floats]:
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail], axis=-1)
    return low, high


def bootstrap_mean_interval(
    values: npt.ArrayLike, level: float = 0.95
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of the mean of `values`; (None, None) when empty."""
    low, high = bootstrap_mean_intervals([np.asarray(values, dtype=np.float64)], level)
    return (None, None) if math.isnan(low[0]) else (float(low[0]), float(high[0]))


def exact_mean(values: npt.ArrayLike) -> float | None:
    """The mean of `values`, their sum taken exactly (`math.fsum`) before one division: the same
    float whatever their order; None when empty."""
    v = np.asarray(values, dtype=np.float64).ravel()
    return math.fsum(v.tolist()) / v.size if v.size else None


def _resample_means(values: Floats, counts: Floats) -> Floats:
    """The mean of each bootstrap resample (a column of `counts`) of the sorted `values`, in one
    fixed order: the counts of equal values are added (integers, exact), then each distinct
    value's share is added in ascending order of value (a sequential `cumsum`, never a BLAS
    product, whose blocking depends on where a row sits in a matrix)."""
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    per_value = np.add.reduceat(counts, starts, axis=0)
    sums: Floats = np.cumsum(per_value * values[starts, np.newaxis], axis=0)[-1]
    return sums / values.size


def bootstrap_mean_intervals(
    groups: Sequence[npt.NDArray[np.float64]], level: float = 0.95
) -> tuple[Floats, Floats]:
    """Percentile bootstrap intervals of the mean of each group (NaN for an empty group).

    Groups with the same sorted values are computed once; each resample's mean is taken in one
    fixed order (`_resample_means`) from a resample-count matrix seeded by the group's size, so
    an interval depends on the multiset of its group's values and nothing else."""
    low = np.full(len(groups), np.nan)
    high = np.full(len(groups), np.nan)
    distinct: dict[bytes, list[int]] = {}
    for i, g in enumerate(groups):
        v = np.sort(np.asarray(g, dtype=np.float64))
        if v.size:
            distinct.setdefault(v.tobytes(), []).append(i)
    items = list(distinct.items())
    for start in range(0, len(items), _CHUNK):
        chunk = items[start : start + _CHUNK]
        values = (np.frombuffer(raw) for raw, _ in chunk)
        means = np.stack([_bootstrap_means(v) for v in values])
        lows, highs = _percentiles(means, level)
        for (_, rows), lo, hi in zip(chunk, lows, highs, strict=True):
            low[rows], high[rows] = lo, hi
    return low, high


Statistic = Callable[[Floats, Floats, Floats], Floats]
"""A statistic of a set of predictions (`_calibration`): given their scores and labels, sorted
by (score, label), and a weights matrix (n, R), its value under each column of weights."""


def _sorted_pairs(scores: npt.ArrayLike, labels: npt.ArrayLike) -> tuple[Floats, Floats]:
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    order = np.lexsort((y, s))
    return s[order], y[order]


def statistic_value(statistic: Statistic, scores: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """`statistic` of the predictions (`scores`, `labels`, in any order), each counted once;
    NaN where it is undefined."""
    s, y = _sorted_pairs(scores, labels)
    return float(statistic(s, y, np.ones((s.size, 1)))[0])


def bootstrap_statistic_interval(
    statistic: Statistic, scores: npt.ArrayLike, labels: npt.ArrayLike, level: float = 0.95
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of `statistic` over the predictions (`scores`, `labels`):
    each resample counts each prediction as often as the resample-count matrix seeded by their
    number says (the draws of `bootstrap_mean_intervals`), predictions sorted by (score, label)
    first, so the interval is a function of their multiset. Resamples where it is undefined
    (an AUROC with one class) are left out; (None, None) when none is defined."""
    s, y = _sorted_pairs(scores, labels)
    if not s.size:
        return None, None
    values = np.concatenate([statistic(s, y, counts) for counts in _count_blocks(s.size)])
    values = values[np.isfinite(values)]
    if not values.size:
        return None, None
    low, high = _percentiles(values, level)
    return float(low), float(high)


def paired_statistic(
    statistic: Statistic,
    a: tuple[npt.ArrayLike, npt.ArrayLike],
    b: tuple[npt.ArrayLike, npt.ArrayLike],
    alpha: float = ALPHA,
) -> PairedTest:
    """`statistic` of B's predictions less A's over n paired tasks (`a` and `b`: each run's
    scores and labels, task by task), with a paired bootstrap: each resample draws tasks (the
    same ones for both runs; pairs sorted by A's then B's score and label first, so the result
    is a function of their multiset) and takes the difference of the two statistics. With the
    D resamples where both are defined, sorted, the interval runs from the m-th smallest to the
    m-th largest, m = ceil(D alpha / 2), and p = min(1, 2 min(#(d <= 0), #(d >= 0)) / D): the
    interval excludes 0 exactly when fewer than m differences lie on one side of it, that is
    exactly when p < alpha."""
    sa, ya = (np.asarray(v, dtype=np.float64) for v in a)
    sb, yb = (np.asarray(v, dtype=np.float64) for v in b)
    n = int(sa.size)
    if n == 0:
        return PairedTest(0, None, None, None, None, None, None)
    order = np.lexsort((yb, sb, ya, sa))
    sa, ya, sb, yb = sa[order], ya[order], sb[order], yb[order]
    in_a, in_b = np.lexsort((ya, sa)), np.lexsort((yb, sb))

    def both(weights: Floats) -> tuple[Floats, Floats]:
        return (
            statistic(sa[in_a], ya[in_a], weights[in_a]),
            statistic(sb[in_b], yb[in_b], weights[in_b]),
        )

    point_a, point_b = (float(v[0]) for v in both(np.ones((n, 1))))
    draws = [both(counts) for counts in _count_blocks(n)]
    diffs = np.concatenate([vb - va for va, vb in draws])
    diffs = np.sort(diffs[np.isfinite(diffs)])
    value_a = point_a if math.isfinite(point_a) else None
    value_b = point_b if math.isfinite(point_b) else None
    difference = point_b - point_a if value_a is not None and value_b is not None else None
    if not diffs.size or difference is None:
        return PairedTest(n, value_a, value_b, difference, None, None, None)
    m = math.ceil(diffs.size * alpha / 2)
    below, above = int(np.count_nonzero(diffs <= 0)), int(np.count_nonzero(diffs >= 0))
    p = min(1.0, 2 * min(below, above) / diffs.size)
    return PairedTest(n, value_a, value_b, difference, float(diffs[m - 1]), float(diffs[-m]), p)


def format_p(p: float) -> str:
    """A p-value as text: `< 0.0001` below 0.0001, else truncated (not rounded) to 4 decimals,
    so that text <= p < text + 0.0001 and the text is below 0.05 exactly when p is: 0.04996
    reads `0.0499`, never `0.0500`."""
    if p < 0.0001:
        return "< 0.0001"
    return str(Decimal(repr(p)).quantize(Decimal("0.0001"), rounding=ROUND_DOWN))


@dataclass(frozen=True)
class PairedTest:
    """B - A over pairs: the two values, their difference, its interval and the two-sided p-value
    of the test the interval agrees with, so the interval excludes 0 exactly when p < alpha.
    With no pairs, all but n_pairs are None."""

    n_pairs: int
    value_a: float | None
    value_b: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    exact: bool = False
    """Whether p is McNemar's exact test's (paired rates with few discordant pairs)."""


def _tango_statistic(delta: float, n: int, only_a: int, only_b: int) -> float:
    """Tango's (1998) score statistic for p_b - p_a = delta on n pairs: the observed difference
    less delta over its standard error at the restricted maximum-likelihood estimate of the
    table; decreasing in delta. At delta 0 it is McNemar's (only_b - only_a) / sqrt(only_a +
    only_b)."""
    numerator = only_b - only_a - n * delta
    if numerator == 0:
        return 0.0
    a = 2 * n
    b = -only_b - only_a + (2 * n - only_b + only_a) * delta
    c = -only_a * delta * (1 - delta)
    restricted = (math.sqrt(max(0.0, b * b - 4 * a * c)) - b) / (2 * a)
    variance = n * (2 * restricted + delta * (1 - delta))
    return numerator / math.sqrt(variance) if variance > 0 else math.copysign(math.inf, numerator)


def _bisect(f: Callable[[float], float], low: float, high: float) -> float:
    """The point in [low, high] where the decreasing f crosses 0, to float precision."""
    for _ in range(200):
        mid = (low + high) / 2
        if mid in (low, high):
            break
        low, high = (mid, high) if f(mid) > 0 else (low, mid)
    return (low + high) / 2


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """McNemar's exact (conditional) two-sided p: the binomial test of B's share of the
    discordant pairs against 1/2, twice the smaller tail, at most 1 (1 with none)."""
    discordant = only_a + only_b
    tail = sum(math.comb(discordant, k) for k in range(min(only_a, only_b) + 1))
    return min(1.0, 2 * tail / (1 << discordant))


def paired_rates(
    both: int,
    only_a: int,
    only_b: int,
    neither: int,
    alpha: float = ALPHA,
    exact_below: int = EXACT_BELOW,
) -> PairedTest:
    """p_b - p_a on paired binary data from the 2x2 counts (the event in both runs, in A only, in
    B only, in neither), with a two-sided p and an interval that excludes 0 exactly when
    p < alpha.

    With at least `exact_below` discordant pairs: McNemar's score test without continuity
    correction (p = erfc(|z| / sqrt 2), z = (only_b - only_a) / sqrt(only_a + only_b)) and the
    interval that inverts it, Tango's (1998) asymptotic score interval: every difference whose
    score statistic stays within the normal 1 - alpha/2 quantile. With fewer: McNemar's exact
    test (`mcnemar_exact`), which no interval on the difference inverts; the interval is
    Tango's, stretched to reach 0 where the exact test keeps 0 (with so few discordant pairs the
    exact p is never below alpha where the score test's is not, at 0.01, 0.05 or 0.1: Tango's
    interval already excludes 0 wherever the exact test rejects)."""
    n = both + only_a + only_b + neither
    if n == 0:
        return PairedTest(0, None, None, None, None, None, None)
    d = (only_b - only_a) / n

    def statistic(delta: float) -> float:
        return _tango_statistic(delta, n, only_a, only_b)

    z = NormalDist().inv_cdf(1 - alpha / 2)
    low = -1.0 if d == -1 else _bisect(lambda t: statistic(t) - z, -1.0, d)
    high = 1.0 if d == 1 else _bisect(lambda t: statistic(t) + z, d, 1.0)
    exact = only_a + only_b < exact_below
    if exact:
        p = mcnemar_exact(only_a, only_b)
        if p >= alpha:  # the exact test keeps 0: so does the interval
            low, high = min(low, 0.0), max(high, 0.0)
    else:
        p = math.erfc(abs(statistic(0.0)) / math.sqrt(2))
    return PairedTest(n, (both + only_a) / n, (both + only_b) / n, d, low, high, p, exact)


_GRID = 1e9  # differences are compared on a grid of 1e-9, as integers: sums are then exact


@lru_cache(maxsize=64)
def _sign_flips(n: int, flips: int = PERMUTATIONS) -> npt.NDArray[np.int64]:
    """(flips, n) random signs +-1, seeded by n."""
    rng = np.random.default_rng([SEED, n, 1])
    signs = rng.integers(0, 2, size=(flips, n)) * 2 - 1
    signs.setflags(write=False)
    return signs


def paired_means(
    a: npt.ArrayLike, b: npt.ArrayLike, alpha: float = ALPHA, bound: float | None = 1.0
) -> PairedTest:
    """Mean of B - A over pairs of scores in [0, `bound`] (None: unbounded, such as counts),
    with a two-sided sign-flip permutation p-value and the interval that inverts it.

    p is the share of PERMUTATIONS random sign assignments of the differences whose |sum| reaches
    the observed |sum|, as (1 + hits) / (1 + PERMUTATIONS); with every difference 0 it is 1.
    The interval is every shift t whose differences minus t the same sign assignments do not
    reject at alpha (the differences taken as symmetric about their true mean), clipped to
    [-bound, bound] (unbounded: an infinite end is None). Each assignment rejects t outside an
    interval around the mean, with ends (S -+ s.d) / (n -+ sum(s)), so the interval's ends are
    order statistics of those ends. Differences are sorted first (the result is a function of
    their multiset) and taken on a grid of 1e-9, so the sums, and whether p < alpha, are
    exact."""
    xa = np.asarray(a, dtype=np.float64)
    xb = np.asarray(b, dtype=np.float64)
    if xa.shape != xb.shape:
        raise ValueError(f"paired samples differ in length: {xa.size} and {xb.size}")
    n = int(xa.size)
    if n == 0:
        return PairedTest(0, None, None, None, None, None, None)
    d = np.sort(np.rint((xb - xa) * _GRID).astype(np.int64))
    signs = _sign_flips(n)
    total, flipped, balance = int(d.sum()), signs @ d, signs.sum(axis=1)
    hits = int(np.count_nonzero(np.abs(flipped) >= abs(total)))
    p = (1 + hits) / (1 + PERMUTATIONS)
    with np.errstate(divide="ignore", invalid="ignore"):  # all signs equal: never rejects
        ends = ((total - flipped) / (n - balance), (total + flipped) / (n + balance))
    lows = np.where(np.abs(balance) == n, -np.inf, np.minimum(*ends))
    highs = np.where(np.abs(balance) == n, np.inf, np.maximum(*ends))
    # the fewest hits a shift needs to be kept: the same test as p >= alpha
    needed = int(np.argmax((1 + np.arange(PERMUTATIONS + 1)) / (1 + PERMUTATIONS) >= alpha))
    low, high = -np.inf, np.inf
    if needed:
        low = float(np.sort(lows)[needed - 1])
        high = float(np.sort(highs)[PERMUTATIONS - needed])
    return PairedTest(
        n,
        exact_mean(xa),
        exact_mean(xb),
        total / n / _GRID,
        max(-bound, low / _GRID) if bound is not None else _finite(low / _GRID),
        min(bound, high / _GRID) if bound is not None else _finite(high / _GRID),
        p,
    )


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
