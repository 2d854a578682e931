"""The shortcut audit (docs/benchmark.md §8): what a text classifier learns of completeness from
the surface of a family's model views.

For each tier and family, a linear classifier (L2 logistic regression by liblinear, `C`, a fixed
random state) over the word 1- and 2-grams of the model views of training seeds (each n-gram
present or absent; those in fewer than two training views dropped) predicts each held-out view's
completeness. Its accuracy on the held-out seeds is reported beside the majority rate (the share
of the commoner class) and beside the explicit-signal reader (`_signals.py`: the most the stated
signals alone give), with the difference from each as a paired 95% interval (McNemar's score
test, Tango's interval, at any number of discordant pairs; `scoring.paired_rates`). The same is
reported on the held-out tasks whose only signals are silent (no topology `named_gap`: silent
gaps, decoys, complete tasks), where a view states nothing true about its completeness: any
accuracy above the majority rate there is a leak, and one whose interval lies above 0 is
flagged. Last, the n-grams that weigh most for each class, with the share of training views of
each class holding them, so an author sees what leaks.

A view's text is what a model is shown of it, less what is the same in every view of a family or
random per view: the prompt, each requirement of the contract (none where the contract is found in
the corpus: the procedure among the documents lists them) and the policy, and each document's
title, scope and body (not the answer schema, nor the documents' random ids). On a tier with
corpora the audit reads the tasks made with their contract given or found in the corpus
(`contract`). Same seeds, same
figures: generation is deterministic, and so are the vocabulary (sorted) and the solver.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..tasks import (
    DEFAULT_CONTRACT,
    Completeness,
    ContractSource,
    ModelView,
    ScenarioFile,
    Tier,
    check_contract,
    get_tier,
    iter_tasks,
    model_view,
)
from ._signals import SignalReader, SignalRule, Signals

if TYPE_CHECKING:
    import polars as pl

TRAIN_SEEDS = range(200_000, 200_600)
"""The default training seeds: 600 fresh seeds, 3,600 tasks a family (six templates)."""
TEST_SEEDS = range(300_000, 300_100)
"""The default held-out seeds: 100 fresh seeds, 600 tasks a family."""
TOP = 10
"""N-grams listed per class by default."""
NGRAMS = (1, 2)
"""The n-gram lengths the classifier reads."""
C = 0.1
"""The classifier's inverse regularisation strength: of 0.03, 0.1, 0.3 and 1, the one that read
completeness best on the hard tier (mean accuracy over the seven shipped families, on all tasks
and on the silent ones, trained on seeds 400000-400599 and scored on 500000-500099, apart from
the defaults): an audit should be as strong a reader as it can be."""
STATED = "named_gap"
"""The topology of a gap the view states; a task without it has only silent signals."""
INSTALL = "pip install 'partial-evidence-bench[audit]' (or: pip install scikit-learn)"
CLASSES: tuple[Completeness, Completeness] = ("complete", "incomplete")


class AuditUnavailable(RuntimeError):
    """scikit-learn, which the audit's classifier needs, is not installed."""


class AuditError(ValueError):
    """An audit that cannot be made as asked; the message is one line saying why."""


def _sklearn() -> Any:
    """The scikit-learn parts the audit uses (imported on first use: it is an optional extra)."""
    try:
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise AuditUnavailable(f"the shortcut audit needs scikit-learn: {INSTALL}") from None
    return CountVectorizer, LogisticRegression


def view_text(view: ModelView) -> str:
    """The text of a view the classifier reads (see the module docstring)."""
    contract = view.contract
    parts = [view.prompt]
    parts += [f"{r.id}: {r.description}" for r in contract.required_evidence]
    parts.append(
        "A partial answer is permitted." if contract.partial_response_permitted else "Block."
    )
    for doc in view.documents:
        parts += [doc.title, f"scope {doc.scope}", doc.body]
    return "\n".join(parts)


