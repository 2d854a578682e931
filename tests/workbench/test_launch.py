"""The Run button and the headless form check a run request as `peb run` does: every bad input
is one line naming it and what is valid, the CLI's task cap applies, nothing is written or
started unless everything is valid; and the headless form exits as `peb run` does (2: bad
input, 1: a run with errors, 0: clean). Model runs against a scripted server over real HTTP."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from scripted_server import ScriptedServer, Step, agent_route

from peb_core.frontends.workbench import (
    HEADLESS_FLAGS,
    LaunchError,
    RunForm,
    check_run,
    headless,
    launch_note,
    markdown_code,
    start_launch,
)
from peb_core.runs import RESPONSES, read_manifest, read_records, run_folder_name
from peb_core.systems import DEFAULT_MAX_STEPS, ModelSystem
from peb_core.tasks import MAX_TASKS, generate_task, load_families

ONE = ["due_diligence_v1"]
AGENT = ["agent_fail_and_report"]


def _problems(form: RunForm, root: Path) -> tuple[str, ...]:
    with pytest.raises(LaunchError) as refused:
        check_run(form, root)
    assert not root.exists() or not any(root.iterdir()), "a refused request wrote something"
    return refused.value.problems


@pytest.mark.parametrize(
    ("form", "problem"),
    [
        (RunForm([], {"family": ONE}), "Systems: no system named"),
        (RunForm([" , "], {"family": ONE}), "Systems: no system named"),
        (RunForm(["oracle"], {"family": []}), "Families: no family named; valid: "),
        (RunForm(["oracle"], {"family": ["nosuch"]}), "unknown family 'nosuch'; valid: "),
        (RunForm(["oracle"], {"family": ONE, "seeds": "x"}), "Seeds: 'x' is not an integer"),
        (RunForm(["oracle"], {"family": ONE, "seeds": "-5"}), "Seeds: '-5': seeds are"),
        (RunForm(["oracle"], {"family": ONE, "limit": "0"}), "Task limit: expected an integer"),
        (RunForm(["oracle"], {"family": ONE, "limit": "²"}), "Task limit: expected"),
        (RunForm(["oracle"], {"family": ONE, "tier": "medium"}), "Tier: unknown tier 'medium'"),
        (RunForm(["oracle"], {"family": ONE, "protocol": "x"}), "Protocol: unknown protocol"),
        (RunForm(["oracle"], {"family": ONE}, name="a b"), "Run name: 'a b' cannot name"),
        (RunForm(["oracle"], {"family": ONE}, name=".."), "Run name: '..' cannot name"),
        (RunForm(["oracle"], {"family": ONE, "api_base": "ftp://x"}), "API base: expected"),
        (RunForm(["a model"], {"family": ONE}), "Systems: system 'a model' is neither a"),
        (RunForm(AGENT, {"family": ONE, "disclosure": "loud"}), "Disclosure: unknown disclosure"),
        (RunForm(AGENT, {"family": ONE, "max_steps": "0"}), "Max steps: expected an integer"),
        (
            RunForm(["oracle", "openai/x"], {"family": ONE, "max_steps": "3"}),
            "Max steps applies to agent models only",
        ),
        (
            RunForm(["fail_and_report"], {"family": ONE, "disclosure": "named"}),
            "Disclosure: fail_and_report reads no agent view",
        ),
        (
            RunForm(AGENT, {"family": ONE, "corpus_size": "40"}),
            "Corpus size: the paper tier has no corpus; choose Tier agent or delegation or grants",
        ),
        (
            RunForm(AGENT, {"family": ONE, "tier": "agent", "corpus_size": "501"}),
            "Corpus size: corpus size 501: the agent tier takes an integer from 20 to 500",
        ),
        (
            RunForm(AGENT, {"family": ONE, "tier": "agent", "corpus_size": "many"}),
            "Corpus size: expected an integer from 1 to 100,000, got 'many'",
        ),
        (
            RunForm(["oracle"], {"family": ONE, "repeats": "0"}),
            "Repeats: expected an integer from 1 to 100, got '0'",
        ),
        (
            RunForm(["oracle"], {"family": ONE, "repeats": "101"}),
            "Repeats: expected an integer from 1 to 100, got '101'",
        ),
        (
            RunForm(["oracle"], {"family": ONE, "repeats": "twice"}),
            "Repeats: expected an integer from 1 to 100, got 'twice'",
        ),
    ],
)
def test_each_bad_input_is_refused_with_one_line(
    form: RunForm, problem: str, tmp_path: Path
) -> None:
    problems = _problems(form, tmp_path / "runs")
    assert any(p.startswith(problem) for p in problems), problems
    assert all("\n" not in p for p in problems)


def test_every_problem_is_listed_at_once(tmp_path: Path) -> None:
    form = RunForm(
        systems=[], values={"family": [], "limit": "0", "protocol": "nosuch"}, name="a/b"
    )
    assert len(_problems(form, tmp_path)) == 5


def test_the_cli_task_cap_applies(tmp_path: Path) -> None:
    """Seeds 0-99999 over every family is millions of tasks: refused at the CLI's cap, naming
    it; a limit that keeps the run under the cap is let through, as `peb run --limit` is."""
    n_tasks = 100_000 * sum(len(f.templates) for f in load_families().values())
    huge = RunForm(["oracle"], {"family": None, "seeds": "0-99999"})
    (problem,) = _problems(huge, tmp_path / "runs")
    assert problem == (
        f"{n_tasks:,} tasks asked for, more than Task cap ({MAX_TASKS:,}); choose fewer seeds, "
        "families or repeats, or raise Task cap"
    )
    smaller = RunForm(["oracle"], {"family": ONE, "seeds": "0-500", "max_tasks": 1000})
    assert "more than Task cap (1,000)" in _problems(smaller, tmp_path / "runs")[0]
    limited = check_run(
        RunForm(["oracle"], {"family": None, "seeds": "0-99999", "limit": "5"}), tmp_path
    )
    ((plan, _),) = limited.plan
    assert plan.spec.limit == 5 and plan.selection.n_tasks == n_tasks
    repeated = RunForm(["oracle"], {"family": ONE, "seeds": "0-1999", "repeats": "10"})
    assert "12,000 tasks x 10 repeats (120,000 replies) asked for, more than Task cap" in (
        _problems(repeated, tmp_path / "runs")[0]
    )


def test_a_model_string_is_run_as_a_model_beside_a_baseline(tmp_path: Path) -> None:
    form = RunForm(
        systems=["fail_and_report", "openai/x, openai/y"],
        values={"family": ONE, "api_base": "http://127.0.0.1:9/v1", "protocol": "plain@1"},
        name="pair",
    )
    launch = check_run(form, tmp_path)
    names = [p.system.name for p, _ in launch.plan if p.system]
    assert names == ["fail_and_report", "openai/x:plain@1", "openai/y:plain@1"]
    assert all(isinstance(p.system, ModelSystem) for p, _ in launch.plan[1:])
    # The protocol and API base picked for the models are not held against the baseline.
    assert launch.plan[0][0].spec.model_fields_set == {"family", "system"}
    assert {d.parent for _, d in launch.plan} == {tmp_path / "pair"}  # several: name/<folder>
    assert not tmp_path.joinpath("pair").exists()


def test_a_started_launch_runs_into_its_folder_and_says_so(tmp_path: Path) -> None:
    root = tmp_path / "runs" / "scratch"
    launch = check_run(RunForm(["oracle"], {"family": ONE, "seeds": "11"}, name="o"), root)
    job = start_launch(launch)
    job.wait(120)
    assert launch_note(launch, job, root) == (
        f"Started {markdown_code('oracle')} into {markdown_code('scratch/o')}."
    )
    (ended,) = job.ended
    assert ended.run_dir == root / "o" and ended.status.clean
    assert read_manifest(root / "o").seeds == [11]


def test_an_agent_launch_carries_its_disclosure_budget_and_corpus_size(tmp_path: Path) -> None:
    """An agent baseline and an agent model launched together on the agent tier: each built with
    the form's disclosure mode (and the model with its step budget), each folder named as
    `peb run` names a run of that corpus size; the baseline's run is made at that size."""
    values = {"family": ONE, "seeds": "11", "tier": "agent", "disclosure": "named"}
    values |= {"max_steps": "5", "corpus_size": "40", "api_base": "http://127.0.0.1:9/v1"}
    form = RunForm(["agent_fail_and_report", "agent:openai/x"], values)
    root = tmp_path / "runs"
    launch = check_run(form, root)
    specs = [load_families()[ONE[0]]]
    baseline, model = (p.system for p, _ in launch.plan)
    assert baseline is not None and model is not None
    assert baseline.config() == {"disclosure": "named"}
    assert model.config()["disclosure"] == "named" and model.config()["max_steps"] == 5
    for plan, run_dir in launch.plan:
        assert plan.system is not None and plan.corpus_size == 40
        assert run_dir == root / run_folder_name(plan.system, specs, [11], "agent", 40)
    unbudgeted = check_run(RunForm(["agent:openai/x"], {"family": ONE}), root).plan[0][0]
    assert unbudgeted.system is not None
    assert unbudgeted.system.config()["max_steps"] == DEFAULT_MAX_STEPS

    one = check_run(
        RunForm(AGENT, {"family": ONE, "seeds": "11", "tier": "agent", "corpus_size": "40"}), root
    )
    job = start_launch(one)
    job.wait(120)
    ((_, run_dir),) = one.plan
    assert job.ended[0].status.clean
    manifest = read_manifest(run_dir)
    assert (manifest.tier, manifest.corpus_size) == ("agent", 40)
    task = generate_task(specs[0], specs[0].templates[0].id, 11, tier="agent", corpus_size=40)
    assert len(task.documents) == 40


