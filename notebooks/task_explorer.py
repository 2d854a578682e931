import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="partial-evidence-bench task explorer")


@app.cell
def _():
    import json
    import os
    from pathlib import Path

    import marimo as mo
    import polars as pl

    import peb_core

    RUNS = Path(os.environ.get("PEB_RUNS_DIR") or Path(__file__).resolve().parent.parent / "runs")
    families = peb_core.load_families()
    return RUNS, families, json, mo, peb_core, pl


@app.cell
def _(families, mo):
    family_pick = mo.ui.dropdown(options=list(families), value=next(iter(families)), label="Family")
    seed_pick = mo.ui.number(start=0, stop=10**9, value=11, label="Seed (any integer is a task)")
    return family_pick, seed_pick


@app.cell
def _(families, family_pick, mo, seed_pick):
    _templates = [t.id for t in families[family_pick.value].templates]
    template_pick = mo.ui.dropdown(options=_templates, value=_templates[0], label="Template")
    mo.vstack(
        [
            mo.md("# Task explorer"),
            mo.hstack([family_pick, template_pick, seed_pick], justify="start"),
        ]
    )
    return (template_pick,)


@app.cell
def _(families, family_pick, peb_core, seed_pick, template_pick):
    spec = families[family_pick.value]
    task = peb_core.generate_task(spec, template_pick.value, int(seed_pick.value))
    docs = peb_core.documents_frame(task, spec)
    return docs, spec, task


@app.cell
def _(docs, mo, pl, task):
    def _cards(visible):
        rows = docs.filter(pl.col("visible") == visible).to_dicts()
        out = []
        for d in rows:
            body = d["body"]
            if d["boundary_text"]:
                body = body.replace(d["boundary_text"], f"<mark>{d['boundary_text']}</mark>")
            card = mo.md(
                f"**{d['title']}** `{d['doc_id']}`  \n{d['role']}, scope `{d['scope']}`, "
                f"evidence `{d['evidence_family']}`\n\n{body}"
            )
            out.append(mo.callout(card, kind="warn") if d["boundary_signal"] else card)
        return out or [mo.md("_(none)_")]

    mo.vstack(
        [
            mo.md(
                f"## `{task.task_id}` ({task.family})\n{task.prompt}\n\n"
                f"Completeness `{task.oracles.completeness}`, partial answer permitted "
                f"`{task.contract.partial_response_permitted}`, user scopes "
                f"`{', '.join(task.user_scopes)}`; the tracker's boundary sentence is marked."
            ),
            mo.hstack(
                [
                    mo.vstack([mo.md("### Visible (authorized)"), *_cards(True)]),
                    mo.vstack([mo.md("### Hidden (outside the view)"), *_cards(False)]),
                ],
                widths="equal",
                align="start",
            ),
        ]
    )
    return


@app.cell
def _(json, mo, pl, task):
    _contract = pl.DataFrame(
        [
            {"requirement": r.id, "description": r.description, "informs": ", ".join(r.informs)}
            for r in task.contract.required_evidence
        ]
    )
    _o = task.oracles
    mo.vstack(
        [
            mo.md("## Contract"),
            mo.ui.table(_contract, selection=None, show_column_summaries=False),
            mo.md("## Oracles"),
            mo.hstack(
                [
                    mo.vstack(
                        [mo.md("**complete answer**"), mo.json(json.dumps(_o.complete_answer))]
                    ),
                    mo.vstack(
                        [mo.md("**authorized answer**"), mo.json(json.dumps(_o.authorized_answer))]
                    ),
                    mo.vstack(
                        [
                            mo.md(f"**completeness** `{_o.completeness}`; **gap report**"),
                            mo.json(_o.gap_report.model_dump_json() if _o.gap_report else "null"),
                        ]
                    ),
                ],
                widths="equal",
                align="start",
            ),
        ]
    )
    return


@app.cell
def _(RUNS, mo, peb_core, task):
    _responses = (
        peb_core.runs.responses_to_task(RUNS, task.task_id, task.family) if RUNS.exists() else None
    )
    mo.vstack(
        [
            mo.md(f"## Stored responses to this task (runs under `{RUNS}`)"),
            mo.ui.table(_responses, selection=None, show_column_summaries=False)
            if _responses is not None and _responses.height
            else mo.md("_No stored run covers this task (fresh seeds are not run yet)._"),
        ]
    )
    return


if __name__ == "__main__":
    app.run()
