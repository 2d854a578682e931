"""The steps of agents' episodes as a run tells them (`run(..., steps=)`, from the episode
recorder's `starting` through `watching_steps`): each step of each episode in order, the episode
numbered in the run's order, with the run's replies done then; only the episode that began from
the start of the view the run handed out is told (a handoff's nested episode begins from a start
of its own)."""

from __future__ import annotations

from pathlib import Path

from scripted_server import ScriptedServer, agent_route

from peb_core import load_families
from peb_core.runs import EpisodeStep, InFlight, plan_for, run
from peb_core.systems import AgentSystem, ResponseRecord, step_started, watching_steps

DD = load_families()["due_diligence_v1"]


def test_a_run_tells_each_step_of_each_episode(tmp_path: Path) -> None:
    """Two tasks x two repeats of a 3-step agent under a budget of 5, one at a time: every
    step is told, episode by episode in the run's order (each task's repeats, task after
    task); what is in flight is what has started and not yet ended."""
    server = ScriptedServer().start()
    try:
        server.script.route = agent_route(3)
        system = AgentSystem(model="openai/scripted", families=[DD], api_base=server.url,
                             cache_folder=tmp_path / "cache", max_steps=5, timeout_s=5.0,
                             retries=1, backoff_s=0.01)  # fmt: skip
        plan = plan_for(system, [DD], seeds=[11], tier="agent", limit=2, repeats=2,
                        concurrency=1)  # fmt: skip
        told: list[EpisodeStep] = []
        flight = InFlight()
        shown: list[str] = []

        def step(event: EpisodeStep) -> None:
            told.append(event)
            flight.started(event)
            shown.append(flight.text())

        def progress(record: ResponseRecord, done: int, total: int) -> None:
            flight.ended(record)
            shown.append(flight.text())

        manifest = run(plan, tmp_path / "run", progress=progress, steps=step)
    finally:
        server.stop()
    assert manifest.counts.ok == 4
    assert [(e.episode, e.repeat, e.step, e.max_steps, e.done, e.total) for e in told] == [
        (episode, (episode - 1) % 2, number, 5, episode - 1, 4)
        for episode in range(1, 5)
        for number in (1, 2, 3)
    ]
    assert len({(e.family, e.task_id) for e in told}) == 2
    assert shown[:4] == [
        "episode 1: step 1/5",
        "episode 1: step 2/5",
        "episode 1: step 3/5",
        "",  # its record: no longer in flight
    ]
    assert shown[-1] == ""


def test_only_the_episode_over_the_watched_view_is_told() -> None:
    told: list[tuple[int, int]] = []
    own, handed_off = object(), object()
    with watching_steps(own, lambda step, most: told.append((step, most))):
        step_started(own, 1, 24)
        step_started(handed_off, 1, 8)  # a handoff's episode, nested in step 1
        step_started(own, 2, 24)
    step_started(own, 3, 24)  # nobody watches any more
    assert told == [(1, 24), (2, 24)]