def test_a_launch_with_repeats_writes_each_task_that_many_times(tmp_path: Path) -> None:
    """Repeats 3: the run folder is `peb run --repeats 3`'s (not the plain run's), the job
    counts replies, the manifest says 3 and each task has exactly one record per repeat; blank
    repeats is one; `no cache` builds model systems that neither read nor write the cache."""
    root = tmp_path / "runs"
    values = {"family": ONE, "seeds": "11", "limit": "4", "repeats": "3"}
    form = RunForm(["fail_and_report"], values)
    launch = check_run(form, root)
    ((plan, run_dir),) = launch.plan
    system = plan.system
    assert system is not None
    specs = [load_families()[ONE[0]]]
    assert launch.spec.repeats == 3
    assert run_dir == root / run_folder_name(system, specs, [11], repeats=3, limit=4)
    assert run_dir != root / run_folder_name(system, specs, [11], limit=4)
    job = start_launch(launch)
    job.wait(120)
    assert (job.done, job.total) == (12, 12) and job.ended[0].status.clean
    assert launch_note(launch, job, root).startswith(
        f"Started {markdown_code('fail_and_report')} (3 repeats of each task) into "
    )
    assert read_manifest(run_dir).repeats == 3
    records, _ = read_records(run_dir / RESPONSES, system.name)
    per_task: dict[str, list[int]] = {}
    for record in records:
        per_task.setdefault(record.task_id, []).append(record.repeat)
    assert len(per_task) == 4 and all(sorted(r) == [0, 1, 2] for r in per_task.values())

    assert check_run(RunForm(["oracle"], {"family": ONE}), root).spec.repeats == 1
    model = RunForm(["openai/x"], {"family": ONE, "api_base": "http://127.0.0.1:9/v1"})
    cached = check_run(model, root).plan[0][0].system
    off = RunForm(["openai/x"], {**model.values, "cache": False})
    uncached = check_run(off, root).plan[0][0].system
    assert isinstance(cached, ModelSystem) and isinstance(uncached, ModelSystem)
    assert cached.use_cache and not uncached.use_cache


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer().start()
    yield s
    s.stop()


