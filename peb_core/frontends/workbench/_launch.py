"""What the Run button and the headless form ask for, checked as `peb run` checks it (the task
selection by `tasks.select_tasks`, the cap included; a corpus size by `tasks.check_corpus_size`;
a limit, a step budget, repeats and a URL by the CLI's own argument types; an agent's budgets by
`systems.budget_problem`; systems and disclosure modes by `systems.build_system`), started in
the background; and the headless form run to its end with `peb run`'s exit statuses."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ...access import DEFAULT_DISCLOSURE, DISCLOSURES
from ...runs import RunJob, is_run_name, launch_folder, start_runs
from ...systems import (
    DEFAULT_MAX_STEPS,
    DEFAULT_PROTOCOL,
    PROTOCOLS,
    System,
    SystemSpecError,
    budget_problem,
    build_system,
)
from ...tasks import (
    DEFAULT_TIER,
    FLAGS,
    MAX_TASKS,
    TIERS,
    Selection,
    SelectionError,
    check_corpus_size,
    select_tasks,
)
from ..cli import COUNT, REPEATS, URL, Parser, UsageError, path_arg

LABELS: Mapping[str, str | None] = {
    "family": "Families",
    "seeds": "Seeds",
    "tier": "Tier",
    "distractors": "Distractors",
    "max_tasks": None,  # the form has no cap to raise: it is the CLI's default
    "systems": "Systems",
    "protocol": "Protocol",
    "api_base": "API base",
    "name": "Run name",
    "limit": "Task limit",
    "disclosure": "Disclosure",
    "max_steps": "Max steps",
    "corpus_size": "Corpus size",
    "repeats": "Repeats",
}
"""How the Run button's form names each input in a message."""

HEADLESS_FLAGS: Mapping[str, str | None] = {
    **FLAGS,
    "systems": "--run",
    "protocol": "--protocol",
    "api_base": "--api-base",
    "name": "--name",
    "limit": "--limit",
    "disclosure": "--disclosure",
    "max_steps": "--max-steps",
    "corpus_size": "--corpus-size",
    "repeats": "--repeats",
}
"""How the headless form names each input: as `peb run` does."""


@dataclass(frozen=True)
class RunForm:
    """A run request as given, each value as typed (blank text: not given)."""

    systems: Sequence[str]
    """Baselines (the agent baselines among them), `local/<name>` embedded models, litellm model
    strings, `agent:<model>` for either as a tool-calling agent."""
    families: Sequence[str] | None
    """None: every family."""
    seeds: str = ""
    tier: str = DEFAULT_TIER
    protocol: str = DEFAULT_PROTOCOL
    api_base: str = ""
    name: str = ""
    limit: str = ""
    max_tasks: int = MAX_TASKS
    disclosure: str = DEFAULT_DISCLOSURE
    """What the access layer tells an agent system of what it withheld (`access.DISCLOSURES`)."""
    max_steps: str = ""
    """An agent model's model requests per episode (blank: `systems.DEFAULT_MAX_STEPS`)."""
    corpus_size: str = ""
    """Documents per task on a tier with corpora (blank: the tier's default)."""
    repeats: str = ""
    """How many times each task is answered, 1 to `systems.MAX_REPEATS` (blank: once)."""
    no_cache: bool = False
    """Model systems neither read nor write the reply cache (`peb run --no-cache`)."""


@dataclass(frozen=True)
class Launch:
    """A checked run request: each system with the run folder it runs into."""

    plan: tuple[tuple[System, Path], ...]
    selection: Selection
    limit: int | None
    corpus_size: int | None = None
    repeats: int = 1


