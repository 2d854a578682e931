"""The runner: a system over tasks into a run folder, resumable. Each finished task is appended
and flushed at once (through the one `RunWriter`), so an interrupted run loses at most the
requests in flight, and running it again skips what is recorded (and retries what ended in
error). One process writes a run folder at a time (its lock). When a run ends, however it ends,
the embedded model servers its plan holds are let go of."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from .._warn import warn
from ..access import AgentView
from ..interventions import answering
from ..systems import (
    Reach,
    ResponseRecord,
    System,
    answering_repeat,
    watching_reach,
    watching_steps,
)
from ..tasks import (
    DEFAULT_CONTRACT,
    DEFAULT_TIER,
    ContractSource,
    ScenarioFile,
    Task,
    Tier,
    count_tasks,
    iter_tasks,
    task_keys,
    view_for,
)
from ._spec import RunPlan, plan_for
from ._store import RunError, RunManifest
from ._writer import RunWriter, new_manifest

Progress = Callable[[ResponseRecord, int, int], None]
"""Called after each record with (record, done, total)."""


@dataclass(frozen=True)
class EpisodeStep:
    """An agent's episode in a run starting a step: the run's `episode`-th reply (from 1, in
    the run's order: each task's repeats, task after task), answering (`family`, `task_id`,
    `repeat`), at step `step` of at most `max_steps`; the run's replies `done` of `total`
    then."""

    episode: int
    family: str
    task_id: str
    repeat: int
    step: int
    max_steps: int
    done: int
    total: int


Steps = Callable[[EpisodeStep], None]
"""Called as each agent's episode in flight starts a step (the episode's record, when it ends,
goes to `Progress`)."""


@dataclass
class InFlight:
    """The agents' episodes in flight in a run and the step each is at, as a run's `steps`
    (`started`) and `progress` (`ended`) tell it: what a progress display shows. Safe to read
    from another thread than the run's."""

    _steps: dict[tuple[str, str, int], tuple[int, int, int]] = field(default_factory=dict)
    """(episode, step, max steps) by (family, task id, repeat)."""

    def started(self, event: EpisodeStep) -> None:
        key = (event.family, event.task_id, event.repeat)
        self._steps[key] = (event.episode, event.step, event.max_steps)

    def ended(self, record: ResponseRecord) -> None:
        self._steps.pop((record.family, record.task_id, record.repeat), None)

    def made(self) -> float:
        """The share of their steps the episodes in flight have made (a step counts once made:
        step 5 of 24 started is 4/24), summed."""
        return sum((step - 1) / most for _, step, most in tuple(self._steps.values()))

    def text(self, shown: int = 3) -> str:
        """`episode 3: step 5/24; episode 4: step 2/24` for the first `shown` by episode, and
        how many more; empty with none in flight."""
        every = sorted(tuple(self._steps.values()))
        words = [f"episode {episode}: step {step}/{most}" for episode, step, most in every[:shown]]
        if len(every) > shown:
            words.append(f"{len(every) - shown} more in flight")
        return "; ".join(words)


async def run_async(
    plan: RunPlan,
    run_dir: Path,
    *,
    progress: Progress | None = None,
    steps: Steps | None = None,
    gates: Sequence[asyncio.Semaphore] | None = None,
) -> RunManifest:
    """Run `plan`'s system over its tasks into `run_dir`, resuming a run already there (from
    inside an event loop: a notebook cell, a server; `run` starts its own). However it ends,
    the plan's embedded model servers are then let go of (`RunPlan.release`): run a plan once.

    The folder is written by a `RunWriter` (the resume rule: the same run is resumed, its
    error records run again unless the spec's `retry_errors` is off; another run, or a file
    that cannot be read or written, is a RunError). Each (task, repeat) without a record is
    answered, at most the plan's `concurrency` at once (or, given `gates`, holding each of them:
    a sweep's budget shared by its runs, a provider's limit), and its record appended as it
    ends; `progress` is called after each, and `steps` as an agent's episode starts a step.
    After `systems.MAX_UNREACHABLE` requests in a row that never reached their server, no more
    tasks start, and the run ends `interrupted` with a RunError naming the server."""
    try:
        return await _run_plan(plan, run_dir, progress, steps, gates)
    finally:
        plan.release()


