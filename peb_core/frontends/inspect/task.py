"""The benchmark as an inspect_ai task, and an inspect eval log as a run folder. With
`agent` (the agent tier's tools, agent and trace), the modules that import inspect_ai
(the `inspect` extra). The package's `inspect_ai` entry point
(`partial_evidence_bench.py`) registers its task by name, so it runs from any folder:

    inspect eval partial_evidence_bench/partial_evidence -T family=due_diligence_v1 -T tier=hard \\
        -T protocol=structured_gap@1 --model openai/NAME --log-dir DIR

(an OpenAI-compatible server: `--model openai-api/SERVICE/NAME --model-base-url URL`; without
`--log-dir`, inspect writes its logs to `./logs`). Imports are absolute, so inspect can also
load this file by its path (`peb_core/frontends/inspect/task.py@partial_evidence`).

A sample is one generated task: its input is the prompt protocol's messages, rendered from the
view the protocol reads (the model view, or for `boundary_metadata@1` the model view plus the
withheld scope ids), so nothing hidden reaches it; its metadata names the task (family, task
id, template, seed, tier), from which the scorer regenerates it; it has no target. The family's
response schema goes out as inspect's `response_schema` with its `$ref`s inlined (inspect's
JSONSchema has no `$defs`, `maxItems` nor `title`: the array caps are not sent). The scorer
reads each reply with `read_reply` and scores it with `score_run`, and each inspect metric is
the scorecard's own number over the samples: see `METRICS`.

On the agent tier (`-T tier=agent`, with `disclosure`, `max_steps`, `corpus_size`, `contract`,
`followup`) a sample is an agent's episode instead: its input the protocol's agent messages,
its tools the access layer's, run by inspect's `react()` agent unless `--solver` names another,
scored with the trace metrics too (`agent`; docs/benchmark.md §10.1).

`import_log` writes a run folder from an eval log of this task, as `peb run` would have, so
`peb score`, `peb compare`, `peb report` and the notebooks read it (an episode with its trace),
taking nothing in the log on trust: its settings are cross-checked, and each episode is
replayed against the access layer (`replay`); a sample that does not verify is set aside.
"""

from __future__ import annotations

import asyncio
import stat
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from inspect import Parameter, Signature
from itertools import islice, product
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast

import click
import inspect_ai
import polars as pl
from inspect_ai import task
from inspect_ai._util.error import is_cancellation_message
from inspect_ai.agent import as_solver
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelOutput,
    ResponseSchema,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import JSONSchema, LimitExceededError
from pydantic import BaseModel, Field, ValidationError

from peb_core._extensions import load_extensions
from peb_core._provenance import package_version
from peb_core.access import DISCLOSURES, FOLLOWUPS, agent_start
from peb_core.frontends.inspect.agent import (
    ESCALATED_KEY,
    HANDOFFS_KEY,
    SUB_AGENT,
    SUBMITTED_KEY,
    HandedOff,
    chat_messages,
    declaration,
    end_episode,
    episode_reply,
    episode_setup,
    failure,
    first_line,
    handed_off,
    inspect_schema,
    react_agent,
    session_settings,
)
from peb_core.frontends.inspect.replay import NotVerified, Reached, Replay, with_reached
from peb_core.interventions import get_intervention
from peb_core.runs import (
    MAX_RECORD_BYTES,
    RunManifest,
    RunPlan,
    RunSpec,
    RunSpecError,
    RunState,
    applies_to,
    default,
    file_kind,
    naming,
    new_manifest,
    options,
    plan_run,
    read_spec,
    write_run,
)
from peb_core.scoring import (
    CALIBRATION,
    ESCALATION,
    EVAL_SUMMARY,
    HANDOFF,
    REPEAT_COLUMNS,
    TRACE,
    measured_only,
    score_run,
    scorecard,
    with_verdict,
)
from peb_core.scoring import METRICS as SCORECARD_METRICS
from peb_core.systems import (
    MAX_REPEATS,
    ModelSystem,
    PromptProtocol,
    Reply,
    ResponseRecord,
    Usage,
    clean_reply,
    followup_config,
    redact_url,
    response_format,
    system_name,
)
from peb_core.tasks import (
    DEFAULT_CONTRACT,
    MAX_SEED,
    MAX_TASKS,
    ContractSource,
    ScenarioFile,
    Task,
    count_tasks,
    format_seeds,
    generate_task,
    generate_tasks,
    load_families,
    parse_seeds,
    scenario_hash,
    task_id,
    task_keys,
    view_for,
)

TASK_NAME = "partial_evidence"
BENCHMARK = "partial-evidence-bench"
"""The eval metadata's `benchmark`: how a log of this task is told from any other."""
ERROR = "error"
"""The sample metadata key holding why its model call failed."""
REPEAT = "repeat"
"""The Score metadata key holding the sample's repeat: its epoch - 1."""


class InspectLogError(ValueError):
    """An eval log that cannot be imported; one line."""


_Meta = TypeVar("_Meta", bound=BaseModel)


def response_schema(spec: ScenarioFile, parts: Sequence[str] = ()) -> ResponseSchema:
    """The family's response format (the one `ModelSystem` sends, with the `parts` its
    protocol adds) as inspect's ResponseSchema."""
    form = response_format(spec, "json_schema", parts)["json_schema"]
    schema = form["schema"]
    return ResponseSchema(
        name=form["name"],
        json_schema=JSONSchema.model_validate(inspect_schema(schema)),
        strict=form["strict"],
    )