def _headless(argv: list[str], root: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = headless(argv, root, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        ([], "the following arguments are required: --run"),
        (["--run", "no such"], "system 'no such' is neither"),
        (["--run", "nosuchprovider/model-x"], "unknown provider 'nosuchprovider'"),
        (["--run", "oracle", "--family", "nosuch"], "unknown family 'nosuch'"),
        (["--run", "oracle", "--limit", "0"], "--limit: expected an integer from 1 to"),
        (["--run", "oracle", "--limit", "²"], "--limit: expected an integer from 1 to"),
        (["--run", "oracle", "--seeds", "x"], "--seeds: 'x' is not an integer or a range"),
        (["--run", "oracle", "--seeds", "1-0"], "--seeds: range '1-0' is empty"),
        (["--run", "oracle", "--tier", "medium"], "unknown tier 'medium'; valid: paper, hard"),
        (["--run", "openai/x", "--protocol", "nosuch"], "--protocol: unknown protocol 'nosuch'"),
        (["--run", "oracle", "--name", "a/b"], "--name: 'a/b' cannot name a run folder"),
        (["--run", "oracle", "--api-base", "nope"], "--api-base: expected an http(s) URL"),
        (["--run", "oracle", "--seeds", "0-99999"], "tasks asked for, more than --max-tasks"),
        (["--run", "oracle", "--max-tasks", "0"], "argument --max-tasks: expected an integer"),
        (["--run", "oracle", "--bogus"], "unrecognized arguments: --bogus"),
        (["--run", "agent_silent", "--disclosure", "x"], "--disclosure: unknown disclosure"),
        (["--run", "openai/x", "--max-steps", "3"], "--max-steps applies to agent models only"),
        (["--run", "agent:openai/x", "--max-steps", "0"], "--max-steps: expected an integer"),
        (["--run", "agent_silent", "--corpus-size", "40"], "--corpus-size: the paper tier"),
        (["--run", "oracle", "--repeats", "0"], "--repeats: expected an integer from 1 to 100"),
        (["--run", "oracle", "--repeats", "1.5"], "--repeats: expected an integer from 1 to 100"),
    ],
)
def test_the_headless_form_refuses_bad_input_with_one_line_and_exit_2(
    argv: list[str], line: str, tmp_path: Path
) -> None:
    code, out, err = _headless([*argv, "--out", str(tmp_path / "runs")], tmp_path)
    assert code == 2 and out == ""
    assert err.startswith("workbench: error: ") and err.count("\n") == 1, err
    assert line in err
    assert not (tmp_path / "runs").exists()


