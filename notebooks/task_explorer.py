import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="partial-evidence-bench task explorer")


@app.cell
def _():
    import json

    import marimo as mo
    import polars as pl

    from peb_core import runs, tasks

    RUNS = runs.runs_root()
    families = tasks.load_families()
    return RUNS, families, json, mo, pl, runs, tasks


@app.cell
def _(families, mo, tasks):
    family_pick = mo.ui.dropdown(options=list(families), value=next(iter(families)), label="Family")
    tier_pick = mo.ui.dropdown(options=list(tasks.TIERS), value="paper", label="Tier")
    seed_pick = mo.ui.number(start=0, stop=10**9, value=11, label="Seed (any integer is a task)")
    return family_pick, seed_pick, tier_pick


@app.cell
def _(families, family_pick, mo, seed_pick, tier_pick):
    _templates = [t.id for t in families[family_pick.value].templates]
    template_pick = mo.ui.dropdown(options=_templates, value=_templates[0], label="Template")
    mo.vstack(
        [
            mo.md("# Task explorer"),
            mo.hstack([family_pick, template_pick, seed_pick, tier_pick], justify="start"),
        ]
    )
    return (template_pick,)


@app.cell
def _(families, family_pick, seed_pick, tasks, template_pick, tier_pick):
    spec = families[family_pick.value]
    task = tasks.generate_task(
        spec, template_pick.value, int(seed_pick.value), tier=tier_pick.value
    )
    docs = tasks.documents_frame(task, spec)
    return docs, task


@app.cell
def _(docs, mo, task, tasks):
    def _cards(visible):
        cards = tasks.document_cards(docs, visible=visible)
        return [
            mo.callout(mo.md(c.markdown), kind="warn") if c.boundary_signal else mo.md(c.markdown)
            for c in cards
        ] or [mo.md("_(none)_")]

    mo.vstack(
        [
            mo.md(
                f"## `{task.task_id}` ({task.family}, {task.tier} tier)\n{task.prompt}\n\n"
                f"Completeness `{task.oracles.completeness}`, partial answer permitted "
                f"`{task.contract.partial_response_permitted}`, user scopes "
                f"`{', '.join(task.user_scopes)}`, evidence topologies "
                f"`{', '.join(task.topologies) or '-'}`; the tracker's boundary sentence is "
                "marked."
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
def _(RUNS, mo, runs, task):
    _responses = runs.responses_to_task(RUNS, task.task_id, task.family)
    mo.vstack(
        [
            mo.md(f"## Stored replies to this task (runs under `{RUNS}`)"),
            mo.ui.table(_responses, selection=None, show_column_summaries=False)
            if _responses.height
            else mo.md("_No stored run covers this task (fresh seeds are not run yet)._"),
        ]
    )
    return


if __name__ == "__main__":
    app.run()