def sample(
    generated: Task,
    spec: ScenarioFile,
    protocol: PromptProtocol,
    episode: bool = False,
    *,
    named: bool = False,
) -> Sample:
    """The sample of one task: the protocol's messages from the view it reads (for an
    `episode`, its agent messages from the agent's start: no document); the task named in the
    metadata. Its id is the task id (`named`: with its family before it, for a task of several
    families, where two families' templates may share an id)."""
    if episode:
        assert protocol.agent is not None
        messages = protocol.agent(agent_start(generated, spec))
    else:
        messages = protocol.render(view_for(protocol.view, generated, spec))
    return Sample(
        id=f"{generated.family}/{generated.task_id}" if named else generated.task_id,
        input=chat_messages(messages),
        metadata={
            "family": generated.family,
            "task_id": generated.task_id,
            "template": generated.template,
            "seed": generated.seed,
            "tier": generated.tier,
        },
    )


def record(
    metadata: dict[str, Any],
    system: str,
    output: ModelOutput,
    error: str | None,
    repeat: int = 0,
) -> ResponseRecord:
    """The run record of one sample (in its `repeat`): its `one_shot_reply`."""
    reply = one_shot_reply(output, error)
    return ResponseRecord.of_reply(metadata["family"], metadata["task_id"], system, reply, repeat)


def one_shot_reply(output: ModelOutput, error: str | None) -> Reply:
    """The reply of one sample: an error if its model call failed, else its reply text (kept as
    `ModelSystem` keeps it) with the usage inspect reported."""
    if error is not None:
        return Reply(status="error", error=error)
    raw, truncated = clean_reply(output.completion)
    usage = output.usage
    return Reply(
        status="ok",
        raw=raw,
        truncated=truncated,
        usage=Usage(
            prompt_tokens=usage.input_tokens if usage else None,
            completion_tokens=usage.output_tokens if usage else None,
            latency_s=output.time,
            cost_usd=usage.total_cost if usage else None,
        ),
    )


def _score_row(number: int, score: SampleScore) -> dict[str, Any]:
    """A score frame's row of one sample's score: its events (but those over a task's repeats,
    which a sample's score cannot know), its task (from the sample's metadata; unnamed, a task
    of its own) and its repeat (the epoch, from the score's metadata), so the epochs of a task
    are counted as `peb score` counts a run's repeats."""
    meta = score.sample_metadata or {}
    named = meta.get("task_id")
    events = cast("dict[str, Any]", score.score.value)
    return {
        **{c: v for c, v in events.items() if c not in REPEAT_COLUMNS},
        "task_id": f"{meta.get('family')}/{named}" if named is not None else f"#{number}",
        "repeat": int((score.score.metadata or {}).get(REPEAT, 0)),
    }


def _scorecard_metric(name: str) -> Callable[[], Metric]:
    """An inspect metric named `name` whose value is the scorecard's `name` over the samples,
    each epoch of a task one of its repeats, as `peb score --json` gives it (`measured_only`).
    Where that is null (an empty denominator; every metric but the counts of an eval whose
    every sample failed) the metric is left out of the eval's results: inspect holds a float
    for every metric it lists, and NaN would read `nan`. So the value is a mapping of `name` to
    its value, or to None, which inspect leaves out."""

    def create() -> Metric:
        def compute(scores: list[SampleScore]) -> dict[str, float | None]:
            rows = [_score_row(number, s) for number, s in enumerate(scores)]
            if not rows:
                return {name: None}
            frame = pl.DataFrame(rows).with_columns(run=pl.lit(TASK_NAME), family=pl.lit("all"))
            value = measured_only(scorecard(frame))[name][0]
            return {name: None if value is None else float(value)}

        return compute

    create.__name__ = name
    return metric(name, scores="unreduced")(create)


def eval_metrics(
    episodes: bool = False, delegates: bool = False, asks: bool = False
) -> list[Metric | dict[str, list[Metric]]]:
    """What an eval reports, from the metric registry as it is when called (when the task is
    made): the summary (`scoring.EVAL_SUMMARY`: the headline first, its worst case (every error
    unsafe) and the samples whose model call failed beside it, then the rest of the headline
    group and format compliance); for agents' `episodes` the trace metrics (`scoring.TRACE`);
    for episodes that may hand off (tasks that list sub-agents, `delegates`) the handoff
    metrics (`scoring.HANDOFF`); under a protocol that asks for a next step, a confidence or a
    handoff to a human (`asks`), the escalation and calibration metrics (`scoring.ESCALATION`,
    `scoring.CALIBRATION`). Each is the scorecard's own number over every sample, from the
    per-task events each Score value carries."""
    chosen = [
        *EVAL_SUMMARY,
        *(TRACE if episodes else ()),
        *(HANDOFF if delegates else ()),
        *((*ESCALATION, *CALIBRATION) if asks else ()),
    ]
    return [_scorecard_metric(m.name)() for m in chosen]


def _events() -> list[str]:
    """The per-task score columns the scorecard's metrics read (those registered now): what
    each Score value holds."""
    return sorted(
        {
            column
            for m in SCORECARD_METRICS
            for expr in (m.event, m.within)
            if expr is not None
            for column in expr.meta.root_names()
        }
        | {m.score for m in SCORECARD_METRICS if m.score is not None}
        | {m.against for m in SCORECARD_METRICS if m.against is not None}
    )


