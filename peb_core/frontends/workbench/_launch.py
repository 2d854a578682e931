"""What the Run button and the headless form ask for, checked as `peb run` checks it: every
option is the run declaration's (`runs.RunSpec`: the form's inputs and the headless flags are
derived from it, their values read by `runs.read_spec` and the whole checked by
`runs.plan_run`, as every front-end does), for each system asked for; started in the
background; and the headless form run to its end with `peb run`'s exit statuses."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..._markdown import markdown_code, markdown_text
from ...runs import (
    RunJob,
    RunPlan,
    RunSpec,
    RunSpecError,
    applies_to,
    check_spec,
    is_run_name,
    launch_folder,
    naming,
    options,
    plan_run,
    read_values,
    start_runs,
)
from ...systems import BASELINES, REGISTRY
from .._argv import Parser, UsageError, add_options, given, path_arg


def form_options() -> tuple[str, ...]:
    """The run options the form and the headless flags offer besides the systems (read from
    the declaration when asked)."""
    return tuple(name for name in options("workbench") if name != "system")


LABELS: dict[str, str] = {**naming("workbench"), "system": "Systems", "name": "Run name"}
"""How the Run button's form names each input in a message."""
HEADLESS_FLAGS: dict[str, str] = {**naming("cli"), "system": "--run", "name": "--name"}
"""How the headless form names each input: as `peb run` does."""
SYSTEMS = (
    *BASELINES,
    *(f"local/{name}" for name in REGISTRY),
    *(f"agent:local/{name}" for name in REGISTRY),
)
"""The systems the form lists to pick (any litellm model string may be typed too)."""


@dataclass(frozen=True)
class RunForm:
    """A run request as given: the systems, each run option's value as typed (text, a list for
    families, a bool for a switch; blank or None: not given, the declaration's default), and
    the run folder's name."""

    systems: Sequence[str]
    """Baselines (the agent baselines among them), `local/<name>` embedded models, litellm model
    strings, `agent:<model>` for either as a tool-calling agent; each entry may be
    comma-separated."""
    values: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""


@dataclass(frozen=True)
class Launch:
    """A checked run request: each system's run plan with the run folder it runs into."""

    plan: tuple[tuple[RunPlan, Path], ...]

    @property
    def spec(self) -> RunSpec:
        """The request's options (those of its first run; the others differ only by system
        and by options that do not apply to them)."""
        return self.plan[0][0].spec


class LaunchError(ValueError):
    """A run request refused: every problem found, one line each (the first is the message)."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__(problems[0])
        self.problems = tuple(problems)


def _for_system(base: RunSpec, system: str | None, others: Sequence[str]) -> RunSpec:
    """`base` for one of several systems asked for at once: an option that does not apply to
    `system` but does to another of them is left at its default for this one (a protocol
    picked for a model beside a baseline); one that applies to none is kept, and refused."""
    kept = {}
    for name in base.model_fields_set:
        value = getattr(base, name)
        alone = RunSpec.of(**{name: value, "system": system, "tier": base.tier})
        if not applies_to(name, alone, "workbench") and any(
            applies_to(name, RunSpec.of(**{name: value, "system": o, "tier": base.tier}))
            for o in others
        ):
            continue
        kept[name] = value
    return RunSpec.of(**{**kept, "system": system})


def run_form() -> Any:
    """The Run form's inputs (a marimo `ui.dictionary`), derived from the run declaration: the
    systems to pick, litellm model strings to type and the run's name, then one input per run
    option the form offers, in declared order, each with its label, its default and, for a
    choice, the registry's names. Its value goes to `form_request`."""
    import marimo as mo

    from ...runs import default
    from ...tasks import load_families

    elements: dict[str, Any] = {
        "systems": mo.ui.multiselect(
            options=list(SYSTEMS), value=["fail_and_report"], label=LABELS["system"]
        ),
        "models": mo.ui.text(placeholder="openai/gpt-4o-mini", label="litellm model strings"),
        "name": mo.ui.text(placeholder="automatic", label=LABELS["name"]),
    }
    for name in form_options():
        option, value = options()[name], default(name, "workbench")
        if option.kind == "choice" and option.choices is not None:
            elements[name] = mo.ui.dropdown(
                options=list(option.choices()), value=value, label=option.label
            )
        elif option.kind == "names":
            families = list(load_families())
            elements[name] = mo.ui.multiselect(
                options=families, value=list(value or families), label=option.label
            )
        elif option.kind == "switch":
            elements[name] = mo.ui.switch(value=bool(value), label=option.label)
        else:
            shown = option.placeholder or ("" if value is None else str(value))
            elements[name] = mo.ui.text(placeholder=shown, label=option.label)
    return mo.ui.dictionary(elements)


