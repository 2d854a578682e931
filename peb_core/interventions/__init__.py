"""Interventions (docs/benchmark.md §11): platform elements around any system, as a deployment
puts them, registered by name and swapped with `--intervention` (AgentDojo's defenses as
pipeline elements). An intervention sees what the platform sees (`access.PlatformView`: the
access layer's own records and decisions, the contract where it was given), never an oracle or
a fact, and what it adds to or changes in a reply is the platform's (`systems.Platform`), apart
from the system's words.

- `INTERVENTIONS` (`register_intervention`): `none` (the default), `recheck_at_submit`,
  `boundary_receipt`, `fail_and_report_guard`, `policy_scaffold`; a new one is a module
  declaring one `Intervention` and one registry line;
- `intervened(system, name)`: a system with an intervention around it (`Intervened`), as
  `runs.plan_run` builds every system of a run; `answering(task)`: the task the runner answers,
  as the platform knows it, for the response step;
- `at_response`, `platform_part`: the response step for front-ends that run an outside agent
  (`peb mcp serve`).
"""

from ._guard import FAIL_AND_REPORT_GUARD
from ._intervention import (
    DEFAULT_INTERVENTION,
    INTERVENTIONS,
    AtResponse,
    Intervention,
    PromptEdit,
    Respond,
    Setting,
    check_intervention,
    get_intervention,
    register_intervention,
)
from ._none import NONE
from ._pipeline import (
    Intervened,
    answering,
    at_response,
    intervened,
    intervention_prompt,
    platform_answering,
    platform_part,
)
from ._receipt import BOUNDARY_RECEIPT, receipt
from ._recheck import RECHECK_AT_SUBMIT
from ._scaffold import POLICY, POLICY_SCAFFOLD, scaffolded

SHIPPED_INTERVENTIONS = (
    NONE,
    RECHECK_AT_SUBMIT,
    BOUNDARY_RECEIPT,
    FAIL_AND_REPORT_GUARD,
    POLICY_SCAFFOLD,
)
"""The interventions the package ships, registered in this order (`none` first): a new shipped
one is its module and an entry here."""
for _intervention in SHIPPED_INTERVENTIONS:
    register_intervention(_intervention)

__all__ = [
    "BOUNDARY_RECEIPT",
    "DEFAULT_INTERVENTION",
    "FAIL_AND_REPORT_GUARD",
    "INTERVENTIONS",
    "NONE",
    "POLICY",
    "POLICY_SCAFFOLD",
    "RECHECK_AT_SUBMIT",
    "SHIPPED_INTERVENTIONS",
    "AtResponse",
    "Intervened",
    "Intervention",
    "PromptEdit",
    "Respond",
    "Setting",
    "answering",
    "at_response",
    "check_intervention",
    "get_intervention",
    "intervened",
    "intervention_prompt",
    "platform_answering",
    "platform_part",
    "receipt",
    "register_intervention",
    "scaffolded",
]