@solver
def reply_or_error(parts: Sequence[str] = (), schema: bool = True) -> Solver:
    """`generate` with the sample's family's response schema (with the `parts` the protocol
    adds; none with `schema` False: a reply in prose, `--interface chat`), except that a model
    call that fails after inspect's retries is kept in the sample's metadata (`error`), so the
    sample is scored as the runner scores an error record (never unsafe, unsafe in the worst
    case) instead of being left out of the metrics."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if not schema:
            return await _failure_kept(state, generate(state))
        form = response_schema(load_families()[state.metadata["family"]], parts)
        return await _failure_kept(state, generate(state, response_schema=form))

    return solve


@solver
def react_episode(max_steps: int) -> Solver:
    """inspect's `react()` agent over the episode's tools (`agent.react_agent`), except
    that a model call that fails after inspect's retries is kept in the sample's metadata
    (`error`), as `reply_or_error` keeps it: the episode so far is scored as an error."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await _failure_kept(state, as_solver(react_agent(max_steps))(state, generate))

    return solve


async def _failure_kept(state: TaskState, solving: Awaitable[TaskState]) -> TaskState:
    """The state `solving` ends in; if a model call fails after inspect's retries, `state`
    with why kept in its metadata (`error`). inspect's own limits end a sample as inspect
    ends it."""
    try:
        return await solving
    except LimitExceededError:
        raise
    except Exception as exc:
        state.metadata[ERROR] = failure(exc)
        return state


@scorer(metrics=eval_metrics())
def peb_scorer(run: Mapping[str, Any] | None = None) -> Scorer:
    """Each reply read and scored as `peb score` scores a run's record: the Score value holds
    the task's scorecard events, its metadata the verdict and schema violations. `run` is the
    run as the task declares it (`declared`; None: every option's default): with `max_steps`,
    each sample is an agent's episode (`agent.episode_reply`), scored with its trace, its task
    made at `corpus_size` with its contract where `contract` says. The events are those of the
    metrics registered when the scorer is made (`partial_evidence` reports the metrics
    registered when the task is made, `eval_metrics`)."""
    events = _events()
    spec = declaration(run or {})
    protocol, max_steps, corpus_size = spec.protocol, spec.max_steps, spec.corpus_size
    contract: ContractSource = "corpus" if spec.contract == "corpus" else DEFAULT_CONTRACT
    interface = spec.interface

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        spec = load_families()[meta["family"]]
        task = generate_task(
            spec, meta["template"], meta["seed"], 0, meta["tier"], corpus_size, contract
        )
        system = system_name(str(state.model), protocol)
        if max_steps is None:
            reply = record(meta, system, state.output, meta.get(ERROR))
        else:
            submitted = state.store.get(SUBMITTED_KEY)
            handoffs = handed_off(state.store.get(HANDOFFS_KEY))
            episode = episode_reply(
                state.messages,
                max_steps,
                submitted,
                meta.get(ERROR),
                handoffs=handoffs,
                escalated=state.store.get(ESCALATED_KEY),
                interface=interface,
            )
            reply = ResponseRecord.of_reply(spec.id, task.task_id, system, episode)
        scores = score_run(
            [task],
            [reply],
            run=TASK_NAME,
            system=system,
            families={spec.id: spec},
            episodes=max_steps is not None,
            protocol=protocol,
            interface=interface,
        )
        row = with_verdict(scores).row(0, named=True)
        return Score(
            value={c: row[c] for c in events},
            answer=reply.raw,
            explanation=f"{row['verdict']}; schema violations: "
            + (", ".join(row["schema_violations"]) or "none"),
            metadata={
                "verdict": row["verdict"],
                "schema_violations": row["schema_violations"],
                REPEAT: state.epoch - 1,
            },
        )

    return score


def _seeds(seeds: str | int | Sequence[str | int] | None) -> list[int] | None:
    """The seeds `-T seeds=...` gives: `11,23` reaches a task as the list [11, 23], `11` as
    the integer 11, `400-439` as text; None: the family's canonical seeds."""
    if seeds is None:
        return None
    if isinstance(seeds, list | tuple):
        return parse_seeds(",".join(str(s).strip() for s in seeds))
    return parse_seeds(str(seeds))


