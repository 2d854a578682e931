"""docs/benchmark.md §9 (a tool is one module): what later stages read of a recorded call
through the registry agrees with what the live call did. Over the leak test's generated
episodes (every tier with corpora, probing calls and junk) in every disclosure mode, a call's
arguments as recorded are read back: the ids a search showed are those `surfaced_ids` finds
again under the scopes then in force, and those it withheld are hidden documents, as many as
the mode's notice counted; the document an open read is the one `opened_id` names, and a
call that read none names none it read; only the accepted submit ends the episode."""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import given, settings
from test_leaks import episodes

from peb_core import ScenarioFile, Task
from peb_core.access import (
    DISCLOSURES,
    agent_view,
    ends_episode,
    opened_id,
    replay_grants,
    surfaced_ids,
)

MAX_EXAMPLES = int(os.environ.get("PEB_LEAK_EXAMPLES", "2000")) // 4


@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True)
@given(episodes())
def test_a_recorded_call_reads_back_as_it_ran(
    case: tuple[Task, ScenarioFile, list[tuple[str, Any]]],
) -> None:
    task, spec, calls = case
    view = agent_view(task, spec)
    index = view._corpus.index
    sent = [(n, a if isinstance(a, str) else json.dumps(a)) for n, a in calls]
    replayed = replay_grants(task, sent)
    for mode in DISCLOSURES:
        session = view.session(mode)
        for n, (name, arguments) in enumerate(sent, start=1):
            outcome = session.call(name, arguments)
            now = task.in_state(replayed.state_at(n))
            shown = json.loads(outcome.content)
            hits = [hit["doc_id"] for hit in shown.get("hits", [])]
            again, withheld = surfaced_ids(name, arguments, index, now.user_scopes, now.user_stores)
            if outcome.error is None:
                assert again == hits, (mode, name, arguments)
                assert not set(withheld) & set(now.authorized_doc_ids)
                if shown.get("withheld") is not None:
                    assert len(withheld) == shown["withheld"]
            document = shown.get("document")
            if document is not None:
                assert outcome.opened == document["doc_id"] == opened_id(name, arguments)
            assert (outcome.submitted is not None) <= ends_episode(name)
        assert session.timeline == replayed
