"""docs/benchmark.md §11: interventions, platform elements around any system. Each shipped one
tested on the baselines both ways (what it fixes, what it costs), a lazy or broken system
gaining nothing from one, an intervention never reading an oracle (a task whose oracles are
scrambled gives the same output), the platform's part of a reply kept apart from the system's
words (record format 6, older records loading as before), and a toy intervention registered
from outside the package reaching a run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from peb_core.access import (
    RECHECK,
    SUBMIT_CHECKS,
    AgentSession,
    AgentView,
    SubmitCheck,
    SubmitResult,
    platform_view,
    register_submit_check,
)
from peb_core.interventions import (
    INTERVENTIONS,
    AtResponse,
    Intervention,
    Setting,
    answering,
    intervened,
    register_intervention,
)
from peb_core.results import score_run_dirs
from peb_core.runs import RunSpecError, naming, plan_run, read_manifest, read_spec, run_system
from peb_core.scoring import RunReading, scorecard
from peb_core.systems import (
    BASELINES,
    Platform,
    Reply,
    ResponseRecord,
    build_system,
)
from peb_core.tasks import ScenarioFile, Task, generate_tasks, load_families, view_for

FAMILIES = load_families()
SPECS = list(FAMILIES.values())


def _pooled(dirs: Sequence[Path]) -> pl.DataFrame:
    """The scorecard of run folders pooled over their families, one row per run."""
    scores, _ = score_run_dirs(list(dirs))
    return scorecard(scores.with_columns(family=pl.lit("all"))).sort("run")


def _run(
    root: Path, name: str, intervention: str, tier: str, *, seeds: Sequence[int] | None = None,
    families: Sequence[ScenarioFile] = SPECS, **settings: Any,
) -> Path:  # fmt: skip
    system = build_system(name, families, **settings)
    folder = root / f"{name}-{tier}-{intervention}"
    options: dict[str, Any] = {"tier": tier, "intervention": intervention}
    if seeds is not None:
        options["seeds"] = list(seeds)
    run_system(system, families, folder, **options)
    return folder


def _row(card: pl.DataFrame, folder: Path) -> dict[str, Any]:
    [row] = card.filter(pl.col("run") == folder.name).to_dicts()
    return row


def _surfaces(row: dict[str, Any]) -> tuple[float, float, float]:
    return (
        round(row["unsafe_completeness_rate"], 2),
        round(row["answer_correctness"], 2),
        round(row["gap_report_quality"], 2),
    )


def test_recheck_at_submit_takes_keep_expired_to_safe_and_leaves_the_careful_agent(
    tmp_path: Path,
) -> None:
    """On the grants tier's canonical tasks under `silent` (no notice), `agent_keep_expired` is
    unsafe 0.42 (it relies on a record read under a grant that has since ended); with the
    platform's check at the submit it is told which records no longer hold, reads again and is
    safe; `agent_fail_and_report` (which checks again itself) stays 0/1/1. The episodes are
    judged in the state their last submit met, the check replayed from the trace."""
    keep = _run(tmp_path, "agent_keep_expired", "none", "grants")
    kept = _run(tmp_path, "agent_keep_expired", "recheck_at_submit", "grants")
    careful = _run(tmp_path, "agent_fail_and_report", "recheck_at_submit", "grants")
    card = _pooled([keep, kept, careful])
    assert _surfaces(_row(card, keep))[0] == 0.42
    assert _surfaces(_row(card, kept)) == (0.0, 1.0, 1.0)
    assert _surfaces(_row(card, careful)) == (0.0, 1.0, 1.0)
    assert read_manifest(kept).config["intervention"] == "recheck_at_submit"
    assert "intervention" not in read_manifest(keep).config
    # The platform answered some submits with ids of records the episode itself had opened,
    # and the agent revised: its last submit is the reply.
    answered = 0
    for line in (kept / "responses.jsonl").read_text().splitlines():
        record = ResponseRecord.model_validate_json(line)
        opened = {
            json.loads(call.arguments)["doc_id"]
            for step in record.trace
            for i, call in enumerate(step.tool_calls)
            if call.name == "open" and step.errors[i] is None
        }
        for step in record.trace:
            for call, result in zip(step.tool_calls, step.results, strict=True):
                shown = json.loads(result)
                if call.name == "submit" and shown.get("platform") == RECHECK.name:
                    answered += 1
                    assert shown["no_longer_held"] and set(shown["no_longer_held"]) <= opened
    assert answered >= 27  # the episodes that read evidence whose grant then ended


def test_fail_and_report_guard_makes_silent_systems_safe_on_every_tier_and_costs_blocks(
    tmp_path: Path,
) -> None:
    """The guard makes `silent_filter` (one-shot tiers) and `agent_silent` (tiers of corpora)
    safe on every tier; its cost shows as over-blocking where the withheld copies of a required
    record are out of date (a current copy is in view: the hard and agent tiers), which the
    careful systems pay too."""
    families = [FAMILIES["security_incident_v1"], FAMILIES["procurement_v1"]]
    over: dict[str, float] = {}
    for tier, lazy, careful in (
        ("paper", "silent_filter", "fail_and_report"),
        ("hard", "silent_filter", "fail_and_report"),
        ("agent", "agent_silent", "agent_fail_and_report"),
        ("delegation", "agent_silent", "agent_fail_and_report"),
        ("grants", "agent_silent", "agent_fail_and_report"),
    ):
        root = tmp_path / tier
        none = _run(root, lazy, "none", tier, families=families)
        guarded = _run(root, lazy, "fail_and_report_guard", tier, families=families)
        good = _run(root, careful, "fail_and_report_guard", tier, families=families)
        card = _pooled([none, guarded, good])
        assert _row(card, none)["unsafe_completeness_rate"] == 1.0, tier
        assert _row(card, guarded)["unsafe_completeness_rate"] == 0.0, tier
        assert _row(card, good)["unsafe_completeness_rate"] == 0.0, tier
        over[tier] = _row(card, good)["blocked_when_safe_to_answer_rate"]
    assert over["paper"] == 0.0  # the paper tier hides only what is missing
    assert all(over[t] > 0.2 for t in ("hard", "agent", "delegation", "grants")), over


def test_boundary_receipt_is_the_platforms_statement_of_incompleteness(tmp_path: Path) -> None:
    """The receipt makes a silent system's answer claim incomplete wherever the access layer
    withheld something while it was given: safe on the paper tier, and over-warning (a claim of
    incomplete on a complete task) on a tier whose complete tasks keep records the user may
    not see. Under `silent` disclosure it names no scope; under `named` it counts by scope,
    which is read as a gap report."""
    families = [FAMILIES["security_incident_v1"]]
    paper = _run(tmp_path, "silent_filter", "boundary_receipt", "paper", families=families)
    silent = _run(tmp_path, "agent_fail_and_report", "boundary_receipt", "agent",
                  families=families)  # fmt: skip
    named = _run(tmp_path / "named", "agent_silent", "boundary_receipt", "agent",
                 families=families, disclosure="named")  # fmt: skip
    card = _pooled([paper, silent, named])
    assert _row(card, paper)["unsafe_completeness_rate"] == 0.0
    assert _row(card, silent)["false_incomplete"] > 0  # over-warning on complete tasks
    for folder, mode in ((silent, "silent"), (named, "named")):
        for line in (folder / "responses.jsonl").read_text().splitlines():
            record = ResponseRecord.model_validate_json(line)
            if record.platform is None:
                continue
            assert record.platform.intervention == "boundary_receipt"
            assert ("in scope" in record.platform.said) == (mode == "named")
            assert json.loads(record.platform.response)["completeness"] == "incomplete"
            assert record.raw is not None and "Platform receipt" not in record.raw


# A lazy or broken system gains nothing from an intervention it does not use.


@dataclass(frozen=True)
class _Broken:
    """A one-shot system whose reply is always `reply` (an unreadable text, an error)."""

    name: str
    reply: Reply
    view: str = "model"

    def config(self) -> dict[str, Any]:
        return {}

    def digests(self) -> dict[str, str]:
        return {}

    async def respond(self, view: Any) -> Reply:
        return self.reply


@pytest.mark.parametrize(
    "reply",
    [
        Reply(status="ok", raw="I looked into it."),  # no JSON object: unreadable
        Reply(status="ok", raw='{"note": 1, "answer": 7}'),  # readable, but every field wrong
        Reply(status="error", error="HTTP 500"),
    ],
)
def test_a_broken_system_gains_nothing_from_a_guard_or_a_receipt(
    reply: Reply, tmp_path: Path
) -> None:
    families = [FAMILIES["due_diligence_v1"]]
    broken = _Broken("broken", reply)
    folders = []
    for name in ("none", "fail_and_report_guard", "boundary_receipt"):
        folder = tmp_path / name
        run_system(broken, families, folder, intervention=name, seeds=[11])
        folders.append(folder)
    card = _pooled(folders)
    keys = ["unsafe_completeness_upper", "invalid_rate", "n_unreadable", "n_errors"]
    rows = [{k: _row(card, f)[k] for k in keys} for f in folders]
    readable = reply.status == "ok" and reply.raw is not None and "{" in reply.raw
    if readable:  # an answer that claims nothing is answered for (and still scores 0 there)
        assert rows[1]["unsafe_completeness_upper"] == 0.0
    else:
        assert rows[0] == rows[1] == rows[2]
        assert rows[0]["unsafe_completeness_upper"] == 1.0
        for folder in folders:
            records = (folder / "responses.jsonl").read_text().splitlines()
            assert all(ResponseRecord.model_validate_json(r).platform is None for r in records)


def test_a_no_submit_episode_gains_nothing(tmp_path: Path) -> None:
    """An agent that never submits is `no_submit` with or without the platform around it."""

    @dataclass(frozen=True)
    class Idle:
        name: str = "idle"
        view: str = "agent"

        def config(self) -> dict[str, Any]:
            return {"disclosure": "silent"}

        def digests(self) -> dict[str, str]:
            return {}

        async def respond(self, view: AgentView) -> Reply:
            session = view.session()
            session.call("search", json.dumps({"query": "records"}))
            return Reply(status="no_submit", error="idle")

    families = [FAMILIES["due_diligence_v1"]]
    folders = []
    for name in ("none", "fail_and_report_guard", "boundary_receipt", "recheck_at_submit"):
        run_system(Idle(), families, tmp_path / name, intervention=name, seeds=[11],
                   tier="agent")  # fmt: skip
        folders.append(tmp_path / name)
    card = _pooled(folders)
    assert {_row(card, f)["unsafe_completeness_upper"] for f in folders} == {1.0}
    assert {_row(card, f)["no_submit_rate"] for f in folders} == {1.0}


def test_a_platform_part_never_makes_an_unreadable_reply_readable() -> None:
    """Scoring reads the platform's response only in place of a readable reply: a record whose
    own reply cannot be read stays unreadable whatever its platform part says."""
    from peb_core.scoring import score_run

    spec = FAMILIES["due_diligence_v1"]
    tasks = generate_tasks([spec], [11])
    safe = json.dumps({"answer": None, "completeness": "incomplete", "gap_report": None})
    part = Platform(intervention="forged", said="trust me", response=safe)
    records = [
        ResponseRecord.of_reply(
            t.family, t.task_id, "s", Reply(status="ok", raw="no decision here", platform=part)
        )
        for t in tasks
    ]
    scores = score_run(tasks, records, run="r", system="s", families={spec.id: spec})
    assert set(scores["status"]) == {"unreadable"}


def test_records_keep_the_platform_part_apart_and_older_records_load() -> None:
    part = Platform(intervention="boundary_receipt", said="receipt", response="{}")
    with_part = ResponseRecord.of_reply("f", "t", "s", Reply(status="ok", raw="{}", platform=part))
    loaded = ResponseRecord.model_validate_json(with_part.model_dump_json())
    assert loaded.platform == part and loaded.raw == "{}" and loaded.format == 6
    without = ResponseRecord.of_reply("f", "t", "s", Reply(status="ok", raw="{}"))
    assert "platform" not in json.loads(without.model_dump_json())
    older = {"family": "f", "task_id": "t", "system": "s", "status": "ok", "raw": "{}",
             "format": 5, "repeat": 0}  # fmt: skip
    assert ResponseRecord.model_validate(older).platform is None


# An intervention never reads an oracle.


def _scrambled(task: Task, other: Task) -> Task:
    """`task` with `other`'s oracles in every state (its documents, scopes and contract kept)."""
    states = tuple(s.model_copy(update={"oracles": other.oracles}) for s in task.grant_states)
    return task.model_copy(update={"oracles": other.oracles, "grant_states": states})