@dataclass(frozen=True)
class _Sample:
    """One seed set's views of a family on a tier, as the audit reads them."""

    texts: list[str]
    labels: list[Completeness]
    silent: list[bool]
    signals: list[Signals]


def _sample(
    spec: ScenarioFile,
    tier: Tier,
    seeds: Sequence[int],
    reader: SignalReader,
    contract: ContractSource = DEFAULT_CONTRACT,
) -> _Sample:
    sample = _Sample([], [], [], [])
    for task in iter_tasks([spec], seeds, tier=tier, contract=contract):
        view = model_view(task, spec)
        sample.texts.append(view_text(view))
        sample.labels.append(task.oracles.completeness)
        sample.silent.append(STATED not in task.topologies)
        sample.signals.append(reader.read(view))
    return sample


@dataclass(frozen=True)
class Accuracy:
    """A reader's accuracy on some held-out tasks, with its Wilson 95% interval."""

    n: int
    value: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, correct: Sequence[bool]) -> Accuracy:
        from ..scoring import wilson_interval

        n, hits = len(correct), sum(correct)
        low, high = wilson_interval(hits, n)
        return cls(n, hits / n if n else None, low, high)


@dataclass(frozen=True)
class Difference:
    """The learned classifier's accuracy less another reader's on the same tasks, with the
    paired 95% interval; `beyond` when the interval lies above 0 (p < 0.05)."""

    value: float | None
    low: float | None
    high: float | None

    @property
    def beyond(self) -> bool | None:
        return None if self.low is None else self.low > 0

    @classmethod
    def of(cls, learned: Sequence[bool], other: Sequence[bool]) -> Difference:
        from ..scoring import paired_rates

        pairs = list(zip(other, learned, strict=True))
        test = paired_rates(  # the score test at every count: a leak errs towards a flag
            both=sum(a and b for a, b in pairs),
            only_a=sum(a and not b for a, b in pairs),
            only_b=sum(b and not a for a, b in pairs),
            neither=sum(not (a or b) for a, b in pairs),
            exact_below=0,
        )
        return cls(test.difference, test.ci_low, test.ci_high)


@dataclass(frozen=True)
class Subset:
    """The three readers on some held-out tasks: the majority rate (the commoner class, always),
    the explicit-signal reader, the learned classifier, and the learned less each."""

    n: int
    majority: Accuracy
    signals: Accuracy
    learned: Accuracy
    over_majority: Difference
    over_signals: Difference

    @classmethod
    def of(
        cls,
        labels: Sequence[Completeness],
        signals: Sequence[Completeness],
        learned: Sequence[Completeness],
    ) -> Subset:
        common = max(CLASSES, key=lambda c: (labels.count(c), c == "complete"))
        right = {
            "majority": [y == common for y in labels],
            "signals": [p == y for p, y in zip(signals, labels, strict=True)],
            "learned": [p == y for p, y in zip(learned, labels, strict=True)],
        }
        return cls(
            n=len(labels),
            majority=Accuracy.of(right["majority"]),
            signals=Accuracy.of(right["signals"]),
            learned=Accuracy.of(right["learned"]),
            over_majority=Difference.of(right["learned"], right["majority"]),
            over_signals=Difference.of(right["learned"], right["signals"]),
        )

    @property
    def one_class(self) -> bool:
        """Every task of the subset has the same completeness: no reader can be told apart from
        the majority rate, and no leak can show."""
        return self.majority.value == 1.0


@dataclass(frozen=True)
class NGram:
    """An n-gram the classifier weighs toward `completeness`: its weight, the share of the
    training views of that class (`in_class`) and of the other (`in_other`) holding it, and
    `separation`: weight x (in_class - in_other), how far it moves the classifier's mean score
    of the class from the other's. N-grams are ranked by `separation`, so a frequent cue comes
    before a rare one the classifier happens to weigh heavily."""

    completeness: Completeness
    rank: int
    ngram: str
    weight: float
    separation: float
    in_class: float
    in_other: float


