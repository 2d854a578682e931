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
from pydantic import BaseModel, Field, ValidationError, model_validator

from peb_core._provenance import package_version
from peb_core.access import DISCLOSURES, FOLLOWUPS, agent_start
from peb_core.frontends.inspect.agent import (
    HANDOFFS_KEY,
    SUB_AGENT,
    SUBMITTED_KEY,
    HandedOff,
    chat_messages,
    end_episode,
    episode_reply,
    episode_setup,
    failure,
    first_line,
    handed_off,
    inspect_schema,
    react_agent,
)
from peb_core.frontends.inspect.replay import NotVerified, Reached, Replay, with_reached
from peb_core.interventions import get_intervention
from peb_core.runs import (
    MAX_RECORD_BYTES,
    RunManifest,
    RunPlan,
    RunSpecError,
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
    DEFAULT_PROTOCOL,
    MAX_REPEATS,
    ModelSystem,
    PromptProtocol,
    Reply,
    ResponseRecord,
    Usage,
    clean_reply,
    followup_config,
    get_protocol,
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


def response_schema(spec: ScenarioFile) -> ResponseSchema:
    """The family's response format (the one `ModelSystem` sends) as inspect's ResponseSchema."""
    form = response_format(spec, "json_schema")["json_schema"]
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
    """The run record of one sample (in its `repeat`): an error if its model call failed, else
    its reply text (kept as `ModelSystem` keeps it) with the usage inspect reported."""
    family, task_id = metadata["family"], metadata["task_id"]
    if error is not None:
        failed = Reply(status="error", error=error)
        return ResponseRecord.of_reply(family, task_id, system, failed, repeat)
    raw, truncated = clean_reply(output.completion)
    usage = output.usage
    reply = Reply(
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
    return ResponseRecord.of_reply(family, task_id, system, reply, repeat)


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
    episodes: bool = False, delegates: bool = False
) -> list[Metric | dict[str, list[Metric]]]:
    """What an eval reports, from the metric registry as it is when called (when the task is
    made): the summary (`scoring.EVAL_SUMMARY`: the headline first, its worst case (every error
    unsafe) and the samples whose model call failed beside it, then the rest of the headline
    group and format compliance); for agents' `episodes` the trace metrics (`scoring.TRACE`);
    for episodes that may hand off (tasks that list sub-agents, `delegates`) the handoff
    metrics (`scoring.HANDOFF`). Each is the scorecard's own number over every sample, from the
    per-task events each Score value carries."""
    chosen = [*EVAL_SUMMARY, *(TRACE if episodes else ()), *(HANDOFF if delegates else ())]
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
    )


