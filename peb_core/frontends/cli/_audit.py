"""`peb audit shortcuts`: what a text classifier learns of completeness from the surface of each
family's model views (docs/benchmark.md §8), as a table or JSON."""

from __future__ import annotations

import argparse
import json
import sys

from ...audit import TEST_SEEDS, TOP, TRAIN_SEEDS
from ...tasks import MAX_TASKS, Tier, TooManySeeds, format_seeds, get_tier, parse_seeds
from .._argv import COUNT, Parser, UsageError, add_options
from ._common import command_group, contract_arg, families_arg, print_frame, tiers_arg


def _seeds(text: str) -> list[int]:
    """An argparse type: a seed list as --seeds takes it."""
    try:
        return parse_seeds(text)
    except (TooManySeeds, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_audit_shortcuts(args: argparse.Namespace) -> None:
    from ...audit import AuditError, AuditUnavailable, audit_shortcuts, ngram_table, summary_table

    specs = families_arg(args.family)
    contract = contract_arg(args, specs)
    for tier in tiers_arg(args):
        lacking = [s.id for s in specs if get_tier(tier).unsupported(s) is not None]
        if lacking and args.tier is not None:
            raise UsageError(
                f"--tier: no {tier} tier in {', '.join(lacking)}; "
                "choose another tier or other families"
            )
        for family in lacking:
            print(f"peb: {family} has no {tier} tier: left out", file=sys.stderr)
    shared = sorted(set(args.train_seeds) & set(args.test_seeds))
    if shared:
        raise UsageError(
            f"--test-seeds: {len(shared):,} of them are training seeds too (e.g. {shared[0]}); "
            f"held-out seeds must differ from --train-seeds ({format_seeds(args.train_seeds)})"
        )
    n_tasks = max(len(s.templates) for s in specs) * (len(args.train_seeds) + len(args.test_seeds))
    if n_tasks > MAX_TASKS:
        raise UsageError(
            f"--train-seeds and --test-seeds ask for up to {n_tasks:,} tasks a family, more than "
            f"{MAX_TASKS:,}; choose fewer seeds"
        )

    tty = sys.stderr.isatty()

    def progress(i: int, n: int, tier: Tier, family: str) -> None:
        line = f"peb: auditing {i}/{n}: {tier} {family}"
        print(f"\r{line}   " if tty else line, end="" if tty else "\n", file=sys.stderr, flush=True)

    try:
        audit = audit_shortcuts(
            specs,
            tiers_arg(args),
            args.train_seeds,
            args.test_seeds,
            top=args.top,
            progress=progress,
            contract=contract,
        )
    except (AuditError, AuditUnavailable) as exc:
        raise UsageError(str(exc)) from None
    finally:
        if tty:
            print(file=sys.stderr)
    summary = audit.summary
    if args.json:
        out = {"summary": summary.to_dicts(), "ngrams": audit.ngrams.to_dicts()}
        print(json.dumps(out, indent=2))
        return
    print_frame(summary_table(summary))
    print()
    print_frame(ngram_table(audit.ngrams))


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """`audit shortcuts`."""
    asub = command_group(sub, "audit", "audits of the benchmark itself")
    p = asub.add_parser(
        "shortcuts",
        help="what a text classifier learns of completeness from the model views, per family",
        description="Per tier and family: a linear classifier over word n-grams of the model "
        "views of training seeds, its completeness accuracy on held-out seeds beside the "
        "majority rate and the explicit-signal reader, the same on the tasks whose only signals "
        "are silent (any gain there is a leak), and the n-grams it weighs most. Needs the "
        "'audit' extra (scikit-learn).",
    )
    add_options(p, "cli", ("family", "tier", "contract"), defaults={"tier": "every tier"})
    p.set_defaults(every_tier=True)
    learns = "the seeds the classifier learns from, e.g. 11,23 or 400-439"
    scored = "the held-out seeds it is scored on, none of them a training seed"
    for flag, seeds, what in (("--train-seeds", TRAIN_SEEDS, learns),
                              ("--test-seeds", TEST_SEEDS, scored)):  # fmt: skip
        p.add_argument(
            flag,
            type=_seeds,
            default=list(seeds),
            metavar="LIST",
            help=f"{what} (default {format_seeds(seeds)}: {6 * len(seeds):,} tasks a family of "
            "six templates)",
        )
    p.add_argument(
        "--top",
        type=COUNT,
        default=TOP,
        metavar="N",
        help=f"n-grams listed per class (default {TOP})",
    )
    p.add_argument("--json", action="store_true", help="the summary and the n-grams as JSON")
    p.set_defaults(func=cmd_audit_shortcuts)