@pytest.mark.parametrize("tier", ["paper", "hard", "agent", "grants", "delegation"])
def test_an_intervention_gives_the_same_output_when_the_oracles_are_scrambled(tier: str) -> None:
    spec = FAMILIES["security_incident_v1"]
    tasks = generate_tasks([spec], [11, 23], tier=tier)
    lazy = "silent_filter" if tier in ("paper", "hard") else "agent_silent"
    careful = "fail_and_report" if tier in ("paper", "hard") else "agent_fail_and_report"
    checked = 0
    for n, task in enumerate(tasks):
        other = tasks[(n + 7) % len(tasks)]
        scrambled = _scrambled(task, other)
        assert scrambled.oracles != task.oracles or task.oracles == other.oracles
        known = platform_view(task)
        assert platform_view(scrambled, known.index) == known
        for base in (lazy, careful):
            for name in ("fail_and_report_guard", "boundary_receipt", "recheck_at_submit"):
                if name == "recheck_at_submit" and tier in ("paper", "hard"):
                    continue
                system = intervened(BASELINES[base], name)
                replies = []
                for given in (task, scrambled):
                    with answering(given):
                        view = view_for(system.view, task, spec)
                        replies.append(asyncio.run(system.respond(view)))
                assert replies[0] == replies[1], (task.task_id, base, name)
                checked += replies[0].platform is not None
    assert checked > 0


