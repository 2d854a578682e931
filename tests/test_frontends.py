"""The five ways in agree on every run option (the run declaration, `runs.RunSpec`): `peb run`,
the workbench's Run form and its headless flags, `peb mcp serve` and the inspect task's `-T`
options each take exactly the options the declaration gives it, with the same defaults, and
refuse the same bad values with the same line after the option's name. A toy option added to
the declaration alone reaches every one of them."""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import pytest
from annotated_types import Ge, Le

from peb_core.frontends import _argv
from peb_core.frontends.cli import build_parser
from peb_core.frontends.cli import main as peb_main
from peb_core.frontends.inspect import task as inspect_task
from peb_core.frontends.workbench import (
    LaunchError,
    RunForm,
    check_run,
    form_options,
    form_request,
    headless,
    headless_parser,
    run_form,
)
from peb_core.frontends.workbench._launch import LABELS
from peb_core.runs import (
    DECLARED,
    FRONTENDS,
    Frontend,
    Option,
    RunManifest,
    RunSpec,
    RunSpecError,
    bounds,
    default,
    flag,
    naming,
    options,
    plan_run,
    read_spec,
    register_frontend,
    register_option,
    run,
)
from peb_core.tasks import load_families

FAMILY = "due_diligence_v1"
OWN = {
    "cli": {"system", "model", "out", "help", "func", "command"},
    "workbench": {"run", "name", "out", "help"},
    "mcp": {"out", "transport", "port", "help", "func", "command", "mcp_command"},
}
"""What each command line takes besides run options."""


def _dests(parser: argparse.ArgumentParser) -> set[str]:
    return {a.dest for a in parser._actions} - {"help"}