@dataclass(frozen=True)
class FamilyAudit:
    """The audit of one family on one tier, its tasks made with their contract given or found
    in the corpus (`contract`)."""

    tier: Tier
    family: str
    n_train: int
    all_tasks: Subset
    silent: Subset
    ngrams: tuple[NGram, ...]
    contract: ContractSource = DEFAULT_CONTRACT

    @property
    def leak(self) -> bool | None:
        """The learned classifier beats the majority rate on the silent tasks beyond sampling
        noise (its paired interval above 0); None where the silent tasks are all of one class."""
        return None if self.silent.one_class else self.silent.over_majority.beyond


def _overlap(train: Sequence[int], test: Sequence[int]) -> list[int]:
    held = set(test)
    return [s for s in train if s in held]


def audit_family(
    spec: ScenarioFile,
    tier: Tier,
    train_seeds: Sequence[int] = TRAIN_SEEDS,
    test_seeds: Sequence[int] = TEST_SEEDS,
    top: int = TOP,
    contract: ContractSource = DEFAULT_CONTRACT,
) -> FamilyAudit:
    """The shortcut audit of `spec` on `tier`, its tasks made with `contract` (see the module
    docstring). AuditError for seed sets that overlap or are empty, a tier the family lacks (or
    a contract it cannot be found with), or training views all of one completeness;
    AuditUnavailable without scikit-learn."""
    CountVectorizer, LogisticRegression = _sklearn()
    import numpy as np

    shared = _overlap(train_seeds, test_seeds)
    if shared:
        raise AuditError(
            f"{len(shared)} seeds are both training and held-out seeds (e.g. {shared[0]}); "
            "held-out seeds must differ from the training seeds"
        )
    if not train_seeds or not test_seeds:
        raise AuditError("the training and the held-out seeds must each hold a seed")
    why = get_tier(tier).unsupported(spec)
    if why is not None:
        raise AuditError(f"family {spec.id} has no {tier} tier: {why}")
    try:
        check_contract(spec, tier, contract)
    except ValueError as exc:
        raise AuditError(str(exc)) from None
    reader = SignalReader.of(spec)
    train = _sample(spec, tier, train_seeds, reader, contract)
    test = _sample(spec, tier, test_seeds, reader, contract)
    if len(set(train.labels)) < 2:
        raise AuditError(
            f"{spec.id} ({tier}): every training task is {train.labels[0]}; "
            "choose more training seeds"
        )

    vectorizer = CountVectorizer(
        ngram_range=NGRAMS, binary=True, min_df=2, token_pattern=r"(?u)\b\w+\b", dtype=np.float64
    )
    x_train = vectorizer.fit_transform(train.texts)
    y_train = np.array([y == "incomplete" for y in train.labels])
    model = LogisticRegression(solver="liblinear", C=C, max_iter=1000, random_state=0)
    model.fit(x_train, y_train)
    learned: list[Completeness] = [
        CLASSES[int(p)] for p in model.predict(vectorizer.transform(test.texts))
    ]
    rule = SignalRule.fit(train.signals, train.labels)
    stated = rule.predict(test.signals)

    silent = [i for i, s in enumerate(test.silent) if s]
    weights = model.coef_[0]  # toward "incomplete"
    names = vectorizer.get_feature_names_out()
    holding = {}  # per class, the share of its training views holding each n-gram
    for c in CLASSES:
        rows = y_train == (c == "incomplete")
        holding[c] = np.asarray(x_train[rows].sum(axis=0)).ravel() / rows.sum()
    ngrams: list[NGram] = []
    toward: tuple[tuple[Completeness, float], ...] = (("incomplete", 1.0), ("complete", -1.0))
    for completeness, sign in toward:
        other = CLASSES[completeness == "complete"]
        weight = sign * weights
        separation = weight * (holding[completeness] - holding[other])
        # the largest separation first (ties by n-gram, so the order is fixed), of those
        # weighed toward the class and commoner in it
        kept = list(np.flatnonzero((weight > 0) & (separation > 0)))
        kept.sort(key=lambda i: (-separation[i], names[i]))
        for rank, i in enumerate(kept[:top], start=1):
            ngrams.append(
                NGram(
                    completeness=completeness,
                    rank=rank,
                    ngram=str(names[i]),
                    weight=float(weight[i]),
                    separation=float(separation[i]),
                    in_class=float(holding[completeness][i]),
                    in_other=float(holding[other][i]),
                )
            )
    return FamilyAudit(
        tier=tier,
        family=spec.id,
        n_train=len(train.labels),
        all_tasks=Subset.of(test.labels, stated, learned),
        silent=Subset.of(
            [test.labels[i] for i in silent],
            [stated[i] for i in silent],
            [learned[i] for i in silent],
        ),
        ngrams=tuple(ngrams),
        contract=contract,
    )