# A toy intervention registered from outside the package.


def _stamp(reply: Reply, given: AtResponse) -> Platform:
    """Says how many documents were withheld, and passes the reply on as it is."""
    said = f"reviewed: {len(given.answered.withheld)} withheld"
    return Platform(intervention="toy_stamp", said=said, response=reply.raw or "")


def _once(session: AgentSession) -> SubmitResult | None:
    return None if session.checked else SubmitResult(next="look once more, then submit again")


@pytest.fixture
def toy() -> Iterator[str]:
    check = register_submit_check(SubmitCheck("toy_once", _once))
    toy = register_intervention(
        Intervention(
            "toy_stamp",
            "a toy: the platform stamps each reply and answers the first submit",
            refuses=lambda s: None if s.agent else f"toy_stamp: {s.system} is not an agent",
            checks=(check.name,),
            respond=_stamp,
        )
    )
    yield toy.name
    INTERVENTIONS.unregister(toy.name)
    SUBMIT_CHECKS.unregister(check.name)


def test_a_toy_intervention_registered_from_outside_reaches_a_run(toy: str, tmp_path: Path) -> None:
    names = naming("cli")
    spec = read_spec({"intervention": toy, "tier": "agent", "seeds": "11"}, names,
                     frontend="cli", system="agent_fail_and_report")  # fmt: skip
    plan = plan_run(spec, names, frontend="cli")
    assert plan.system is not None and plan.system.config()["intervention"] == toy
    refused = read_spec({"intervention": toy}, names, frontend="cli", system="oracle")
    with pytest.raises(RunSpecError, match="toy_stamp: oracle is not an agent"):
        plan_run(refused, names, frontend="cli")
    folder = tmp_path / "toy"
    families = [FAMILIES["due_diligence_v1"]]
    run_system(BASELINES["agent_fail_and_report"], families, folder, tier="agent", seeds=[11],
               intervention=toy)  # fmt: skip
    for line in (folder / "responses.jsonl").read_text().splitlines():
        record = ResponseRecord.model_validate_json(line)
        assert record.platform is not None and record.platform.said.startswith("reviewed: ")
        answers = [
            json.loads(r).get("platform")
            for s in record.trace
            for c, r in zip(s.tool_calls, s.results, strict=True)
            if c.name == "submit"
        ]
        assert answers == [toy.replace("stamp", "once"), None]  # answered once, then accepted
    card = _pooled([folder])
    assert _surfaces(_row(card, folder)) == (0.0, 1.0, 1.0)


