"""Who owns a family's scopes, and the next step a gap calls for (docs/benchmark.md §2.2).

A family's `[owners]` names the owner of each scope (a role) and a reviewer. The next step of an
incomplete task is derived from its oracle gap report (the missing scopes and the policy) and
the owners, by one rule a careful analyst follows (`next_step_for`):

- the missing scopes have one owner, and policy requires a block: the decision cannot be made
  without that evidence, so it goes to the one person who can decide about it: `escalate` to the
  owner;
- one owner, and a partial answer is permitted: the analyst answers what it can and asks for
  the rest: `request_access` from the owner;
- several owners (or none named): no single owner can close the gap, so the matter goes to the
  family's reviewer: `human_review`.

A complete task has no next step. The rule is public (it reads a gap report and the owners, as a
system can), so a system applies it to its own reading; the oracle applies it to the task's
oracle gap report (`next_step`). Nothing of it is stored in a task: it is derived on demand, so
no task's JSON changed when it was added.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from ._scenario import ScenarioFile
from ._task import NextStep, Task


class Owners(BaseModel):
    """A family's owners as a system is shown them: the owner of each scope (by scope id, in the
    family's order) and the reviewer. The same for every task of the family, whatever it misses,
    so it says nothing of what a task withholds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scopes: dict[str, str]
    reviewer: str

    @property
    def roles(self) -> tuple[str, ...]:
        """Every role a handoff may name: the scopes' owners (each once, in scope order), then
        the reviewer."""
        return (*dict.fromkeys(self.scopes.values()), self.reviewer)


class NoOwners(ValueError):
    """A family that names no scope owners where they are needed; one line."""


def owners_of(spec: ScenarioFile) -> Owners:
    """The owners `spec` declares; NoOwners (one line, naming the family and what is needed)
    for a family without an `[owners]` section."""
    if spec.owners is None:
        raise NoOwners(
            f"{spec.id} names no scope owners (an [owners] section with the owner of each scope "
            "and a reviewer); a next step and the escalate tool need them"
        )
    return Owners(scopes=dict(spec.owners.scopes), reviewer=spec.owners.reviewer)


def next_step_for(scopes: Iterable[str], *, partial: bool, owners: Owners) -> NextStep:
    """The next step of a gap in `scopes` (the missing scopes, as a gap report lists them) under
    the policy (`partial`: a partial answer is permitted), by the module's rule: escalate to the
    one owner where a block is required, request access from it where a partial answer stands,
    human review by the reviewer where the scopes have several owners or none."""
    named = list(dict.fromkeys(owners.scopes[s] for s in scopes if s in owners.scopes))
    if len(named) != 1:
        return NextStep(action="human_review", to=owners.reviewer)
    return NextStep(action="request_access" if partial else "escalate", to=named[0])


def next_step(task: Task, spec: ScenarioFile) -> NextStep | None:
    """The oracle next step of `task` (None when it is complete): `next_step_for` its oracle gap
    report. NoOwners for a family without owners."""
    owners = owners_of(spec)
    gap = task.oracles.gap_report
    if gap is None:
        return None
    return next_step_for(gap.missing_scopes, partial=gap.status == "partial", owners=owners)


def handed_to(to: str, owners: Owners) -> NextStep | None:
    """The step a handoff to `to` takes (an `escalate` call): `human_review` when it names the
    reviewer, `escalate` when it names a scope's owner (read as §2 reads a value: case, spaces
    and dashes folded); None for a role the family does not have."""
    from ._response import fold  # the response schema names roles: it imports this module

    role = next((r for r in owners.roles if fold(r) == fold(to)), None)
    if role is None:
        return None
    return NextStep(action="human_review" if role == owners.reviewer else "escalate", to=role)
