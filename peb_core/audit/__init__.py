"""The shortcut audit (docs/benchmark.md §8): per tier and family, what a linear classifier over
the word n-grams of the model views of training seeds learns of completeness, on held-out seeds,
beside the majority rate and the explicit-signal reader; the same on the tasks whose only signals
are silent, where any gain over the majority rate is a leak; and the n-grams it weighs most.
It reads model views only (it comes after `scoring`, whose paired intervals it uses) and needs
scikit-learn, the optional extra `audit`."""

from ._shortcuts import (
    INSTALL,
    NGRAMS,
    STATED,
    TEST_SEEDS,
    TOP,
    TRAIN_SEEDS,
    Accuracy,
    AuditError,
    AuditUnavailable,
    C,
    Difference,
    FamilyAudit,
    NGram,
    Progress,
    ShortcutAudit,
    Subset,
    audit_family,
    audit_shortcuts,
    view_text,
)
from ._signals import SIGNALS, SignalReader, SignalRule, Signals
from ._tables import ngram_table, summary_table

__all__ = [
    "INSTALL",
    "NGRAMS",
    "SIGNALS",
    "STATED",
    "TEST_SEEDS",
    "TOP",
    "TRAIN_SEEDS",
    "Accuracy",
    "AuditError",
    "AuditUnavailable",
    "C",
    "Difference",
    "FamilyAudit",
    "NGram",
    "Progress",
    "ShortcutAudit",
    "SignalReader",
    "SignalRule",
    "Signals",
    "Subset",
    "audit_family",
    "audit_shortcuts",
    "ngram_table",
    "summary_table",
    "view_text",
]