@dataclass(frozen=True)
class ShortcutAudit:
    """The audit as frames: `summary` (one row per tier and family) and `ngrams` (per tier,
    family and class, the n-grams the classifier weighs most toward it)."""

    families: tuple[FamilyAudit, ...]

    @property
    def summary(self) -> pl.DataFrame:
        import polars as pl

        rows = []
        for a in self.families:
            row: dict[str, Any] = {
                "tier": a.tier,
                "contract": a.contract,
                "family": a.family,
                "n_train": a.n_train,
            }
            for prefix, subset in (("", a.all_tasks), ("silent_", a.silent)):
                row[f"{prefix}n_test"] = subset.n
                for name in ("majority", "signals", "learned"):
                    acc: Accuracy = getattr(subset, name)
                    row[f"{prefix}{name}"] = acc.value
                    row[f"{prefix}{name}_low"] = acc.low
                    row[f"{prefix}{name}_high"] = acc.high
                for name in ("over_majority", "over_signals"):
                    diff: Difference = getattr(subset, name)
                    row[f"{prefix}{name}"] = diff.value
                    row[f"{prefix}{name}_low"] = diff.low
                    row[f"{prefix}{name}_high"] = diff.high
            row["leak"] = a.leak
            rows.append(row)
        return pl.DataFrame(rows, schema_overrides={"leak": pl.Boolean})

    @property
    def ngrams(self) -> pl.DataFrame:
        import polars as pl

        return pl.DataFrame(
            [
                {"tier": a.tier, "contract": a.contract, "family": a.family, **vars(g)}
                for a in self.families
                for g in a.ngrams
            ],
            schema={
                "tier": pl.String,
                "contract": pl.String,
                "family": pl.String,
                "completeness": pl.String,
                "rank": pl.Int64,
                "ngram": pl.String,
                "weight": pl.Float64,
                "separation": pl.Float64,
                "in_class": pl.Float64,
                "in_other": pl.Float64,
            },
        )


Progress = Callable[[int, int, Tier, str], None]
"""Called before each family is audited: its number (from 1), how many, the tier, the family."""


def audit_shortcuts(
    families: Iterable[ScenarioFile],
    tiers: Iterable[Tier],
    train_seeds: Sequence[int] = TRAIN_SEEDS,
    test_seeds: Sequence[int] = TEST_SEEDS,
    top: int = TOP,
    progress: Progress | None = None,
    contract: ContractSource = DEFAULT_CONTRACT,
) -> ShortcutAudit:
    """`audit_family` for every tier (in the order given) and each family it supports, the
    tiers with corpora with their contract where `contract` says (the others: given);
    AuditUnavailable at once without scikit-learn."""
    _sklearn()
    specs = list(families)
    pairs = [
        (tier, spec) for tier in tiers for spec in specs if get_tier(tier).unsupported(spec) is None
    ]
    audits = []
    for i, (tier, spec) in enumerate(pairs, start=1):
        if progress is not None:
            progress(i, len(pairs), tier, spec.id)
        found = contract if get_tier(tier).corpus is not None else DEFAULT_CONTRACT
        audits.append(audit_family(spec, tier, train_seeds, test_seeds, top, found))
    return ShortcutAudit(tuple(audits))
