"""The `peb` command line. Bad input gets one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO
from urllib.parse import urlsplit

from ._warn import PebWarning
from .runs import RunError, RunManifest, run_status, run_system
from .systems import (
    BASELINES,
    REGISTRY,
    LocalModel,
    LocalModelError,
    ResponseRecord,
    SystemSpecError,
    build_system,
    get_local,
    local_status,
    response_model,
    serve_local,
    stop_local,
)
from .tasks import (
    MAX_DISTRACTORS,
    MAX_TASKS,
    TIERS,
    ModelView,
    ScenarioError,
    ScenarioFile,
    SystemView,
    Task,
    Tier,
    TooManySeeds,
    count_tasks,
    families_with_template,
    generate_task,
    generate_tasks,
    load_families,
    model_view,
    parse_seeds,
    parse_task_id,
)

if TYPE_CHECKING:  # polars and the scoring stage are imported by the commands that use them
    import polars as pl


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _families(arg: list[str] | None) -> list[ScenarioFile]:
    known = load_families()
    names = [n.strip() for a in arg or [] for n in a.split(",") if n.strip()]
    if arg is not None and not names:
        raise UsageError(f"--family: no family named; valid: {', '.join(known)}")
    for name in names:
        if name not in known:
            raise UsageError(f"unknown family {name!r}; valid: {', '.join(known)}")
    return [known[n] for n in dict.fromkeys(names or known)]


def _tiers(args: argparse.Namespace) -> tuple[Tier, ...]:
    """The tier asked for, or every tier where --tier defaults to none."""
    return TIERS if args.tier is None else (args.tier,)


def _selection(
    args: argparse.Namespace, limit: int | None = None
) -> tuple[list[ScenarioFile], list[int] | None, int]:
    """The families, seeds and distractors asked for, checked: at most --max-tasks tasks over
    the tiers asked for (or the first `limit` of them), the hard tier only for families that
    declare one, and distractors only for families that declare them."""
    specs = _families(args.family)
    tiers = _tiers(args)
    for spec in specs if "hard" in tiers else []:
        if spec.hard is None:
            raise UsageError(
                f"--tier: family {spec.id} declares no [hard] text, so it has no hard tier; "
                "choose --tier paper or other families"
            )
    seeds = None
    if args.seeds is not None:
        try:
            seeds = parse_seeds(args.seeds, limit=args.max_tasks)
        except TooManySeeds as exc:
            raise UsageError(
                f"--seeds: {exc}; at most --max-tasks ({args.max_tasks:,}) tasks per command"
            ) from None
        except ValueError as exc:
            raise UsageError(f"--seeds: {exc}") from None
    n_tasks = count_tasks(specs, seeds) * len(tiers)
    if min(n_tasks, limit or n_tasks) > args.max_tasks:
        raise UsageError(
            f"{n_tasks:,} tasks asked for, more than --max-tasks ({args.max_tasks:,}); choose "
            "fewer seeds or families, or raise --max-tasks"
        )
    return specs, seeds, _distractors(args.distractors, specs)


def _distractors(n: int, specs: Sequence[ScenarioFile]) -> int:
    for spec in specs if n else []:
        if spec.distractors is None:
            raise UsageError(f"--distractors: family {spec.id} declares no [distractors]")
    return n


def _find_task(
    task_ref: str, family: list[str] | None, distractors: int = 0
) -> tuple[Task, ScenarioFile]:
    try:
        template, seed, tier = parse_task_id(task_ref)
    except ValueError as exc:
        raise UsageError(f"{exc}, e.g. hidden_liability_annex__s11") from None
    matches = families_with_template(_families(family), template)
    if not matches:
        valid = sorted(t.id for s in _families(family) for t in s.templates)
        raise UsageError(f"unknown template {template!r}; valid: {', '.join(valid)}")
    if len(matches) > 1:
        raise UsageError(f"template {template!r} is in several families; pass --family")
    spec = matches[0]
    return generate_task(spec, template, seed, _distractors(distractors, [spec]), tier), spec


def _print_frame(frame: pl.DataFrame) -> None:
    import polars as pl

    with pl.Config(
        tbl_formatting="ASCII_MARKDOWN",
        tbl_hide_column_data_types=True,
        tbl_hide_dataframe_shape=True,
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=10_000,
        fmt_str_lengths=200,
        float_precision=3,
    ):
        print(frame)


def cmd_tasks_list(args: argparse.Namespace) -> None:
    tasks = generate_tasks(*_selection(args), args.tier)
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

    _print_frame(pl.DataFrame(rows))


def _doc_lines(task: Task, hidden: bool) -> list[str]:
    docs = task.hidden_documents if hidden else task.authorized_documents
    lines = [f"== {'HIDDEN (outside the view)' if hidden else 'VISIBLE (authorized)'} =="]
    for d in docs:
        lines.append(f"[{d.doc_id}] {d.title}  ({d.role}; scope {d.scope}; {d.evidence_family})")
        lines.append(f"    {d.body}")
    return lines if docs else [*lines, "    (none)"]


def cmd_tasks_show(args: argparse.Namespace) -> None:
    task, _ = _find_task(args.task_id, args.family, args.distractors)
    if args.json:
        print(task.model_dump_json(indent=2))
        return
    o = task.oracles
    policy = "partial answer permitted" if task.contract.partial_response_permitted else "block"
    lines = [
        f"{task.task_id} ({task.family}; {task.tier} tier; {o.completeness}; policy: {policy}; "
        f"topologies: {', '.join(task.topologies) or '-'})",
        f"prompt: {task.prompt}",
        f"user scopes: {', '.join(task.user_scopes)}",
        *_doc_lines(task, hidden=False),
        *_doc_lines(task, hidden=True),
        "== CONTRACT ==",
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
    specs, seeds, distractors = _selection(args)
    by_id = {s.id: s for s in specs}
    tasks = generate_tasks(specs, seeds, distractors, args.tier)
    out = Path(args.out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as handle:
            for task in tasks:
                item = model_view(task, by_id[task.family]) if args.model_view else task
                handle.write(item.model_dump_json() + "\n")
    except OSError as exc:
        raise UsageError(f"--out: cannot write to {out} ({exc.strerror or exc})") from None
    print(f"wrote {len(tasks)} {'model views' if args.model_view else 'tasks'} to {out}")


def cmd_dataset_export(args: argparse.Namespace) -> None:
    from .dataset import CARD, export_dataset

    specs, seeds, distractors = _selection(args)
    out = Path(args.out)
    try:
        if out.is_dir() and any(out.iterdir()):
            raise UsageError(f"--out: {out} is not empty; choose a new or empty folder")
        release = export_dataset(out, specs, seeds, distractors, _tiers(args))
    except OSError as exc:
        raise UsageError(f"--out: cannot write to {out} ({exc.strerror or exc})") from None
    for config in release.configs:
        print(f"{out / config.path}: {config.name}, {config.rows} rows")
    print(f"{out / CARD}: the dataset card")


def _local(name: str) -> LocalModel:
    try:
        return get_local(name)
    except LocalModelError as exc:
        raise UsageError(str(exc)) from None


def cmd_local_model(args: argparse.Namespace) -> None:
    model = _local(args.name)
    if args.action == "serve":
        pid, port = serve_local(model, args.port)
        print(f"local/{model.name}: serving at http://127.0.0.1:{port}/v1 (pid {pid})")
    elif args.action == "status":
        running = local_status(model)
        print(
            f"local/{model.name}: "
            + (
                f"running at http://127.0.0.1:{running[1]}/v1 (pid {running[0]})"
                if running
                else "stopped"
            )
        )
    else:
        print(f"local/{model.name}: {'stopped' if stop_local(model) else 'was not running'}")


def cmd_run(args: argparse.Namespace) -> int:
    """Exit status 1 when any task of the run ended in error (after naming the commonest
    reasons), else 0."""
    specs, seeds, distractors = _selection(args, args.limit)
    if args.system is not None and args.system not in BASELINES:
        raise UsageError(f"unknown system {args.system!r}; valid: {', '.join(BASELINES)}")
    system = build_system(
        args.model if args.model is not None else args.system,
        specs,
        protocol=args.protocol,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        api_base=args.api_base,
        timeout_s=args.timeout,
        local_port=args.local_port,
    )
    errors = tokens = 0
    costs: list[float | None] = []

    def progress(record: ResponseRecord, done: int, total: int) -> None:
        nonlocal errors, tokens
        errors += record.status == "error"
        tokens += (record.usage.prompt_tokens or 0) + (record.usage.completion_tokens or 0)
        costs.append(record.usage.cost_usd)
        cost = "unknown" if None in costs else f"${sum(c or 0.0 for c in costs):.4f}"
        end = "\n" if done == total or not sys.stderr.isatty() else ""
        print(
            f"\r{done}/{total} tasks, {errors} errors, {tokens} tokens, cost {cost}",
            end=end,
            file=sys.stderr,
            flush=True,
        )

    out = Path(args.out)
    manifest = run_system(
        system,
        specs,
        out,
        seeds=seeds,
        concurrency=args.concurrency,
        progress=progress,
        limit=args.limit,
        distractors=distractors,
        tier=args.tier,
        retry_errors=args.retry_errors,
    )
    c = manifest.counts
    print(f"{args.out}: {c.n_tasks} tasks ({c.ok} replies, {c.error} errors); peb score reads them")
    if not c.error:
        return 0
    print(
        f"peb: {c.error} of {c.n_tasks} tasks ended in error (the same command retries them); "
        "the commonest reasons:",
        file=sys.stderr,
    )
    for reason, count in run_status(out).reasons:
        print(f"peb:   {count} x {reason}", file=sys.stderr)
    return 1


def cmd_score(args: argparse.Namespace) -> None:
    import polars as pl

    from .runs import INTERVAL_KEYS, run_labels, scorecard_of
    from .scoring import LABELS, METRICS, with_interval

    dirs = [Path(d) for d in args.dirs]
    card, warnings = scorecard_of(dirs)
    unclean = set(card.filter(pl.col("status") != "ok")["run"])
    warnings += [
        f"{label}: {run_status(d).summary()}; its rows are not finished numbers"
        for d, label in run_labels(dirs).items()
        if label in unclean
    ]
    if args.family is not None:
        wanted = [s.id for s in _families(args.family)]
        covered = set(card["family"])
        lacking = [f for f in wanted if f not in covered]
        if lacking:
            raise UsageError(
                f"--family: no given run covers {', '.join(lacking)}; "
                f"they cover {', '.join(sorted(covered))}"
            )
        card = card.filter(pl.col("family").is_in(wanted))
    for line in warnings:
        print(f"peb: warning: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps(card.to_dicts(), indent=2))
        return
    if args.ci:
        card = card.with_columns(with_interval(m) for m in METRICS if m.kind != "count")
    table = card.drop(INTERVAL_KEYS).rename(LABELS)
    if args.columns is not None:
        wanted = [c.strip() for c in args.columns.split(",") if c.strip()]
        unknown = [c for c in wanted if c not in table.columns]
        if unknown or not wanted:
            raise UsageError(
                f"--columns: unknown {', '.join(unknown) or '(none given)'}; "
                f"valid: {', '.join(table.columns)}"
            )
        table = table.select(wanted)
    _print_frame(table)


FEW_COMMON_TASKS = 10
"""`peb compare` warns when two runs share fewer tasks than this."""


def cmd_compare(args: argparse.Namespace) -> None:
    import polars as pl

    from .runs import score_run_dirs
    from .scoring import COMPARE_NOTE, CompareError, compare_scores, compare_table

    (scores_a, warn_a), (scores_b, warn_b) = (
        score_run_dirs([Path(d)]) for d in (args.run_a, args.run_b)
    )
    try:
        frame = compare_scores(scores_a, scores_b)
    except CompareError as exc:
        raise UsageError(str(exc)) from None
    common = frame.filter(pl.col("family") == "all")["n_pairs"].max()
    if isinstance(common, int) and common < FEW_COMMON_TASKS:
        warn_a.append(
            f"{args.run_a} and {args.run_b} have only {common} task(s) in common; "
            "the comparison says little"
        )
    for line in [*warn_a, *warn_b]:
        print(f"peb: warning: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps(frame.to_dicts(), indent=2))
        return
    print(f"A = {args.run_a}, B = {args.run_b}")
    _print_frame(compare_table(frame))
    print(COMPARE_NOTE)


def cmd_report(args: argparse.Namespace) -> None:
    from .reporting import FIGURE_DPI, export_report
    from .runs import select_runs

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} exists and is not a folder")
    try:
        dirs, left_out = select_runs(args.runs, include_unclean=args.include_failed)
    except RunError as exc:
        raise UsageError(f"--runs: {exc}") from None
    for line in left_out:
        print(f"peb: {line} (--include-failed)", file=sys.stderr)
    if not dirs:
        raise UsageError("--runs: no finished run to report; run one, or pass --include-failed")
    try:
        paths = export_report(out, dirs, args.tier, dpi=args.dpi or FIGURE_DPI)
    except OSError as exc:
        raise UsageError(f"--out: cannot write to {out} ({exc.strerror or exc})") from None
    for path in paths:
        print(path)


def cmd_import_inspect(args: argparse.Namespace) -> None:
    try:
        from .inspect_task import InspectLogError, import_log
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("inspect_ai"):
            raise
        raise UsageError(
            "inspect-ai is not installed; pip install 'partial-evidence-bench[inspect]'"
        ) from None
    out = Path(args.out)
    try:
        manifest = import_log(Path(args.log), out)
    except InspectLogError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"--out: cannot write to {out} ({exc.strerror or exc})") from None
    c = manifest.counts
    print(
        f"{args.out}: {c.n_tasks} tasks ({c.ok} replies, {c.error} errors) from {args.log}; "
        "peb score reads them"
    )


def cmd_schema(args: argparse.Namespace) -> None:
    schemas: dict[str, Any] = {
        "Task": Task.model_json_schema(),
        "ModelView": ModelView.model_json_schema(),
        "SystemView": SystemView.model_json_schema(),
        "ResponseRecord": ResponseRecord.model_json_schema(),
        "RunManifest": RunManifest.model_json_schema(),
        "ScenarioFile": ScenarioFile.model_json_schema(),
    }
    for spec in load_families().values():
        schemas[f"Response[{spec.id}]"] = response_model(spec).model_json_schema()
    if args.name:
        if args.name not in schemas:
            raise UsageError(f"unknown schema {args.name!r}; valid: {', '.join(schemas)}")
        print(json.dumps(schemas[args.name], indent=2))
    else:
        print(json.dumps(schemas, indent=2))


def _checked(
    kind: Callable[[str], Any], ok: Callable[[Any], bool], valid: str
) -> Callable[[str], Any]:
    """An argparse type: `kind(text)` if that works and passes `ok`, else one line naming what
    is valid."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"expected {valid}, got {text!r}")
        return value

    return parse


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _path(kind: str) -> Callable[[str], str]:
    """An argparse type for a path: not empty, UTF-8, and not an existing file where a `folder`
    is wanted, nor a folder where a `file` is."""

    def parse(text: str) -> str:
        path = Path(text)
        if not text:
            problem = "expected a path, got ''"
        elif not _utf8(text):
            problem = f"{text!r} is not UTF-8; choose a UTF-8 path"
        elif kind == "folder" and path.exists() and not path.is_dir():
            problem = f"{text} exists and is not a folder"
        elif kind == "file" and path.is_dir():
            problem = f"{text} is a folder; expected a file path"
        else:
            return text
        raise argparse.ArgumentTypeError(problem)

    return parse


