"""`none`, the default (docs/benchmark.md §11): no platform element; the system's reply is what
the consumer sees, and a run's config records nothing."""

from __future__ import annotations

from ._intervention import DEFAULT_INTERVENTION, Intervention

NONE = Intervention(
    DEFAULT_INTERVENTION, "no intervention: the system's reply is what the consumer sees"
)
