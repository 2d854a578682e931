import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="partial-evidence-bench workbench")


@app.cell
def _():
    from pathlib import Path

    import marimo as mo

    import peb_core

    RUNS = Path(__file__).resolve().parent.parent / "runs"
    families = peb_core.load_families()
    return RUNS, families, mo, peb_core


@app.cell
def _(RUNS, families, mo, peb_core):
    run_dirs = peb_core.discover_runs(RUNS)
    family_pick = mo.ui.multiselect(options=list(families), value=list(families), label="Families")
    run_pick = mo.ui.multiselect(
        options=[str(p.relative_to(RUNS)) for p in run_dirs],
        value=[str(p.relative_to(RUNS)) for p in run_dirs],
        label="Runs on disk",
    )
    mo.vstack([mo.md("# partial-evidence-bench workbench"), mo.hstack([family_pick, run_pick])])
    return family_pick, run_pick


@app.cell
def _(RUNS, family_pick, mo, peb_core, run_pick):
    card, warnings = peb_core.scorecard_of([RUNS / r for r in run_pick.value])
    card = card.filter(card["family"].is_in(family_pick.value))
    mo.vstack(
        [
            mo.md("## Scorecard (recomputed from the stored responses)"),
            mo.ui.table(card, selection=None),
            *(mo.callout(w, kind="warn") for w in warnings),
        ]
    )
    return


@app.cell
def _(family_pick, families, mo):
    templates = [t.id for f in family_pick.value for t in families[f].templates]
    task_pick = mo.ui.dropdown(
        options=templates, value=templates[0] if templates else None, label="Template"
    )
    seed_pick = mo.ui.number(start=0, stop=10**9, value=11, label="Seed")
    mo.vstack(
        [mo.md("## One task: visible versus hidden evidence"), mo.hstack([task_pick, seed_pick])]
    )
    return seed_pick, task_pick


@app.cell
def _(family_pick, families, mo, peb_core, seed_pick, task_pick):
    spec = peb_core.families_with_template(
        [families[f] for f in family_pick.value], task_pick.value
    )[0]
    task = peb_core.generate_task(spec, task_pick.value, int(seed_pick.value))
    docs = peb_core.documents_frame(task)
    mo.vstack(
        [
            mo.md(
                f"**{task.task_id}**: {task.prompt}  \n"
                f"completeness: `{task.oracles.completeness}`, partial permitted: "
                f"`{task.contract.partial_response_permitted}`"
            ),
            mo.hstack(
                [
                    mo.vstack([mo.md("### Visible"), mo.ui.table(docs.filter(docs["visible"]))]),
                    mo.vstack([mo.md("### Hidden"), mo.ui.table(docs.filter(~docs["visible"]))]),
                ],
                widths="equal",
            ),
            mo.md("### Oracles"),
            mo.json(task.oracles.model_dump(mode="json")),
        ]
    )
    return


if __name__ == "__main__":
    app.run()
