"""What the commands share: the selection of families, seeds and tiers (its options those of
the run declaration, `runs.RunSpec`, added by `frontends._argv`), finding one task, and how a
frame is printed. The one error path (UsageError: one line, exit status 2) and the argument
types are `frontends._argv`'s."""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ...tasks import (
    DEFAULT_CONTRACT,
    DEFAULT_TIER,
    MAX_TASKS,
    TIERS,
    ContractSource,
    ScenarioFile,
    SelectionError,
    Task,
    Tier,
    check_contract,
    check_corpus_size,
    check_distractors,
    families_with_template,
    generate_task,
    get_tier,
    parse_task_id,
    select_families,
    select_tasks,
)
from .._argv import Parser, UsageError, add_options

if TYPE_CHECKING:  # polars is imported by the commands that print frames
    import polars as pl


def command_group(
    sub: argparse._SubParsersAction[Parser], name: str, help: str, **kwargs: Any
) -> argparse._SubParsersAction[Parser]:
    """The subcommands of a new command `name` (`peb NAME SUBCOMMAND`: one is required; the
    parsed arguments name it as `NAME_command`)."""
    group = sub.add_parser(name, help=help)
    return group.add_subparsers(
        dest=f"{name}_command", required=True, parser_class=Parser, **kwargs
    )


@contextmanager
def needs_extra(package: str, install: str) -> Iterator[None]:
    """Importing a command's front-end that needs an extra: a missing `package` (a module
    whose name starts with it) as a UsageError saying `install`; any other missing module is
    raised as it is."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith(package):
            raise
        raise UsageError(install) from None


def families_arg(arg: list[str] | None) -> list[ScenarioFile]:
    try:
        return list(select_families(arg))
    except SelectionError as exc:
        raise UsageError(str(exc)) from None


def tiers_arg(args: argparse.Namespace) -> tuple[Tier, ...]:
    """The tier asked for; not given, the default tier, or every registered tier for a
    command whose --tier defaults to every tier."""
    if args.tier is None:
        return tuple(TIERS) if getattr(args, "every_tier", False) else (DEFAULT_TIER,)
    return (args.tier,)


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
            distractors=args.distractors or 0,
            max_tasks=args.max_tasks or MAX_TASKS,
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
            f"--corpus-size: the {tiers_arg(args)[0]} tier has no corpus; choose --tier "
            f"{' or '.join(corpora)}"
        )
    for tier in with_corpus:
        try:
            check_corpus_size(tier, size)
        except ValueError as exc:
            raise UsageError(f"--corpus-size: {exc}") from None
    return size


def contract_arg(args: argparse.Namespace, specs: Sequence[ScenarioFile]) -> ContractSource:
    """--contract, checked against the tiers asked for (`corpus`: refused unless one of them
    has corpora, and for a family of `specs` without a [procedure]); the other tiers generate
    as they always do."""
    contract: ContractSource = args.contract or DEFAULT_CONTRACT
    if contract == DEFAULT_CONTRACT:
        return contract
    with_corpus = [t for t in tiers_arg(args) if get_tier(t).corpus is not None]
    for tier in with_corpus or tiers_arg(args)[:1]:
        for spec in specs:
            try:
                check_contract(spec, tier, contract)
            except ValueError as exc:
                raise UsageError(f"--contract: {exc}") from None
    return contract


def tier_corpus_size(tier: Tier, size: int | None) -> int | None:
    """The corpus size to generate `tier` with: `size` for a tier with corpora, else None."""
    return size if get_tier(tier).corpus is not None else None


def distractors_arg(n: int, specs: Sequence[ScenarioFile]) -> int:
    try:
        return check_distractors(n, specs)
    except SelectionError as exc:
        raise UsageError(str(exc)) from None


def find_task(
    task_ref: str,
    family: list[str] | None,
    distractors: int = 0,
    corpus_size: int | None = None,
    contract: ContractSource = DEFAULT_CONTRACT,
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
    try:
        check_contract(spec, tier, contract)
    except ValueError as exc:
        raise UsageError(f"--contract: {exc}") from None
    distractors = distractors_arg(distractors, [spec])
    return generate_task(spec, template, seed, distractors, tier, corpus_size, contract), spec


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


SELECTION = ("family", "seeds", "distractors", "corpus_size", "contract", "max_tasks", "tier")
"""The run options that select tasks."""


def add_selection(p: argparse.ArgumentParser, every_tier: bool = False) -> None:
    """The selection's options (`SELECTION`), as `peb run` declares them; with `every_tier`,
    --tier defaults to every tier."""
    add_options(p, "cli", SELECTION, defaults={"tier": "every tier"} if every_tier else None)
    p.set_defaults(every_tier=every_tier)
