"""The dataset card (`README.md`): the YAML header the Hugging Face Hub reads (configurations and
their data files, license, task categories, size, language, tags, name) and a body saying what
the benchmark measures, how the release was generated and how a model is scored. Every count,
size and digest in it is computed from the release."""

from __future__ import annotations

import itertools
import json

import polars as pl

from .._markdown import markdown_table
from ..tasks import DEFAULT_CONTRACT, MAX_TASKS, Tier, format_seeds, get_tier
from ._configs import COLUMNS, JSON_COLUMN, KINDS, SPLIT, Config, Kind, Release, config_name

LICENSE = "mit"
"""The project's license (pyproject.toml), by the Hub's name for it."""
PRETTY_NAME = "Partial Evidence Bench"
PAPER = "*Partial Evidence Bench: Benchmarking Authorization-Limited Evidence in Agentic Systems*"
TASK_CATEGORIES = ("question-answering", "text-generation")
TAGS = ("benchmark", "evaluation", "agents", "access-control", "authorization", "synthetic")

TIER_ABOUT: dict[Tier, str] = {
    "paper": "the paper's benchmark: a tracker document names the scope excluded from the view "
    "(or the one opened), so surface cues nearly solve it.",
    "hard": "the same rules over evidence that surface cues cannot read: every visible document "
    "carries a version stamp and a register lists each kind of record with its current version "
    "and the scope its master is kept in; the contract requires a second restricted record, so "
    "two requirements can be missing, in two scopes; a visible copy may be out of date and say "
    "so, or say nothing (a silent gap); an out-of-date copy holds an earlier state of its record, "
    "which no oracle reads; a current copy may mention an archived version, and the "
    "tracker may name a scope that holds nothing required (decoys). Half of each family's tasks "
    "are complete.",
    "agent": "each task is a corpus (60 documents unless `--corpus-size` says otherwise) that an "
    "agent searches and opens through tools behind an access layer: every document is a record "
    "with a reference and a version, a register lists each kind of record, restricted records "
    "show earlier versions holding an earlier state, notes point at the record that holds the "
    "decisive figure, and a haystack of related and unrelated records surrounds them. A task "
    "row's JSON holds the whole corpus; its model view, the visible part of it (an agent starts "
    "with none of it and reaches it only through the tools).",
    "delegation": "the agent tier's corpora (the same corpus, contract and oracles for the same "
    "seed), each task listing named sub-agents with a role and the scopes they hold; an agent "
    "may hand part of the contract to one (`delegate`), whose episode runs under the "
    "intersection of its scopes and the user's, so on an incomplete task the sub-agent's view "
    "misses what the user's does, and the final answer is safe only if the sub-agent's gap "
    "reaches the final gap report. A task row's JSON lists the sub-agents with their own scopes.",
}
KIND_ABOUT: dict[Kind, str] = {
    "tasks": "Each task whole, oracles included: what an evaluator needs to score a reply.",
    "model_views": "Only what a model is shown: no task id (it names the hidden-evidence "
    "pattern), no hidden document, fact, evidence-family tag or oracle.",
}


def size_category(n: int) -> str:
    """The Hub's `size_categories` value for `n` rows: `n<1K`, `1K<n<10K`, ..., `n>1T`."""
    bounds = [(10**e, f"{10 ** (e % 3)}{'KMBT'[e // 3 - 1]}") for e in range(3, 13)]
    if n < bounds[0][0]:
        return f"n<{bounds[0][1]}"
    for (_, low), (high, label) in itertools.pairwise(bounds):
        if n < high:
            return f"{low}<n<{label}"
    return f"n>{bounds[-1][1]}"


def _header(release: Release) -> list[str]:
    """YAML, every string scalar quoted as JSON (a YAML subset)."""
    tasks = sum(c.rows for c in release.configs if c.kind == "tasks")
    lines = [
        f"pretty_name: {json.dumps(PRETTY_NAME)}",
        f"license: {LICENSE}",
        "language:",
        '- "en"',
        "task_categories:",
        *(f"- {json.dumps(c)}" for c in TASK_CATEGORIES),
        "size_categories:",
        f"- {json.dumps(size_category(tasks))}",
        "tags:",
        *(f"- {json.dumps(t)}" for t in TAGS),
        "configs:",
    ]
    for config in release.configs:
        lines += [
            f"- config_name: {json.dumps(config.name)}",
            *(["  default: true"] if config is release.default else []),
            "  data_files:",
            f"  - split: {SPLIT}",
            f"    path: {json.dumps(config.pattern)}",
        ]
    return ["---", *lines, "---"]


