"""The `System` protocol every system implements, and the deterministic baselines of
docs/benchmark.md §4 (`cue_reader` has a module of its own), a registry by name as tiers and
views are (`BASELINES`): a new baseline is a policy and one registry line (an entry of
`SHIPPED_BASELINES`, or a `register_baseline` call from outside the package).

Two baselines answer under `structured_gap@2` (docs/benchmark.md §2.2), each gap report with
the next step the rule gives for the filter report's scopes (`tasks.next_step_for`):
`calibrated_reader` (`fail_and_report` with a confidence of 1 where nothing is withheld, else 0:
a frequency it can compute from what it sees, and a calibrated one) and `half_confident` (the
same, its confidence always 0.5).

A system declares which view it reads: `model` (ModelView), `boundary`
(BoundaryView: the model view plus withheld scope ids), `system` (SystemView: visible facts
and the access layer's filter report), `oracle` (the Task itself; only the oracle baseline) or
`agent` (AgentView: tools over the corpus; the agent baselines, `_agent_baselines.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from .._registry import Registry
from ..access import DEFAULT_INTERFACE, check_interface
from ..reading import say_response
from ..tasks import (
    VIEWS,
    Answer,
    GapReport,
    SystemView,
    Task,
    ViewKind,
    fold_answer,
    live_effects,
    load_families,
    next_step_for,
)
from ._agent_baselines import AGENT_BASELINES, ESCALATING_BASELINES, STEPPED, AgentBaseline
from ._cues import cue_reader
from ._delegation import REQUESTERS, SUB_AGENTS
from ._reply import Reply, Response, SteppedGapReport, Usage


class System(Protocol):
    """What the runner needs of a system."""

    @property
    def name(self) -> str: ...

    @property
    def view(self) -> ViewKind: ...

    def config(self) -> dict[str, Any]:
        """Settings recorded in the run manifest (never secrets)."""
        ...

    def digests(self) -> dict[str, str]:
        """sha256 of what the replies depend on beyond `config()`, recorded in the run
        manifest: `protocol_text` (the prompt protocol's own text), `model_file` (an embedded
        model's weights). A run resumed with another is refused."""
        ...

    async def respond(self, view: Any) -> Reply: ...


@dataclass(frozen=True)
class Baseline:
    """A deterministic system defined by a pure function of its view; `protocol`, the prompt
    protocol whose response it gives (its parts are read from its replies, and it is recorded in
    its config; None: the response of docs/benchmark.md §2, and a config as before); under
    `--interface chat` (`interface`) it says its response in prose (`reading.say_response`)."""

    name: str
    view: ViewKind
    policy: Callable[[Any], Response]
    protocol: str | None = None
    interface: str = DEFAULT_INTERFACE

    def config(self) -> dict[str, Any]:
        protocol = {} if self.protocol is None else {"protocol": self.protocol}
        chat = {} if self.interface == DEFAULT_INTERFACE else {"interface": self.interface}
        return {**protocol, **chat}

    def digests(self) -> dict[str, str]:
        return {}

    def speaking(self, interface: str) -> Baseline:
        """The same baseline answering through `interface` (a ValueError for an unknown one)."""
        return replace(self, interface=check_interface(interface))

    async def respond(self, view: Any) -> Reply:
        response = self.policy(view)
        if self.interface != "chat":
            return Reply.of(response, Usage(cost_usd=0.0))
        spec = load_families()[_family(view)]
        said = say_response(response.answer, response.completeness, response.gap_report, spec)
        return Reply(status="ok", raw=said, usage=Usage(cost_usd=0.0))


def _family(view: Any) -> str:
    """The family of a view of any kind (a Task, a model view, or a view around one)."""
    return str(view.family if hasattr(view, "family") else view.model.family)


def _visible_answer(view: SystemView) -> Answer:
    facts = [fact for doc in view.visible_facts for fact in doc.facts]
    return fold_answer(view.model.answer_schema, live_effects(facts))


def _filter_gap(view: SystemView, *, partial: bool) -> GapReport:
    """The gap report the access layer's filter report implies."""
    required = {r.id: r for r in view.model.contract.required_evidence}
    return GapReport.of(
        [required[w.requirement] for w in view.withheld],
        (s for w in view.withheld for s in w.scopes),
        partial=partial,
    )


def _complete(answer: Answer) -> Response:
    return Response(answer=answer, completeness="complete", gap_report=None)


def _silent_filter(view: SystemView) -> Response:
    return _complete(_visible_answer(view))


def _warning_partial(view: SystemView) -> Response:
    if not view.withheld:
        return _complete(_visible_answer(view))
    return Response(
        answer=_visible_answer(view),
        completeness="incomplete",
        gap_report=_filter_gap(view, partial=True),
    )


def _fail_and_report(view: SystemView) -> Response:
    if not view.withheld:
        return _complete(_visible_answer(view))
    partial = view.model.contract.partial_response_permitted
    return Response(
        answer=_visible_answer(view) if partial else None,
        completeness="incomplete",
        gap_report=_filter_gap(view, partial=partial),
    )


def _confident(confidence: Callable[[SystemView], float]) -> Callable[[SystemView], Response]:
    """`fail_and_report` under `structured_gap@2`: its gap report with the next step the rule
    gives for the filter report's scopes, and `confidence(view)`."""

    def policy(view: SystemView) -> Response:
        response = _fail_and_report(view).model_copy(update={"confidence": confidence(view)})
        gap = response.gap_report
        if gap is None or view.owners is None:
            return response
        partial = gap.status == "partial"
        step = next_step_for(gap.missing_scopes, partial=partial, owners=view.owners)
        stepped = SteppedGapReport(**gap.model_dump(), next_step=step)
        return response.model_copy(update={"gap_report": stepped})

    return policy


def _oracle(task: Task) -> Response:
    o = task.oracles
    if o.completeness == "complete":
        return _complete(o.complete_answer)
    partial = task.contract.partial_response_permitted
    return Response(
        answer=o.authorized_answer if partial else None,
        completeness="incomplete",
        gap_report=o.gap_report,
    )


def _unknown_view(baseline: Baseline | AgentBaseline) -> str | None:
    if baseline.view in VIEWS:
        return None
    return f"reads view kind {baseline.view!r}, which is not registered; valid: {', '.join(VIEWS)}"


BASELINES: Registry[Baseline | AgentBaseline] = Registry.of_names("baseline", check=_unknown_view)
"""Every registered baseline by name, in registration order (the shipped ones first; the agent
baselines under the default disclosure mode, `build_system` gives them under another)."""

register_baseline = BASELINES.register
"""Add a baseline to `BASELINES` and return it; a ValueError for a malformed name, one taken by
another baseline, or a view kind not registered."""

SHIPPED_BASELINES = (
    Baseline("silent_filter", "system", _silent_filter),
    Baseline("warning_partial", "system", _warning_partial),
    Baseline("fail_and_report", "system", _fail_and_report),
    Baseline("oracle", "oracle", _oracle),
    Baseline("cue_reader", "model", cue_reader),
    *AGENT_BASELINES,
    *SUB_AGENTS,
    *REQUESTERS,
    *ESCALATING_BASELINES,
    Baseline(
        "calibrated_reader",
        "system",
        _confident(lambda view: 0.0 if view.withheld else 1.0),
        STEPPED,
    ),
    Baseline("half_confident", "system", _confident(lambda view: 0.5), STEPPED),
)
"""The baselines the package ships, registered in this order."""
for _baseline in SHIPPED_BASELINES:
    register_baseline(_baseline)
