"""The access layer's view of a corpus for the task explorer, and search results that are the
same in another process (docs/benchmark.md §9)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import peb_core
from peb_core import generate_task, load_families
from peb_core.access import DISCLOSURES, NOT_FOUND, agent_view, corpus_frame, search_frame

SPEC = load_families()["due_diligence_v1"]
TASK = generate_task(SPEC, "hidden_liability_annex", 11, tier="agent", corpus_size=30)


def test_the_corpus_frame_shows_each_document_and_what_open_says_in_each_mode() -> None:
    frame = corpus_frame(TASK, SPEC)
    assert frame.height == 30 and frame["doc_id"].to_list() == sorted(frame["doc_id"])
    visible = frame.filter(frame["visible"])
    hidden = frame.filter(~frame["visible"])
    assert set(visible["doc_id"]) == set(TASK.authorized_doc_ids)
    for mode in DISCLOSURES:
        assert set(visible[f"open_{mode}"]) == {"document"}
    assert set(hidden["open_silent"]) == {f"open: {NOT_FOUND}"}
    assert all("access denied" in e and "scope" not in e for e in hidden["open_counted"])
    for row in hidden.iter_rows(named=True):
        assert row["scope"] in row["open_named"]
    register = frame.filter(frame["role"] == "register")
    assert register["ref"].to_list() == [None]
    assert frame.filter(frame["role"] != "register")["ref"].null_count() == 0


def test_the_search_frame_shows_hits_and_what_the_filter_took_in_each_mode() -> None:
    master = next(d for d in TASK.hidden_documents if d.evidence_family == "liability_annex")
    frame = search_frame(TASK, SPEC, master.body, k=5)
    assert frame["mode"].unique(maintain_order=True).to_list() == list(DISCLOSURES)
    for mode in DISCLOSURES:
        rows = frame.filter(frame["mode"] == mode)
        shown, withheld = rows.filter(rows["shown"]), rows.filter(~rows["shown"])
        assert shown["rank"].to_list() == list(range(1, shown.height + 1))
        assert set(shown["doc_id"]) <= set(TASK.authorized_doc_ids)
        assert master.doc_id in withheld["doc_id"].to_list()
        told = rows["withheld"].unique().to_list()
        assert told == ([None] if mode == "silent" else [withheld.height])


SEARCHES = (
    "import json, sys\n"
    "from peb_core import generate_task, load_families\n"
    "from peb_core.access import agent_view\n"
    "spec = load_families()['due_diligence_v1']\n"
    "task = generate_task(spec, 'hidden_liability_annex', 11, tier='agent', corpus_size=500)\n"
    "session = agent_view(task, spec).session('named')\n"
    "for q in json.loads(sys.argv[1]):\n"
    "    print(session.call('search', json.dumps({'query': q, 'k': 50})).content)\n"
)


def test_search_results_are_the_same_in_another_process(tmp_path: Path) -> None:
    task = generate_task(SPEC, "hidden_liability_annex", 11, tier="agent", corpus_size=500)
    queries = [task.prompt, "version", *(r.description for r in task.contract.required_evidence)]
    session = agent_view(task, SPEC).session("named")
    here = "".join(
        session.call("search", json.dumps({"query": q, "k": 50})).content + "\n" for q in queries
    )
    package = str(Path(peb_core.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONHASHSEED": "4321", "PYTHONPATH": package}
    there = subprocess.run(
        [sys.executable, "-c", SEARCHES, json.dumps(queries)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=True,
    ).stdout
    assert there == here
