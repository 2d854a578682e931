"""`recheck_at_submit` (docs/benchmark.md §11): authorization evaluated again at the submit
boundary. A grant can end while an agent works, and under `silent` disclosure nothing tells it
(§9.2): a careful model read a record while granted, the grant ended a few calls later, and it
submitted complete. At each submit the access layer checks every document the episode opened
against the scopes now in force; where one no longer holds, the submit is answered once with
their ids (documents the agent read while it could: nothing hidden is named), and the agent may
revise (`access.RECHECK`, a session-level check: our loop, the agent baselines, an MCP client's
episodes and inspect's alike)."""

from __future__ import annotations

from ..access import RECHECK
from ._intervention import Intervention, Setting


def _refuses(setting: Setting) -> str | None:
    if not setting.corpus:
        return (
            f"recheck_at_submit checks an agent's submits; the {setting.tier} tier has no corpus "
            f"and no submit to check (choose {setting.name('tier')} agent, delegation or grants)"
        )
    if not setting.agent:
        return (
            f"recheck_at_submit checks an agent's submits; {setting.system} is not an agent "
            "(the agent_* baselines or agent:<model>)"
        )
    if setting.interface == "chat":
        return (
            f"recheck_at_submit checks the submit tool's responses; under "
            f"{setting.name('interface')} chat an agent has none (choose submit)"
        )
    return None


RECHECK_AT_SUBMIT = Intervention(
    "recheck_at_submit",
    "at each submit the access layer checks again every document the episode opened and "
    "answers once with those no longer authorized; the agent may revise",
    refuses=_refuses,
    checks=(RECHECK.name,),
)
