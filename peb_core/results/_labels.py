"""What sets a run apart from the others shown: each run's declaration as its manifest records
it (`declared`: the `RunSpec` fields, in their order), and one label per run naming the fields
that differ among the runs shown (`differing_labels`), so runs of a sweep, whose folders are
named by a hash, read as `agent_cave contract=corpus followup=pressure`. `peb score`,
`peb compare`, the notebooks and the paper's tables all take a run's label (`run_label`) from here
(`score_run_dirs` puts it in every score row)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, TypeVar

from ..access import DEFAULT_FOLLOWUP, DEFAULT_INTERFACE, DEFAULT_PUSHES
from ..interventions import DEFAULT_INTERVENTION
from ..runs import RunManifest, options
from ..tasks import DEFAULT_CONTRACT, TIERS, format_seeds

UNLABELLED = frozenset(
    {"family", "max_tasks", "timeout", "local_port", "cache", "concurrency", "retry_errors"}
)
"""RunSpec fields a label never names: the families (every row says its own) and the options
that change how a run is made, not what it measures (a task cap, a request timeout, a port, the
reply cache, concurrency, retrying errors)."""

_AGENT_DEFAULTS = {
    "contract": DEFAULT_CONTRACT,
    "followup": DEFAULT_FOLLOWUP,
    "pushes": DEFAULT_PUSHES,
}
"""What an agent run's manifest leaves out when the option is at its default."""
_DEFAULTS = {"interface": DEFAULT_INTERFACE, "intervention": DEFAULT_INTERVENTION}
"""What any run's manifest leaves out when the option is at its default."""


def _text(value: Any) -> str:
    if value is None:
        return "default"
    if isinstance(value, Mapping):  # a delegate system's config
        return str(value.get("name", value))
    return str(value)


def declared(manifest: RunManifest, system: str) -> dict[str, str | None]:
    """A run's declaration as its manifest records it: each RunSpec field a label may name
    (not `UNLABELLED`), in declaration order, as text; None where the field does not apply to
    the run (a prompt protocol for a baseline, a disclosure mode for a one-shot system) or is
    not recorded. `system` is the run's system as tables name it (`system_label`)."""
    agent = manifest.kind == "episodes"
    corpus = TIERS[manifest.tier].corpus is not None if manifest.tier in TIERS else False
    config = manifest.config
    found: dict[str, str | None] = {}
    for name in options():
        if name in UNLABELLED:
            continue
        value: Any
        if name == "system":
            value = system
        elif name == "seeds":
            value = format_seeds(manifest.seeds, width=None)
        elif name == "limit":
            value = manifest.limit or "all"
        elif name == "corpus_size":
            value = (manifest.corpus_size or "default") if corpus else None
        elif name in _AGENT_DEFAULTS and agent:
            recorded = getattr(manifest, name, None) or config.get(name)
            value = recorded or _AGENT_DEFAULTS[name]
        elif name in _DEFAULTS:
            value = config.get(name, _DEFAULTS[name])
        elif name in RunManifest.model_fields:
            value = getattr(manifest, name)
        elif name in config:
            found[name] = _text(config[name])
            continue
        else:
            value = None
        found[name] = None if value is None else _text(value)
    return found


K = TypeVar("K", bound=Hashable)


def differing_labels(
    declarations: Mapping[K, Mapping[str, str | None]], names: Mapping[K, str] | None = None
) -> dict[K, str]:
    """A label per run (`declared` by key): the fields whose values differ among the runs they
    apply to (two or more values), as `field=value`, the system bare and first; the system
    alone when nothing else differs. Runs whose labels would still be equal have their
    `names` (their folders' labels) added, so no two runs share a label."""
    fields: list[str] = []
    for declaration in declarations.values():
        fields += [f for f in declaration if f not in fields]
    differing = [f for f in fields if len({d.get(f) for d in declarations.values()} - {None}) > 1]
    labels: dict[K, str] = {}
    for key, declaration in declarations.items():
        parts = [
            str(declaration[f]) if f == "system" else f"{f}={declaration[f]}"
            for f in differing
            if declaration.get(f) is not None
        ]
        if "system" not in differing:
            parts.insert(0, str(declaration.get("system")))
        labels[key] = " ".join(parts)
    counts: dict[str, int] = {}
    for label in labels.values():
        counts[label] = counts.get(label, 0) + 1
    return {
        key: f"{label} ({names[key]})" if counts[label] > 1 and names and key in names else label
        for key, label in labels.items()
    }


def run_descriptions(
    manifests: Sequence[tuple[str, RunManifest, str]],
) -> dict[str, str]:
    """The `differing_labels` of runs given as (folder label, manifest, system label), by folder
    label."""
    declarations = {name: declared(manifest, system) for name, manifest, system in manifests}
    return differing_labels(declarations, {name: name for name, _, _ in manifests})
