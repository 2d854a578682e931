"""The benchmark as an inspect_ai task, and an inspect eval log as a run folder. The one module
that imports inspect_ai (the `inspect` extra); imports are absolute, since `inspect eval` loads
this file by its path:

    inspect eval peb_core/inspect_task.py@partial_evidence -T family=due_diligence_v1 \\
        -T tier=hard -T protocol=structured_gap@1 --model openai/NAME

(an OpenAI-compatible server: `--model openai-api/SERVICE/NAME --model-base-url URL`).

A sample is one generated task: its input is the prompt protocol's messages, rendered from the
view the protocol reads (the model view, or for `boundary_metadata@1` the model view plus the
withheld scope ids), so nothing hidden reaches it; its metadata names the task (family, task
id, template, seed, tier), from which the scorer regenerates it; it has no target. The family's
response schema goes out as inspect's `response_schema` with its `$ref`s inlined (inspect's
JSONSchema has no `$defs`, `maxItems` nor `title`: the array caps are not sent). The scorer
reads each reply with `read_reply` and scores it with `score_run`, and each inspect metric is
the scorecard's own number over the samples: see `METRICS`.

`import_log` writes a run folder from an eval log of this task, as `peb run` would have, so
`peb score`, `peb compare`, `peb report` and the notebooks read it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import inspect_ai
import polars as pl
from inspect_ai import task
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ResponseSchema,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import JSONSchema, LimitExceededError

from peb_core._provenance import package_version
from peb_core.runs import RunManifest, count_records, write_run
from peb_core.scoring import METRICS as SCORECARD_METRICS
from peb_core.scoring import score_run, scorecard, with_verdict
from peb_core.systems import (
    DEFAULT_PROTOCOL,
    ModelSystem,
    PromptProtocol,
    Reply,
    ResponseRecord,
    Usage,
    clean_reply,
    get_protocol,
    redact_url,
    response_format,
    system_name,
)
from peb_core.tasks import (
    TIERS,
    ScenarioFile,
    Task,
    Tier,
    count_tasks,
    generate_task,
    generate_tasks,
    load_families,
    parse_seeds,
    scenario_hash,
    view_for,
)

TASK_NAME = "partial_evidence"
BENCHMARK = "partial-evidence-bench"
"""The eval metadata's `benchmark`: how a log of this task is told from any other."""
ERROR = "error"
"""The sample metadata key holding why its model call failed."""


class InspectLogError(ValueError):
    """An eval log that cannot be imported; one line."""


def _family(family: str) -> ScenarioFile:
    families = load_families()
    if family not in families:
        raise ValueError(f"unknown family {family!r}; valid: {', '.join(families)}")
    return families[family]


def _tier(tier: str) -> Tier:
    if tier not in TIERS:
        raise ValueError(f"unknown tier {tier!r}; valid: {', '.join(TIERS)}")
    return tier