class LaunchError(ValueError):
    """A run request refused: every problem found, one line each (the first is the message)."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__(problems[0])
        self.problems = tuple(problems)


def _checked(kind: Callable[[str], Any], text: str, name: str | None) -> tuple[Any, str | None]:
    """`kind(text)` (a CLI argument type) and None, or None and the problem as one line."""
    try:
        return kind(text), None
    except argparse.ArgumentTypeError as exc:
        return None, f"{name}: {exc}"


def check_run(form: RunForm, root: Path, *, names: Mapping[str, str | None] = LABELS) -> Launch:
    """The run request checked and planned: each system's run folder below `root` (see
    `runs.launch_folder`). Nothing is written and no embedded model is started unless every
    other input is valid.

    Raises:
        LaunchError: every problem, each one line naming the input (as `names` calls it) and
            what is valid.
    """
    problems = []
    systems = [s.strip() for entry in form.systems for s in entry.split(",") if s.strip()]
    if not systems:
        problems.append(
            f"{names['systems']}: no system named; pick a baseline or an embedded model, "
            "or type a litellm model string"
        )
    limit = None
    if form.limit.strip():
        limit, problem = _checked(COUNT, form.limit.strip(), names["limit"])
        problems += [problem] if problem else []
    selection = None
    try:
        selection = select_tasks(
            form.families,
            form.seeds if form.seeds.strip() else None,
            (form.tier,),
            max_tasks=form.max_tasks,
            limit=limit,
            flags=names,
        )
    except SelectionError as exc:
        problems.append(str(exc))
    corpus_size = None
    if form.corpus_size.strip():
        corpus_size, problem = _checked(COUNT, form.corpus_size.strip(), names["corpus_size"])
        if corpus_size is not None and form.tier in TIERS:
            try:
                check_corpus_size(form.tier, corpus_size)
            except ValueError as exc:
                problem = f"{names['corpus_size']}: {exc}"
        problems += [problem] if problem else []
    repeats = 1
    if form.repeats.strip():
        repeats, problem = _checked(REPEATS, form.repeats.strip(), names["repeats"])
        problems += [problem] if problem else []
    max_steps = None
    if form.max_steps.strip():
        max_steps, problem = _checked(COUNT, form.max_steps.strip(), names["max_steps"])
        problem = problem or budget_problem(systems, [names["max_steps"] or "max_steps"])
        problems += [problem] if problem else []
    if form.disclosure not in DISCLOSURES:
        problems.append(
            f"{names['disclosure']}: unknown disclosure mode {form.disclosure!r}; valid: "
            + ", ".join(DISCLOSURES)
        )
    if form.protocol not in PROTOCOLS:
        problems.append(
            f"{names['protocol']}: unknown protocol {form.protocol!r}; valid: "
            + ", ".join(PROTOCOLS)
        )
    api_base = form.api_base.strip() or None
    if api_base is not None:
        _, problem = _checked(URL, api_base, names["api_base"])
        problems += [problem] if problem else []
    name = form.name.strip()
    if name and not is_run_name(name):
        problems.append(
            f"{names['name']}: {name!r} cannot name a run folder; use letters, digits and "
            ". _ @ - (no spaces or slashes)"
        )
    if problems or selection is None:
        raise LaunchError(problems)
    specs = list(selection.families)
    try:
        built = [
            build_system(
                s,
                specs,
                protocol=form.protocol,
                api_base=api_base,
                disclosure=form.disclosure,
                max_steps=max_steps or DEFAULT_MAX_STEPS,
                use_cache=not form.no_cache,
            )
            for s in systems
        ]
    except SystemSpecError as exc:
        raise LaunchError([str(exc)]) from None
    seeds = list(selection.seeds) if selection.seeds is not None else None
    plan = tuple(
        (
            system,
            root
            / launch_folder(
                system,
                specs,
                seeds,
                form.tier,
                name,
                several=len(built) > 1,
                corpus_size=corpus_size,
                repeats=repeats,
            ),
        )
        for system in built
    )
    return Launch(
        plan=plan, selection=selection, limit=limit, corpus_size=corpus_size, repeats=repeats
    )


def start_launch(launch: Launch) -> RunJob:
    """Start the launch's runs in the background (see `runs.start_runs`)."""
    selection = launch.selection
    return start_runs(
        launch.plan,
        selection.families,
        seeds=selection.seeds,
        tier=selection.tiers[0],
        limit=launch.limit,
        corpus_size=launch.corpus_size,
        repeats=launch.repeats,
    )


