"""The shortcut audit's frames as a reader is shown them (`peb audit shortcuts`, the task
explorer): accuracies to three decimals, each difference with its paired 95% interval, and one
row of n-grams per tier, family and class."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _difference(row: dict[str, Any], key: str) -> str:
    value, low, high = row[key], row[f"{key}_low"], row[f"{key}_high"]
    if value is None:
        return "-"
    return f"{value:+.3f} [{low:+.3f}, {high:+.3f}]"


def summary_table(summary: pl.DataFrame) -> pl.DataFrame:
    """The summary as printed: accuracies to 3 decimals, differences with their 95% interval."""
    import polars as pl

    rows = []
    for r in summary.to_dicts():
        rows.append(
            {
                "tier": r["tier"],
                "contract": r["contract"],
                "family": r["family"],
                "train": r["n_train"],
                "test": r["n_test"],
                "majority": _rate(r["majority"]),
                "signals": _rate(r["signals"]),
                "learned": _rate(r["learned"]),
                "learned - signals": _difference(r, "over_signals"),
                "silent": r["silent_n_test"],
                "silent majority": _rate(r["silent_majority"]),
                "silent signals": _rate(r["silent_signals"]),
                "silent learned": _rate(r["silent_learned"]),
                "silent learned - majority": _difference(r, "silent_over_majority"),
                "leak": {True: "LEAK", False: "no", None: "-"}[r["leak"]],
            }
        )
    return pl.DataFrame(rows)


def ngram_table(ngrams: pl.DataFrame) -> pl.DataFrame:
    """One row per tier, family and class (in the audit's order): its n-grams in rank order,
    each with the share of training views of the class and of the other holding it."""
    import polars as pl

    return ngrams.group_by("tier", "family", "completeness", maintain_order=True).agg(
        pl.format(
            "{} ({}% / {}%)",
            "ngram",
            (pl.col("in_class") * 100).round(0).cast(pl.Int64),
            (pl.col("in_other") * 100).round(0).cast(pl.Int64),
        )
        .str.join(", ")
        .alias("n-grams weighed toward it (share of its training views / of the other's)")
    )