_COUNT = _checked(int, lambda n: n >= 1, "an integer >= 1")
_PORT = _checked(int, lambda n: 1 <= n <= 65535, "a port from 1 to 65535")
_DISTRACTORS = _checked(
    int,
    lambda n: 0 <= n <= MAX_DISTRACTORS,
    f"an integer from 0 to {MAX_DISTRACTORS} (each is one more document in every prompt)",
)
_URL = _checked(
    str,
    lambda u: _utf8(u) and urlsplit(u).scheme in ("http", "https") and bool(urlsplit(u).hostname),
    "an http(s) URL such as http://HOST/v1",
)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="peb", description="partial-evidence-bench: tasks, runs and scores.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def selection(p: argparse.ArgumentParser, every_tier: bool = False) -> None:
        """--family, --seeds, --distractors, --max-tasks and --tier, which defaults to paper
        (or, with `every_tier`, to none: both tiers)."""
        p.add_argument(
            "--family",
            action="append",
            metavar="F",
            help="family id; repeat or comma-separate (default: all)",
        )
        p.add_argument(
            "--seeds",
            metavar="LIST",
            help="e.g. 11,23 or 400-439 (default: each family's canonical seeds)",
        )
        p.add_argument(
            "--distractors",
            type=_DISTRACTORS,
            default=0,
            metavar="N",
            help=f"add N neutral authorized documents to each task (default 0, at most "
            f"{MAX_DISTRACTORS}: each is one more document in every prompt)",
        )
        p.add_argument(
            "--max-tasks",
            type=_COUNT,
            default=MAX_TASKS,
            metavar="N",
            help=f"refuse to generate more than N tasks (default {MAX_TASKS:,})",
        )
        p.add_argument(
            "--tier",
            choices=TIERS,
            default=None if every_tier else "paper",
            help="paper: the paper's tasks; hard: tasks surface cues cannot solve (default: "
            + ("both)" if every_tier else "paper)"),
        )

    tasks = sub.add_parser("tasks", help="list, show and export tasks")
    tsub = tasks.add_subparsers(dest="tasks_command", required=True, parser_class=_Parser)
    p = tsub.add_parser("list", help="one line per task")
    selection(p)
    p.set_defaults(func=cmd_tasks_list)
    p = tsub.add_parser("show", help="one task: visible versus hidden documents, oracles")
    p.add_argument("task_id", help="<template>__s<seed> or <template>__hard__s<seed>, any seed")
    p.add_argument("--family", action="append", metavar="F")
    p.add_argument("--json", action="store_true", help="the whole task as JSON")
    p.add_argument("--distractors", type=_DISTRACTORS, default=0, metavar="N")
    p.set_defaults(func=cmd_tasks_show)
    p = tsub.add_parser("export", help="tasks as JSONL, one a line")
    selection(p)
    p.add_argument("--out", required=True, type=_path("file"), metavar="PATH")
    p.add_argument(
        "--model-view",
        action="store_true",
        help="only what a model is shown (no ids, facts, tags or oracles)",
    )
    p.set_defaults(func=cmd_tasks_export)

    p = sub.add_parser("dataset", help="the dataset release, for the Hugging Face Hub")
    dsub = p.add_subparsers(dest="dataset_command", required=True, parser_class=_Parser)
    p = dsub.add_parser(
        "export", help="per tier, the tasks and the model views as parquet, with a dataset card"
    )
    selection(p, every_tier=True)
    p.add_argument(
        "--out", required=True, type=_path("folder"), metavar="DIR", help="a new or empty folder"
    )
    p.set_defaults(func=cmd_dataset_export)

    p = sub.add_parser("run", help="run a system over tasks into a run folder")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--system", help=f"one of: {', '.join(BASELINES)}")
    who.add_argument("--model", help="a litellm model string, e.g. openai/NAME with --api-base")
    selection(p)
    p.add_argument("--out", required=True, type=_path("folder"), metavar="DIR")
    p.add_argument("--protocol", default="structured_gap@1", help="prompt protocol (--model)")
    p.add_argument("--concurrency", type=_COUNT, default=8, metavar="N")
    p.add_argument(
        "--temperature",
        type=_checked(float, lambda t: math.isfinite(t) and t >= 0, "a finite number >= 0"),
        default=0.0,
        metavar="T",
    )
    p.add_argument("--max-tokens", type=_COUNT, default=1024, metavar="N")
    p.add_argument(
        "--api-base", type=_URL, metavar="URL", help="an OpenAI-compatible server (--model)"
    )
    p.add_argument(
        "--timeout",
        type=_checked(float, lambda t: math.isfinite(t) and t > 0, "a finite number > 0"),
        default=120.0,
        metavar="S",
        help="per request",
    )
    p.add_argument("--limit", type=_COUNT, metavar="N", help="only the first N tasks (smoke runs)")
    p.add_argument(
        "--no-retry-errors",
        dest="retry_errors",
        action="store_false",
        help="on resume, keep tasks that ended in error as they are (default: run them again)",
    )
    p.add_argument(
        "--local-port", type=_PORT, metavar="PORT", help="for local/<name> (default: its own)"
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("local-model", help="serve, inspect or stop an embedded model")
    p.add_argument("action", choices=["serve", "status", "stop"])
    p.add_argument("name", nargs="?", default="smollm2", help=f"one of: {', '.join(REGISTRY)}")
    p.add_argument("--port", type=_PORT, help="default: the model's own")
    p.set_defaults(func=cmd_local_model)

    p = sub.add_parser("score", help="the scorecard of one or more run folders")
    p.add_argument("dirs", nargs="+", type=_path("any"), metavar="DIR")
    p.add_argument("--json", action="store_true", help="a JSON list of rows (with intervals)")
    p.add_argument("--ci", action="store_true", help="show each rate and mean with its interval")
    p.add_argument("--family", action="append", metavar="F", help="only these families")
    p.add_argument(
        "--columns",
        metavar="LIST",
        help="only these columns of the table, in this order, e.g. run,family,unsafe,gap",
    )
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("compare", help="paired comparison of two runs over their common tasks")
    p.add_argument("run_a", type=_path("any"), metavar="RUN_A")
    p.add_argument("run_b", type=_path("any"), metavar="RUN_B")
    p.add_argument("--json", action="store_true", help="a JSON list of rows")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser(
        "report", help="the paper's tables (md, tex, csv) and figures (png, svg, pdf) to a folder"
    )
    p.add_argument(
        "--out", required=True, type=_path("folder"), metavar="DIR", help="created if need be"
    )
    p.add_argument(
        "--runs",
        nargs="+",
        type=_path("any"),
        metavar="RUN",
        help="run folders, folders of runs or globs (default: every run under $PEB_RUNS_DIR, "
        "else the checked-in runs, but the scratch area)",
    )
    p.add_argument(
        "--include-failed",
        action="store_true",
        help="also report runs with errors or missing tasks, or not finished (left out "
        "by default: their numbers are not a system's)",
    )
    p.add_argument("--tier", choices=TIERS, default="paper", help="whose tasks and runs")
    p.add_argument(
        "--dpi",
        type=_checked(int, lambda n: 72 <= n <= 1200, "an integer from 72 to 1200"),
        help="PNG pixels to the inch, figures being 7 inches wide (default: 300, for print)",
    )
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("import", help="another harness's log as a run folder")
    isub = p.add_subparsers(dest="import_command", required=True, parser_class=_Parser)
    p = isub.add_parser(
        "inspect", help="an inspect_ai eval log (.eval or .json) of the partial_evidence task"
    )
    p.add_argument("log", type=_path("file"), metavar="LOG")
    p.add_argument(
        "--out", required=True, type=_path("folder"), metavar="DIR", help="a new run folder"
    )
    p.set_defaults(func=cmd_import_inspect)

    p = sub.add_parser("schema", help="JSON schemas of the benchmark's data")
    p.add_argument("name", nargs="?", help="one schema by name (default: all)")
    p.set_defaults(func=cmd_schema)
    return parser


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    if issubclass(category, PebWarning):
        print(f"peb: warning: {message}", file=sys.stderr)
    else:
        _SHOW_WARNING(message, category, filename, lineno, file, line)


_SHOW_WARNING = warnings.showwarning


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status: 0, 1 (`peb run` with tasks in error), 2 (bad input,
    one line on stderr), 130 (interrupted)."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", PebWarning)
        warnings.showwarning = _show_warning
        try:
            args = build_parser().parse_args(argv)
            return int(args.func(args) or 0)
        except (UsageError, ScenarioError, RunError, LocalModelError, SystemSpecError) as exc:
            print(f"peb: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(
                "peb: interrupted (a run keeps what it recorded; the same command resumes it)",
                file=sys.stderr,
            )
            return 130
        except BrokenPipeError:
            return 0


def run() -> NoReturn:
    """The `peb` command: `main` on the command line, then an immediate exit. Everything a
    command writes is closed (or committed, for the reply cache) before `main` returns, so the
    interpreter's teardown of every imported module (most of a second once litellm is loaded)
    buys nothing and is skipped."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