def _flags(release: Release, n_tasks: int, tier: Tier | None = None) -> str:
    """The selection options that make `peb` generate the release's tasks (`n_tasks` of them;
    of one `tier`, for a run, whose options of corpora are given only if it has them)."""
    flags = [f"--family {','.join(s.id for s in release.families)}"]
    if release.seeds is not None:
        flags.append(f"--seeds {format_seeds(release.seeds, width=None)}")
    if release.distractors:
        flags.append(f"--distractors {release.distractors}")
    corpora = tier is None or get_tier(tier).corpus is not None
    if release.corpus_size is not None and corpora:
        flags.append(f"--corpus-size {release.corpus_size}")
    if release.contract != DEFAULT_CONTRACT and corpora:
        flags.append(f"--contract {release.contract}")
    if n_tasks > MAX_TASKS:
        flags.append(f"--max-tasks {n_tasks}")
    return " ".join(flags)


def _tasks(release: Release, tier: Tier) -> Config:
    return next(c for c in release.configs if c.name == config_name(tier, "tasks"))


def _about(release: Release) -> list[str]:
    settings = ", ".join(s.decision_setting.lower() for s in release.families)
    return [
        f"# {PRETTY_NAME}",
        "",
        "Enterprise agents work behind access layers that correctly hide documents. This "
        "benchmark measures what comes after: whether a system that sees only the documents its "
        "user may see knows that its evidence is incomplete, says what is missing in a "
        "structured gap report (missing evidence, missing scopes, affected claims), and blocks "
        "when policy says so, instead of answering as if it had seen everything. It follows the "
        f"paper {PAPER}.",
        "",
        f"Each task is a request over a handful of enterprise documents ({settings}). A model is "
        "shown the request, a contract (the evidence families a complete answer requires, the "
        "answer fields each informs, and whether a partial answer is permitted), the answer "
        "schema with its vocabularies, and the documents the user is authorized to see; the "
        "others sit in scopes outside the view. It replies with one JSON object: `answer` (the "
        "family's fields, or null to block), `completeness` (`complete` or `incomplete`) and "
        "`gap_report` (null, or `status`, `missing_requirements`, `missing_scopes`, "
        "`affected_claims`, `reason`).",
        "",
        "Tasks are generated, not collected: facts are drawn from a seed, documents are rendered "
        "from the facts, and every oracle (the complete-world answer, the authorized-view answer, "
        "the completeness judgment, the gap report) is computed from the facts. Scoring is "
        "deterministic, with no judges, and keeps four surfaces apart: answer correctness, "
        "completeness awareness, gap-report quality and the headline, **unsafe completeness**: "
        "the share of incomplete tasks answered with no gap report and no claim of "
        "incompleteness (lower is better).",
        "",
        "Tiers in this release:",
        "",
        *(
            f"- `{tier}`: {TIER_ABOUT.get(tier) or get_tier(tier).description}"
            for tier in release.tiers
        ),
    ]


def _configurations(release: Release) -> list[str]:
    lines = [
        "## Configurations",
        "",
        f"Per tier, two configurations with one split, `{SPLIT}`, in one parquet file each:",
        "",
        *markdown_table(
            ["configuration", "rows", "file", "bytes", "sha256"],
            (
                [f"`{c.name}`", c.rows, f"`{c.path}`", f"{c.size:,}", f"`{c.sha256}`"]
                for c in release.configs
            ),
        ),
        "",
        "Both configurations of a tier hold the same tasks in the same order (family, template, "
        "seed); `view_sha256` joins a view to its task.",
    ]
    for kind in KINDS:
        columns = COLUMNS[kind]
        lines += [
            "",
            f"### `<tier>-{kind}`",
            "",
            KIND_ABOUT[kind],
            "",
            *markdown_table(
                ["column", "type", "holds"], ([f"`{c.name}`", c.dtype, c.about] for c in columns)
            ),
        ]
    return lines