class TaskOptionError(ValueError, click.ClickException):
    """A `-T` option the task refuses (one line naming it as `-T` does). inspect's command line
    prints it as `Error: <line>` on stderr and exits with status 2, as `peb` does for bad
    input (inspect's commands are click's, which end a click exception so); from Python it is
    a ValueError."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        click.ClickException.__init__(self, message)


def inspect_plan(values: Mapping[str, Any], **given: Any) -> RunPlan:
    """The run `-T` options `values` declare (with `given`, values already typed that `-T`
    does not offer: an import's task cap), checked as every front-end checks a run
    (`runs.plan_run`); a TaskOptionError (a ValueError) of one line naming each option as
    `-T` does: a bad value, an option that does not apply, one `-T` does not offer (`repeats`:
    inspect's epochs are the repeats) or not a run option at all."""
    names = naming("inspect")
    try:
        spec = read_spec(values, names, frontend="inspect", **given)
        return plan_run(spec, names, frontend="inspect")
    except RunSpecError as exc:
        raise TaskOptionError(str(exc)) from None


def declared(plan: RunPlan) -> dict[str, Any]:
    """The run as the task declares it wherever inspect records it (the eval's metadata, the
    scorer's and the setup solver's `run`), and as an import checks it against the task's own
    arguments: each `-T` option that applies to it, by name, with the value the run resolved
    (its families' ids, its seeds, an agent's steps, the corpus size, where its contract is
    found)."""
    resolved = {
        "family": [f.id for f in plan.selection.families],
        "seeds": plan.seeds,
        "max_steps": plan.max_steps,
        "corpus_size": plan.corpus_size,
        "contract": plan.contract,
    }
    return {
        name: resolved[name] if name in resolved else getattr(plan.spec, name)
        for name in options("inspect")
        if applies_to(name, plan.spec, "inspect")
    }


_RECORDED = {"family": "families"}
"""An option the eval's metadata names otherwise than `-T` does."""


def partial_evidence(**options: Any) -> inspect_ai.Task:
    """Tasks of the families named (`family`, one or several; default every family) on a tier,
    at `seeds` (e.g. `11,23` or `400-439`; default: each family's canonical seeds), under a
    prompt protocol, with each family's response schema and `ModelSystem`'s default
    temperature and token cap. On a tier whose tasks are corpora (`agent`, `delegation`,
    `grants`) each sample is an agent's episode: inspect's `react()` agent (or the `--solver`
    given) with the access layer's tools over the task's corpus under `disclosure`, at most
    `max_steps` model requests, `corpus_size` documents per task, the contract given or to be
    found in the corpus (`contract`), its user pushing back on a reported gap under `followup`
    `pressure` (`pushes` times at most), and under `interface` `chat` no submit: its final
    message is its response. On tasks that list sub-agents
    `delegate` is offered too: a handoff runs inspect's `react()` with the same model, or the
    peb agent system `delegate_system` names. Every option is the run declaration's
    (`runs.RunSpec`: the same defaults, bounds and messages as `peb run`'s, and the options
    registered from outside), read by `inspect_plan`; what a model is told is the run's prompt
    (`RunPlan.prompt`: its protocol with the run's prompt options), as for our own systems."""
    plan = inspect_plan(options)
    families = plan.selection.families
    prompt = plan.prompt
    contract = plan.contract or DEFAULT_CONTRACT
    tasks = generate_tasks(families, plan.seeds, 0, plan.tier, plan.corpus_size, contract)
    config = GenerateConfig(temperature=ModelSystem.temperature, max_tokens=ModelSystem.max_tokens)
    run = declared(plan)
    metadata = {
        "benchmark": BENCHMARK,
        **{_RECORDED.get(name, name): value for name, value in run.items()},
        "scenario_hash": scenario_hash(families, plan.tier, prompt.sections),
        "package_version": package_version(),
    }
    several = len(families) > 1
    specs = {f.id: f for f in families}
    dataset = [sample(t, specs[t.family], prompt, plan.episodes, named=several) for t in tasks]
    if not plan.episodes:
        parts = prompt.parts
        chat = plan.spec.interface == "chat"  # a reply in prose: no response schema
        schema = (
            {} if several or chat else {"response_schema": response_schema(families[0], parts)}
        )
        return inspect_ai.Task(
            dataset=dataset,
            solver=reply_or_error(parts, not chat),
            scorer=peb_scorer(run),
            metrics=eval_metrics(asks=bool(prompt.parts or prompt.tools)),
            config=config.merge(GenerateConfig(**schema)),
            metadata=metadata,
        )
    steps = plan.max_steps
    assert steps is not None
    return inspect_ai.Task(
        dataset=dataset,
        setup=episode_setup(run),
        solver=react_episode(steps),
        cleanup=end_episode,
        scorer=peb_scorer(run),
        metrics=eval_metrics(
            episodes=True,
            delegates=any(t.sub_agents for t in tasks),
            asks=bool(prompt.parts or prompt.tools),
        ),
        config=config,
        metadata=metadata,
    )


def task_signature() -> Signature:
    """The task's signature, derived from the run declaration: one keyword per `-T` option
    (the run options the inspect front-end offers, read from the declaration; the model,
    epochs, limits and sampling are inspect's own), its default the option's own (inspect
    lists them and records them in the log), and `**options` for any other: inspect passes it
    on (recording it under `options`), so an option declared after the task was loaded is
    taken, and a key that is no option is refused in one line (`inspect_plan`), not dropped
    with a warning."""
    return Signature(
        [
            *(
                Parameter(name, Parameter.KEYWORD_ONLY, default=default(name, "inspect"))
                for name in options("inspect")
            ),
            Parameter("options", Parameter.VAR_KEYWORD),
        ],
        return_annotation=inspect_ai.Task,
    )


def _arguments(task_args: Mapping[str, Any]) -> dict[str, Any]:
    """A task's `-T` options as inspect recorded them (those beyond the signature's keywords
    under `options`), as one mapping."""
    arguments = dict(task_args)
    more = arguments.pop("options", None)
    return {**arguments, **(more if isinstance(more, Mapping) else {})}


load_extensions()  # the installed extensions' options, tools and metrics, before any is read
partial_evidence.__signature__ = task_signature()  # type: ignore[attr-defined]
partial_evidence = task(partial_evidence)


class _EvalMetadata(BaseModel):
    """What `partial_evidence` writes in an eval's metadata besides `benchmark` and the run it
    declares (`declared`, read back by the declaration), and a log must hold to be imported
    (an edited log is checked, not trusted)."""

    scenario_hash: str
    package_version: str


class _SampleMetadata(BaseModel):
    """What `sample` writes in each sample's metadata (and `reply_or_error` adds)."""

    family: str
    task_id: str
    template: str
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)]
    tier: str
    error: str | None = None


