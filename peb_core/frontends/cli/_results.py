"""`peb score`, `peb compare`, `peb report` and `peb import inspect`: run folders read back as
numbers, tables and figures, and another harness's log as a run folder."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ...runs import RunError, run_status
from ...tasks import DEFAULT_TIER, MAX_TASKS, TIERS
from .._argv import COUNT, Parser, UsageError, checked, one_line, path_arg
from ._common import command_group, families_arg, needs_extra, print_frame

if TYPE_CHECKING:  # polars is imported by the commands that read runs
    import polars as pl


def cmd_score(args: argparse.Namespace) -> None:
    import polars as pl

    from ...results import expand_runs, run_labels, score_run_dirs, scorecard_columns
    from ...scoring import (
        CALIBRATION,
        ESCALATION,
        METRICS,
        ROW_KEYS,
        glance,
        measured_only,
        metric,
        notes,
        scorecard,
        with_pooled,
    )

    unlisted: list[str] = []
    dirs = expand_runs([Path(d) for d in args.dirs], unlisted)
    scores, warnings = score_run_dirs(dirs)
    card = scorecard(scores)
    card = card.select(scorecard_columns(card))
    warnings = unlisted + warnings
    unclean = set(card.filter(pl.col("status") != "ok")["run"])
    for d, label in run_labels(dirs).items():
        if label in unclean:
            warnings.append(
                f"{label}: {run_status(d).summary()}; its rows are not finished numbers"
            )
        elif label not in card["run"]:  # a run that has recorded nothing yet
            warnings.append(f"{label}: {run_status(d).summary()}; nothing to score yet")
    if args.family is not None:
        wanted = [s.id for s in families_arg(args.family)]
        covered = set(card["family"])
        lacking = [f for f in wanted if f not in covered]
        if lacking:
            raise UsageError(
                f"--family: no given run covers {', '.join(lacking)}; "
                f"they cover {', '.join(sorted(covered))}"
            )
        card = card.filter(pl.col("family").is_in(wanted))
        scores = scores.filter(pl.col("family").is_in(wanted))
    for line in warnings:
        print(f"peb: warning: {one_line(line)}", file=sys.stderr)
    if args.json:  # every number beside its row's status, but none of a failed row
        print(json.dumps(measured_only(card).to_dicts(), indent=2))
        return
    if card.is_empty():  # the warnings said why; an empty table says nothing more
        return
    card = with_pooled(card, scores)  # each run's row over the families shown, first
    table = glance(card, intervals=args.ci, keys=[*ROW_KEYS, "repeats"], metrics=METRICS)
    if args.columns is not None:
        given = [c.strip() for c in args.columns.split(",") if c.strip()]
        # A metric by its column name (`evidence_coverage`) or its label (`coverage`).
        known = {m.name for m in METRICS}
        wanted = [metric(c).label if c in known else c for c in given]
        unknown = [g for g, c in zip(given, wanted, strict=True) if c not in table.columns]
        if unknown or not wanted:
            raise UsageError(
                f"--columns: unknown {', '.join(unknown) or '(none given)'}; "
                f"valid: {', '.join(table.columns)} (or a metric's column name, as in "
                "peb score --json)"
            )
        twice = [c for c in dict.fromkeys(wanted) if wanted.count(c) > 1]
        if twice:
            raise UsageError(f"--columns: {', '.join(twice)} given more than once")
        table = table.select(_told_apart(table, wanted))
    else:
        if not (card["repeats"] > 1).any():  # K is 1 for every row: nothing to say
            table = table.drop("repeats")
        asked = [m for m in (*ESCALATION, *CALIBRATION) if m.name in card.columns]
        if not any(card[m.name].is_not_null().any() for m in asked):  # no run asks for them
            table = table.drop(m.label for m in asked)
    print_frame(table)
    for note in notes(m for m in METRICS if m.label in table.columns):
        print(f"Note: {note}")


TELLING_KEYS = ("run", "family")
"""The columns that tell any two rows of `peb score` apart (a run's rows are one per family,
and its pooled row is family `all`)."""


def _told_apart(table: pl.DataFrame, wanted: list[str]) -> list[str]:
    """`wanted` columns of a `peb score` table, with those of TELLING_KEYS it leaves out put
    first when the row keys among `wanted` do not tell every row apart."""
    from ...scoring import ROW_KEYS

    keys = [c for c in wanted if c in ROW_KEYS]
    if table.height < 2 or (keys and not table.select(keys).is_duplicated().any()):
        return wanted
    return [*(k for k in TELLING_KEYS if k not in wanted), *wanted]


FEW_COMMON_TASKS = 10
"""`peb compare` warns when two runs share fewer tasks than this."""


def cmd_compare(args: argparse.Namespace) -> None:
    import polars as pl

    from ...results import run_labels, score_run_dirs
    from ...scoring import (
        COMPARE_NOTE,
        CompareError,
        compare_scores,
        compare_table,
        unpaired_note,
        unpaired_tasks,
    )

    if args.interventions:
        return _compare_interventions(args)
    if args.run_b is None:
        raise UsageError(
            "the following arguments are required: RUN_B (or --interventions: RUN_A a folder "
            "of runs)"
        )
    dirs = [Path(args.run_a), Path(args.run_b)]
    scores, warnings = score_run_dirs(dirs)  # together: each run's label says what differs
    names = {d.resolve(): name for d, name in run_labels(dirs).items()}
    scores_a, scores_b = (scores.filter(pl.col("run") == names[d.resolve()]) for d in dirs)
    for run, these in ((args.run_a, scores_a), (args.run_b, scores_b)):
        if these.is_empty():  # a run that has recorded nothing yet
            raise UsageError(f"{run}: {run_status(Path(run)).summary()}; nothing to compare yet")
    try:
        frame = compare_scores(scores_a, scores_b)
    except CompareError as exc:
        raise UsageError(str(exc)) from None
    left_out = unpaired_note(unpaired_tasks(scores_a, scores_b), "A", "B")
    if left_out is not None:
        warnings.append(left_out)
    common = frame.filter(pl.col("family") == "all")["n_pairs"].max()
    if isinstance(common, int) and common < FEW_COMMON_TASKS:
        warnings.append(
            f"{args.run_a} and {args.run_b} have only {common} task(s) both answered; "
            "the comparison says little"
        )
    for line in warnings:
        print(f"peb: warning: {one_line(line)}", file=sys.stderr)
    if args.json:
        print(json.dumps(frame.to_dicts(), indent=2))
        return
    label_a, label_b = frame["label_a"][0], frame["label_b"][0]
    print(f"A = {args.run_a} ({label_a}), B = {args.run_b} ({label_b})")
    print_frame(compare_table(frame))
    print(COMPARE_NOTE)


def _compare_interventions(args: argparse.Namespace) -> None:
    """`peb compare DIR [DIR] --interventions`: each intervention's run against the run of the
    same system and setting without one (`scoring.compare_interventions`), pooled over the
    families (`--json`: every family too)."""
    import polars as pl

    from ...results import expand_runs, score_run_dirs
    from ...scoring import COMPARE_NOTE, compare_interventions, compare_table

    given = [args.run_a, *([args.run_b] if args.run_b is not None else [])]
    try:
        dirs = expand_runs([Path(d) for d in given])
        scores, warnings = score_run_dirs(dirs)
    except RunError as exc:
        raise UsageError(str(exc)) from None
    frame = compare_interventions(scores)
    for line in warnings:
        print(f"peb: warning: {line}", file=sys.stderr)
    if frame.is_empty():
        raise UsageError(
            f"{', '.join(given)}: no run with an intervention beside a run of the same system "
            "and setting without one (--intervention none); nothing to compare"
        )
    if args.json:
        print(json.dumps(frame.to_dicts(), indent=2, default=str))
        return
    pooled = frame.filter((pl.col("family") == "all") & (pl.col("n_pairs") > 0))
    setting = [k for k in ("system", "tier", "disclosure") if k in pooled.columns]
    for keys, rows in pooled.group_by([*setting, "intervention"], maintain_order=True):
        named = ", ".join(f"{k} {v}" for k, v in zip([*setting, "intervention"], keys, strict=True))
        print(f"{named} (B) against none (A), over all families:")
        print_frame(compare_table(rows).drop("family"))
        print()
    print(COMPARE_NOTE)
    return None


def cmd_report(args: argparse.Namespace) -> None:
    from ...reporting import FIGURE_DPI, export_report
    from ...results import score_readable, select_runs

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} exists and is not a folder")
    try:
        dirs, left_out = select_runs(args.runs, include_unclean=args.include_failed)
    except RunError as exc:
        raise UsageError(f"--runs: {exc}") from None
    # A run that cannot be read or scored is left out, saying why; the rest are reported
    # (their scores are saved beside them, so the tables read them again at once).
    unreadable = score_readable(dirs).left_out if dirs else {}
    left_out += [f"{d}: left out, cannot be read: {why}" for d, why in unreadable.items()]
    dirs = [d for d in dirs if d not in unreadable]
    if not dirs:
        # One error line says it all: every run picked, and why each was left out.
        why = "; ".join(left_out) if left_out else "run one"
        flag = "" if args.include_failed else " (or pass --include-failed)"
        raise UsageError(f"--runs: no finished run to report: {why}{flag}")
    for line in left_out:
        flag = "" if "cannot be read" in line else " (--include-failed)"
        print(f"peb: {line}{flag}", file=sys.stderr)
    try:
        paths = export_report(out, dirs, args.tier, dpi=args.dpi or FIGURE_DPI)
    except OSError as exc:
        raise UsageError(f"--out: cannot write to {out} ({exc.strerror or exc})") from None
    for path in paths:
        print(path)


def cmd_import_inspect(args: argparse.Namespace) -> None:
    with needs_extra(
        "inspect_ai", "inspect-ai is not installed; pip install 'partial-evidence-bench[inspect]'"
    ):
        from ..inspect.task import InspectLogError, import_log
    out = Path(args.out)
    try:
        imported = import_log(Path(args.log), out, args.max_tasks)
    except InspectLogError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"--out: cannot write to {out} ({exc.strerror or exc})") from None
    for line in imported.set_aside:
        print(f"peb: {line}", file=sys.stderr)
    manifest = imported.manifest
    c = manifest.counts
    episodes = f", {c.escalated} escalated" if c.escalated else ""
    episodes += f", {c.no_submit} without a submit" if c.no_submit else ""
    repeats = f" x {manifest.repeats} epochs" if manifest.repeats > 1 else ""
    aside = len(imported.set_aside)
    unverified = f" ({aside} set aside as not verified)" if aside else ""
    print(
        f"{args.out}: {c.n_tasks} tasks{repeats} ({c.ok} replies{episodes}, {c.error} errors"
        f"{unverified}) from {args.log}; peb score reads them"
    )


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """`score`, `compare`, `report` and `import`."""
    p = sub.add_parser(
        "score", help="the scorecard of run folders, folders of runs and sweeps, as one table"
    )
    p.add_argument("dirs", nargs="+", type=path_arg("any"), metavar="DIR")
    p.add_argument("--json", action="store_true", help="a JSON list of rows (with intervals)")
    p.add_argument("--ci", action="store_true", help="show each rate and mean with its interval")
    p.add_argument("--family", action="append", metavar="F", help="only these families")
    p.add_argument(
        "--columns",
        metavar="LIST",
        help="only these columns of the table, in this order, e.g. run,family,unsafe,gap; a "
        "metric by its label or its column name (coverage or evidence_coverage); repeats is "
        "the K of each row's run",
    )
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("compare", help="paired comparison of two runs over their common tasks")
    p.add_argument("run_a", type=path_arg("any"), metavar="RUN_A")
    p.add_argument("run_b", type=path_arg("any"), metavar="RUN_B", nargs="?")
    p.add_argument("--json", action="store_true", help="a JSON list of rows")
    p.add_argument(
        "--interventions",
        action="store_true",
        help="RUN_A (and RUN_B) are folders of runs (a sweep): each intervention's run against "
        "the run of the same system and setting without one (docs/benchmark.md §11)",
    )
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser(
        "report", help="the paper's tables (md, tex, csv) and figures (png, svg, pdf) to a folder"
    )
    p.add_argument(
        "--out", required=True, type=path_arg("folder"), metavar="DIR", help="created if need be"
    )
    p.add_argument(
        "--runs",
        nargs="+",
        type=path_arg("any"),
        metavar="RUN",
        help="run folders, folders of runs or globs (default: every run under the runs root, "
        "but the scratch area: $PEB_RUNS_DIR, else the repository's runs/ or, installed, "
        "~/.local/share/partial-evidence-bench/runs)",
    )
    p.add_argument(
        "--include-failed",
        action="store_true",
        help="also report runs with errors or missing tasks, or not finished (left out "
        "by default: their numbers are not a system's)",
    )
    p.add_argument("--tier", choices=TIERS, default=DEFAULT_TIER, help="whose tasks and runs")
    p.add_argument(
        "--dpi",
        type=checked(int, lambda n: 72 <= n <= 1200, "an integer from 72 to 1200"),
        help="PNG pixels to the inch, figures being 7 inches wide (default: 300, for print)",
    )
    p.set_defaults(func=cmd_report)

    isub = command_group(sub, "import", "another harness's log as a run folder")
    p = isub.add_parser(
        "inspect", help="an inspect_ai eval log (.eval or .json) of the partial_evidence task"
    )
    p.add_argument("log", type=path_arg("file"), metavar="LOG")
    p.add_argument(
        "--out", required=True, type=path_arg("folder"), metavar="DIR", help="a new run folder"
    )
    p.add_argument(
        "--max-tasks",
        type=COUNT,
        default=MAX_TASKS,
        metavar="N",
        help=f"refuse a log whose run names more than N tasks (default {MAX_TASKS:,})",
    )
    p.set_defaults(func=cmd_import_inspect)