async def _run_plan(
    plan: RunPlan,
    run_dir: Path,
    progress: Progress | None,
    steps: Steps | None,
    gates: Sequence[asyncio.Semaphore] | None,
) -> RunManifest:
    """`run_async` but for letting go of the plan's servers."""
    system = plan.system
    if system is None:
        raise ValueError("a run plan without a system of ours is run by its front-end")
    spec = plan.spec
    families = plan.selection.families
    n_every = count_tasks(families, plan.seeds)
    manifest = new_manifest(
        system=system.name,
        config=system.config(),
        families=families,
        seeds=plan.seeds,
        tier=plan.tier,
        kind="episodes" if plan.episodes else "one_shot",
        n_tasks=n_every if spec.limit is None else min(spec.limit, n_every),
        distractors=plan.selection.distractors,
        corpus_size=plan.corpus_size,
        contract=plan.contract,
        limit=spec.limit,
        repeats=spec.repeats,
        digests=system.digests(),
    )
    try:
        with RunWriter.resume(
            run_dir, manifest, families, retry_errors=spec.retry_errors
        ) as writer:
            for line in writer.problems:
                warn(line)
            held = [asyncio.Semaphore(plan.concurrency)] if gates is None else list(gates)
            with watching_reach() as reach:
                await _run_tasks(system, families, writer, progress, steps, held, reach)
            if reach.unreachable is not None:  # left interrupted, with what it recorded
                raise RunError(f"{run_dir}: {reach.unreachable}")
            return writer.close("finished")
    except OSError as exc:  # a full disk, a read-only folder, a file where a folder should be
        raise RunError(f"{exc.filename or run_dir}: {exc.strerror or exc}") from None


async def _run_tasks(
    system: System,
    families: Sequence[ScenarioFile],
    writer: RunWriter,
    progress: Progress | None,
    steps: Steps | None,
    gates: Sequence[asyncio.Semaphore],
    reach: Reach,
) -> None:
    """Every (task, repeat) of the run without a record, appended as it ends, each answered
    holding every one of `gates`, with its repeat index in context (`answering_repeat`), the
    task as the platform knows it in context for an intervention's response step
    (`interventions.answering`), and its steps told to `steps` (`watching_steps`); none
    started once `reach` says the server cannot be reached (those in flight end as they do). A
    reply is started once it holds a slot in every gate, and its task generated only then
    (tasks with every reply recorded are never generated), so a run holds the tasks of its
    replies in flight and no more, however many it has: memory follows the concurrency, not the
    run's size."""
    specs = {spec.id: spec for spec in families}
    manifest = writer.manifest
    done = writer.done
    repeats = manifest.repeats
    finished = 0
    n_replies = len(writer.keys) * repeats

    @contextlib.contextmanager
    def watched(view: object, task: Task, repeat: int, episode: int) -> Iterator[None]:
        if steps is None or not isinstance(view, AgentView):
            yield
            return

        def told(step: int, max_steps: int) -> None:
            steps(EpisodeStep(episode, task.family, task.task_id, repeat, step, max_steps,
                              finished, n_replies))  # fmt: skip

        with watching_steps(view.start, told):
            yield

    async def one(task: Task, repeat: int, episode: int) -> None:
        nonlocal finished
        if reach.unreachable is not None:  # nothing more is started
            return
        view = view_for(system.view, task, specs[task.family])
        with answering_repeat(repeat), answering(task), watched(view, task, repeat, episode):
            reply = await system.respond(view)
        record = ResponseRecord.of_reply(task.family, task.task_id, system.name, reply, repeat)
        writer.append(record)
        finished += 1
        if progress:
            progress(record, finished, n_replies)

    def release(_: object) -> None:
        for gate in gates:
            gate.release()

    todo = {key for key in writer.keys if any((*key, r) not in done for r in range(repeats))}
    tasks = iter_tasks(
        families,
        manifest.seeds,
        manifest.distractors,
        manifest.tier,
        manifest.corpus_size,
        manifest.contract or DEFAULT_CONTRACT,
        only=todo,
    )
    keys = islice(task_keys(families, manifest.seeds, manifest.tier), len(writer.keys))
    try:
        # A reply that fails (a write) stops the others and ends the run with its error; so
        # does a stop, each reply in flight cancelled before the file closes.
        async with asyncio.TaskGroup() as group:
            for number, key in enumerate(keys):
                task = None
                for repeat in range(repeats):
                    if (*key, repeat) in done:
                        finished += 1
                        continue
                    await _hold(gates)
                    if reach.unreachable is not None:  # the server cannot be reached
                        release(None)
                        return
                    try:
                        task = next(tasks) if task is None else task
                    except BaseException:
                        release(None)
                        raise
                    episode = number * repeats + repeat + 1
                    group.create_task(one(task, repeat, episode)).add_done_callback(release)
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None