def form_request(values: Mapping[str, Any]) -> RunForm:
    """The run request of the Run form's value (`run_form`)."""
    options_given = {k: v for k, v in values.items() if k in form_options()}
    return RunForm(
        systems=[*values.get("systems", ()), values.get("models", "")],
        values=options_given,
        name=values.get("name", ""),
    )


def form_help() -> str:
    """What each input of the Run form does (Markdown), from the declaration."""
    lines = [f"**{options()[name].label}**: {options()[name].help}" for name in form_options()]
    return "  \n".join(lines)


def check_run(form: RunForm, root: Path, *, names: Mapping[str, str] = LABELS) -> Launch:
    """The run request checked and planned: each system's run folder below `root` (see
    `runs.launch_folder`). Nothing is written and no embedded model is started unless every
    other input is valid.

    Raises:
        LaunchError: every problem, each one line naming the input (as `names` calls it) and
            what is valid.
    """
    problems: list[str] = []
    systems = [s.strip() for entry in form.systems for s in entry.split(",") if s.strip()]
    if not systems:
        problems.append(
            f"{names['system']}: no system named; pick a baseline or an embedded model, "
            "or type a litellm model string"
        )
    name = form.name.strip()
    if name and not is_run_name(name):
        problems.append(
            f"{names['name']}: {name!r} cannot name a run folder; use letters, digits and "
            ". _ @ - (no spaces or slashes)"
        )
    fields, refused = read_values(form.values, names, frontend="workbench")
    problems += refused
    base = RunSpec.of(**fields)
    named: list[str | None] = [*systems] or [None]  # none named: the other inputs still checked
    specs = [_for_system(base, system, systems) for system in named]
    for spec in specs:
        found = check_spec(spec, names, frontend="workbench")
        problems += [p for p in found if p not in problems]
    if problems:
        raise LaunchError(problems)
    plans = []
    for spec in specs:
        try:
            plans.append(plan_run(spec, names, frontend="workbench"))
        except RunSpecError as exc:
            problems += [p for p in exc.problems if p not in problems]
    if problems:
        for plan in plans:
            plan.release()
        raise LaunchError(problems)
    return Launch(
        plan=tuple(
            (plan, root / launch_folder(plan, name, several=len(plans) > 1)) for plan in plans
        )
    )


def start_launch(launch: Launch) -> RunJob:
    """Start the launch's runs in the background (see `runs.start_runs`)."""
    return start_runs(launch.plan)


def launch_note(launch: Launch, job: RunJob, root: Path) -> str:
    """One line (Markdown) saying what was started where, and which earlier error records it
    retries (each name as text: a model string or run name makes no markup)."""
    retrying = [f"{n} of {markdown_text(d.name)}" for d, n in job.retrying.items() if n]
    started = ", ".join(
        markdown_code(plan.system.name if plan.system else "-") for plan, _ in launch.plan
    )
    repeats = launch.spec.repeats
    if repeats > 1:
        started += f" ({repeats} repeats of each task)"
    into = ", ".join(markdown_code(_shown(d, root)) for _, d in launch.plan)
    again = (
        f"; retrying the error records of an earlier attempt ({', '.join(retrying)})"
        if retrying
        else ""
    )
    return f"Started {started} into {into}{again}."


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root.parent)) if path.is_relative_to(root.parent) else str(path)


def headless_parser() -> argparse.ArgumentParser:
    """The headless form's arguments: `--run` (the systems), `--name`, `--out`, and every run
    option the form offers, as `peb run` takes it."""
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
    p.add_argument("--name", default="", help="the run folder's name")
    p.add_argument("--out", type=path_arg("folder"), metavar="DIR")
    add_options(p, "workbench", form_options())
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
        form = RunForm(systems=args.run, values=given(args, form_options()), name=args.name)
        launch = check_run(form, root, names=HEADLESS_FLAGS)
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
    names = {d: p.system.name if p.system else "-" for p, d in launch.plan}
    for run_dir, status, _ in job.ended:
        print(f"{names[run_dir]}: {status.summary()} -> {run_dir}", file=out)
    if job.failure:
        print(f"workbench: error: a run failed: {job.failure}", file=err)
    clean = len(job.ended) == len(launch.plan) and all(s.clean for _, s, _ in job.ended)
    return 0 if clean and not job.failure else 1