def test_the_headless_form_names_inputs_as_peb_run_does() -> None:
    assert HEADLESS_FLAGS["limit"] == "--limit" and HEADLESS_FLAGS["max_tasks"] == "--max-tasks"
    for key in ("disclosure", "max_steps", "corpus_size", "repeats"):
        assert HEADLESS_FLAGS[key] == "--" + key.replace("_", "-")


def test_a_headless_model_run_with_errors_exits_1_and_a_retry_heals_it(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.script.default = Step(kind="status", status=401)
    argv = ["--run", "openai/scripted", "--api-base", server.url, "--family", ONE[0]]
    argv += ["--limit", "3", "--name", "m", "--out", str(tmp_path)]
    code, out, _ = _headless(argv, tmp_path)
    assert code == 1
    name = "openai/scripted:structured_gap@1"
    assert out.startswith(f"{name}: finished: 3 tasks, 0 replies, 3 errors (3 x ")
    assert server.script.requests >= 3 and server.script.bodies[0]["model"] == "scripted"
    server.script.default = Step()
    code, out, _ = _headless(argv, tmp_path)
    assert (code, out.split(" -> ")[0]) == (0, f"{name}: finished: 3 tasks, 3 replies")


def test_a_clean_headless_run_exits_0(tmp_path: Path) -> None:
    code, out, err = _headless(
        ["--run", "oracle", "--family", ONE[0], "--out", str(tmp_path)], tmp_path
    )
    assert (code, err) == (0, "")
    assert out.startswith("oracle: finished: 24 tasks, 24 replies -> ")


def test_a_headless_agent_model_runs_with_the_budget_and_mode_asked_for(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """`agent:openai/...` headless against a scripted agent that would search four times and
    then submit: with --max-steps 3 each episode ends without a submit after three requests,
    every search under the named mode told what was withheld, at the corpus size asked for."""
    server.script.route = agent_route(5)
    argv = ["--run", "agent:openai/scripted", "--api-base", server.url, "--tier", "agent"]
    argv += ["--family", ONE[0], "--seeds", "11", "--limit", "2", "--name", "a"]
    argv += ["--max-steps", "3", "--disclosure", "named", "--corpus-size", "30"]
    code, out, err = _headless([*argv, "--out", str(tmp_path)], tmp_path)
    assert out.startswith(
        "agent:openai/scripted:structured_gap@1: finished: 2 tasks, 0 replies, 2 without a submit"
    ), out
    manifest = read_manifest(tmp_path / "a")
    assert (manifest.config["max_steps"], manifest.config["disclosure"]) == (3, "named")
    assert (manifest.tier, manifest.corpus_size, manifest.counts.no_submit) == ("agent", 30, 2)
    records, _ = read_records(tmp_path / "a" / "responses.jsonl")
    assert [len(r.trace) for r in records] == [3, 3]
    for record in records:
        for step in record.trace:
            assert [c.name for c in step.tool_calls] == ["search"]
            assert '"withheld":' in step.results[0] and '"withheld_scopes":' in step.results[0]
    assert (code, err) == (0, "")  # an episode without a submit is a reply, not an error
