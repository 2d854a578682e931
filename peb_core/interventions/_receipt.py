"""`boundary_receipt` (docs/benchmark.md §11): the paper's "explicit boundary metadata" put
where the consumer reads. The platform appends to the response a receipt of what the access
layer withheld while it was given: for an agent, the documents its searches' pages left out and
the opens it refused, in the scopes then in force; for a one-shot system, every document the
bundle left out. Under `counted` and `named` disclosure (and for one-shot systems) the receipt
counts them by scope; under `silent` it says only that something was withheld. It is the
platform's statement that the evidence is incomplete: the response is shown claiming
`incomplete` and, where the system gave no gap report and the receipt names scopes, reporting
those scopes as missing; so on a complete task whose corpus keeps records the user may not see,
it shows as over-warning. Under `--interface chat` the receipt is words after the message, read
by the prose reader with it. A reply that withheld nothing, or one that cannot be read, gets no
receipt."""

from __future__ import annotations

from collections import Counter

from ..access import get_disclosure
from ..systems import Platform, Reply
from ..tasks import GapReport
from ._intervention import AtResponse, Intervention, Setting
from ._shown import own_reading, restated


def receipt(given: AtResponse) -> tuple[str, tuple[str, ...]]:
    """The receipt's words for what the access layer withheld (`given.answered`), and the
    scopes it names (none under a disclosure mode that says nothing of what it withholds)."""
    kept = {d.doc_id: d.scope for d in given.platform.documents}
    counts = Counter(kept[d] for d in given.answered.withheld)
    mode = given.disclosure
    if mode is not None and get_disclosure(mode).notice(["-"])[0] is None:
        return (
            "Platform receipt: while this response was prepared, the access layer withheld "
            "documents the user may not see; the evidence behind it is incomplete.",
            (),
        )
    scopes = tuple(sorted(counts, key=lambda s: (-counts[s], s)))
    by_scope = ", ".join(f"{counts[s]} in scope {s}" for s in scopes)
    total = sum(counts.values())
    documents = "document" if total == 1 else "documents"
    return (
        f"Platform receipt: while this response was prepared, the access layer withheld {total} "
        f"{documents} the user may not see ({by_scope}); the evidence behind it is incomplete.",
        scopes,
    )


def _receipt(reply: Reply, given: AtResponse) -> Platform | None:
    own = own_reading(reply, given)
    if not own.readable or not given.answered.withheld:
        return None
    said, scopes = receipt(given)
    gap = None
    if own.gap_report is None and scopes:
        partial = own.answer is not None
        gap = GapReport.of((), scopes, partial=partial)
    return Platform(
        intervention=BOUNDARY_RECEIPT.name, said=said, response=restated(reply, given, said, gap)
    )


def _refuses(setting: Setting) -> str | None:
    if setting.frontend == "inspect":
        return (
            "boundary_receipt: the inspect task scores the model's reply as inspect gives it; "
            "run the receipt with peb run, the workbench or peb mcp serve"
        )
    return None


BOUNDARY_RECEIPT = Intervention(
    "boundary_receipt",
    "the platform appends to the response a receipt of what the access layer withheld while "
    "it was given (counts by scope; under silent disclosure, that something was)",
    refuses=_refuses,
    respond=_receipt,
)