def launch_note(launch: Launch, job: RunJob, root: Path) -> str:
    """One line (Markdown) saying what was started where, and which earlier error records it
    retries."""
    retrying = [f"{n} of {d.name}" for d, n in job.retrying.items() if n]
    started = ", ".join(f"`{s.name}`" for s, _ in launch.plan)
    if launch.repeats > 1:
        started += f" ({launch.repeats} repeats of each task)"
    into = ", ".join(f"`{_shown(d, root)}`" for _, d in launch.plan)
    again = (
        f"; retrying the error records of an earlier attempt ({', '.join(retrying)})"
        if retrying
        else ""
    )
    return f"Started {started} into {into}{again}."


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root.parent)) if path.is_relative_to(root.parent) else str(path)


def headless_parser() -> argparse.ArgumentParser:
    """The headless form's arguments, `peb run`'s where they mean the same."""
    p = Parser(
        prog="notebooks/workbench.py --",
        description="Run systems as the workbench's Run button does, into DIR (default: the "
        "runs root), each into its own run folder; resumed and its error records retried when "
        "asked for again.",
    )
    p.add_argument(
        "--run",
        required=True,
        action="append",
        metavar="SYSTEMS",
        help="baselines, local/<name>, litellm model strings or agent:<model>; repeat or "
        "comma-separate",
    )
    p.add_argument("--family", action="append", metavar="F", help="default: all")
    p.add_argument("--seeds", metavar="LIST", help="e.g. 11,23 or 400-439 (default: canonical)")
    p.add_argument("--tier", default=DEFAULT_TIER)
    p.add_argument("--protocol", default=DEFAULT_PROTOCOL, help="prompt protocol (models)")
    p.add_argument("--api-base", default="", metavar="URL", help="an OpenAI-compatible server")
    p.add_argument("--name", default="", help="the run folder's name")
    p.add_argument("--limit", default="", metavar="N", help="only the first N tasks")
    p.add_argument("--max-tasks", type=COUNT, default=MAX_TASKS, metavar="N")
    p.add_argument(
        "--disclosure",
        default=DEFAULT_DISCLOSURE,
        help="what the access layer tells an agent of what it withheld (agent systems): "
        + ", ".join(DISCLOSURES)
        + f" (default: {DEFAULT_DISCLOSURE})",
    )
    p.add_argument(
        "--max-steps",
        default="",
        metavar="N",
        help=f"an agent model's requests per episode (default: {DEFAULT_MAX_STEPS})",
    )
    p.add_argument(
        "--corpus-size", default="", metavar="N", help="documents per task on a tier with corpora"
    )
    p.add_argument(
        "--repeats", default="", metavar="K", help="answer each task K times (default: 1)"
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the reply cache for these runs (model systems)",
    )
    p.add_argument("--out", type=path_arg("folder"), metavar="DIR")
    return p


def headless(
    argv: Sequence[str], root: Path, *, out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    """The headless form: check `argv` as `peb run` would, run every system to its end, and
    say how each ended. Its exit status: 0, 1 (a run ended with errors, missing tasks or
    stopped, or failed), 2 (bad input: one line on `err`, nothing written), 130 (interrupted:
    each run keeps what it recorded)."""
    try:
        args = headless_parser().parse_args(argv)
        root = Path(args.out) if args.out else root
        launch = check_run(
            RunForm(
                systems=args.run,
                families=args.family,
                seeds=args.seeds or "",
                tier=args.tier,
                protocol=args.protocol,
                api_base=args.api_base,
                name=args.name,
                limit=args.limit,
                max_tasks=args.max_tasks,
                disclosure=args.disclosure,
                max_steps=args.max_steps,
                corpus_size=args.corpus_size,
                repeats=args.repeats,
                no_cache=args.no_cache,
            ),
            root,
            names=HEADLESS_FLAGS,
        )
    except (UsageError, LaunchError) as exc:
        print(f"workbench: error: {exc}", file=err)
        return 2
    job = start_launch(launch)
    try:
        job.wait()
    except KeyboardInterrupt:
        job.stop()
        job.wait()
        print("workbench: interrupted (each run keeps what it recorded)", file=err)
        return 130
    names = {d: s.name for s, d in launch.plan}
    for run_dir, status, _ in job.ended:
        print(f"{names[run_dir]}: {status.summary()} -> {run_dir}", file=out)
    if job.failure:
        print(f"workbench: error: a run failed: {job.failure}", file=err)
    clean = len(job.ended) == len(launch.plan) and all(s.clean for _, s, _ in job.ended)
    return 0 if clean and not job.failure else 1