def _checked(model: type[_Meta], data: Any, where: str) -> _Meta:
    """`data` validated as `model`, or an InspectLogError naming `where` and the first problem."""
    try:
        return model.model_validate(data if isinstance(data, dict) else {})
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(map(str, err["loc"]))
        got = f" (got {err['input']!r:.40})" if err["type"] != "missing" else ""
        raise InspectLogError(f"{where}.{field}: {err['msg']}{got}") from None


def _sample_usage(sample: EvalSample) -> Usage:
    """A sample's tokens and cost over every model it called (cost unknown unless every one's
    is known) and its working time."""
    usages = list(sample.model_usage.values())
    costs = [u.total_cost for u in usages]
    return Usage(
        prompt_tokens=sum(u.input_tokens for u in usages) if usages else None,
        completion_tokens=sum(u.output_tokens for u in usages) if usages else None,
        latency_s=sample.working_time,
        cost_usd=None if not costs or None in costs else sum(c or 0.0 for c in costs),
    )


def _total(values: Sequence[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _with_handoffs(usage: Usage, handoffs: Sequence[HandedOff]) -> Usage:
    """A sample's usage with that of the handoffs a peb system ran (`delegate_system`: its
    requests are not inspect's, so not in the sample's); cost unknown if any is."""
    every = [usage, *(h.delegation.reply.usage for h in handoffs)]
    costs = [u.cost_usd for u in every]
    return usage.model_copy(
        update={
            "prompt_tokens": _total([u.prompt_tokens for u in every]),
            "completion_tokens": _total([u.completion_tokens for u in every]),
            "cost_usd": None if None in costs else sum(c or 0.0 for c in costs),
        }
    )


def _cancelled(sample: EvalSample) -> bool:
    """Whether inspect cancelled the sample (the eval was stopped, or a sibling failed): a
    task that was not run, not a reply that failed."""
    return sample.error is not None and is_cancellation_message(sample.error.message)


@dataclass(frozen=True)
class Imported:
    """A log written as a run folder: its manifest, and one line per sample set aside (not
    taken as a reply: written as an error record saying why)."""

    manifest: RunManifest
    set_aside: list[str]


_PARAMETERS = {"delegate": "delegate_system"}
"""A solver parameter named otherwise than the run option it is (logs written before the
solvers took the run as declared)."""


def _same_settings(log: Path, evaluation: EvalLog, plan: RunPlan) -> None:
    """The run the log's metadata declares (`plan`) must be the one its task's own arguments
    (`task_args`, as inspect recorded them) declare, and the one its scorer and setup solver
    were given: each is editable, so one edited alone (a `silent` run relabelled `named`, a
    `max_steps` raised) is refused (InspectLogError, one line)."""
    spec = evaluation.eval
    ours = declared(plan)
    try:
        by_arguments = inspect_plan(_arguments(spec.task_args), max_tasks=plan.spec.max_tasks)
    except ValueError as exc:
        raise InspectLogError(f"{log}: task_args: {exc}") from None
    recorded: list[tuple[str, Mapping[str, Any]]] = [
        ("task_args", declared(by_arguments)),
        *((f"scorer {s.name}", s.options or {}) for s in spec.scorers or [] if _ours(s.name)),
        *((f"solver {p.solver}", p.params) for p in evaluation.plan.steps if _ours(p.solver)),
    ]
    for where, given in recorded:
        values = given.get("run", given)  # a run as declared; older logs: its parts
        for key, value in (values if isinstance(values, Mapping) else {}).items():
            name = _PARAMETERS.get(key, key)
            if name in ours and ours[name] != value:
                raise InspectLogError(
                    f"{log}: metadata.{name} {ours[name]!r:.60} is not the run's: {where} "
                    f"gives {value!r:.60}"
                )


def _ours(name: str) -> bool:
    """Whether a scorer or solver a log names is one of the task's own (whose parameters are
    run options), not an agent's (`--solver`); inspect may name it with its package."""
    return name.rsplit("/", 1)[-1] in {
        "peb_scorer",
        "episode_setup",
        "react_episode",
        "reply_or_error",
    }


def _said(messages: str | Sequence[ChatMessage]) -> list[tuple[str, str]]:
    if isinstance(messages, str):
        return [("user", messages)]
    return [(m.role, m.text) for m in messages]


def _unverified_reply(sample: EvalSample, expected: Sample, one_shot: bool) -> str | None:
    """Why a sample's reply is not that of the task it names, as far as a log can show it
    without a replay: its input must be the task's (as these scenario files render it), and a
    `one_shot` reply must be the one its conversation ends with. None if nothing differs."""
    if _said(sample.input) != _said(expected.input):
        return "its input is not the task's, as these scenario files make it"
    if not one_shot:
        return None
    last = sample.messages[-1] if sample.messages else None
    if not isinstance(last, ChatMessageAssistant) or last.text != sample.output.completion:
        return "its output is not the reply its conversation ends with"
    return None


def _unreplayed(
    sample: EvalSample, task: Task, spec: ScenarioFile, replay: Replay
) -> tuple[str | None, Reached]:
    """Why a sample's episode does not replay (`Replay.episode`), or None if it does, and which
    of its calls reached the session as the replay decides it; an InspectLogError for a
    malformed store, or if it replays under another disclosure mode or follow-up than the
    log's (the log's settings are not the run's)."""
    try:
        handoffs = handed_off(sample.store.get(HANDOFFS_KEY))
    except ValueError as exc:
        raise InspectLogError(f"store.{HANDOFFS_KEY}: {exc}") from None
    submitted = sample.store.get(SUBMITTED_KEY)
    if submitted is not None and not isinstance(submitted, str):
        raise InspectLogError(f"store.{SUBMITTED_KEY}: not a response's text")
    escalated = sample.store.get(ESCALATED_KEY)
    if escalated is not None and not isinstance(escalated, str):
        raise InspectLogError(f"store.{ESCALATED_KEY}: not an escalation's text")

    reached: Reached = []

    def unverified(under: Replay) -> str | None:
        nonlocal reached
        try:
            reached = asyncio.run(
                under.episode(task, spec, sample.messages, submitted, handoffs, escalated)
            )
        except NotVerified as exc:
            return str(exc)
        return None

    reason = unverified(replay)
    if reason is None:
        return None, reached
    for disclosure, followup in product(DISCLOSURES, FOLLOWUPS):
        settings = replace(replay.settings, disclosure=disclosure, followup=followup)
        other = replace(replay, settings=settings)
        if other != replay and unverified(other) is None:
            differ = [
                f"{label} {theirs}, not {ours}"
                for label, theirs, ours in (
                    ("disclosure", disclosure, replay.settings.disclosure),
                    ("follow-up", followup, replay.settings.followup),
                )
                if theirs != ours
            ]
            raise InspectLogError(
                f"the access layer gives what the log records under {' and '.join(differ)} "
                "as the log says"
            )
    return reason, []


def import_log(log: Path, out: Path, max_tasks: int = MAX_TASKS) -> Imported:
    """Write the run folder `out` (manifest and responses, as the runner writes them) from the
    inspect eval log `log` (`.eval` or `.json`) of `partial_evidence`: one record per sample
    (epoch e as repeat e - 1, the manifest's `repeats` the eval's epochs), the reply text kept
    as `raw`, a failed sample as an error record, a cancelled one left out (missing). Nothing
    in the log is taken on trust: its metadata must name a known family, tier and protocol, at
    most `max_tasks` tasks and 1 to MAX_REPEATS epochs, and be the run its task's arguments,
    scorer and solvers were given, made from these scenario files; every sample must be one
    task of that run, once in each epoch. A sample whose input is not its task's, whose
    one-shot reply is not its conversation's, or whose episode does not replay against the
    access layer (`replay.Replay`) is set aside: written as an error record saying why,
    never as a reply. The log's claims of what made it (its package version) are kept in the
    config as `unverified`; the manifest's provenance is this package's. InspectLogError (one
    line) when the log cannot be read, is not of this task, fails a check, or no sample of it
    verifies; RunError when `out` already holds a run."""
    evaluation = _read_log(log)
    meta, plan = _logged_run(log, evaluation, max_tasks)
    run = _ImportedRun.of(log, evaluation, meta, plan, max_tasks)
    records: list[ResponseRecord] = []
    set_aside: list[str] = []
    checked = 0
    seen: set[tuple[str, str, int]] = set()
    assert evaluation.samples is not None
    for number, s in enumerate(evaluation.samples, start=1):
        where = f"{log}: sample {number} (id {s.id!r:.80}, epoch {s.epoch})"
        named = run.sample_task(s, where, seen)
        if _cancelled(s):
            continue
        checked += 1
        reply, reason = run.reply(s, named, where)
        if reason is not None:
            set_aside.append(f"{where}: set aside, not verified: {reason}")
        key = (named.family, named.task_id, run.system)
        records.append(ResponseRecord.of_reply(*key, reply, s.epoch - 1))
    if checked and len(set_aside) == checked:
        raise InspectLogError(f"{set_aside[0]}; no sample of the log verifies: nothing imported")
    complete = evaluation.status == "success" and len(records) == len(run.keys) * run.epochs
    families = list(plan.selection.families)
    state: RunState = "finished" if complete else "interrupted"
    written = write_run(out, run.manifest(meta), families, records, state)
    return Imported(written, set_aside)


def _read_log(log: Path) -> EvalLog:
    """The eval log `log`, with its samples, of this task; an InspectLogError (one line) for a
    file that is missing, cannot be read, is another task's or holds no samples."""
    try:
        mode = log.stat().st_mode
    except FileNotFoundError:
        raise InspectLogError(f"{log}: no such file") from None
    except OSError as exc:
        raise InspectLogError(f"{log}: cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):  # a FIFO would be waited on, a device read without end
        raise InspectLogError(
            f"{log}: is {file_kind(mode)}, not a regular file; give an inspect eval log "
            "(.eval or .json)"
        )
    try:
        evaluation = read_eval_log(str(log))
    except Exception as exc:
        raise InspectLogError(
            f"{log}: cannot be read as an inspect eval log ({failure(exc)})"
        ) from None
    spec = evaluation.eval
    if not isinstance(spec.metadata, dict) or spec.metadata.get("benchmark") != BENCHMARK:
        raise InspectLogError(
            f"{log}: a log of task {spec.task!r}, not of {TASK_NAME} (partial-evidence-bench)"
        )
    epochs = spec.config.epochs or 1
    if not 1 <= epochs <= MAX_REPEATS:
        raise InspectLogError(
            f"{log}: has {epochs} epochs; a run folder holds 1 to {MAX_REPEATS} repeats "
            "(one per epoch)"
        )
    if evaluation.samples is None:
        raise InspectLogError(f"{log}: holds no samples (was it logged with --no-log-samples?)")
    return evaluation


def _logged_run(log: Path, evaluation: EvalLog, max_tasks: int) -> tuple[_EvalMetadata, RunPlan]:
    """What the log's metadata says of itself, and the run it declares (`declared`, read back
    by the declaration: the options every run of the task has must be there, an agent's
    `max_steps` too), checked against the task's arguments, scorer and solvers
    (`_same_settings`) and made from these scenario files; an InspectLogError (one line)
    otherwise."""
    recorded = dict(evaluation.eval.metadata or {})
    if "families" not in recorded and "family" in recorded:  # logs of one family name it so
        recorded["families"] = [recorded.pop("family")]
    meta = _checked(_EvalMetadata, recorded, f"{log}: metadata")
    values = {name: recorded.get(_RECORDED.get(name, name)) for name in options("inspect")}
    for name in _ALWAYS():
        if _RECORDED.get(name, name) not in recorded:
            raise InspectLogError(f"{log}: metadata.{_RECORDED.get(name, name)}: Field required")
    try:
        plan = inspect_plan(values, max_tasks=max_tasks)
    except ValueError as exc:
        raise InspectLogError(f"{log}: metadata: {exc}") from None
    if plan.episodes and values["max_steps"] is None:
        raise InspectLogError(f"{log}: metadata.max_steps: missing for tier {plan.tier}")
    _same_settings(log, evaluation, plan)
    made_from = scenario_hash(plan.selection.families, plan.tier, plan.prompt.sections)
    if meta.scenario_hash != made_from:
        raise InspectLogError(
            f"{log}: metadata.scenario_hash {meta.scenario_hash[:12]!r}: the log was made from "
            f"other scenario files than these ({made_from[:12]!r}); import it with the "
            f"partial-evidence-bench that made it (the log says {meta.package_version[:40]!r})"
        )
    return meta, plan


def _ALWAYS() -> list[str]:
    """The `-T` options that apply to every run of the task (its families, seeds, tier and
    protocol): a log's metadata must name each."""
    every = RunSpec()
    return [name for name in options("inspect") if applies_to(name, every, "inspect")]


@dataclass(frozen=True)
class _ImportedRun:
    """A log's run as it is imported: the log, its eval, the run its metadata declares, its
    epochs and the tasks it covers (`keys`, after its `--limit`), the system its records name
    and how its episodes are replayed against the access layer."""

    log: Path
    evaluation: EvalLog
    plan: RunPlan
    epochs: int
    limit: int | None
    keys: set[tuple[str, str]]
    agent: str
    system: str
    replay: Replay
    tasks: dict[tuple[str, str], Task]

    @classmethod
    def of(
        cls, log: Path, evaluation: EvalLog, meta: _EvalMetadata, plan: RunPlan, max_tasks: int
    ) -> _ImportedRun:
        """The run of a log whose metadata `meta` declares `plan`: its tasks (an
        InspectLogError if they are more than `max_tasks` with its epochs) and the names of
        its model and solver (an InspectLogError for one that is not printable)."""
        spec = evaluation.eval
        epochs = spec.config.epochs or 1
        limit = spec.config.limit  # `--limit N` ran the first N tasks, as a run's limit does
        if isinstance(limit, int) and limit < 1:
            raise InspectLogError(f"{log}: config.limit {limit}: expected a positive integer")
        if not isinstance(limit, int) or spec.config.sample_shuffle:
            limit = None
        families = plan.selection.families
        n_every = count_tasks(families, plan.seeds)
        if min(n_every, limit or n_every) * epochs > max_tasks:
            raise InspectLogError(
                f"{log}: metadata names {n_every:,} tasks x {epochs} epochs, more than "
                f"--max-tasks ({max_tasks:,})"
            )
        keys = set(islice(task_keys(families, plan.seeds, plan.tier), limit))
        agent = spec.solver or "react"
        for name, value in (("model", spec.model), ("solver", agent)):
            if not value.isprintable():  # a run's system name is shown in tables, one per line
                raise InspectLogError(
                    f"{log}: eval.{name} {value[:60]!r}: not a name (it holds control or bidi "
                    "characters)"
                )
        protocol = plan.prompt.id
        system = system_name(f"{agent}:{spec.model}" if plan.episodes else spec.model, protocol)
        handing = plan.delegate  # None: inspect's react() with the eval's model
        replay = Replay(
            session_settings(plan.spec, plan.prompt),
            system_name(f"{SUB_AGENT}:{spec.model}", protocol) if handing is None else handing.name,
            handing is None,
        )
        return cls(log, evaluation, plan, epochs, limit, keys, agent, system, replay, {})

    def sample_task(
        self, s: EvalSample, where: str, seen: set[tuple[str, str, int]]
    ) -> _SampleMetadata:
        """The task sample `s` names (its metadata), which must be one of the run's, once in
        each of its epochs (`seen`: those met so far, `s`'s added); an InspectLogError
        otherwise."""
        named = _checked(_SampleMetadata, s.metadata, f"{where}: metadata")
        if not 1 <= s.epoch <= self.epochs:
            raise InspectLogError(
                f"{where}: an epoch the eval's {self.epochs} epoch(s) do not hold"
            )
        key = (named.family, named.task_id)
        if named.task_id != task_id(named.template, named.seed, named.tier) or key not in self.keys:
            ids = ", ".join(f.id for f in self.plan.selection.families)
            raise InspectLogError(
                f"{where}: task {named.family}/{named.task_id} (template {named.template}, "
                f"seed {named.seed}, tier {named.tier}) is not a task of this run "
                f"({ids}, tier {self.plan.tier}, seeds {format_seeds(self.plan.seeds)})"
            )
        if (*key, s.epoch) in seen:
            assert self.evaluation.samples is not None
            repeats = sum(
                isinstance(o.metadata, dict)
                and o.metadata.get("task_id") == named.task_id
                and o.epoch == s.epoch
                for o in self.evaluation.samples
            )
            raise InspectLogError(
                f"{where}: task {named.task_id} appears {repeats} times in epoch {s.epoch}; a "
                "run folder holds one reply per task and epoch"
            )
        seen.add((*key, s.epoch))
        return named

    def reply(self, s: EvalSample, named: _SampleMetadata, where: str) -> tuple[Reply, str | None]:
        """The reply of sample `s` of the task `named`, and why it does not verify (None if it
        does): its input must be its task's, a one-shot reply its conversation's, an
        episode must replay against the access layer; one that does not is an error record
        saying why."""
        plan = self.plan
        families = {f.id: f for f in plan.selection.families}
        family = families[named.family]
        key = (named.family, named.task_id)
        if key not in self.tasks:
            self.tasks[key] = generate_task(
                family, named.template, named.seed, 0, named.tier, plan.corpus_size,
                plan.contract or DEFAULT_CONTRACT,
            )  # fmt: skip
        task = self.tasks[key]
        error = named.error or (first_line(s.error.message) if s.error else None)
        expected = sample(task, family, plan.prompt, plan.episodes, named=len(families) > 1)
        episode = plan.max_steps if plan.episodes else None
        requests = sum(isinstance(m, ChatMessageAssistant) for m in s.messages)
        if episode is not None and self.evaluation.eval.solver is None and requests > episode:
            raise InspectLogError(
                f"{where}: its conversation holds {requests:,} model requests; react stops "
                f"after max_steps ({episode}), so no live eval of this run wrote it"
            )
        reached: Reached = []
        try:
            reason = _unverified_reply(s, expected, episode is None and error is None)
            if reason is None and episode is not None:
                reason, reached = _unreplayed(s, task, family, self.replay)
        except InspectLogError as exc:
            raise InspectLogError(f"{where}: {exc}") from None
        if reason is None and episode is None:
            return one_shot_reply(s.output, error), None
        if reason is None:
            handoffs = handed_off(s.store.get(HANDOFFS_KEY))
            usage = _sample_usage(s)
            if plan.spec.delegate_system is not None:
                usage = _with_handoffs(usage, handoffs)
            submitted = s.store.get(SUBMITTED_KEY)
            escalated = s.store.get(ESCALATED_KEY)
            reply = episode_reply(
                s.messages,
                episode or 0,
                submitted,
                error,
                usage,
                handoffs,
                escalated,
                plan.spec.interface,
            )
            reply = with_reached(reply, reached)  # the replay's, never the log's error labels
            kept = ResponseRecord.of_reply(named.family, named.task_id, self.system, reply)
            size = len(kept.model_dump_json().encode())
            if size <= MAX_RECORD_BYTES:  # within the caps of a record: a run would skip it
                return reply, None
            reason = f"its record would take {size:,} bytes, more than a run reads"
        return Reply(status="error", error=f"not verified: {reason}"), reason

    def manifest(self, meta: _EvalMetadata) -> RunManifest:
        """The run folder's manifest: the config a peb system of the run would record (the
        eval's model, prompt and sampling; an agent's solver, disclosure mode, steps,
        follow-up and delegate system), the log it came from and what the log claims of
        what made it (`unverified`)."""
        spec, plan = self.evaluation.eval, self.plan
        sampling = self.evaluation.plan.config
        config: dict[str, Any] = {
            "model": spec.model,
            "api_base": redact_url(spec.model_base_url),
            **plan.prompt.config(),
            "temperature": sampling.temperature,
            "max_tokens": sampling.max_tokens,
        }
        if not plan.episodes and plan.spec.interface == "chat":  # a reply in prose, as ours
            config["interface"] = "chat"
        elif not plan.episodes:
            config["response_format"] = "json_schema"
        else:
            config.update(agent=self.agent, disclosure=plan.spec.disclosure)
            config.update(
                max_steps=plan.max_steps,
                **followup_config(plan.spec.followup, plan.spec.pushes, plan.spec.interface),
            )
            if plan.spec.delegate_system is not None:
                config["delegate_system"] = {"name": plan.spec.delegate_system}
        config.update(get_intervention(plan.spec.intervention).config())
        manifest = new_manifest(
            system=self.system,
            config={
                **config,
                "inspect_log": str(self.log),
                "unverified": {"package_version": meta.package_version},
            },
            families=list(plan.selection.families),
            seeds=plan.seeds,
            tier=plan.tier,
            kind="episodes" if plan.episodes else "one_shot",
            n_tasks=len(self.keys),
            corpus_size=plan.corpus_size,
            contract=plan.contract,
            limit=self.limit,
            repeats=self.epochs,
            versions={"inspect_ai": inspect_ai.__version__},
        )
        started = self.evaluation.stats.started_at or spec.created
        return manifest.model_copy(update={"started_at": started})