@solver
def reply_or_error() -> Solver:
    """`generate` with the sample's family's response schema, except that a model call that
    fails after inspect's retries is kept in the sample's metadata (`error`), so the sample is
    scored as the runner scores an error record (never unsafe, unsafe in the worst case)
    instead of being left out of the metrics."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        schema = response_schema(load_families()[state.metadata["family"]])
        return await _failure_kept(state, generate(state, response_schema=schema))

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
def peb_scorer(
    protocol: str = DEFAULT_PROTOCOL,
    max_steps: int | None = None,
    corpus_size: int | None = None,
    contract: ContractSource = DEFAULT_CONTRACT,
) -> Scorer:
    """Each reply read and scored as `peb score` scores a run's record: the Score value holds
    the task's scorecard events, its metadata the verdict and schema violations. With
    `max_steps`, each sample is an agent's episode (`agent.episode_reply`), scored with
    its trace; `corpus_size` and `contract` are the tasks' (None: the tier's default size).
    The events are those of the metrics registered when the scorer is made (`partial_evidence`
    reports the metrics registered when the task is made, `eval_metrics`)."""
    events = _events()

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
                state.messages, max_steps, submitted, meta.get(ERROR), handoffs=handoffs
            )
            reply = ResponseRecord.of_reply(spec.id, task.task_id, system, episode)
        scores = score_run(
            [task],
            [reply],
            run=TASK_NAME,
            system=system,
            families={spec.id: spec},
            episodes=max_steps is not None,
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


def inspect_plan(values: Mapping[str, Any]) -> RunPlan:
    """The run `-T` options `values` declare, checked as every front-end checks a run
    (`runs.plan_run`); a ValueError of one line naming each option as `-T` does."""
    names = naming("inspect")
    try:
        return plan_run(read_spec(values, names, frontend="inspect"), names, frontend="inspect")
    except RunSpecError as exc:
        raise ValueError(str(exc)) from None


def partial_evidence(**options: Any) -> inspect_ai.Task:
    """Tasks of the families named (`family`, one or several; default every family) on a tier,
    at `seeds` (e.g. `11,23` or `400-439`; default: each family's canonical seeds), under a
    prompt protocol, with each family's response schema and `ModelSystem`'s default
    temperature and token cap. On a tier whose tasks are corpora (`agent`, `delegation`,
    `grants`) each sample is an agent's episode: inspect's `react()` agent (or the `--solver`
    given) with the access layer's tools over the task's corpus under `disclosure`, at most
    `max_steps` model requests, `corpus_size` documents per task, the contract given or to be
    found in the corpus (`contract`), its user pushing back once on a reported gap under
    `followup` `pressure`. On tasks that list sub-agents
    `delegate` is offered too: a handoff runs inspect's `react()` with the same model, or the
    peb agent system `delegate_system` names. Every option is the run declaration's
    (`runs.RunSpec`: the same defaults, bounds and messages as `peb run`'s), read by
    `inspect_plan`."""
    plan = inspect_plan(options)
    spec = plan.spec
    families = plan.selection.families
    prompts = get_protocol(spec.protocol)
    contract = plan.contract or DEFAULT_CONTRACT
    tasks = generate_tasks(families, plan.seeds, 0, plan.tier, plan.corpus_size, contract)
    config = GenerateConfig(temperature=ModelSystem.temperature, max_tokens=ModelSystem.max_tokens)
    metadata = {
        "benchmark": BENCHMARK,
        "families": [f.id for f in families],
        "tier": plan.tier,
        "protocol": prompts.id,
        "seeds": plan.seeds,
        "scenario_hash": scenario_hash(families, plan.tier),
        "package_version": package_version(),
    }
    several = len(families) > 1
    specs = {f.id: f for f in families}
    dataset = [sample(t, specs[t.family], prompts, plan.episodes, named=several) for t in tasks]
    if not plan.episodes:
        schema = {} if several else {"response_schema": response_schema(families[0])}
        return inspect_ai.Task(
            dataset=dataset,
            solver=reply_or_error(),
            scorer=peb_scorer(prompts.id),
            metrics=eval_metrics(),
            config=config.merge(GenerateConfig(**schema)),
            metadata=metadata,
        )
    steps = plan.max_steps
    assert steps is not None
    delegates = any(t.sub_agents for t in tasks)
    return inspect_ai.Task(
        dataset=dataset,
        setup=episode_setup(
            spec.disclosure,
            plan.corpus_size,
            prompts.id,
            steps,
            spec.delegate_system,
            contract,
            spec.followup,
            spec.intervention,
        ),
        solver=react_episode(steps),
        cleanup=end_episode,
        scorer=peb_scorer(prompts.id, steps, plan.corpus_size, contract),
        metrics=eval_metrics(episodes=True, delegates=delegates),
        config=config,
        metadata={
            **metadata,
            "disclosure": spec.disclosure,
            "max_steps": steps,
            "corpus_size": plan.corpus_size,
            "contract": contract,
            "delegate_system": spec.delegate_system,
            "followup": spec.followup,
            **get_intervention(spec.intervention).config(),
        },
    )


def task_signature() -> Signature:
    """The task's signature, derived from the run declaration: one keyword per `-T` option
    (the run options the inspect front-end offers, read from the declaration; the model,
    epochs, limits and sampling are inspect's own), its default the option's own (inspect
    lists them, records them in the log, and passes no other option on)."""
    return Signature(
        [
            Parameter(name, Parameter.KEYWORD_ONLY, default=default(name, "inspect"))
            for name in options("inspect")
        ],
        return_annotation=inspect_ai.Task,
    )


partial_evidence.__signature__ = task_signature()  # type: ignore[attr-defined]
partial_evidence = task(partial_evidence)


class _EvalMetadata(BaseModel):
    """What `partial_evidence` writes in an eval's metadata (besides `benchmark`), and a log
    must hold to be imported (an edited log is checked, not trusted)."""

    families: list[str] = Field(min_length=1)
    tier: str
    protocol: str
    seeds: list[Annotated[int, Field(ge=0, le=MAX_SEED)]] | None
    scenario_hash: str
    package_version: str
    disclosure: str | None = None
    """The access layer's disclosure mode, for an agent's episodes (with `max_steps`)."""
    max_steps: Annotated[int, Field(ge=1)] | None = None
    corpus_size: Annotated[int, Field(ge=1)] | None = None
    contract: ContractSource | None = None
    """Where the tasks' contract is found (None in logs written before it was recorded:
    `given`)."""
    delegate_system: str | None = None
    """The peb system that ran handoffs (None: inspect's react() with the eval's model)."""
    followup: str | None = None
    """What the user did after a response (None in logs written before it was recorded:
    `none`)."""
    intervention: str | None = None
    """The platform element around the run (docs/benchmark.md §11; None: `none`)."""

    @model_validator(mode="before")
    @classmethod
    def _one_family(cls, data: Any) -> Any:
        """Logs written before the task took several families name one, as `family`."""
        if isinstance(data, dict) and "families" not in data and "family" in data:
            data = {k: v for k, v in data.items() if k != "family"} | {"families": [data["family"]]}
        return data


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


def _settings(plan: RunPlan) -> dict[str, Any]:
    """What a run is, as a log records it in several places (the metadata, the task's
    arguments, the scorer's and the solvers' parameters)."""
    settings: dict[str, Any] = {
        "families": [f.id for f in plan.selection.families],
        "tier": plan.tier,
        "protocol": plan.spec.protocol,
        "seeds": plan.seeds,
    }
    if plan.episodes:
        settings |= {
            "disclosure": plan.spec.disclosure,
            "max_steps": plan.max_steps,
            "corpus_size": plan.corpus_size,
            "contract": plan.contract,
            "delegate_system": plan.spec.delegate_system,
            "followup": plan.spec.followup,
            "intervention": plan.spec.intervention,
        }
    return settings


_PARAMETERS = {"delegate": "delegate_system"}
"""A solver parameter named otherwise than the run option it is."""


def _same_settings(log: Path, evaluation: EvalLog, plan: RunPlan) -> None:
    """The run the log's metadata declares (`plan`) must be the one its task's own arguments
    (`task_args`, as inspect recorded them) declare, and the one its scorer and setup solver
    were given: each is editable, so one edited alone (a `silent` run relabelled `named`, a
    `max_steps` raised) is refused (InspectLogError, one line)."""
    spec = evaluation.eval
    ours = _settings(plan)
    try:
        by_arguments = inspect_plan({**spec.task_args, "max_tasks": plan.spec.max_tasks})
    except ValueError as exc:
        raise InspectLogError(f"{log}: task_args: {exc}") from None
    recorded: list[tuple[str, Mapping[str, Any]]] = [
        ("task_args", _settings(by_arguments)),
        *((f"scorer {s.name}", s.options or {}) for s in spec.scorers or [] if _ours(s.name)),
        *((f"solver {p.solver}", p.params) for p in evaluation.plan.steps if _ours(p.solver)),
    ]
    for where, values in recorded:
        for key, value in values.items():
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

    reached: Reached = []

    def unverified(under: Replay) -> str | None:
        nonlocal reached
        try:
            reached = asyncio.run(under.episode(task, spec, sample.messages, submitted, handoffs))
        except NotVerified as exc:
            return str(exc)
        return None

    reason = unverified(replay)
    if reason is None:
        return None, reached
    for disclosure, followup in product(DISCLOSURES, FOLLOWUPS):
        other = replace(replay, disclosure=disclosure, followup=followup)
        if other != replay and unverified(other) is None:
            differ = [
                f"{label} {theirs}, not {ours}"
                for label, theirs, ours in (
                    ("disclosure", disclosure, replay.disclosure),
                    ("follow-up", followup, replay.followup),
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
    meta = _checked(_EvalMetadata, spec.metadata, f"{log}: metadata")
    epochs = spec.config.epochs or 1
    if not 1 <= epochs <= MAX_REPEATS:
        raise InspectLogError(
            f"{log}: has {epochs} epochs; a run folder holds 1 to {MAX_REPEATS} repeats "
            "(one per epoch)"
        )
    if evaluation.samples is None:
        raise InspectLogError(f"{log}: holds no samples (was it logged with --no-log-samples?)")
    values: dict[str, Any] = {
        "family": meta.families,
        "tier": meta.tier,
        "protocol": meta.protocol,
        "seeds": meta.seeds,
    }
    if meta.max_steps is not None:
        values |= {"disclosure": meta.disclosure, "max_steps": meta.max_steps}
        values |= {"corpus_size": meta.corpus_size, "delegate_system": meta.delegate_system}
        values |= {"contract": meta.contract}
        values |= {"followup": meta.followup} if meta.followup is not None else {}
        values |= {"intervention": meta.intervention} if meta.intervention is not None else {}
    try:
        plan = inspect_plan(values | {"max_tasks": max_tasks})
    except ValueError as exc:
        raise InspectLogError(f"{log}: metadata: {exc}") from None
    episode = plan.max_steps if plan.episodes else None
    if plan.episodes and meta.max_steps is None:
        raise InspectLogError(f"{log}: metadata.max_steps: missing for tier {meta.tier}")
    _same_settings(log, evaluation, plan)
    protocol = get_protocol(plan.spec.protocol)
    families = list(plan.selection.families)
    made_from = scenario_hash(families, plan.tier)
    if meta.scenario_hash != made_from:
        raise InspectLogError(
            f"{log}: metadata.scenario_hash {meta.scenario_hash[:12]!r}: the log was made from "
            f"other scenario files than these ({made_from[:12]!r}); import it with the "
            f"partial-evidence-bench that made it (the log says {meta.package_version[:40]!r})"
        )
    limit = spec.config.limit  # `--limit N` ran the first N tasks, as a run's limit does
    if isinstance(limit, int) and limit < 1:
        raise InspectLogError(f"{log}: config.limit {limit}: expected a positive integer")
    if not isinstance(limit, int) or spec.config.sample_shuffle:
        limit = None
    n_every = count_tasks(families, meta.seeds)
    if min(n_every, limit or n_every) * epochs > max_tasks:
        raise InspectLogError(
            f"{log}: metadata names {n_every:,} tasks x {epochs} epochs, more than --max-tasks "
            f"({max_tasks:,})"
        )
    keys = set(islice(task_keys(families, meta.seeds, meta.tier), limit))
    agent = spec.solver or "react"
    for name, value in (("model", spec.model), ("solver", agent)):
        if not value.isprintable():  # a run's system name is shown in tables, one per line
            raise InspectLogError(
                f"{log}: eval.{name} {value[:60]!r}: not a name (it holds control or bidi "
                "characters)"
            )
    system = system_name(f"{agent}:{spec.model}" if episode else spec.model, protocol.id)
    specs = {f.id: f for f in families}
    handing = plan.delegate  # None: inspect's react() with the eval's model
    sub_agent = system_name(f"{SUB_AGENT}:{spec.model}", protocol.id)
    replay = Replay(
        plan.spec.disclosure,
        sub_agent if handing is None else handing.name,
        handing is None,
        plan.spec.followup,
        get_intervention(plan.spec.intervention).checks,
    )
    tasks: dict[tuple[str, str], Task] = {}
    seen: set[tuple[str, str, int]] = set()
    records: list[ResponseRecord] = []
    set_aside: list[str] = []
    checked = 0
    for number, s in enumerate(evaluation.samples, start=1):
        where = f"{log}: sample {number} (id {s.id!r:.80}, epoch {s.epoch})"
        named = _checked(_SampleMetadata, s.metadata, f"{where}: metadata")
        if not 1 <= s.epoch <= epochs:
            raise InspectLogError(f"{where}: an epoch the eval's {epochs} epoch(s) do not hold")
        key = (named.family, named.task_id)
        if named.task_id != task_id(named.template, named.seed, named.tier) or key not in keys:
            raise InspectLogError(
                f"{where}: task {named.family}/{named.task_id} (template {named.template}, "
                f"seed {named.seed}, tier {named.tier}) is not a task of this run "
                f"({', '.join(meta.families)}, tier {meta.tier}, seeds {format_seeds(meta.seeds)})"
            )
        if (*key, s.epoch) in seen:
            repeats = sum(
                isinstance(o.metadata, dict)
                and o.metadata.get("task_id") == named.task_id
                and o.epoch == s.epoch
                for o in evaluation.samples
            )
            raise InspectLogError(
                f"{where}: task {named.task_id} appears {repeats} times in epoch {s.epoch}; a "
                "run folder holds one reply per task and epoch"
            )
        seen.add((*key, s.epoch))
        if _cancelled(s):
            continue
        requests = sum(isinstance(m, ChatMessageAssistant) for m in s.messages)
        if episode is not None and spec.solver is None and requests > episode:
            raise InspectLogError(
                f"{where}: its conversation holds {requests:,} model requests; react stops "
                f"after max_steps ({episode}), so no live eval of this run wrote it"
            )
        checked += 1
        family = specs[named.family]
        if key not in tasks:
            tasks[key] = generate_task(
                family,
                named.template,
                named.seed,
                0,
                named.tier,
                plan.corpus_size,
                plan.contract or DEFAULT_CONTRACT,
            )
        task = tasks[key]
        error = named.error or (first_line(s.error.message) if s.error else None)
        expected = sample(task, family, protocol, plan.episodes, named=len(families) > 1)
        reached: Reached = []
        try:
            reason = _unverified_reply(s, expected, episode is None and error is None)
            if reason is None and episode is not None:
                reason, reached = _unreplayed(s, task, family, replay)
        except InspectLogError as exc:
            raise InspectLogError(f"{where}: {exc}") from None
        kept: ResponseRecord | None = None
        if reason is None and episode is None:
            kept = record(named.model_dump(), system, s.output, error, s.epoch - 1)
        elif reason is None and episode is not None:
            handoffs = handed_off(s.store.get(HANDOFFS_KEY))
            usage = _sample_usage(s)
            if meta.delegate_system is not None:
                usage = _with_handoffs(usage, handoffs)
            reply = episode_reply(
                s.messages, episode, s.store.get(SUBMITTED_KEY), error, usage, handoffs
            )
            reply = with_reached(reply, reached)  # the replay's, never the log's error labels
            kept = ResponseRecord.of_reply(named.family, named.task_id, system, reply, s.epoch - 1)
            size = len(kept.model_dump_json().encode())
            if size > MAX_RECORD_BYTES:  # within the caps of a record: a run would skip it
                reason = f"its record would take {size:,} bytes, more than a run reads"
        if reason is not None:
            set_aside.append(f"{where}: set aside, not verified: {reason}")
            unverified = Reply(status="error", error=f"not verified: {reason}")
            kept = ResponseRecord.of_reply(
                named.family, named.task_id, system, unverified, s.epoch - 1
            )
        assert kept is not None
        records.append(kept)
    if checked and len(set_aside) == checked:
        raise InspectLogError(f"{set_aside[0]}; no sample of the log verifies: nothing imported")
    settings = evaluation.plan.config
    finished = evaluation.status == "success"
    config: dict[str, Any] = {
        "model": spec.model,
        "api_base": redact_url(spec.model_base_url),
        "protocol": protocol.id,
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
    }
    if episode is None:
        config["response_format"] = "json_schema"
    else:
        config.update(agent=agent, disclosure=plan.spec.disclosure, max_steps=episode)
        config.update(followup_config(plan.spec.followup))
        config.update(get_intervention(plan.spec.intervention).config())
        if meta.delegate_system is not None:
            config["delegate_system"] = {"name": meta.delegate_system}
    manifest = new_manifest(
        system=system,
        config={
            **config,
            "inspect_log": str(log),
            "unverified": {"package_version": meta.package_version},
        },
        families=families,
        seeds=meta.seeds,
        tier=meta.tier,
        kind="episodes" if plan.episodes else "one_shot",
        n_tasks=len(keys),
        corpus_size=meta.corpus_size,
        contract=plan.contract,
        limit=limit,
        repeats=epochs,
        versions={"inspect_ai": inspect_ai.__version__},
    )
    manifest = manifest.model_copy(
        update={"started_at": evaluation.stats.started_at or spec.created}
    )
    complete = finished and len(records) == len(keys) * epochs
    written = write_run(out, manifest, families, records, "finished" if complete else "interrupted")
    return Imported(written, set_aside)