async def _hold(gates: Sequence[asyncio.Semaphore]) -> None:
    """A slot taken in every one of `gates`, in their order (one order: no deadlock); none
    kept if stopped while waiting."""
    held: list[asyncio.Semaphore] = []
    try:
        for gate in gates:
            await gate.acquire()
            held.append(gate)
    except BaseException:
        for gate in held:
            gate.release()
        raise


def run(
    plan: RunPlan,
    run_dir: Path,
    *,
    progress: Progress | None = None,
    steps: Steps | None = None,
) -> RunManifest:
    """`run_async` in an event loop of its own."""
    return asyncio.run(run_async(plan, run_dir, progress=progress, steps=steps))


def run_system(
    system: System,
    families: Sequence[ScenarioFile],
    run_dir: Path,
    *,
    progress: Progress | None = None,
    **options: Any,
) -> RunManifest:
    """Run a system object (one built by hand, as a library user or a test does) over
    `families` into `run_dir`: `options` are RunSpec fields (`seeds` as a list or text,
    `tier`, `limit`, `repeats`, `concurrency`, `corpus_size`, `contract`, `distractors`,
    `retry_errors`),
    checked as any front-end's (a RunSpecError names what is refused)."""
    return run(plan_for(system, families, **options), run_dir, progress=progress)


async def run_system_async(
    system: System,
    families: Sequence[ScenarioFile],
    run_dir: Path,
    *,
    progress: Progress | None = None,
    **options: Any,
) -> RunManifest:
    """`run_system` from inside an event loop."""
    return await run_async(plan_for(system, families, **options), run_dir, progress=progress)


SLUG_CHARS = 80
"""The most characters of a system's name a run folder's name keeps (its digest tells runs
apart), so a long model name still makes a folder name the file system takes."""


def run_folder_name(
    system: System,
    families: Sequence[ScenarioFile],
    seeds: Sequence[int] | None,
    tier: Tier = DEFAULT_TIER,
    corpus_size: int | None = None,
    repeats: int = 1,
    contract: ContractSource | None = None,
    distractors: int = 0,
    limit: int | None = None,
) -> str:
    """The folder a run of `system` over `families` at `seeds` on `tier` is saved in (below a
    runs root): readable (the system's name, cut at `SLUG_CHARS`), and the same for the same
    system, config, families, seeds, tier, corpus size, repeats, contract source, distractors
    and task limit, so asking for the same run again resumes it (an unchanged run costs
    nothing) and any other run has a folder of its own."""
    what: dict[str, object] = {
        "system": system.name,
        "config": system.config(),
        "families": [f.id for f in families],
        "seeds": list(seeds) if seeds is not None else None,
    }
    if tier != DEFAULT_TIER:  # paper-tier folders keep the names they had before tiers
        what["tier"] = tier
    if corpus_size is not None:
        what["corpus_size"] = corpus_size
    if repeats != 1:  # folders of runs without repeats keep the names they had
        what["repeats"] = repeats
    if contract not in (None, DEFAULT_CONTRACT):  # so do those of runs given their contract
        what["contract"] = contract
    if distractors:  # and those without distractors or a task limit
        what["distractors"] = distractors
    if limit is not None:
        what["limit"] = limit
    digest = hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()
    slug = re.sub(r"[^A-Za-z0-9_.@-]+", "_", system.name)[:SLUG_CHARS].strip("_")
    return f"{slug}-{'' if tier == DEFAULT_TIER else tier + '-'}{digest[:10]}"


_NAME = re.compile(r"[A-Za-z0-9_.@-]+")


def is_run_name(name: str) -> bool:
    """Whether `name` can name a run folder: letters, digits and `. _ @ -`, not only dots."""
    return bool(_NAME.fullmatch(name)) and name.strip(".") != ""


def launch_folder(plan: RunPlan, name: str = "", *, several: bool = False) -> Path:
    """Where a launched run goes, below the launch root: `name` if given (for one of `several`
    systems launched together, `name/<run_folder_name>`), else `run_folder_name`."""
    assert plan.system is not None
    folder = run_folder_name(
        plan.system,
        plan.selection.families,
        plan.seeds,
        plan.tier,
        plan.corpus_size,
        plan.spec.repeats,
        plan.contract,
        plan.selection.distractors,
        plan.spec.limit,
    )
    if not name:
        return Path(folder)
    return Path(name) / folder if several else Path(name)
