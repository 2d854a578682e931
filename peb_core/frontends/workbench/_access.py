"""The task explorer's view of an agent-tier corpus through the access layer: under one
disclosure mode, what `open` of each document answers, and what one search shows an agent
against what the scope filter withheld from it and what the mode says of that (from
`access.corpus_frame` and `access.search_frame`). For the researcher: these frames name hidden
documents, which no tool result holds."""

from __future__ import annotations

import json
from dataclasses import dataclass

import polars as pl

from ...access import DISCLOSURES, agent_view, corpus_frame, search_frame
from ...tasks import ScenarioFile, Task, get_tier


def has_corpus(task: Task) -> bool:
    """Whether `task` is a corpus an agent reaches through the access layer's tools (its tier
    takes a corpus size)."""
    return get_tier(task.tier).corpus is not None


def default_query(task: Task) -> str:
    """A query to open the explorer's search with: the description of the first requirement the
    view misses (so the scope filter has something to withhold), else of the first requirement."""
    gap = task.oracles.gap_report
    missing = set(gap.missing_requirements) if gap is not None else set()
    required = task.contract.required_evidence
    first = next((r for r in required if r.id in missing), required[0])
    return first.description


def corpus_access(task: Task, spec: ScenarioFile, mode: str) -> pl.DataFrame:
    """The corpus (`access.corpus_frame`) with what `open` of each document answers an agent
    under disclosure `mode` (`open`: `document`, or the error it is shown), visible documents
    first."""
    _known(mode)
    frame = corpus_frame(task, spec)
    return (
        frame.rename({f"open_{mode}": "open"})
        .drop([f"open_{m}" for m in DISCLOSURES if m != mode])
        .sort([pl.col("visible").not_(), "doc_id"])
    )


@dataclass(frozen=True)
class AccessSearch:
    """One search under one disclosure mode: the hits the agent is shown (`shown`, rank order),
    the documents the scope filter withheld from it (`withheld`: never shown), and what the
    tool told the agent of them (`told`, one line: the tool's error for a query it refuses)."""

    shown: pl.DataFrame
    withheld: pl.DataFrame
    told: str


def access_search(
    task: Task, spec: ScenarioFile, mode: str, query: str, k: int = 10
) -> AccessSearch:
    """What `search(query, k)` returns an agent over `task`'s corpus under disclosure `mode`,
    beside what it withheld."""
    _known(mode)
    columns = ["doc_id", "title", "scope"]
    call = json.dumps({"query": query, "k": k})
    outcome = agent_view(task, spec).session(mode).call("search", call)
    found = search_frame(task, spec, query, k)
    if found.is_empty():  # nothing matched under any mode: the frame has no columns
        found = pl.DataFrame(schema={"mode": pl.String, "rank": pl.Int64, "shown": pl.Boolean})
        found = found.with_columns(*(pl.lit(None, pl.String).alias(c) for c in columns))
    found = found.filter(pl.col("mode") == mode)
    shown = found.filter(pl.col("shown")).select("rank", *columns)
    withheld = found.filter(~pl.col("shown")).select(columns)
    if outcome.error is not None:
        return AccessSearch(
            shown=shown.clear(),
            withheld=withheld.clear(),
            told=f"The tool refuses the query: {outcome.error}",
        )
    result = json.loads(outcome.content)
    count, scopes = result.get("withheld"), result.get("withheld_scopes")
    if count is None:
        told = "The tool says nothing of what it withheld (silent)."
    else:
        records = "record was" if count == 1 else "records were"
        told = f"The tool says {count} matching {records} withheld" + (
            f", in scopes {', '.join(scopes)}." if scopes else "."
        )
    return AccessSearch(shown=shown, withheld=withheld, told=told)


def _known(mode: str) -> None:
    if mode not in DISCLOSURES:
        raise ValueError(f"unknown disclosure mode {mode!r}; valid: {', '.join(DISCLOSURES)}")
