"""The task explorer's tables: an index of tasks to find one by how its evidence is laid out
(topology, completeness, policy, what the tracker's sentence is worth), the task picked (with
its contract given, or found in the corpus), a task's contract, and its register as the
notebooks show it."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ...tasks import (
    DEFAULT_CONTRACT,
    TIERS,
    ContractSource,
    ScenarioFile,
    Selection,
    Task,
    boundary,
    generate_task,
    iter_tasks,
    load_families,
)

INDEX_MAX_TASKS = 5_000
"""The most tasks the explorer's index generates at once (about a millisecond each)."""

POLICIES = {True: "partial", False: "block"}
"""A task's policy by whether a partial answer is permitted (as `scoring.task_table` says)."""

_INDEX = pl.Schema(
    {
        "family": pl.String(),
        "template": pl.String(),
        "seed": pl.Int64(),
        "tier": pl.String(),
        "task_id": pl.String(),
        "completeness": pl.String(),
        "policy": pl.String(),
        "topologies": pl.String(),
        "tracker": pl.String(),
        "visible": pl.Int64(),
        "hidden": pl.Int64(),
    }
)


def task_index(selection: Selection) -> pl.DataFrame:
    """One row per task of `selection` (every tier of it, in family, template, seed order):
    family, template, seed, tier, task_id, completeness, policy (`partial` or `block`),
    topologies (comma-separated), tracker (what its boundary sentence is worth: `signal`,
    `decoy`, `none`) and
    how many documents are visible and hidden."""
    families = load_families()
    seeds = list(selection.seeds) if selection.seeds is not None else None
    rows = []
    for tier in selection.tiers:
        for task in iter_tasks(selection.families, seeds, selection.distractors, tier):
            found = boundary(task, families[task.family])
            rows.append(
                {
                    "family": task.family,
                    "template": task.template,
                    "seed": task.seed,
                    "tier": task.tier,
                    "task_id": task.task_id,
                    "completeness": task.oracles.completeness,
                    "policy": POLICIES[task.contract.partial_response_permitted],
                    "topologies": ", ".join(task.topologies),
                    "tracker": found.kind if found is not None else None,
                    "visible": len(task.authorized_doc_ids),
                    "hidden": len(task.documents) - len(task.authorized_doc_ids),
                }
            )
    return pl.DataFrame(rows, schema=_INDEX)


def filter_index(
    index: pl.DataFrame,
    *,
    topologies: Sequence[str] = (),
    completeness: Sequence[str] = (),
    policies: Sequence[str] = (),
    trackers: Sequence[str] = (),
) -> pl.DataFrame:
    """The tasks of an index that have every topology in `topologies`, and whose completeness,
    policy and tracker are among those given (an empty choice: no restriction)."""
    keep = pl.lit(True)
    has = pl.col("topologies").str.split(", ")
    for topology in topologies:
        keep &= has.list.contains(topology)
    for column, allowed in (
        ("completeness", completeness),
        ("policy", policies),
        ("tracker", trackers),
    ):
        if allowed:
            keep &= pl.col(column).is_in(list(allowed))
    return index.filter(keep)


def index_choices(index: pl.DataFrame) -> dict[str, list[str]]:
    """The values each filter of `filter_index` can take in `index`, sorted: topologies,
    completeness, policy, tracker."""
    return {
        "topologies": sorted(
            t for t in index["topologies"].str.split(", ").explode().unique().to_list() if t
        ),
        **{
            column: sorted(index[column].drop_nulls().unique().to_list())
            for column in ("completeness", "policy", "tracker")
        },
    }


def task_ref(selection: pl.DataFrame) -> dict[str, str]:
    """The task of an index's picked row as the explorer's pickers hold it: family, template,
    seed (as typed) and tier."""
    row = selection.row(0, named=True)
    return {k: str(row[k]) for k in ("family", "template", "seed", "tier")}


def explored_task(
    spec: ScenarioFile, template: str, seed: int, tier: str, contract: ContractSource
) -> Task:
    """The task the explorer shows: `spec`'s `template` at `seed` on `tier`, its contract found
    in the corpus where `contract` is `corpus` and the tier has corpora (other tiers have no
    procedure: their contract is given), as `peb run --contract` makes it."""
    source = contract if TIERS[tier].corpus else DEFAULT_CONTRACT
    return generate_task(spec, template, seed, tier=tier, contract=source)


def contract_note(task: Task) -> str:
    """One line (Markdown): where the task's contract comes from: given in the agent's start,
    or to be found in the corpus, in the procedure named (`--contract corpus`)."""
    if task.contract_source == DEFAULT_CONTRACT:
        return "The contract is given in the request."
    procedure = next((d for d in task.documents if d.role == "procedure"), None)
    where = f"the procedure `{procedure.doc_id}` ({procedure.title})" if procedure else "none"
    return (
        "The contract is not in the agent's start: it must find it in the corpus, where "
        f"{where} lists each requirement."
    )


def contract_frame(task: Task) -> pl.DataFrame:
    """A task's contract, one row per required kind of evidence: requirement, description, the
    answer fields it informs, and whether the view lacks it (`missing`)."""
    gap = task.oracles.gap_report
    missing = set(gap.missing_requirements) if gap is not None else set()
    return pl.DataFrame(
        [
            {
                "requirement": r.id,
                "description": r.description,
                "informs": ", ".join(r.informs),
                "missing": r.id in missing,
            }
            for r in task.contract.required_evidence
        ],
        schema={
            "requirement": pl.String,
            "description": pl.String,
            "informs": pl.String,
            "missing": pl.Boolean,
        },
    )


REGISTER_COLUMNS = (
    "record",
    "contract",
    "register_version",
    "register_date",
    "kept_in",
    "copy",
    "copy_stamp",
    "copy_state",
    "master",
)
"""The columns of `register_rows` (and `reference` after `record` on a tier of corpora)."""


def register_rows(register: pl.DataFrame) -> pl.DataFrame:
    """A task's register (`tasks.register_frame`) as the notebooks show it: the records the
    contract requires first, those the view misses first of all, then the others, each group
    in register order; `contract` says `missing`, `covered` or nothing (not required),
    `copy_state` `no copy` where the view holds none, and every other empty cell is blank, never
    null; the master's scope is left out (it is the record's `kept_in`). Columns:
    REGISTER_COLUMNS, with each record's `reference` after `record` where the register names
    one (a tier of corpora)."""
    required = pl.col("requirement").is_not_null()
    referenced = "reference" in register.columns and register["reference"].is_not_null().any()
    return (
        register.with_row_index("_at")
        .sort(~pl.col("missing"), ~required, "_at")
        .select(
            "record",
            *(["reference"] if referenced else []),
            contract=pl.when(pl.col("missing"))
            .then(pl.lit("missing"))
            .when(required)
            .then(pl.lit("covered"))
            .otherwise(pl.lit("")),
            register_version=pl.col("register_version"),
            register_date=pl.col("register_date").fill_null(""),
            kept_in=pl.col("kept_in").fill_null(""),
            copy=pl.col("copy").fill_null(""),
            copy_stamp=pl.col("copy_stamp").fill_null(""),
            copy_state=pl.col("copy_state").replace("none", "no copy"),
            master=pl.col("master").fill_null(""),
        )
    )
