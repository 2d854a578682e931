"""What an intervention is (docs/benchmark.md §11): a platform element around any system, one-shot
or agent, as a deployment puts one: AgentDojo's defenses as registered pipeline elements. It
sees only what the platform sees (`access.PlatformView`: the access layer's own records and
decisions, the contract where it was given; never an oracle or a fact), and acts at up to three
places of the pipeline, each declared on the `Intervention`:

- `prompt`: how it changes the messages a model is told (a prompt option: `policy_scaffold`);
- `checks`: the platform's checks of each accepted submit in the agent's session, by name
  (`access.SUBMIT_CHECKS`: `recheck_at_submit`);
- `respond`: what the platform adds to or puts in place of the response the consumer sees, given
  the system's reply and what the platform knew when it was given (`AtResponse`), as a
  `systems.Platform` part kept apart from the system's words (`boundary_receipt`,
  `fail_and_report_guard`).

Interventions are a registry (`INTERVENTIONS`), as tiers and tools are: a new one is a module
declaring one `Intervention` and one registry line (an entry of the shipped tuple, or a
`register_intervention` call from outside the package). `none`, the default, does nothing.
Where one does not apply (a tier, an interface, a contract source, a system or a front-end it
cannot act in) its `refuses` says why in one line, which every front-end prints before a run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._registry import Registry
from ..access import Answered, PlatformView
from ..systems import Platform, Reply
from ..tasks import ScenarioFile

Message = dict[str, str]
PromptEdit = Callable[[list[Message]], list[Message]]
"""How an intervention changes a protocol's messages: new messages from the rendered ones."""


@dataclass(frozen=True)
class Setting:
    """Where an intervention would act, as a run declares it: whether its system is an agent
    (an episode over tools) and whether it prompts a model (a baseline does not), whether the
    tier's tasks are corpora, how the system answers (`interface`), where an agent finds the
    contract (`contract`), the front-end that runs it, and how that front-end names each run
    option in a message (`names`: `--interface`, `Interface`, `interface`)."""

    agent: bool
    model: bool
    corpus: bool
    tier: str
    interface: str
    contract: str
    frontend: str
    system: str
    """The system as a message names it (`this run` for a front-end's own agent or model)."""
    names: Mapping[str, str] = field(default_factory=dict)

    def name(self, option: str) -> str:
        """How the front-end names run option `option`."""
        return self.names.get(option, option)


@dataclass(frozen=True)
class AtResponse:
    """What the platform knows when a system's response reaches the consumer: the task as the
    platform knows it (`platform`), what the access layer did while the response was given
    (`answered`: the scopes in force then, the documents it withheld), the family's public file
    (its vocabulary and words), how the system answered (`interface`: `submit` or `chat`) and
    an agent's disclosure mode (None for a one-shot system: no session disclosed anything)."""

    platform: PlatformView
    answered: Answered
    family: ScenarioFile
    interface: str
    disclosure: str | None


Respond = Callable[[Reply, AtResponse], Platform | None]
"""What the platform adds to or puts in place of a reply (None: nothing). Called only for a
reply whose status is `ok`; the platform's part is read in place of the system's words only
where those are readable (`scoring.shown_reading`)."""


def _applies(setting: Setting) -> str | None:
    return None


@dataclass(frozen=True)
class Intervention:
    """A platform element around any system (see the module docstring).

    Args:
        name: how `--intervention` names it (lower-case letters, digits, underscores).
        description: one line: what the platform does, for `--help` and the docs.
        refuses: why it does not apply to a run (`Setting`), in one line after the option's
            name; None where it does.
        prompt: how it changes what a model is told (`PromptEdit`); None: nothing.
        checks: the platform's checks of each accepted submit of an agent's session, by name
            (`access.SUBMIT_CHECKS`).
        respond: what the platform adds to or puts in place of the response the consumer
            sees (`Respond`); None: nothing.
    """

    name: str
    description: str
    refuses: Callable[[Setting], str | None] = _applies
    prompt: PromptEdit | None = None
    checks: tuple[str, ...] = ()
    respond: Respond | None = None

    def config(self) -> dict[str, Any]:
        """What a run's config records of it: nothing for `none` (so every run without one is
        what it was), else its name."""
        return {} if self.name == DEFAULT_INTERVENTION else {"intervention": self.name}


DEFAULT_INTERVENTION = "none"
"""No intervention: the system's reply is what the consumer sees."""

INTERVENTIONS: Registry[Intervention] = Registry(
    "intervention", pattern=r"[a-z][a-z0-9_]*", form="lower-case letters, digits and underscores"
)
"""Every registered intervention by name, in registration order (the shipped ones first)."""

register_intervention = INTERVENTIONS.register
"""Add an intervention to `INTERVENTIONS` and return it; a ValueError for a malformed name or one
taken by another."""


def get_intervention(name: str) -> Intervention:
    """The intervention `name`; UnknownName (a ValueError) naming the registered ones."""
    return INTERVENTIONS.lookup(name)


def check_intervention(name: str) -> str:
    """`name` if it names a registered intervention; UnknownName (a ValueError) if not."""
    return get_intervention(name).name
