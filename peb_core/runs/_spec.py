"""One declaration of a run (`RunSpec`): every option a run takes, declared once with its type,
default, bounds, help text, the front-ends that offer it and what it applies to. Every way in
(`peb run`'s flags, the workbench's Run form and its headless flags, `peb mcp serve`'s options,
the inspect task's `-T` options, a sweep's matrix) is derived from it: each reads a value with
`option_value` and checks the whole with `plan_run`, so all accept the same options with the
same defaults and refuse the same bad values with the same one-line message, the option named
as that front-end names it (`--max-steps`, `Max steps`, `max_steps`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from annotated_types import Ge, Le
from pydantic import BaseModel, ConfigDict, ValidationInfo, create_model, field_validator

from .._registry import Registry
from ..access import (
    DEFAULT_DISCLOSURE,
    DEFAULT_FOLLOWUP,
    DEFAULT_INTERFACE,
    DEFAULT_PUSHES,
    DISCLOSURES,
    FOLLOWUPS,
    INTERFACES,
    MAX_PUSHES,
    check_followup,
    check_interface,
    get_disclosure,
)
from ..interventions import (
    DEFAULT_INTERVENTION,
    INTERVENTIONS,
    Setting,
    check_intervention,
    get_intervention,
    intervened,
    intervention_prompt,
)
from ..systems import (
    AGENT_PREFIX,
    BASELINES,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOKENS,
    DEFAULT_PROTOCOL,
    DEFAULT_TEMPERATURE,
    DEFAULT_TIMEOUT_S,
    DEFAULT_TOKEN_BUDGET,
    MAX_REPEATS,
    PROTOCOLS,
    Hold,
    PromptEdit,
    PromptOption,
    PromptProtocol,
    System,
    SystemSpecError,
    build_system,
    chat_baseline,
    in_chat,
    is_agent,
    is_embedded,
    prompt_for,
    sub_agent,
)
from ..tasks import (
    CONTRACT_SOURCES,
    DEFAULT_CONTRACT,
    DEFAULT_TIER,
    MAX_DISTRACTORS,
    MAX_TASKS,
    TIERS,
    ContractSource,
    ScenarioFile,
    Selection,
    SelectionError,
    check_contract,
    check_corpus_size,
    count_tasks,
    format_seeds,
    get_tier,
    load_families,
    parse_seeds,
    seed_ranges,
    select_tasks,
)

OptionKind = Literal["count", "number", "text", "choice", "names", "seeds", "url", "switch"]
"""How an option's value is written: `count` an integer within bounds, `number` a finite float
within bounds, `text` a string, `choice` one name of a registry, `names` names (repeat or
comma-separate), `seeds` a seed list (`11,23`, `400-439`), `url` an http(s) URL, `switch` on or
off."""

Applies = Literal[
    "always", "models", "agents", "agent_models", "corpus_tiers", "agent_corpora", "handoffs"
]
"""What an option applies to, checked when a run is planned: `models` systems that prompt a
model (a litellm model string, `agent:<model>`, or the front-end's own model); `agents` agent
systems (the `agent_*` baselines, `agent:<model>`, an MCP client, an inspect agent on a tier
with corpora); `agent_models` agent systems that are models (budgets); `corpus_tiers` tiers
whose tasks are corpora; `agent_corpora` agent systems on such tiers (both checks: a named
system's first, else the tier's); `handoffs` systems that hand off on tiers whose tasks list
sub-agents. An option given where it does not apply is refused in one line."""

MAX_STEPS_CAP = 1_000
"""The most steps an episode may be given (an agent's model requests; an MCP episode's tool
calls)."""
MCP_MAX_STEPS = 100
"""The steps of an MCP episode when none is asked for: a step is one tool call there (the
client's model requests are not seen); the careful agent baseline makes at most 48 on the
shipped families (58 when it must find their contract in the corpus)."""
EMBEDDED_MAX_STEPS = 8
"""The steps of an embedded model's episode (`agent:local/<name>`) when none is asked for:
each step costs it seconds to a minute of CPU on a laptop's cores (benchmarks/RESULTS.md,
bench_embedded_agent.py), so a handful of episodes finishes in minutes."""
DEFAULT_CONCURRENCY = 8
"""Replies in flight at once when none is asked for."""
EMBEDDED_CONCURRENCY = 1
"""Replies in flight at once for an embedded model (`local/<name>`, `agent:local/<name>`)
when none is asked for: its llama.cpp server answers one request at a time and keeps the
prompt of the last, so one episode's next step evaluates only what is new, while episodes side
by side make it evaluate each conversation again at every step (and queued requests wait
through their timeout)."""
MAX_TASKS_CAP = 10_000_000
"""How far `max_tasks` may be raised."""


@dataclass(frozen=True)
class Option:
    """How a run option is offered.

    Args:
        kind: how its value is written (`OptionKind`).
        label: how a form names it (`Max steps`).
        help: one line for `--help` and the form.
        frontends: the shipped front-ends that offer it (None: every one; a sweep file offers
            every option); a registered front-end decides by its own rule (`Frontend.offers`).
        applies: what it applies to (`Applies`); given elsewhere, it is refused.
        placeholder: what a form shows in an empty text box.
        choices: for a `choice`, the registry's names now.
        default_for: a front-end whose default differs, with its default (`peb mcp serve`
            serves a tier with tools; the inspect task one family).
        prompt: for an option that changes what a model is told, how (`systems.PromptEdit`:
            `edit(messages, value)`), applied wherever a model is prompted (`RunPlan.prompt`,
            `systems.prompt_for`) when its value is not the default (declare it
            `applies="models"`).
        identity: whether it is part of what a run is (its folder's name, the resume rule):
            False for how a run is made rather than what it measures (replies in flight, the
            reply cache, a cap, retrying errors, where an embedded model is served), which a
            sweep's matrix may not vary (two runs differing only in it would be one run).
        off_help: for a switch on by default, what its `--no-<name>` flag does (`help` says
            what the setting is).
    """

    kind: OptionKind
    label: str
    help: str
    frontends: frozenset[str] | None = None
    applies: Applies = "always"
    placeholder: str = ""
    choices: Callable[[], Sequence[str]] | None = None
    default_for: Mapping[str, Any] | None = None
    prompt: PromptEdit | None = None
    identity: bool = True
    off_help: str = ""


def _every(*frontends: str) -> frozenset[str]:
    return frozenset(frontends)


_RUNNERS = _every("cli", "workbench")
"""The front-ends that run systems of ours (the others run an outside agent or model)."""


def _tiers() -> list[str]:
    return list(TIERS)


def _families() -> list[str]:
    return list(load_families())


def _disclosures() -> list[str]:
    return list(DISCLOSURES)


def _protocols() -> list[str]:
    return list(PROTOCOLS)


def _followups() -> list[str]:
    return list(FOLLOWUPS)


def _contracts() -> list[str]:
    return list(CONTRACT_SOURCES)


def _interfaces() -> list[str]:
    return list(INTERFACES)


def _interventions() -> list[str]:
    return list(INTERVENTIONS)


class RunSpec(BaseModel):
    """A run, declared: what `peb run`, the workbench, `peb mcp serve`, the inspect task and
    `peb sweep` each build from what they are given. A value here is well-typed and within its
    bounds; whether the options fit together (an option that does not apply, a family without
    the tier, too many tasks) is `plan_run`'s to say."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    system: Annotated[
        str | None,
        Option(
            "text",
            "System",
            "a baseline, local/<name>, a litellm model string, or agent:<model> for either as "
            "a tool-calling agent",
            frontends=_RUNNERS,
        ),
    ] = None
    """None: the front-end's own agent or model (an MCP client, inspect's model)."""
    family: Annotated[
        tuple[str, ...] | None,
        Option(
            "names",
            "Families",
            "family ids; repeat or comma-separate (default: every family)",
            choices=_families,
        ),
    ] = None
    seeds: Annotated[
        str | None,
        Option(
            "seeds",
            "Seeds",
            "e.g. 11,23 or 400-439 (default: each family's canonical seeds)",
            placeholder="canonical",
        ),
    ] = None
    tier: Annotated[
        str,
        Option(
            "choice",
            "Tier",
            "how a task lays out its evidence",
            choices=_tiers,
            default_for={"mcp": "agent"},
        ),
    ] = DEFAULT_TIER
    distractors: Annotated[
        int,
        Ge(0),
        Le(MAX_DISTRACTORS),
        Option(
            "count",
            "Distractors",
            "neutral authorized documents added to each task (each is one more document in "
            "every prompt)",
            frontends=_every("cli", "mcp"),
        ),
    ] = 0
    corpus_size: Annotated[
        int | None,
        Ge(1),
        Le(100_000),
        Option(
            "count",
            "Corpus size",
            "documents per task on a tier with corpora",
            applies="corpus_tiers",
            placeholder="tier default",
        ),
    ] = None
    max_tasks: Annotated[
        int,
        Ge(1),
        Le(MAX_TASKS_CAP),
        Option(
            "count",
            "Task cap",
            "refuse to make more than N replies (tasks times repeats)",
            frontends=_every("cli", "workbench", "mcp"),
            identity=False,
        ),
    ] = MAX_TASKS
    limit: Annotated[
        int | None,
        Ge(1),
        Le(MAX_TASKS_CAP),
        Option(
            "count",
            "Task limit",
            "only the first N tasks (a smoke run)",
            frontends=_RUNNERS,
            placeholder="every task",
        ),
    ] = None
    protocol: Annotated[
        str,
        Option(
            "choice",
            "Protocol",
            "the prompt protocol a model is given",
            frontends=_every("cli", "workbench", "inspect", "mcp"),
            applies="models",
            choices=_protocols,
        ),
    ] = DEFAULT_PROTOCOL
    temperature: Annotated[
        float,
        Ge(0),
        Le(10),
        Option(
            "number",
            "Temperature",
            "sampling temperature (models)",
            frontends=_every("cli"),
            applies="models",
        ),
    ] = DEFAULT_TEMPERATURE
    max_tokens: Annotated[
        int,
        Ge(1),
        Le(1_000_000),
        Option(
            "count",
            "Max tokens",
            "the longest reply asked for, per request (models)",
            frontends=_every("cli"),
            applies="models",
        ),
    ] = DEFAULT_MAX_TOKENS
    api_base: Annotated[
        str | None,
        Option(
            "url",
            "API base",
            "an OpenAI-compatible server (models)",
            frontends=_RUNNERS,
            applies="models",
            placeholder="http://HOST/v1",
        ),
    ] = None
    timeout: Annotated[
        float,
        Ge(0.001),
        Le(86_400),
        Option(
            "number",
            "Timeout",
            "seconds per request (models)",
            frontends=_every("cli"),
            applies="models",
        ),
    ] = DEFAULT_TIMEOUT_S
    local_port: Annotated[
        int | None,
        Ge(1),
        Le(65_535),
        Option(
            "count",
            "Local port",
            "where an embedded model local/<name> is served if it is not running yet "
            "(default: its own)",
            frontends=_every("cli"),
            applies="models",
            identity=False,
        ),
    ] = None
    disclosure: Annotated[
        str,
        Option(
            "choice",
            "Disclosure",
            "what the access layer tells an agent of what it withheld",
            frontends=_every("cli", "workbench", "inspect", "mcp"),
            applies="agents",
            choices=_disclosures,
        ),
    ] = DEFAULT_DISCLOSURE
    contract: Annotated[
        str,
        Option(
            "choice",
            "Contract",
            "where an agent finds what a request requires: given in its start, or in the "
            "corpus (the organisation's procedure document, to be searched for)",
            applies="agent_corpora",
            choices=_contracts,
        ),
    ] = DEFAULT_CONTRACT
    max_steps: Annotated[
        int | None,
        Ge(1),
        Le(MAX_STEPS_CAP),
        Option(
            "count",
            "Max steps",
            f"an agent's steps per episode: model requests (default {DEFAULT_MAX_STEPS}; "
            f"{EMBEDDED_MAX_STEPS} for an embedded model, {AGENT_PREFIX}local/<name>); an MCP "
            f"episode's tool calls (default {MCP_MAX_STEPS})",
            applies="agent_models",
            placeholder="agent default",
        ),
    ] = None
    token_budget: Annotated[
        int | None,
        Ge(0),
        Le(1_000_000_000),
        Option(
            "count",
            "Token budget",
            "an agent's prompt plus completion tokens per episode; 0: none "
            f"(default {DEFAULT_TOKEN_BUDGET:,})",
            frontends=_every("cli"),
            applies="agent_models",
        ),
    ] = None
    delegate_system: Annotated[
        str | None,
        Option(
            "text",
            "Delegate system",
            f"the agent system that runs handoffs (delegate): an agent baseline or "
            f"{AGENT_PREFIX}<model> (default: the agent itself; over MCP "
            "agent_fail_and_report; under inspect react() with the eval's model)",
            frontends=_every("cli", "inspect", "mcp"),
            applies="handoffs",
            default_for={"mcp": "agent_fail_and_report"},
        ),
    ] = None
    followup: Annotated[
        str,
        Option(
            "choice",
            "Follow-up",
            "what the user does after an agent's response: pressure pushes back once on a "
            "reported gap (a deadline, an authority or a plea; no new evidence) and the last "
            "submit is scored",
            frontends=_every("cli", "workbench", "inspect", "mcp"),
            applies="agent_corpora",
            choices=_followups,
        ),
    ] = DEFAULT_FOLLOWUP
    pushes: Annotated[
        int,
        Ge(1),
        Le(MAX_PUSHES),
        Option(
            "count",
            "Pushes",
            "under followup pressure, how many times the user pushes back: again after each "
            "response that still reports a gap, escalating (a deadline, an authority, a plea)",
            frontends=_every("cli", "workbench", "inspect", "mcp"),
            applies="agent_corpora",
            placeholder="1",
        ),
    ] = DEFAULT_PUSHES
    interface: Annotated[
        str,
        Option(
            "choice",
            "Interface",
            "how a system answers the user: submit (through the submit tool, or one JSON "
            "reply) or chat (in a message, read as prose; an agent has no submit tool)",
            frontends=_every("cli", "workbench", "inspect", "mcp"),
            choices=_interfaces,
        ),
    ] = DEFAULT_INTERFACE
    intervention: Annotated[
        str,
        Option(
            "choice",
            "Intervention",
            "a platform element around the system (docs/benchmark.md §11): none, or "
            + ", ".join(n for n in INTERVENTIONS if n != DEFAULT_INTERVENTION),
            choices=_interventions,
            prompt=intervention_prompt,
        ),
    ] = DEFAULT_INTERVENTION
    repeats: Annotated[
        int,
        Ge(1),
        Le(MAX_REPEATS),
        Option(
            "count",
            "Repeats",
            "answer each task K times; scorecards add unsafe_any@K and consistent@K",
            frontends=_every("cli", "workbench", "mcp"),
            placeholder="1",
        ),
    ] = 1
    cache: Annotated[
        bool,
        Option(
            "switch",
            "Cache",
            "read and write the reply cache (models); off: neither",
            frontends=_RUNNERS,
            identity=False,
            off_help="neither read nor write the reply cache (models)",
        ),
    ] = True
    concurrency: Annotated[
        int | None,
        Ge(1),
        Le(1_024),
        Option(
            "count",
            "Concurrency",
            f"replies in flight at once (default {DEFAULT_CONCURRENCY}; {EMBEDDED_CONCURRENCY} "
            "for an embedded model, whose server answers one request at a time)",
            frontends=_every("cli"),
            identity=False,
        ),
    ] = None
    retry_errors: Annotated[
        bool,
        Option(
            "switch",
            "Retry errors",
            "on resume, run again the tasks that ended in error",
            frontends=_every("cli"),
            identity=False,
            off_help="on resume, keep the records of tasks that ended in error (not run again)",
        ),
    ] = True

    @field_validator(
        "tier", "disclosure", "protocol", "contract", "followup", "interface", "intervention"
    )
    @classmethod
    def _registered(cls, value: str, info: ValidationInfo) -> str:
        """A choice names an entry of its registry (the registry's own message if not)."""
        assert info.field_name is not None
        _choose(info.field_name, value)
        return value

    @classmethod
    def of(cls, **fields: Any) -> RunSpec:
        """The run `fields` declare, under the declaration as it is now (`declaration()`: with
        the options registered from outside the package)."""
        return declaration()(**fields)

    @field_validator("family", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        """`a,b` or a list of entries (each may be comma-separated) as names, in order."""
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple):
            return tuple(n.strip() for v in value for n in str(v).split(",") if n.strip())
        return value


@dataclass(frozen=True)
class Declared:
    """A run option declared outside the package (`register_option`): a field of the run
    declaration, as a `RunSpec` field is written.

    Args:
        name: its field name (`system_prompt_suffix`).
        annotation: its type with its bounds and its `Option`
            (`Annotated[str | None, Option("text", ...)]`).
        default: its default.
    """

    name: str
    annotation: Any
    default: Any


def _not_an_option(declared: Declared) -> str | None:
    """What is wrong with an option declared from outside: a field `RunSpec` already has, or
    an annotation without its `Option`."""
    if declared.name in RunSpec.model_fields:
        return "is a shipped run option"
    if not any(isinstance(m, Option) for m in getattr(declared.annotation, "__metadata__", ())):
        return "its annotation holds no Option (Annotated[type, ..., Option(...)])"
    return None


DECLARED: Registry[Declared] = Registry.of_names("run option", check=_not_an_option)
"""The run options declared outside the package, by name, in registration order."""


def register_option(name: str, annotation: Any, default: Any = None) -> Declared:
    """Declare a run option from outside the package (a plugin, a test): a field `name` of the
    run declaration with `annotation` (its type, bounds and `Option`) and `default`, offered by
    every front-end as a shipped option is; a ValueError for a name of the wrong form, one
    taken, or an annotation without its `Option`. `DECLARED.unregister(name)` removes it."""
    return DECLARED.register(Declared(name, annotation, default))


_DECLARATIONS: dict[tuple[Declared, ...], type[RunSpec]] = {}


def declaration() -> type[RunSpec]:
    """The run declaration as it is now: `RunSpec`, with a field for each option declared from
    outside (`DECLARED`), after the shipped ones. Every reading of run options goes through
    it."""
    extra = tuple(DECLARED.values())
    if not extra:
        return RunSpec
    if extra not in _DECLARATIONS:
        fields: dict[str, Any] = {d.name: (d.annotation, d.default) for d in extra}
        _DECLARATIONS[extra] = create_model("RunSpec", __base__=RunSpec, **fields)
    return _DECLARATIONS[extra]


def options(frontend: str | None = None) -> dict[str, Option]:
    """Each option by field name, in declaration order; for a registered front-end, those it
    offers (UnknownName for another)."""
    way = None if frontend is None else FRONTENDS.lookup(frontend)
    found = {}
    for name, field in declaration().model_fields.items():
        option = next(m for m in field.metadata if isinstance(m, Option))
        if way is None or way.offers(name, option):
            found[name] = option
    return found


def default(name: str, frontend: str | None = None) -> Any:
    """An option's default (at `frontend`, where it has its own)."""
    option = options()[name]
    if frontend is not None and option.default_for and frontend in option.default_for:
        return option.default_for[frontend]
    return declaration().model_fields[name].default


def bounds(name: str) -> tuple[float | None, float | None]:
    """The least and greatest value a numeric option takes (None: unbounded)."""
    low = high = None
    for meta in declaration().model_fields[name].metadata:
        if isinstance(meta, Ge):
            low = meta.ge
        elif isinstance(meta, Le):
            high = meta.le
    return low, high  # type: ignore[return-value]


class OptionError(ValueError):
    """A value an option cannot take: `problem` is the line after the option's name."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(problem)
        self.name = name
        self.problem = problem


def valid(name: str) -> str:
    """What option `name` takes, in words (as a refusal says it: `expected <this>, got ...`)."""
    option = options()[name]
    if option.kind not in ("count", "number"):
        choices = option.choices() if option.choices is not None else ()
        return {
            "switch": "true or false",
            "names": "names, repeated or comma-separated"
            + (f" ({', '.join(choices)})" if choices else ""),
            "seeds": "a seed list such as 11,23 or 400-439",
            "url": "an http(s) URL such as http://HOST:PORT/v1 (a port from 1 to 65535)",
            "choice": f"one of {', '.join(choices)}",
        }.get(option.kind, "text")
    low, high = bounds(name)
    what = "an integer" if option.kind == "count" else "a finite number"

    def shown(v: float) -> str:
        return f"{v:,}" if option.kind == "count" else f"{v:g}"

    if low is not None and high is not None:
        return f"{what} from {shown(low)} to {shown(high)}"
    return f"{what} >= {shown(low)}" if low is not None else what


def _url(text: str) -> bool:
    """Whether `text` is an http(s) URL with a host and, if any, a port from 1 to 65535."""
    try:
        parts = urlsplit(text)
        port = parts.port
        text.encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and port != 0


def option_value(name: str, raw: Any, *, strict: bool = False) -> Any:
    """The value of option `name` from `raw`, as any front-end gives it: text (argv, a form) or
    typed (inspect's `-T`, a sweep file); None and blank text are "not given" (the default).
    With `strict` (a typed source: a sweep file), a count or number must be one and a switch a
    boolean, never text (`"8"`, `"true"`); text must be text. A number written in text takes
    ASCII digits only. An OptionError names what is valid.

    A `choice` is checked against its registry here; everything that depends on other options
    is `plan_run`'s."""
    option = options()[name]
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    text = raw.strip() if isinstance(raw, str) else raw
    if strict and not _typed_as(option.kind, text):
        raise OptionError(name, f"expected {valid(name)}, got {raw!r}")
    if option.kind in ("count", "number"):
        low, high = bounds(name)
        value: Any = None
        if isinstance(text, str) and text.isascii():
            try:
                value = int(text) if option.kind == "count" else float(text)
            except ValueError:
                value = None
        elif isinstance(text, int | float) and not isinstance(text, bool):
            value = text if option.kind == "number" or isinstance(text, int) else None
        if (
            value is None
            or (option.kind == "number" and not math.isfinite(value))
            or (low is not None and value < low)
            or (high is not None and value > high)
        ):
            raise OptionError(name, f"expected {valid(name)}, got {raw!r}")
        return value
    if option.kind == "switch":
        if isinstance(text, bool):
            return text
        words = {"true": True, "on": True, "yes": True, "1": True}
        words |= {"false": False, "off": False, "no": False, "0": False}
        if isinstance(text, str) and text.lower() in words:
            return words[text.lower()]
        raise OptionError(name, f"expected {valid(name)}, got {raw!r}")
    if option.kind == "names":
        entries = list(text) if isinstance(text, list | tuple) else [text]
        if not all(isinstance(e, str) for e in entries):
            raise OptionError(name, f"expected {valid(name)}, got {raw!r}")
        return RunSpec._names(entries)
    if option.kind == "seeds" and isinstance(text, list | tuple | range):
        if all(isinstance(s, int) and not isinstance(s, bool) for s in text):
            text = format_seeds(list(text), width=None)  # ranges written as ranges
        else:
            text = ",".join(str(s).strip() for s in text)
    elif option.kind == "seeds" and isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    elif option.kind == "text" and isinstance(text, list) and all(isinstance(t, str) for t in text):
        text = ",".join(text)  # inspect's -T splits a text at its commas: joined as it was
    if not isinstance(text, str):
        raise OptionError(name, f"expected {valid(name)}, got {raw!r}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise OptionError(name, f"{text!r} is not UTF-8") from None
    if option.kind == "seeds":
        try:
            seed_ranges(text)
        except ValueError as exc:
            raise OptionError(name, str(exc)) from None
    if option.kind == "url" and not _url(text):
        raise OptionError(name, f"expected {valid(name)}, got {text!r}")
    if option.kind == "choice":
        _choose(name, text)
    return text


def _typed_as(kind: OptionKind, value: Any) -> bool:
    """Whether `value`, as a typed source gives it, has the type an option of `kind` takes: an
    integer for a count, a number for a number (never a boolean), a boolean for a switch, a
    seed list as text, an integer or a list of integers, names as text or a list of text, and
    text for the rest."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "count":
        return number and isinstance(value, int)
    if kind == "number":
        return number
    if kind == "switch":
        return isinstance(value, bool)
    if isinstance(value, list | tuple) and kind in ("seeds", "names"):
        item = str if kind == "names" else int
        return all(isinstance(v, item) and not isinstance(v, bool) for v in value)
    if kind == "seeds" and number:
        return isinstance(value, int)
    return isinstance(value, str)


def _choose(name: str, text: str) -> None:
    """An OptionError (the registry's own message) unless `text` names an entry of the option's
    registry."""
    try:
        if name == "tier":
            get_tier(text)
        elif name == "disclosure":
            get_disclosure(text)
        elif name == "protocol" and text not in PROTOCOLS:
            raise ValueError(f"unknown protocol {text!r}; valid: {', '.join(PROTOCOLS)}")
        elif name == "contract" and text not in CONTRACT_SOURCES:
            raise ValueError(
                f"unknown contract source {text!r}; valid: {', '.join(CONTRACT_SOURCES)}"
            )
        elif name == "followup":
            check_followup(text)
        elif name == "interface":
            check_interface(text)
        elif name == "intervention":
            check_intervention(text)
        elif name not in RunSpec.model_fields:  # declared outside: its own choices
            choices = options()[name].choices
            if choices is not None and text not in choices():
                raise ValueError(f"unknown {name} {text!r}; valid: {', '.join(choices())}")
    except ValueError as exc:
        raise OptionError(name, str(exc)) from None


Naming = Mapping[str, str]
"""How a front-end names each option in a message (`--max-steps`, `Max steps`, `max_steps`)."""


def flag(name: str) -> str:
    """An option's command-line flag."""
    return "--" + name.replace("_", "-")


def naming(frontend: str) -> dict[str, str]:
    """How the registered `frontend` names each option in a message (`Frontend.calls`): its
    flag on a command line (`cli`, `mcp`; the workbench's headless flags are named as `peb
    run`'s), its label in the workbench's form, its field name in inspect's `-T` options and a
    sweep file."""
    way = FRONTENDS.lookup(frontend)
    return {name: way.calls(name, option) for name, option in options().items()}


@dataclass(frozen=True)
class Frontend:
    """A way in that takes run options (`FRONTENDS`): each translates its world (argv, a form,
    task arguments, a file) into a `RunSpec` with `read_spec` and checks it with `plan_run`.

    Args:
        name: how options and messages refer to it.
        description: one line: what it is.
        offers: whether it offers option `name` (as declared by its `Option`).
        calls: how it names option `name` in a message (`--max-steps`, `Max steps`).
    """

    name: str
    description: str
    offers: Callable[[str, Option], bool]
    calls: Callable[[str, Option], str]


def _declared(frontend: str) -> Callable[[str, Option], bool]:
    """A shipped front-end's rule: it offers what the declaration says it does."""
    return lambda name, option: option.frontends is None or frontend in option.frontends


FRONTENDS: Registry[Frontend] = Registry.of_names("front-end")
"""Every way in that takes run options, by name, in registration order."""
register_frontend = FRONTENDS.register
"""Add a front-end to `FRONTENDS` and return it; a ValueError for a malformed or taken name."""

SHIPPED_FRONTENDS = (
    Frontend("cli", "`peb run` (and `peb tasks`' selection)", _declared("cli"),
             lambda name, option: flag(name)),
    Frontend("workbench", "the workbench's Run form and its headless flags",
             _declared("workbench"), lambda name, option: option.label),
    Frontend("inspect", "the inspect task's -T options", _declared("inspect"),
             lambda name, option: name),
    Frontend("mcp", "`peb mcp serve`", _declared("mcp"), lambda name, option: flag(name)),
    Frontend("sweep", "a sweep file (`peb sweep`): every option", lambda name, option: True,
             lambda name, option: name),
)  # fmt: skip
"""The front-ends the package ships, registered in this order."""
for _frontend in SHIPPED_FRONTENDS:
    register_frontend(_frontend)


class RunSpecError(ValueError):
    """A run that cannot be made as declared: every problem found, one line each (the first is
    the message), each naming the option as the front-end does."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__(problems[0])
        self.problems = tuple(problems)


def read_values(
    values: Mapping[str, Any],
    names: Naming,
    *,
    frontend: str = "sweep",
    strict: bool = False,
    **given: Any,
) -> tuple[dict[str, Any], list[str]]:
    """The RunSpec fields `values` give as a front-end gives them (text or typed; None or
    blank: the default, the front-end's own where it has one), each read by `option_value`
    (`strict` for a typed source), with `given` (values already typed: the system a front-end
    chose, a limit it sets); and a line for each value refused, named by `names`: one that is
    not a run option, or one `frontend` does not offer."""
    problems = []
    fields: dict[str, Any] = {
        name: option.default_for[frontend]
        for name, option in options().items()
        if option.default_for and frontend in option.default_for
    }
    fields.update(given)
    offered = options(frontend) if frontend in FRONTENDS else options()
    for name, raw in values.items():
        if name not in declaration().model_fields:
            valid = ", ".join(names.get(n, n) for n in offered)
            problems.append(f"{names.get(name, name)}: not a run option; valid: {valid}")
            continue
        if name not in offered:
            problems.append(
                f"{names.get(name, name)}: not one of {FRONTENDS[frontend].description}: "
                f"{', '.join(names.get(n, n) for n in offered)}"
            )
            continue
        try:
            value = option_value(name, raw, strict=strict)
        except OptionError as exc:
            problems.append(f"{names[name]}: {exc.problem}")
            continue
        if value is not None:
            fields[name] = value
    return fields, problems


def read_spec(
    values: Mapping[str, Any], names: Naming, *, frontend: str = "sweep", **given: Any
) -> RunSpec:
    """The RunSpec of `read_values`; a RunSpecError lists every value refused."""
    fields, problems = read_values(values, names, frontend=frontend, **given)
    if problems:
        raise RunSpecError(problems)
    return RunSpec.of(**fields)


@dataclass(frozen=True)
class RunPlan:
    """A run checked and resolved: its declaration, the system that answers (None: the
    front-end's own agent or model), the tasks it covers and what an episode may spend."""

    spec: RunSpec
    system: System | None
    selection: Selection
    episodes: bool
    """Whether each reply is an agent's episode over tools (the run's kind, recorded)."""
    max_steps: int | None
    """Steps an episode may take (None for one-shot runs)."""
    concurrency: int = DEFAULT_CONCURRENCY
    """Replies in flight at once (the spec's, else the default for its system)."""
    delegate: System | None = None
    """For the front-end's own agent (an MCP client, inspect's), the system that plays its
    handoffs when `delegate_system` names one (a system of ours carries its own)."""
    servers: tuple[Hold, ...] = ()
    """The holds on the embedded model servers its systems need (`systems.hold_local`): the
    runner lets go of them when the run ends (`release`)."""

    def release(self) -> None:
        """Let go of the plan's embedded model servers (again: nothing): each one started for
        runs stops unless another run holds it. The runner does this when the run ends,
        however it ends; a plan that will not be run is let go of by whoever made it."""
        for hold in self.servers:
            hold.release()

    @property
    def tier(self) -> str:
        return self.selection.tiers[0]

    @property
    def n_replies(self) -> int:
        """The replies the run is due: its tasks (after the limit) times its repeats."""
        tasks, limit = self.selection.n_tasks, self.spec.limit
        return (tasks if limit is None else min(tasks, limit)) * self.spec.repeats

    @property
    def seeds(self) -> list[int] | None:
        seeds = self.selection.seeds
        return list(seeds) if seeds is not None else None

    @property
    def corpus_size(self) -> int | None:
        """The corpus size the tasks are made at (None: the tier's default, or no corpora)."""
        return self.spec.corpus_size if get_tier(self.tier).corpus is not None else None

    @property
    def contract(self) -> ContractSource | None:
        """Where the tasks' contract is found (a generation parameter of the tiers with
        corpora; None on another tier, whose contract is given)."""
        if get_tier(self.tier).corpus is None:
            return None
        return "corpus" if self.spec.contract == "corpus" else DEFAULT_CONTRACT

    @property
    def prompt(self) -> PromptProtocol:
        """What a model is told in this run (`prompt_options`; under `--interface chat` its chat
        rendering, `systems.in_chat`): every front-end whose own model or agent answers renders
        it (the inspect task's samples, an MCP client's start), as our systems do."""
        prompt = prompt_for(self.spec.protocol, prompt_options(self.spec))
        return in_chat(prompt) if self.spec.interface == "chat" else prompt


def prompt_options(spec: RunSpec) -> tuple[PromptOption, ...]:
    """The options of `spec` that change what a model is told (`Option.prompt`) and are given
    a value other than their default, in declaration order."""
    return tuple(
        PromptOption(name, getattr(spec, name), option.prompt)
        for name, option in options().items()
        if option.prompt is not None and getattr(spec, name) != default(name)
    )


def plan_run(spec: RunSpec, names: Naming, *, frontend: str = "sweep") -> RunPlan:
    """`spec` checked as a whole (`check_spec`) and its system built (a baseline, a model, an
    agent, with its delegate system). Nothing is written and no embedded model is started
    unless every check passes; the embedded servers its systems need are held by the plan
    (`RunPlan.servers`), let go of if building fails. A RunSpecError lists every problem,
    each naming the option as `names` does; `frontend` says whose agent answers when
    `spec.system` is None (`mcp`: a client's episodes; `inspect`: inspect's model, an agent on
    tiers with corpora)."""
    problems, selection = _checked(spec, names, frontend)
    if problems or selection is None:
        raise RunSpecError(problems)
    agent = _who(spec, frontend)[0]
    embedded = spec.system is not None and is_embedded(spec.system)
    max_steps = spec.max_steps
    if agent and max_steps is None:
        if spec.system is None and frontend == "mcp":  # the client's own episodes
            max_steps = MCP_MAX_STEPS
        else:
            max_steps = EMBEDDED_MAX_STEPS if embedded else DEFAULT_MAX_STEPS
    system = delegate = None
    holds: list[Hold] = []
    settings = system_settings(spec, max_steps or DEFAULT_MAX_STEPS)
    try:
        if spec.system is not None:
            system = build_system(
                spec.system,
                selection.families,
                delegate_system=spec.delegate_system,
                holds=holds,
                **settings,
            )
        elif spec.delegate_system is not None and get_tier(spec.tier).handoffs:
            delegate = sub_agent(spec.delegate_system, selection.families, holds, **settings)
    except BaseException as exc:  # nothing is left serving for a plan that was not made
        for hold in holds:
            hold.release()
        if isinstance(exc, SystemSpecError):
            raise RunSpecError([f"{names[exc.field]}: {exc}"]) from None
        raise
    if system is not None:
        system = intervened(system, spec.intervention)
    return RunPlan(
        spec=spec,
        system=system,
        selection=selection,
        episodes=agent,
        max_steps=max_steps if agent else None,
        concurrency=_concurrency(spec, embedded),
        delegate=delegate,
        servers=tuple(holds),
    )


def check_spec(spec: RunSpec, names: Naming, *, frontend: str = "sweep") -> list[str]:
    """Every problem of `spec` as a whole, one line each naming the option as `names` does:
    the tasks it selects (families, tier, seeds, the cap counting repeats), each option given
    where it does not apply, a corpus size out of its tier's bounds, a protocol without an
    agent rendering for an agent. Builds nothing."""
    return _checked(spec, names, frontend)[0]


def _checked(spec: RunSpec, names: Naming, frontend: str) -> tuple[list[str], Selection | None]:
    """`check_spec`'s problems, and the tasks selected (None if they could not be)."""
    problems: list[str] = []
    selection = None
    try:
        selection = select_tasks(
            spec.family,
            spec.seeds,
            (spec.tier,),
            distractors=spec.distractors,
            max_tasks=spec.max_tasks,
            limit=spec.limit,
            repeats=spec.repeats,
            flags=names,
        )
    except SelectionError as exc:
        problems.append(str(exc))
    corpus = get_tier(spec.tier).corpus
    agent = _who(spec, frontend)[0]
    if frontend == "mcp" and corpus is None:
        corpora = [t.name for t in TIERS.values() if t.corpus is not None]
        problems.append(
            f"{names['tier']}: the {spec.tier} tier has no tools to serve; choose a tier with "
            f"corpora ({', '.join(corpora)})"
        )
    for name in options():
        if name in spec.model_fields_set and getattr(spec, name) != default(name, frontend):
            problem = _not_applying(name, spec, names, frontend)
            if problem:
                problems.append(problem)
    if corpus is not None and spec.corpus_size is not None and selection is not None:
        try:
            check_corpus_size(spec.tier, spec.corpus_size)
        except ValueError as exc:
            problems.append(f"{names['corpus_size']}: {exc}")
    if corpus is not None and spec.contract != DEFAULT_CONTRACT and selection is not None:
        for family in selection.families:
            try:
                check_contract(family, spec.tier, "corpus")
            except ValueError as exc:
                problems.append(f"{names['contract']}: {exc}")
                break
    if spec.pushes != DEFAULT_PUSHES and spec.followup == DEFAULT_FOLLOWUP:
        problems.append(
            f"{names['pushes']}: the user pushes back only under {names['followup']} pressure"
        )
    if spec.interface != DEFAULT_INTERFACE and frontend == "mcp":
        problems.append(
            f"{names['interface']}: an MCP server never sees the client's messages, only its "
            "tool calls, so it cannot read a response said in chat; serve submit"
        )
    if spec.followup != DEFAULT_FOLLOWUP and selection is not None:
        wordless = [f.id for f in selection.families if f.followup is None]
        if wordless:
            problems.append(
                f"{names['followup']}: {wordless[0]} has no [followup] section (what its user "
                "says when it pushes back); choose families that have one"
            )
    protocol = PROTOCOLS.get(spec.protocol)
    owned = _answered_under(spec)
    if owned is not None and "owners" in owned.sections and selection is not None:
        ownerless = [f.id for f in selection.families if f.owners is None]
        if ownerless:
            who = names["protocol"] if owned is protocol else names["system"]
            problems.append(
                f"{who}: {ownerless[0]} names no scope owners (an [owners] section), which "
                f"{owned.id}'s next step and escalate tool need; choose families that have one"
            )
    chat_rendering = protocol is not None and (protocol.agent_chat if agent else protocol.chat)
    if spec.interface == "chat" and protocol is not None and not chat_rendering:
        valid = ", ".join(
            p.id for p in PROTOCOLS.values() if (p.agent_chat if agent else p.chat) is not None
        )
        problems.append(
            f"{names['protocol']}: protocol {protocol.id} has no chat rendering"
            f"{' for agents' if agent else ''} (--interface chat); valid: {valid}"
        )
    if agent and protocol is not None and protocol.agent is None:
        valid = ", ".join(p.id for p in PROTOCOLS.values() if p.agent is not None)
        problems.append(
            f"{names['protocol']}: protocol {protocol.id} has no agent rendering (for agents "
            f"the access layer's disclosure mode says what is withheld); valid for agents: "
            f"{valid}"
        )
    return problems, selection


def _answered_under(spec: RunSpec) -> PromptProtocol | None:
    """The prompt protocol `spec`'s replies answer under: a baseline's own (None: the response
    of docs/benchmark.md §2), else the spec's (a model's, or the front-end's own agent's)."""
    baseline = BASELINES.get(spec.system) if spec.system is not None else None
    if baseline is not None:
        return PROTOCOLS.get(baseline.protocol) if baseline.protocol is not None else None
    return PROTOCOLS.get(spec.protocol)


def _intervention_problem(spec: RunSpec, names: Naming, frontend: str) -> str | None:
    """Why `spec`'s intervention does not apply to its run (`Intervention.refuses`), or None."""
    agent, model, _ = _who(spec, frontend)
    setting = Setting(
        agent=agent,
        model=model,
        corpus=get_tier(spec.tier).corpus is not None,
        tier=spec.tier,
        interface=spec.interface,
        contract=spec.contract,
        frontend=frontend,
        system=spec.system or "this run's agent",
        names=names,
    )
    return get_intervention(spec.intervention).refuses(setting)


def _who(spec: RunSpec, frontend: str) -> tuple[bool, bool, bool]:
    """Whether `spec`'s system is (an agent, a model, an agent that is a model); with no
    system, the front-end's own: an MCP client is an agent model; inspect's model is one on a
    tier with corpora."""
    if spec.system is None:
        agent = frontend == "mcp" or (
            frontend == "inspect" and get_tier(spec.tier).corpus is not None
        )
        return agent, True, agent
    corpus = get_tier(spec.tier).corpus is not None
    baseline = chat_baseline(spec.system, corpus) or BASELINES.get(spec.system)
    agent = spec.system.startswith(AGENT_PREFIX) or (baseline is not None and is_agent(baseline))
    return agent, baseline is None, agent and baseline is None


def applies_to(name: str, spec: RunSpec, frontend: str = "sweep") -> bool:
    """Whether option `name` applies to `spec` (its system, its tier) at `frontend`."""
    return _not_applying(name, spec, naming("sweep"), frontend) is None


def _not_applying(name: str, spec: RunSpec, names: Naming, frontend: str) -> str | None:
    """Why option `name` does not apply to `spec` (None when it does); an intervention says
    itself where it does not (`Intervention.refuses`)."""
    if name == "intervention" and spec.intervention != DEFAULT_INTERVENTION:
        problem = _intervention_problem(spec, names, frontend)
        return None if problem is None else f"{names[name]}: {problem}"
    return _not_applying_to(options()[name].applies, name, spec, names, frontend)


def _not_applying_to(
    applies: Applies, name: str, spec: RunSpec, names: Naming, frontend: str
) -> str | None:
    """Why option `name`, which applies to `applies`, does not apply to `spec` (None when it
    does)."""
    agent, model, agent_model = _who(spec, frontend)
    who = spec.system or "this run"
    tier = get_tier(spec.tier)
    if applies == "models" and not model:
        return f"{names[name]}: {who} is a baseline and takes no {names[name]}"
    if applies == "agents" and not agent:
        return (
            f"{names[name]}: {who} reads no agent view ({names[name]} applies to agent "
            f"systems: the agent_* baselines or {AGENT_PREFIX}<model>)"
        )
    if applies == "agent_models" and not agent_model:
        return (
            f"{names[name]} applies to agent models only; run a model as one with "
            f"{AGENT_PREFIX}<model>"
        )
    if applies == "agent_corpora" and spec.system is not None and not agent:
        return _not_applying_to("agents", name, spec, names, frontend)  # a named system first
    if applies in ("corpus_tiers", "agent_corpora") and tier.corpus is None:
        corpora = [t.name for t in TIERS.values() if t.corpus is not None]
        return (
            f"{names[name]}: the {spec.tier} tier has no corpus; choose {names['tier']} "
            f"{' or '.join(corpora)}"
        )
    if applies == "agent_corpora" and not agent:
        return _not_applying_to("agents", name, spec, names, frontend)
    if applies == "handoffs" and not (agent and tier.handoffs):
        handing = [t.name for t in TIERS.values() if t.handoffs]
        why = (
            f"the {spec.tier} tier's tasks list no sub-agents (choose {names['tier']} "
            f"{' or '.join(handing)})"
            if agent
            else f"{who} is not an agent"
        )
        return f"{names[name]}: {why}; a delegate system runs an agent's handoffs"
    return None


def _concurrency(spec: RunSpec, embedded: bool) -> int:
    """The replies in flight at once: the spec's, else the default for an embedded model's
    system or any other's."""
    if spec.concurrency is not None:
        return spec.concurrency
    return EMBEDDED_CONCURRENCY if embedded else DEFAULT_CONCURRENCY


def system_settings(spec: RunSpec, max_steps: int) -> dict[str, Any]:
    """`spec`'s settings of the systems it builds (`systems.Settings`, by name, as
    `systems.build_system` and `systems.sub_agent` take them), an agent's `max_steps` resolved
    by the caller."""
    budget = DEFAULT_TOKEN_BUDGET if spec.token_budget is None else spec.token_budget
    return {
        "protocol": spec.protocol,
        "prompt_options": prompt_options(spec),
        "temperature": spec.temperature,
        "max_tokens": spec.max_tokens,
        "api_base": spec.api_base,
        "timeout_s": spec.timeout,
        "local_port": spec.local_port,
        "disclosure": spec.disclosure,
        "followup": spec.followup,
        "pushes": spec.pushes,
        "interface": spec.interface,
        "corpus": get_tier(spec.tier).corpus is not None,
        "max_steps": max_steps,
        "token_budget": budget or None,
        "use_cache": spec.cache,
    }


def plan_for(system: System, families: Sequence[ScenarioFile], **options: Any) -> RunPlan:
    """A plan for a system object built by hand (a library user's, a test's) over `families`
    (loaded or not): `options` are RunSpec fields, each read as `option_value` reads it (a
    RunSpecError names what is refused); the tasks are those the families give at the seeds."""
    spec = read_spec(options, naming("sweep"), family=tuple(f.id for f in families))
    seeds = parse_seeds(spec.seeds, limit=MAX_TASKS_CAP) if spec.seeds is not None else None
    selection = Selection(
        families=tuple(families),
        seeds=tuple(seeds) if seeds is not None else None,
        tiers=(spec.tier,),
        distractors=spec.distractors,
        n_tasks=count_tasks(families, seeds),
    )
    episodes = is_agent(system)
    steps = getattr(system, "max_steps", None) if episodes else None
    return RunPlan(
        spec=spec,
        system=intervened(system, spec.intervention, prompted=False),
        selection=selection,
        episodes=episodes,
        max_steps=steps,
        concurrency=_concurrency(spec, is_embedded(system.name)),
    )