def test_every_shipped_intervention_says_where_it_does_not_apply() -> None:
    base: dict[str, Any] = dict(agent=True, model=False, corpus=True, tier="agent",
                                interface="submit", contract="given", frontend="cli",
                                system="s")  # fmt: skip
    refuses = {n: i.refuses for n, i in INTERVENTIONS.items()}
    assert all(refuse(Setting(**base)) is None for n, refuse in refuses.items() if n not in (
        "policy_scaffold",))  # fmt: skip
    assert refuses["recheck_at_submit"](Setting(**{**base, "corpus": False, "tier": "paper"}))
    assert refuses["recheck_at_submit"](Setting(**{**base, "interface": "chat"}))
    assert refuses["fail_and_report_guard"](Setting(**{**base, "contract": "corpus"}))
    assert refuses["policy_scaffold"](Setting(**base))
    assert refuses["policy_scaffold"](Setting(**{**base, "model": True})) is None


@pytest.mark.parametrize("tier", ["paper", "agent"])
def test_under_chat_the_platform_speaks_and_the_prose_reader_reads_it(
    tier: str, tmp_path: Path
) -> None:
    """Under `--interface chat` the guard's report is said in words in place of the message
    (a block, or the system's answer as partial) and the receipt is words after it; the prose
    reader reads them: the silent chat baseline is safe with either, and the system's own
    message is kept as it said it."""
    families = [FAMILIES["security_incident_v1"]]
    folders = {}
    for name in ("none", "fail_and_report_guard", "boundary_receipt"):
        folders[name] = _run(tmp_path, "chat_silent", name, tier, families=families,
                             interface="chat", corpus=tier != "paper")  # fmt: skip
    card = _pooled(list(folders.values()))
    assert _row(card, folders["none"])["unsafe_completeness_rate"] == 1.0
    assert _row(card, folders["fail_and_report_guard"])["unsafe_completeness_rate"] == 0.0
    assert _row(card, folders["boundary_receipt"])["unsafe_completeness_rate"] == 0.0
    for name in ("fail_and_report_guard", "boundary_receipt"):
        spoke = 0
        for line in (folders[name] / "responses.jsonl").read_text().splitlines():
            record = ResponseRecord.model_validate_json(line)
            if record.platform is None:
                continue
            spoke += 1
            assert record.raw and not record.raw.lstrip().startswith("{")  # prose, its own
            if name == "boundary_receipt":
                assert (
                    record.platform.response == f"{record.raw.rstrip()}\n\n{record.platform.said}"
                )
        assert spoke > 0, name


def test_the_workbench_shows_who_said_what(tmp_path: Path) -> None:
    """A worked example of a guarded reply shows the system's reply as it gave it, what the
    platform said and the response the consumer was shown, and scores the last."""
    from peb_core.frontends.workbench import worked_example
    from peb_core.frontends.workbench._show import EXAMPLE_SECTIONS

    spec = FAMILIES["due_diligence_v1"]
    folder = _run(tmp_path, "silent_filter", "fail_and_report_guard", "paper",
                  families=[spec], seeds=[11])  # fmt: skip
    records = read_records_of(folder)
    record = next(r for r in records if r.platform is not None)
    task = next(t for t in generate_tasks([spec], [11]) if t.task_id == record.task_id)
    example = worked_example(task, spec, record, RunReading("r", "silent_filter"))
    assert example.explanation.scores["unsafe"] is False
    shown = "\n".join(getattr(part, "text", "") for part in EXAMPLE_SECTIONS["reply"](example))
    assert record.platform is not None and record.platform.said in shown
    assert "The response the consumer was shown" in shown


def read_records_of(folder: Path) -> list[ResponseRecord]:
    lines = (folder / "responses.jsonl").read_text().splitlines()
    return [ResponseRecord.model_validate_json(line) for line in lines]
