"""What every command shares: the one error path (UsageError: one line, exit status 2), the
argument types that refuse bad input while parsing, the selection of families, seeds and tiers,
and how a frame is printed."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import urlsplit

from ...systems import MAX_REPEATS
from ...tasks import (
    DEFAULT_TIER,
    MAX_DISTRACTORS,
    MAX_TASKS,
    TIERS,
    ScenarioFile,
    SelectionError,
    Task,
    Tier,
    check_corpus_size,
    check_distractors,
    families_with_template,
    generate_task,
    get_tier,
    parse_task_id,
    select_families,
    select_tasks,
)

if TYPE_CHECKING:  # polars is imported by the commands that print frames
    import polars as pl


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def families_arg(arg: list[str] | None) -> list[ScenarioFile]:
    try:
        return list(select_families(arg))
    except SelectionError as exc:
        raise UsageError(str(exc)) from None


def tiers_arg(args: argparse.Namespace) -> tuple[Tier, ...]:
    """The tier asked for, or every registered tier where --tier defaults to none."""
    return tuple(TIERS) if args.tier is None else (args.tier,)


def selection_arg(
    args: argparse.Namespace, limit: int | None = None
) -> tuple[list[ScenarioFile], list[int] | None, int]:
    """The families, seeds and distractors asked for, checked by `tasks.select_tasks` (the
    workbench's check too): at most --max-tasks tasks over the tiers asked for (or the first
    `limit` of them), each tier only for families it supports, and distractors only for
    families that declare them."""
    try:
        selection = select_tasks(
            args.family,
            args.seeds,
            tiers_arg(args),
            distractors=args.distractors,
            max_tasks=args.max_tasks,
            limit=limit,
        )
    except SelectionError as exc:
        raise UsageError(str(exc)) from None
    seeds = list(selection.seeds) if selection.seeds is not None else None
    return list(selection.families), seeds, selection.distractors


def corpus_size_arg(args: argparse.Namespace) -> int | None:
    """--corpus-size, checked against the tiers asked for: refused unless one of them has
    corpora, and within each such tier's bounds (the others generate as they always do)."""
    size: int | None = args.corpus_size
    if size is None:
        return None
    with_corpus = [t for t in tiers_arg(args) if get_tier(t).corpus is not None]
    if not with_corpus:
        corpora = [t.name for t in TIERS.values() if t.corpus is not None]
        raise UsageError(
            f"--corpus-size: the {args.tier} tier has no corpus; choose --tier "
            f"{' or '.join(corpora)}"
        )
    for tier in with_corpus:
        try:
            check_corpus_size(tier, size)
        except ValueError as exc:
            raise UsageError(f"--corpus-size: {exc}") from None
    return size


def tier_corpus_size(tier: Tier, size: int | None) -> int | None:
    """The corpus size to generate `tier` with: `size` for a tier with corpora, else None."""
    return size if get_tier(tier).corpus is not None else None


def distractors_arg(n: int, specs: Sequence[ScenarioFile]) -> int:
    try:
        return check_distractors(n, specs)
    except SelectionError as exc:
        raise UsageError(str(exc)) from None


def find_task(
    task_ref: str, family: list[str] | None, distractors: int = 0, corpus_size: int | None = None
) -> tuple[Task, ScenarioFile]:
    try:
        template, seed, tier = parse_task_id(task_ref)
    except ValueError as exc:
        raise UsageError(f"{exc}, e.g. hidden_liability_annex__s11") from None
    matches = families_with_template(families_arg(family), template)
    if not matches:
        valid = sorted(t.id for s in families_arg(family) for t in s.templates)
        raise UsageError(f"unknown template {template!r}; valid: {', '.join(valid)}")
    if len(matches) > 1:
        raise UsageError(f"template {template!r} is in several families; pass --family")
    spec = matches[0]
    if corpus_size is not None:
        try:
            check_corpus_size(tier, corpus_size)
        except ValueError as exc:
            raise UsageError(f"--corpus-size: {exc}") from None
    distractors = distractors_arg(distractors, [spec])
    return generate_task(spec, template, seed, distractors, tier, corpus_size), spec


def print_frame(frame: pl.DataFrame) -> None:
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


def checked(
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


def path_arg(kind: str) -> Callable[[str], str]:
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


COUNT = checked(int, lambda n: n >= 1, "an integer >= 1")
PORT = checked(int, lambda n: 1 <= n <= 65535, "a port from 1 to 65535")
DISTRACTORS = checked(
    int,
    lambda n: 0 <= n <= MAX_DISTRACTORS,
    f"an integer from 0 to {MAX_DISTRACTORS} (each is one more document in every prompt)",
)
CORPUS_SIZE = checked(int, lambda n: n >= 1, "an integer >= 1 (documents per task)")
REPEATS = checked(int, lambda n: 1 <= n <= MAX_REPEATS, f"an integer from 1 to {MAX_REPEATS}")
"""A run's repeats (`peb run --repeats K`, the workbench's Repeats)."""


def _url(text: str) -> str:
    """`text` if it is an http(s) URL with a host and, if any, a port from 1 to 65535; else a
    ValueError."""
    parts = urlsplit(text)
    port = parts.port  # a ValueError for a port out of range or not a number
    if not _utf8(text) or parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
        raise ValueError(text)
    return text


URL = checked(
    _url, lambda _: True, "an http(s) URL such as http://HOST:PORT/v1 (a port from 1 to 65535)"
)


def add_corpus_size(p: argparse.ArgumentParser) -> None:
    """--corpus-size, for tiers whose tasks are corpora."""
    sizes = {t.name: t.corpus for t in TIERS.values() if t.corpus is not None}
    p.add_argument(
        "--corpus-size",
        type=CORPUS_SIZE,
        metavar="N",
        help="documents per task on a tier with corpora ("
        + "; ".join(f"{n}: {c.minimum}-{c.maximum}, default {c.default}" for n, c in sizes.items())
        + ")",
    )


def add_selection(
    p: argparse.ArgumentParser, every_tier: bool = False, default_tier: Tier = DEFAULT_TIER
) -> None:
    """--family, --seeds, --distractors, --corpus-size, --max-tasks and --tier, which defaults
    to `default_tier` (the paper's; or, with `every_tier`, to none: every tier)."""
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
        type=DISTRACTORS,
        default=0,
        metavar="N",
        help=f"add N neutral authorized documents to each task (default 0, at most "
        f"{MAX_DISTRACTORS}: each is one more document in every prompt)",
    )
    add_corpus_size(p)
    p.add_argument(
        "--max-tasks",
        type=COUNT,
        default=MAX_TASKS,
        metavar="N",
        help=f"refuse to generate more than N tasks (default {MAX_TASKS:,})",
    )
    p.add_argument(
        "--tier",
        choices=TIERS,
        default=None if every_tier else default_tier,
        help="; ".join(f"{t.name}: {t.description}" for t in TIERS.values())
        + f" (default: {'every tier' if every_tier else default_tier})",
    )
