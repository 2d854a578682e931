"""Interval estimates and paired tests for scorecards and run comparisons.

Rates get a Wilson score interval; means get a seeded percentile bootstrap. Every random draw
comes from a fixed seed and the sample size alone, and values are sorted before resampling, so
an interval is a function of the multiset of values: the same in every process, whatever the
row order. Paired tests: exact McNemar on discordant pairs with the Newcombe (1998, method 10)
interval for a difference of paired proportions, and for means a paired bootstrap interval with
a sign-flip permutation p-value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

Z95 = 1.959963984540054
"""The standard normal 97.5% quantile: a two-sided 95% interval."""
RESAMPLES = 2_000
"""Bootstrap resamples per interval."""
PERMUTATIONS = 10_000
"""Random sign flips per permutation p-value."""
SEED = 20_261_202
"""The base seed of every draw; the draws for n values use the seed sequence (SEED, n)."""
_CHUNK = 2_048  # distinct groups per bootstrap matrix product: bounds memory at ~33 MB

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


@lru_cache(maxsize=64)
def _resample_counts(n: int, resamples: int = RESAMPLES) -> Floats:
    """(resamples, n): how often each of n sorted values is drawn in each bootstrap resample."""
    rng = np.random.default_rng([SEED, n])
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(np.float64)
    counts.setflags(write=False)
    return counts


def _sign_flips(n: int, flips: int = PERMUTATIONS) -> Floats:
    """(flips, n) random signs +-1, seeded by n."""
    rng = np.random.default_rng([SEED, n, 1])
    return rng.integers(0, 2, size=(flips, n)).astype(np.float64) * 2.0 - 1.0


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


def bootstrap_mean_intervals(
    groups: Sequence[npt.NDArray[np.float64]], level: float = 0.95
) -> tuple[Floats, Floats]:
    """Percentile bootstrap intervals of the mean of each group (NaN for an empty group).

    Vectorised: groups with the same sorted values are computed once, and the distinct groups of
    each size share one seeded resample-count matrix, so the bootstrap means of many groups are
    one matrix product."""
    low = np.full(len(groups), np.nan)
    high = np.full(len(groups), np.nan)
    distinct: dict[tuple[int, bytes], list[int]] = {}
    for i, g in enumerate(groups):
        v = np.sort(np.asarray(g, dtype=np.float64))
        if v.size:
            distinct.setdefault((v.size, v.tobytes()), []).append(i)
    by_size: dict[int, list[tuple[bytes, list[int]]]] = {}
    for (size, raw), rows in distinct.items():
        by_size.setdefault(size, []).append((raw, rows))
    for size, items in by_size.items():
        counts = _resample_counts(size)
        for start in range(0, len(items), _CHUNK):
            chunk = items[start : start + _CHUNK]
            values = np.frombuffer(b"".join(raw for raw, _ in chunk)).reshape(len(chunk), size)
            lows, highs = _percentiles(values @ counts.T / size, level)
            for (_, rows), lo, hi in zip(chunk, lows, highs, strict=True):
                low[rows], high[rows] = lo, hi
    return low, high


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: the binomial test of `only_a` against `only_b`
    discordant pairs at 1/2, doubled and capped at 1 (1.0 with no discordant pairs)."""
    n = only_a + only_b
    k = min(only_a, only_b)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return min(1.0, 2.0 * tail)


def newcombe_paired_interval(
    both: int, only_a: int, only_b: int, neither: int, z: float = Z95
) -> tuple[float | None, float | None]:
    """Newcombe's (1998, method 10) square-and-add interval for p_b - p_a on paired binary data,
    from the 2x2 counts (both, A only, B only, neither); (None, None) with no pairs."""
    n = both + only_a + only_b + neither
    if n == 0:
        return None, None
    k_a, k_b = both + only_a, both + only_b
    p_a, p_b = k_a / n, k_b / n
    (l_a, u_a), (l_b, u_b) = (wilson_interval(k, n, z) for k in (k_a, k_b))
    assert l_a is not None and u_a is not None and l_b is not None and u_b is not None
    margins = k_a * (n - k_a) * k_b * (n - k_b)
    cross = both * neither - only_a * only_b
    phi = 0.0
    if margins:
        phi = (cross - n / 2 if cross > n / 2 else min(cross, 0)) / math.sqrt(margins)
    d = p_b - p_a
    down_b, up_a = p_b - l_b, u_a - p_a  # the distances that widen the interval downwards
    up_b, down_a = u_b - p_b, p_a - l_a  # and upwards
    low = d - math.sqrt(max(0.0, down_b**2 - 2 * phi * down_b * up_a + up_a**2))
    high = d + math.sqrt(max(0.0, up_b**2 - 2 * phi * up_b * down_a + down_a**2))
    return max(-1.0, low), min(1.0, high)


@dataclass(frozen=True)
class PairedMeans:
    """A paired comparison of two means: B - A, its bootstrap interval and p-value."""

    n_pairs: int
    mean_a: float | None
    mean_b: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None


def paired_means(a: npt.ArrayLike, b: npt.ArrayLike, level: float = 0.95) -> PairedMeans:
    """Mean of B - A over pairs, with a percentile bootstrap interval (pairs resampled, i.e. the
    differences) and a two-sided sign-flip permutation p-value: the share of PERMUTATIONS random
    sign assignments of the differences whose |mean| reaches the observed |mean|, as
    (1 + hits) / (1 + PERMUTATIONS). With every difference 0, p is 1."""
    xa = np.asarray(a, dtype=np.float64)
    xb = np.asarray(b, dtype=np.float64)
    if xa.shape != xb.shape:
        raise ValueError(f"paired samples differ in length: {xa.size} and {xb.size}")
    n = int(xa.size)
    if n == 0:
        return PairedMeans(0, None, None, None, None, None, None)
    d = np.sort(xb - xa)
    observed = float(d.mean())
    (low,), (high,) = bootstrap_mean_intervals([d], level)
    if not d.any():
        p = 1.0
    else:
        means = np.abs(_sign_flips(n) @ d) / n
        hits = int(np.count_nonzero(means >= abs(observed) - 1e-12))
        p = (1 + hits) / (1 + PERMUTATIONS)
    return PairedMeans(n, float(xa.mean()), float(xb.mean()), observed, float(low), float(high), p)
