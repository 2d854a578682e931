"""`peb tasks` (list, show, export), `peb dataset export` and `peb schema`: the benchmark's tasks
and data, without running anything."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

from ...runs import RunManifest
from ...systems import ResponseRecord, response_model
from ...tasks import (
    DEFAULT_CONTRACT,
    ModelView,
    ScenarioFile,
    SystemView,
    Task,
    generate_tasks,
    load_families,
    model_view,
)
from .._argv import Parser, UsageError, add_options, path_arg
from ._common import (
    add_selection,
    command_group,
    contract_arg,
    corpus_size_arg,
    find_task,
    print_frame,
    selection_arg,
    tiers_arg,
)


def cmd_tasks_list(args: argparse.Namespace) -> None:
    specs, seeds, distractors = selection_arg(args)
    tier, size = tiers_arg(args)[0], corpus_size_arg(args)
    tasks = generate_tasks(specs, seeds, distractors, tier, size, contract_arg(args, specs))
    rows = [
        {
            "task_id": t.task_id,
            "family": t.family,
            "completeness": t.oracles.completeness,
            "policy": "partial" if t.contract.partial_response_permitted else "block",
            "missing_scopes": ", ".join(t.oracles.gap_report.missing_scopes)
            if t.oracles.gap_report
            else "-",
            "topologies": ", ".join(t.topologies) or "-",
        }
        for t in tasks
    ]
    import polars as pl

    print_frame(pl.DataFrame(rows))


def _doc_lines(task: Task, hidden: bool) -> list[str]:
    docs = task.hidden_documents if hidden else task.authorized_documents
    lines = [f"== {'HIDDEN (outside the view)' if hidden else 'VISIBLE (authorized)'} =="]
    for d in docs:
        lines.append(f"[{d.doc_id}] {d.title}  ({d.role}; scope {d.scope}; {d.evidence_family})")
        lines.append(f"    {d.body}")
    return lines if docs else [*lines, "    (none)"]


def cmd_tasks_show(args: argparse.Namespace) -> None:
    task, _ = find_task(
        args.task_id,
        args.family,
        args.distractors or 0,
        args.corpus_size,
        args.contract or DEFAULT_CONTRACT,
    )
    if args.json:
        print(task.model_dump_json(indent=2))
        return
    o = task.oracles
    policy = "partial answer permitted" if task.contract.partial_response_permitted else "block"
    found = "" if task.contract_source == "given" else " (not shown: the procedure lists it)"
    lines = [
        f"{task.task_id} ({task.family}; {task.tier} tier; {o.completeness}; policy: {policy}; "
        f"topologies: {', '.join(task.topologies) or '-'})",
        f"prompt: {task.prompt}",
        f"user scopes: {', '.join(task.user_scopes)}",
        *_doc_lines(task, hidden=False),
        *_doc_lines(task, hidden=True),
        f"== CONTRACT =={found}",
        *(
            f"  {r.id}: {r.description} (informs {', '.join(r.informs)})"
            for r in task.contract.required_evidence
        ),
        "== ORACLES ==",
        f"  complete answer:   {json.dumps(o.complete_answer)}",
        f"  authorized answer: {json.dumps(o.authorized_answer)}",
        f"  gap report:        {o.gap_report.model_dump_json() if o.gap_report else 'null'}",
    ]
    print("\n".join(lines))


def cmd_tasks_export(args: argparse.Namespace) -> None:
    specs, seeds, distractors = selection_arg(args)
    by_id = {s.id: s for s in specs}
    tier, size = tiers_arg(args)[0], corpus_size_arg(args)
    tasks = generate_tasks(specs, seeds, distractors, tier, size, contract_arg(args, specs))
    out = Path(args.out)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:  # into a temporary file, then renamed: a failed export leaves the old file as it was
        out.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("w", encoding="utf-8") as handle:
            for task in tasks:
                item = model_view(task, by_id[task.family]) if args.model_view else task
                handle.write(item.model_dump_json() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, out)
    except OSError as exc:
        with contextlib.suppress(OSError):  # on a read-only mount, unlink fails too
            tmp.unlink(missing_ok=True)
        raise UsageError(f"--out: cannot write to {out} ({exc.strerror or exc})") from None
    print(f"wrote {len(tasks)} {'model views' if args.model_view else 'tasks'} to {out}")


def cmd_dataset_export(args: argparse.Namespace) -> None:
    import polars as pl

    from ...dataset import CARD, export_dataset

    specs, seeds, distractors = selection_arg(args)
    corpus_size, contract = corpus_size_arg(args), contract_arg(args, specs)
    out = Path(args.out)
    try:
        if out.is_dir() and any(out.iterdir()):
            raise UsageError(f"--out: {out} is not empty; choose a new or empty folder")
        release = export_dataset(
            out, specs, seeds, distractors, tiers_arg(args), corpus_size, contract
        )
    except OSError as exc:
        raise UsageError(f"--out: cannot write to {out} ({exc.strerror or exc})") from None
    except pl.exceptions.ComputeError as exc:  # polars' writer failing on the disk (full, say)
        found = re.search(r"\(os error (\d+)\)", str(exc))
        if found is None:
            raise
        why = os.strerror(int(found[1]))
        raise UsageError(f"--out: cannot write to {out} ({why})") from None
    for config in release.configs:
        print(f"{out / config.path}: {config.name}, {config.rows} rows")
    print(f"{out / CARD}: the dataset card")


def cmd_schema(args: argparse.Namespace) -> None:
    schemas: dict[str, Any] = {
        "Task": Task.model_json_schema(),
        "ModelView": ModelView.model_json_schema(),
        "SystemView": SystemView.model_json_schema(),
        "ResponseRecord": ResponseRecord.model_json_schema(),
        "RunManifest": RunManifest.model_json_schema(),
        "ScenarioFile": ScenarioFile.model_json_schema(),
    }
    from ...access import AgentStart, OpenResult, SearchResult, family_tools

    schemas |= {
        "AgentStart": AgentStart.model_json_schema(),
        "SearchResult": SearchResult.model_json_schema(),
        "OpenResult": OpenResult.model_json_schema(),
    }
    for spec in load_families().values():
        schemas[f"Response[{spec.id}]"] = response_model(spec).model_json_schema()
        schemas[f"Tools[{spec.id}]"] = family_tools(spec)
    if args.name is not None:
        if args.name not in schemas:
            raise UsageError(f"unknown schema {args.name!r}; valid: {', '.join(schemas)}")
        print(json.dumps(schemas[args.name], indent=2))
    else:
        print(json.dumps(schemas, indent=2))


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """`tasks`, `dataset` and `schema`."""
    tsub = command_group(sub, "tasks", "list, show and export tasks")
    p = tsub.add_parser("list", help="one line per task")
    add_selection(p)
    p.set_defaults(func=cmd_tasks_list)
    p = tsub.add_parser("show", help="one task: visible versus hidden documents, oracles")
    p.add_argument("task_id", help="<template>__s<seed> or <template>__<tier>__s<seed>, any seed")
    p.add_argument("--family", action="append", metavar="F")
    p.add_argument("--json", action="store_true", help="the whole task as JSON")
    add_options(p, "cli", ("distractors", "corpus_size", "contract"))
    p.set_defaults(func=cmd_tasks_show)
    p = tsub.add_parser("export", help="tasks as JSONL, one a line")
    add_selection(p)
    p.add_argument("--out", required=True, type=path_arg("file"), metavar="PATH")
    p.add_argument(
        "--model-view",
        action="store_true",
        help="only what a model is shown (no ids, facts, tags or oracles)",
    )
    p.set_defaults(func=cmd_tasks_export)

    dsub = command_group(sub, "dataset", "the dataset release, for the Hugging Face Hub")
    p = dsub.add_parser(
        "export", help="per tier, the tasks and the model views as parquet, with a dataset card"
    )
    add_selection(p, every_tier=True)
    p.add_argument(
        "--out", required=True, type=path_arg("folder"), metavar="DIR", help="a new or empty folder"
    )
    p.set_defaults(func=cmd_dataset_export)

    p = sub.add_parser("schema", help="JSON schemas of the benchmark's data")
    p.add_argument("name", nargs="?", help="one schema by name (default: all)")
    p.set_defaults(func=cmd_schema)