def _subparser(*path: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


def test_each_front_end_takes_exactly_its_declared_options() -> None:
    declared = {frontend: set(options(frontend)) for frontend in FRONTENDS}
    assert _dests(_subparser("run")) - OWN["cli"] == declared["cli"] - {"system"}
    assert _dests(headless_parser()) - OWN["workbench"] == declared["workbench"] - {"system"}
    assert set(form_options()) == declared["workbench"] - {"system"}
    assert set(run_form().elements) - {"systems", "models", "name"} == set(form_options())
    assert _dests(_subparser("mcp", "serve")) - OWN["mcp"] == declared["mcp"]
    *keywords, rest = inspect_task.task_signature().parameters.values()
    assert {p.name for p in keywords} == declared["inspect"]
    assert rest.kind == rest.VAR_KEYWORD  # any other -T key reaches the declaration, refused
    # Each option is offered somewhere, and a run option has one declaration.
    assert set().union(*declared.values()) == set(RunSpec.model_fields)


def _spec_of(frontend: str, values: dict[str, Any]) -> RunSpec:
    return read_spec(values, naming(frontend), frontend=frontend)


def test_each_front_end_has_the_declared_defaults(tmp_path: Path) -> None:
    """Nothing given: each front-end's run is the declaration's defaults (its own where it
    declares one: `peb mcp serve` serves the agent tier with a careful delegate system)."""
    for frontend in FRONTENDS:
        spec = _spec_of(frontend, {})
        for name in options(frontend):
            assert getattr(spec, name) == default(name, frontend), (frontend, name)
    run = _argv.given(_subparser("run").parse_args(["--system", "oracle", "--out", "x"]), {})
    assert run == {}
    parsed = _subparser("run").parse_args(["--system", "oracle", "--out", "x"])
    assert all(getattr(parsed, n) is None for n in options("cli") if n != "system")
    parsed = _subparser("mcp", "serve").parse_args(["--out", "x"])
    assert all(getattr(parsed, n) is None for n in options("mcp"))
    parsed = headless_parser().parse_args(["--run", "oracle"])
    assert all(getattr(parsed, n) is None for n in form_options())
    for name, parameter in inspect_task.task_signature().parameters.items():
        if parameter.kind == parameter.KEYWORD_ONLY:
            assert parameter.default == default(name, "inspect")
    # The form's inputs start at the defaults: its request is a run of the defaults (every
    # family picked is every family).
    request = form_request(run_form().value)
    form_spec = _spec_of("workbench", dict(request.values))
    for name in form_options():
        expected = default(name, "workbench")
        if name == "family":
            expected = tuple(load_families())
        assert getattr(form_spec, name) == expected, name


BAD = {
    "count": ["x", "1.5", "9223372036854775808"],
    "number": ["nan", "inf", "x"],
    "choice": ["nosuch"],
    "seeds": ["x", "-5", "1-0"],
    "url": ["ftp://x", "http://127.0.0.1:0/v1"],
}
"""Bad values of each kind of option; a number's are also those just past its bounds."""


def _bad(name: str, kind: str) -> list[str]:
    low, high = bounds(name)
    past = [] if kind not in ("count", "number") else [str(low - 1), str(high + 1)]  # type: ignore[operator]
    return [*BAD.get(kind, []), *past]


@contextlib.contextmanager
def _quiet() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err


def _refusals(tmp_path: Path) -> dict[str, Callable[[str, str], str]]:
    """For each front-end, the one line it refuses option `name` = `value` with, its option's
    name and what comes before it cut (`peb: error: argument --x: `, `Max steps: `, ...)."""

    def cli(name: str, value: str) -> str:
        with _quiet() as (_, err):
            argv = ["run", "--system", "agent_silent", "--out", str(tmp_path / "r")]
            code = peb_main([*argv, flag(name), value])
        assert code == 2, (name, value, err.getvalue())
        return _after(err.getvalue(), f"argument {flag(name)}: ")

    def workbench_form(name: str, value: str) -> str:
        with pytest.raises(LaunchError) as refused:
            check_run(RunForm(["agent_silent"], {name: value}), tmp_path / "w")
        [line] = [p for p in refused.value.problems if p.startswith(naming("workbench")[name])]
        return _after(line, f"{naming('workbench')[name]}: ")

    def workbench_headless(name: str, value: str) -> str:
        out, err = io.StringIO(), io.StringIO()
        argv = ["--run", "agent_silent", flag(name), value, "--out", str(tmp_path / "h")]
        assert headless(argv, tmp_path, out=out, err=err) == 2
        return _after(err.getvalue(), f"argument {flag(name)}: ")

    def mcp(name: str, value: str) -> str:
        with _quiet() as (_, err):
            argv = ["mcp", "serve", "--family", FAMILY, "--out", str(tmp_path / "m")]
            code = peb_main([*argv, flag(name), value])
        assert code == 2
        return _after(err.getvalue(), f"argument {flag(name)}: ")

    def inspect(name: str, value: str) -> str:
        with pytest.raises(ValueError) as refused:
            inspect_task.partial_evidence(**{name: value})
        return _after(str(refused.value), f"{name}: ")

    return {
        "cli": cli,
        "workbench": workbench_form,
        "headless": workbench_headless,
        "mcp": mcp,
        "inspect": inspect,
    }


def _after(text: str, prefix: str) -> str:
    [line] = text.strip().splitlines()
    assert prefix in line, (prefix, line)
    return line[line.index(prefix) + len(prefix) :]


def test_each_front_end_refuses_a_bad_value_with_the_same_line(tmp_path: Path) -> None:
    ways = _refusals(tmp_path)
    offered: dict[str, set[str]] = {f: set(options(f)) for f in FRONTENDS}
    offered["headless"] = set(form_options())
    checked = 0
    for name, option in options().items():
        for value in _bad(name, option.kind):
            lines = {
                way: refuse(name, value)
                for way, refuse in ways.items()
                if name in offered[way] and name != "system"
            }
            assert len(set(lines.values())) == 1, (name, value, lines)
            checked += len(lines)
    assert checked > 100


def test_an_option_that_does_not_apply_is_refused_alike(tmp_path: Path) -> None:
    """A corpus size on the paper tier: each front-end says so in one line, naming its options
    its own way and otherwise in the same words."""
    lines = {
        "cli": io.StringIO(),
        "mcp": io.StringIO(),
    }
    with contextlib.redirect_stderr(lines["cli"]):
        peb_main(["run", "--system", "oracle", "--corpus-size", "40", "--out", str(tmp_path)])
    with pytest.raises(LaunchError) as form:
        check_run(RunForm(["oracle"], {"corpus_size": "40"}), tmp_path)
    with pytest.raises(ValueError) as inspect:
        inspect_task.partial_evidence(corpus_size=40)
    said = {
        "cli": lines["cli"].getvalue().strip().removeprefix("peb: error: "),
        "workbench": form.value.problems[0],
        "inspect": str(inspect.value),
    }
    for frontend, line in said.items():
        names = naming(frontend)
        assert line == (
            f"{names['corpus_size']}: the paper tier has no corpus; choose {names['tier']} "
            "agent or delegation or grants"
        ), frontend


ToyBudget = Annotated[int, Ge(1), Le(9), Option("count", "Toy budget", "a toy option")]


@pytest.fixture
def toy_option() -> Iterator[str]:
    """A run option declared once from outside the package (`register_option`: a field of the
    declaration with its `Option`): every front-end's derivation reads the declaration when it
    builds its inputs."""
    register_option("toy_budget", ToyBudget, 3)
    try:
        yield "toy_budget"
    finally:
        DECLARED.unregister("toy_budget")


def test_a_toy_option_declared_once_reaches_every_front_end(
    toy_option: str, tmp_path: Path
) -> None:
    assert toy_option in options()
    for frontend in FRONTENDS:
        assert toy_option in options(frontend) and default(toy_option, frontend) == 3
    parser = argparse.ArgumentParser()
    _argv.add_options(parser, "cli")
    assert parser.parse_args(["--toy-budget", "5"]).toy_budget == 5
    parser.exit_on_error = False
    with pytest.raises(argparse.ArgumentError, match="expected an integer from 1 to 9"):
        parser.parse_args(["--toy-budget", "10"])
    assert toy_option in inspect_task.task_signature().parameters
    assert toy_option in run_form().elements
    assert _spec_of("inspect", {toy_option: 4}).toy_budget == 4  # type: ignore[attr-defined]
    # The task (loaded before the option was declared) takes it, and its eval records it.
    made = inspect_task.partial_evidence(family=FAMILY, seeds="11", **{toy_option: 4})
    assert made.metadata is not None and made.metadata[toy_option] == 4


def test_the_contract_source_is_refused_alike_where_it_does_not_apply(tmp_path: Path) -> None:
    """`--contract corpus` on a tier without corpora (an agent there has no corpus to find it
    in), and for a baseline without tools: one line each, the same words at every front-end
    that offers the option, naming it and the tier the way that front-end does."""
    for system, tier, why in (
        ("agent_fail_and_report", None, "the paper tier has no corpus; choose {tier} agent or "
         "delegation or grants"),
        ("oracle", "agent", "oracle reads no agent view ({contract} applies to agent systems: "
         "the agent_* baselines or agent:<model>)"),
    ):  # fmt: skip
        chosen = {} if tier is None else {"tier": tier}
        lines: dict[str, str] = {}
        with _quiet() as (_, err):
            argv = ["run", "--system", system, "--contract", "corpus", "--out", str(tmp_path)]
            assert peb_main([*argv, *(["--tier", tier] if tier else [])]) == 2
        lines["cli"] = err.getvalue().strip().removeprefix("peb: error: ")
        with pytest.raises(LaunchError) as form:
            check_run(RunForm([system], {"contract": "corpus", **chosen}), tmp_path)
        [lines["workbench"]] = form.value.problems
        out, err = io.StringIO(), io.StringIO()
        argv = ["--run", system, "--contract", "corpus", *(["--tier", tier] if tier else [])]
        assert headless([*argv, "--out", str(tmp_path / "h")], tmp_path, out=out, err=err) == 2
        lines["headless"] = err.getvalue().strip().removeprefix("peb-workbench: error: ")
        if tier is None:  # the front-ends whose own agent answers: on a tier without corpora
            with pytest.raises(ValueError) as inspect:
                inspect_task.partial_evidence(contract="corpus", family=FAMILY)
            lines["inspect"] = str(inspect.value)
        for way, line in lines.items():
            names = naming("cli" if way == "headless" else way)
            expected = f"{names['contract']}: " + why.format(
                tier=names["tier"], contract=names["contract"]
            )
            assert line.endswith(expected) and "\n" not in line, (way, line)
    # peb mcp serve serves agents on tiers with corpora only (its tier is refused on another):
    # there the contract source is taken, and so is it by inspect's agents.
    for frontend in ("mcp", "inspect"):
        values = {"family": FAMILY, "tier": "agent", "contract": "corpus"}
        spec = read_spec(values, naming(frontend), frontend=frontend)
        assert plan_run(spec, naming(frontend), frontend=frontend).contract == "corpus"


def _from_environment(env: Mapping[str, str], out: Path) -> RunManifest:
    """A toy front-end's whole adapter: run options from environment variables (`PEB_SEEDS`,
    `PEB_MAX_STEPS`, ...), the system from `PEB_SYSTEM`, checked and run as every front-end's
    are."""
    names = naming("environment")
    values = {name: env.get(names[name]) for name in options("environment")}
    spec = read_spec(values, names, frontend="environment", system=env["PEB_SYSTEM"])
    return run(plan_run(spec, names, frontend="environment"), out)


@pytest.fixture
def environment_frontend() -> Iterator[str]:
    """A toy front-end registered from outside the package with one line: it offers what `peb
    run` offers and names an option as an environment variable."""
    register_frontend(
        Frontend(
            "environment",
            "run options from PEB_* environment variables",
            offers=lambda name, option: "cli" in (option.frontends or {"cli"}),
            calls=lambda name, option: f"PEB_{name.upper()}",
        )
    )
    yield "environment"
    FRONTENDS.unregister("environment")


def test_a_toy_front_end_registered_once_takes_the_declared_options(
    environment_frontend: str, tmp_path: Path
) -> None:
    assert set(options(environment_frontend)) == set(options("cli"))
    env = {"PEB_SYSTEM": "agent_fail_and_report", "PEB_FAMILY": FAMILY, "PEB_SEEDS": "11"}
    manifest = _from_environment({**env, "PEB_TIER": "agent"}, tmp_path / "run")
    assert (manifest.tier, manifest.kind, manifest.counts.ok) == ("agent", "episodes", 6)
    assert manifest.config["disclosure"] == "silent"  # the declaration's default
    # A bad value, and an option that does not apply, are refused in the declaration's words.
    with pytest.raises(RunSpecError) as refused:
        _from_environment({**env, "PEB_REPEATS": "0"}, tmp_path / "never")
    assert refused.value.problems == ("PEB_REPEATS: expected an integer from 1 to 100, got '0'",)
    with pytest.raises(RunSpecError) as refused:
        _from_environment({**env, "PEB_CORPUS_SIZE": "40"}, tmp_path / "never")
    assert refused.value.problems == (
        "PEB_CORPUS_SIZE: the paper tier has no corpus; choose PEB_TIER agent or delegation or "
        "grants",
    )
    assert not (tmp_path / "never").exists()


def test_a_family_without_owners_is_refused_where_a_next_step_needs_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under structured_gap@2 (a model's, or an escalating baseline's own), a family whose file
    names no scope owners is refused in one line, exit 2, by every front-end that can run it,
    naming the option as each does; the same family loads, and runs under structured_gap@1."""
    import shutil

    folder = tmp_path / "scenarios"
    shutil.copytree(Path(__file__).resolve().parents[1] / "scenarios", folder)
    path = folder / f"{FAMILY}.toml"
    text = path.read_text(encoding="utf-8")
    start, end = text.index("# Who owns each scope"), text.index("[answer.recommendation]")
    path.write_text(text[:start] + text[end:], encoding="utf-8")
    monkeypatch.setenv("PEB_SCENARIOS_DIR", str(folder))
    monkeypatch.setenv("PEB_CACHE_DIR", str(tmp_path / "cache"))
    assert load_families()[FAMILY].owners is None
    why = (
        f"{FAMILY} names no scope owners (an [owners] section), which structured_gap@2's next "
        "step and escalate tool need; choose families that have one"
    )
    lines: dict[str, str] = {}
    for system, option, extra in (
        ("agent_escalate", "system", ["--tier", "agent"]),
        ("openai/some-model", "protocol", ["--protocol", "structured_gap@2"]),
    ):
        with _quiet() as (_, err):
            chosen = ["--system" if option == "system" else "--model", system]
            argv = ["run", *chosen, "--family", FAMILY, *extra]
            assert peb_main([*argv, "--out", str(tmp_path / "r")]) == 2
        lines[f"cli {option}"] = err.getvalue().strip().removeprefix("peb: error: ")
        values = {"family": FAMILY, **dict(zip(extra[::2], extra[1::2], strict=True))}
        form_values = {k.removeprefix("--"): v for k, v in values.items()}
        with pytest.raises(LaunchError) as form:
            check_run(RunForm([system], form_values), tmp_path)
        [lines[f"workbench {option}"]] = form.value.problems
        out, err = io.StringIO(), io.StringIO()
        argv = ["--run", system, "--family", FAMILY, *extra, "--out", str(tmp_path / "h")]
        assert headless(argv, tmp_path, out=out, err=err) == 2
        lines[f"headless {option}"] = err.getvalue().strip().split("error: ", 1)[-1]
    with pytest.raises(ValueError) as inspect:
        inspect_task.partial_evidence(protocol="structured_gap@2", family=FAMILY)
    lines["inspect protocol"] = str(inspect.value)
    with _quiet() as (_, err):
        argv = ["mcp", "serve", "--family", FAMILY, "--protocol", "structured_gap@2"]
        assert peb_main([*argv, "--out", str(tmp_path / "m")]) == 2
    lines["mcp protocol"] = err.getvalue().strip().removeprefix("peb: error: ")
    for way, line in lines.items():
        frontend, option = way.split()
        names = naming("cli" if frontend == "headless" else frontend)
        if frontend == "workbench":
            names = LABELS  # the form picks several systems
        if frontend == "headless":
            names = {**names, "system": "--run"}
        assert line == f"{names[option]}: {why}", (way, line)
    # under structured_gap@1 the same family runs
    with _quiet():
        argv = ["run", "--system", "fail_and_report", "--family", FAMILY, "--seeds", "11"]
        assert peb_main([*argv, "--out", str(tmp_path / "ok")]) == 0