def _protocol(name: str) -> PromptProtocol:
    try:
        return get_protocol(name)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """A JSON schema with every `$ref` to `defs` replaced by its definition and `const` as a
    one-value `enum`."""
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _inline(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    out = {k: _inline(v, defs) for k, v in node.items() if k not in ("$defs", "const")}
    if "const" in node:
        out["enum"] = [node["const"]]
    return out


def response_schema(spec: ScenarioFile) -> ResponseSchema:
    """The family's response format (the one `ModelSystem` sends) as inspect's ResponseSchema."""
    form = response_format(spec, "json_schema")["json_schema"]
    schema = form["schema"]
    return ResponseSchema(
        name=form["name"],
        json_schema=JSONSchema.model_validate(_inline(schema, schema.get("$defs", {}))),
        strict=form["strict"],
    )


_ROLES: dict[str, Callable[[str], ChatMessage]] = {
    "system": lambda text: ChatMessageSystem(content=text),
    "user": lambda text: ChatMessageUser(content=text),
}


def sample(generated: Task, spec: ScenarioFile, protocol: PromptProtocol) -> Sample:
    """The sample of one task: the protocol's messages from the view it reads; the task named
    in the metadata."""
    messages = protocol.render(view_for(protocol.view, generated, spec))
    return Sample(
        id=generated.task_id,
        input=[_ROLES[m["role"]](m["content"]) for m in messages],
        metadata={
            "family": generated.family,
            "task_id": generated.task_id,
            "template": generated.template,
            "seed": generated.seed,
            "tier": generated.tier,
        },
    )


def record(
    metadata: dict[str, Any], system: str, output: ModelOutput, error: str | None
) -> ResponseRecord:
    """The run record of one sample: an error if its model call failed, else its reply text
    (kept as `ModelSystem` keeps it) with the usage inspect reported."""
    family, task_id = metadata["family"], metadata["task_id"]
    if error is not None:
        return ResponseRecord.of_reply(family, task_id, system, Reply(status="error", error=error))
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
    return ResponseRecord.of_reply(family, task_id, system, reply)


def _scorecard_metric(name: str) -> Callable[[], Metric]:
    """An inspect metric named `name` whose value is the scorecard's `name` over the samples
    (NaN with an empty denominator)."""

    def create() -> Metric:
        def compute(scores: list[SampleScore]) -> float:
            rows = [cast("dict[str, Any]", s.score.value) for s in scores]
            if not rows:
                return float("nan")
            frame = pl.DataFrame(rows).with_columns(run=pl.lit(TASK_NAME), family=pl.lit("all"))
            value = scorecard(frame)[name][0]
            return float("nan") if value is None else float(value)

        return compute

    create.__name__ = name
    return metric(name, scores="unreduced")(create)


METRICS = [
    _scorecard_metric(name)()
    for name in (
        "unsafe_completeness_rate",
        "unsafe_completeness_upper",
        "answer_correctness",
        "gap_report_quality",
        "blocked_when_safe_to_answer_rate",
        "format_compliance_rate",
    )
]
"""The headline first, its worst case, then answer correctness, gap-report quality,
over-blocking and format compliance: each one the scorecard computes over every sample, from
the per-task events each Score value carries."""

_EVENTS = sorted(
    {
        column
        for m in SCORECARD_METRICS
        for expr in (m.event, m.within)
        if expr is not None
        for column in expr.meta.root_names()
    }
    | {m.score for m in SCORECARD_METRICS if m.score is not None}
)
"""The per-task score columns the scorecard reads: what each Score value holds."""


def _first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")


def _reason(exc: BaseException) -> str:
    """One line on why a call failed, as the runner's error records say it: from the error it
    was raised from, if any (inspect's ModelGenerateError holds the whole request)."""
    cause = exc.__cause__ or exc
    status = getattr(exc, "status_code", None) or getattr(cause, "status_code", None)
    http = f" (HTTP {status})" if status else ""
    return f"{type(cause).__name__}{http}: {_first_line(str(cause))}"[:500]


@solver
def reply_or_error() -> Solver:
    """`generate`, except that a model call that fails after inspect's retries is kept in the
    sample's metadata (`error`), so the sample is scored as the runner scores an error record
    (never unsafe, unsafe in the worst case) instead of being left out of the metrics."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        try:
            return await generate(state)
        except LimitExceededError:
            raise
        except Exception as exc:
            state.metadata[ERROR] = _reason(exc)
            return state

    return solve


@scorer(metrics=METRICS)
def peb_scorer(protocol: str = DEFAULT_PROTOCOL) -> Scorer:
    """Each reply read and scored as `peb score` scores a run's record: the Score value holds
    the task's scorecard events, its metadata the verdict and schema violations."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        spec = _family(meta["family"])
        task = generate_task(spec, meta["template"], meta["seed"], 0, meta["tier"])
        system = system_name(str(state.model), protocol)
        reply = record(meta, system, state.output, meta.get(ERROR))
        scores = score_run(
            [task],
            [reply],
            run=TASK_NAME,
            system=system,
            families={spec.id: spec},
        )
        row = with_verdict(scores).row(0, named=True)
        return Score(
            value={c: row[c] for c in _EVENTS},
            answer=reply.raw,
            explanation=f"{row['verdict']}; schema violations: "
            + (", ".join(row["schema_violations"]) or "none"),
            metadata={"verdict": row["verdict"], "schema_violations": row["schema_violations"]},
        )

    return score


@task
def partial_evidence(
    family: str = "due_diligence_v1",
    tier: str = "paper",
    protocol: str = DEFAULT_PROTOCOL,
    seeds: str | None = None,
) -> inspect_ai.Task:
    """One family's tasks on a tier, at `seeds` (e.g. `11,23` or `400-439`; default: the
    family's canonical seeds), under a prompt protocol, with the family's response schema and
    `ModelSystem`'s default temperature and token cap."""
    spec, level, prompts = _family(family), _tier(tier), _protocol(protocol)
    # `-T seeds=11` reaches here as the integer 11
    seed_list = parse_seeds(str(seeds)) if seeds is not None else None
    return inspect_ai.Task(
        dataset=[sample(t, spec, prompts) for t in generate_tasks([spec], seed_list, 0, level)],
        solver=reply_or_error(),
        scorer=peb_scorer(prompts.id),
        config=GenerateConfig(
            temperature=ModelSystem.temperature,
            max_tokens=ModelSystem.max_tokens,
            response_schema=response_schema(spec),
        ),
        metadata={
            "benchmark": BENCHMARK,
            "family": spec.id,
            "tier": level,
            "protocol": prompts.id,
            "seeds": seed_list,
            "scenario_hash": scenario_hash([spec], level),
            "package_version": package_version(),
        },
    )


def import_log(log: Path, out: Path) -> RunManifest:
    """Write the run folder `out` (manifest and responses, as the runner writes them) from the
    inspect eval log `log` (`.eval` or `.json`) of `partial_evidence`: one record per sample,
    the reply text kept as `raw`, a failed sample as an error record. InspectLogError when the
    log cannot be read or is not of this task; RunError when `out` already holds a run."""
    if not log.is_file():
        raise InspectLogError(f"{log}: no such file")
    try:
        evaluation = read_eval_log(str(log))
    except Exception as exc:
        raise InspectLogError(
            f"{log}: cannot be read as an inspect eval log ({_reason(exc)})"
        ) from None
    spec = evaluation.eval
    meta = spec.metadata or {}
    if meta.get("benchmark") != BENCHMARK:
        raise InspectLogError(
            f"{log}: a log of task {spec.task!r}, not of {TASK_NAME} (partial-evidence-bench)"
        )
    if spec.config.epochs not in (None, 1):
        raise InspectLogError(
            f"{log}: has {spec.config.epochs} epochs; a run folder holds one reply per task"
        )
    if evaluation.samples is None:
        raise InspectLogError(f"{log}: holds no samples (was it logged with --no-log-samples?)")
    families = load_families()
    if meta["family"] not in families:
        raise InspectLogError(f"{log}: family {meta['family']!r} is not among the scenarios")
    system = system_name(spec.model, meta["protocol"])
    records = [
        record(
            s.metadata,
            system,
            s.output,
            s.metadata.get(ERROR) or (_first_line(s.error.message) if s.error else None),
        )
        for s in evaluation.samples
    ]
    limit = spec.config.limit  # `--limit N` ran the first N tasks, as a run's limit does
    if not isinstance(limit, int) or spec.config.sample_shuffle:
        limit = None
    n_tasks = count_tasks([families[meta["family"]]], meta["seeds"])
    settings = evaluation.plan.config
    finished = evaluation.status == "success"
    manifest = RunManifest(
        system=system,
        config={
            "model": spec.model,
            "api_base": redact_url(spec.model_base_url),
            "protocol": meta["protocol"],
            "temperature": settings.temperature,
            "max_tokens": settings.max_tokens,
            "response_format": "json_schema",
            "inspect_log": str(log),
        },
        families=[meta["family"]],
        seeds=meta["seeds"],
        tier=meta["tier"],
        limit=limit,
        package_version=meta["package_version"],
        scenario_hash=meta["scenario_hash"],
        started_at=evaluation.stats.started_at or spec.created,
        finished_at=evaluation.stats.completed_at if finished else None,
        state="finished" if finished else "interrupted",
        counts=count_records(min(n_tasks, limit or n_tasks), records),
    )
    write_run(out, manifest, records)
    return manifest
