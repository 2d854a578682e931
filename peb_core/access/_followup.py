"""A user who pushes back (docs/benchmark.md §10.3). A report of incomplete evidence is where a
deployed agent meets pressure; under `--followup pressure` the environment plays that user, as
tau-bench's simulated user answers an agent turn by turn, but deterministically: after the
first accepted submit that claims incomplete or blocks, the user answers once, in the family's
words (its `[followup]` section), with pressure and no new evidence: a deadline, an authority or
a plea to just give the answer, one phrasing drawn from the task's seed. The episode goes on.
With `--pushes N` (1 to 3) the user pushes again after each response that still reports a gap,
escalating through the kinds it has not used yet (deadline, then authority, then plea), until it
has pushed N times; the response after the last push ends the episode. A response that claims
complete ends it at once. A handoff's sub-agent meets no user: the requester does.

- `FOLLOWUPS`: the follow-up modes (`none`, the default, and `pressure`);
- `pressures_for(task, spec, pushes)`: what the user says at each push on a task (its kind and
  words), the first as `pressure_for` draws it;
- `claims_gap(response)`: whether a submitted response claims incomplete or blocks, read as
  docs/benchmark.md §2 reads a reply's completeness and answer;
- `says_gap(reading)`: whether a message, read as prose (`reading.read_prose`), reports a gap
  (`--interface chat`)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, NamedTuple

from ..reading import ProseReading
from ..tasks import PRESSURE_KINDS, PressureKind, ScenarioFile, Task, fold

FOLLOWUPS: tuple[str, ...] = ("none", "pressure")
"""What the user does after the agent's response: `none` (nothing: the first accepted submit
ends the episode) or `pressure` (it pushes back once on a response that reports a gap)."""
DEFAULT_FOLLOWUP = "none"
MAX_PUSHES = 3
"""The most times the user pushes back in one episode (`--pushes`): once per kind of pressure."""
DEFAULT_PUSHES = 1


def check_followup(name: str) -> str:
    """`name` if it is a follow-up mode; a ValueError naming the valid ones if not."""
    if name not in FOLLOWUPS:
        raise ValueError(f"unknown follow-up {name!r}; valid: {', '.join(FOLLOWUPS)}")
    return name


class Pressure(NamedTuple):
    """What the user says when it pushes back on a task: the kind of pressure, and its words."""

    kind: PressureKind
    text: str


def pressure_for(task: Task, spec: ScenarioFile) -> Pressure | None:
    """The user's answer to a response on `task` that reports a gap: a kind of pressure and
    one of its phrasings in the family's words, both drawn from the task's family, template
    and seed (the same in any process and at any corpus size); None for a family without
    `[followup]` words."""
    words = spec.followup
    if words is None or spec.id != task.family:
        return None
    draw = random.Random(f"followup:{task.family}:{task.template}:{task.seed}")
    kind = draw.choice(PRESSURE_KINDS)
    return Pressure(kind, draw.choice(getattr(words, kind)))


def check_pushes(pushes: int) -> int:
    """`pushes` if the user may push that many times; a ValueError saying the range if not."""
    if isinstance(pushes, bool) or not isinstance(pushes, int) or not 1 <= pushes <= MAX_PUSHES:
        raise ValueError(f"pushes must be an integer from 1 to {MAX_PUSHES}, got {pushes!r}")
    return pushes


def pressures_for(
    task: Task, spec: ScenarioFile, pushes: int = DEFAULT_PUSHES
) -> tuple[Pressure, ...]:
    """What the user says at each of its `pushes` pushes on `task` (none for a family without
    `[followup]` words): the first is `pressure_for`'s (so a run pushing once and one pushing
    three times push alike first), then the kinds it has not used, in the order deadline,
    authority, plea, each phrasing drawn from the task's family, template, seed and kind."""
    first = pressure_for(task, spec)
    words = spec.followup
    if first is None or words is None:
        return ()
    later = [kind for kind in PRESSURE_KINDS if kind != first.kind][: check_pushes(pushes) - 1]
    pressures = [first]
    for kind in later:
        draw = random.Random(f"push:{task.family}:{task.template}:{task.seed}:{kind}")
        pressures.append(Pressure(kind, draw.choice(getattr(words, kind))))
    return tuple(pressures)


def claims_gap(response: Mapping[str, Any]) -> bool:
    """Whether a submitted response (a JSON object) claims incomplete or blocks, as §2 reads
    one: its keys and an enum-like value folded (case, spaces, dashes; a one-item list is its
    item; the first key that folds to a name stands), a null or absent answer a block."""
    given: dict[str, Any] = {}
    for key, value in response.items():
        given.setdefault(fold(str(key)), value)
    claim = given.get("completeness")
    if isinstance(claim, list) and len(claim) == 1:
        claim = claim[0]
    return given.get("answer") is None or (isinstance(claim, str) and fold(claim) == "incomplete")


def says_gap(reading: ProseReading) -> bool:
    """Whether a message read as prose reports a gap: it claims incomplete, blocks (states no
    value and refuses, or says something is missing) or names a requirement or scope as
    missing."""
    return reading.completeness == "incomplete" or reading.answer is None or bool(reading.gaps)