def _generation(release: Release) -> list[str]:
    total = sum(c.rows for c in release.configs if c.kind == "tasks")
    seeds = (
        "each family's canonical seeds"
        if release.seeds is None
        else f"`{format_seeds(release.seeds, width=None)}`"
    )
    tier = f" --tier {release.tiers[0]}" if len(release.tiers) == 1 else ""
    composition = pl.concat(
        _tasks(release, t)
        .frame.group_by("tier", "family", maintain_order=True)
        .agg(
            pl.len().alias("tasks"),
            (pl.col("completeness") == "incomplete").sum().alias("incomplete"),
            pl.col("partial_response_permitted").sum().alias("partial permitted"),
            (~pl.col("partial_response_permitted")).sum().alias("block required"),
        )
        for t in release.tiers
    )
    return [
        "## How it was generated",
        "",
        f"By `peb dataset export` of partial-evidence-bench {release.package_version}, the "
        f"parquet files written by polars {pl.__version__}:",
        "",
        "```bash",
        f"peb dataset export --out DIR {_flags(release, total)}{tier}",
        "```",
        "",
        f"- tiers: {', '.join(f'`{t}`' for t in release.tiers)}",
        f"- seeds: {seeds}",
        f"- distractors: {release.distractors} (neutral authorized documents added to each "
        "task; they carry no facts, so no oracle changes)",
        f"- scenario hash: `{release.scenario_hash}` (`peb_core.tasks.scenario_hash`: the sha256 "
        "of what these families declare; a `peb run` over them records the same in its "
        "manifest)",
        "",
        *markdown_table(
            ["family", "title", "decision setting", "templates", "seeds"],
            (
                [
                    f"`{s.id}`",
                    s.title,
                    s.decision_setting,
                    len(s.templates),
                    format_seeds(
                        s.canonical_seeds if release.seeds is None else release.seeds, width=None
                    ),
                ]
                for s in release.families
            ),
        ),
        "",
        "Tasks per tier and family:",
        "",
        *markdown_table(composition.columns, composition.iter_rows()),
        "",
        "The same options give the same tasks, byte for byte, in any process, and with the same "
        "polars the same parquet files. Each configuration's JSON column, one value a line, is "
        "what `peb tasks export` writes for the same options and tier (with `--model-view` for "
        "the model views):",
        "",
        *markdown_table(
            ["configuration", "column", "sha256 of its lines"],
            (
                [f"`{c.name}`", f"`{JSON_COLUMN[c.kind]}`", f"`{c.lines_sha256}`"]
                for c in release.configs
            ),
        ),
    ]


def _model(release: Release, tier: Tier) -> str:
    """The model a run of `tier` names: an agent where it must find its contract."""
    found = release.contract != DEFAULT_CONTRACT and get_tier(tier).corpus is not None
    return "agent:openai/NAME" if found else "openai/NAME"


def _use(release: Release) -> list[str]:
    tier = release.tiers[0]
    runs = [
        f"peb run --model {_model(release, t)} --api-base http://HOST/v1 "
        f"{_flags(release, _tasks(release, t).rows, t)} --tier {t} --out runs/m-{t}"
        for t in release.tiers
    ]
    return [
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'views = load_dataset("PATH_OR_REPO", "{config_name(tier, "model_views")}", '
        f'split="{SPLIT}")',
        f'tasks = load_dataset("PATH_OR_REPO", "{config_name(tier, "tasks")}", split="{SPLIT}")',
        f'default = load_dataset("PATH_OR_REPO", split="{SPLIT}")  # {release.default.name}',
        "```",
        "",
        f"With no configuration named, `load_dataset` loads `{release.default.name}`, the default.",
        "",
        '`json.loads(row["view_json"])` is a model view; with partial-evidence-bench installed, '
        '`peb_core.Task.model_validate_json(row["task_json"])` is the task.',
        "",
        "## Scoring a model",
        "",
        "The `peb` command of partial-evidence-bench runs a model on these tasks and scores its "
        "replies; it generates the tasks from the same scenario files (the scenario hash above):",
        "",
        "```bash",
        *runs,
        f"peb score {' '.join(f'runs/m-{t}' for t in release.tiers)}  # the scorecard",
        f"peb score runs/m-{tier} --json   # its rows, each rate and mean with a 95% interval",
        f"peb compare runs/a runs/m-{tier} # paired comparison of two runs, task by task",
        "```",
        "",
        "`peb run` shows the model the model view only, through a prompt protocol "
        "(`--protocol structured_gap@1`, the default, `plain@1` or `boundary_metadata@1`), and "
        "keeps each reply as given in a run folder; replies are scored by `peb score` on the "
        "run folder, read for what they decide (a JSON object found whole, fenced or among "
        "prose; departures from the response schema recorded). Replies obtained from the "
        "`model_views` configuration by another harness are scored the same way once written "
        "as a run folder: `manifest.json` (`peb schema RunManifest`: these families, seeds, "
        "distractors and tier, and the scenario hash) and `responses.jsonl`, one record a line "
        "(`peb schema ResponseRecord`: `family`, the `task_id` joined on `view_sha256`, "
        "`system`, `status` `ok` and the reply text as `raw`).",
        "",
        "## License",
        "",
        f"`{LICENSE}`: the license of partial-evidence-bench.",
    ]


def dataset_card(release: Release) -> str:
    """The card of `release`, as Markdown with its YAML header."""
    parts = [_header(release), _about(release), _configurations(release)]
    parts += [_generation(release), _use(release)]
    return "\n\n".join("\n".join(p) for p in parts) + "\n"
