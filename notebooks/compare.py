import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="partial-evidence-bench compare")


@app.cell
def _():
    import marimo as mo
    import polars as pl

    import peb_core
    from peb_core.reporting import charts

    RUNS = peb_core.results.runs_root()
    families = peb_core.load_families()
    run_dirs = {str(p.relative_to(RUNS)): p for p in peb_core.discover_runs(RUNS)}
    return RUNS, charts, families, mo, peb_core, pl, run_dirs


@app.cell
def _(RUNS, families, mo, peb_core, run_dirs):
    _default = [r for r in run_dirs if r.startswith("baselines/")] or list(run_dirs)[:2]
    run_pick = mo.ui.multiselect(
        options=list(run_dirs), value=_default, label=f"Runs to compare (under {RUNS})"
    )
    family_pick = mo.ui.multiselect(options=list(families), value=list(families), label="Families")
    tier_pick = mo.ui.multiselect(
        options=list(peb_core.tasks.TIERS), value=list(peb_core.tasks.TIERS), label="Tiers"
    )
    mo.vstack(
        [mo.md("# Compare systems"), mo.hstack([run_pick, family_pick, tier_pick], justify="start")]
    )
    return family_pick, run_pick, tier_pick


@app.cell
def _(family_pick, mo, peb_core, run_dirs, run_pick, tier_pick):
    mo.stop(
        len(run_pick.value) < 2,
        mo.callout("Pick two or more runs to compare.", kind="info"),
    )
    mo.stop(
        not family_pick.value or not tier_pick.value,
        mo.callout("Pick at least one family and one tier.", kind="warn"),
    )
    _scores, warnings = peb_core.score_run_dirs([run_dirs[r] for r in run_pick.value])
    scores = peb_core.scoring.filter_scores(
        _scores, families=family_pick.value, tiers=tier_pick.value
    )
    mo.stop(
        scores.is_empty(),
        mo.callout("The runs picked hold no task of these families and tiers.", kind="warn"),
    )
    card = peb_core.scorecard(scores)
    return card, scores, warnings


@app.cell
def _(card, charts, mo, peb_core, warnings):
    mo.vstack(
        [
            mo.md(f"## Scorecards ({card.height} rows)"),
            mo.ui.table(
                peb_core.scoring.glance(card, intervals=True),
                selection=None,
                show_column_summaries=False,
                page_size=25,
            ),
            charts.metric_bars(card),
            *(mo.callout(w, kind="warn") for w in warnings[:5]),
        ]
    )
    return


@app.cell
def _(charts, mo, scores):
    mo.vstack(
        [
            mo.md(
                "## Task x system, coloured by outcome\n"
                "correct, unsafe, over-blocked, false incomplete, invalid"
            ),
            charts.outcome_grid(scores),
        ]
    )
    return


@app.cell
def _(mo, peb_core, scores):
    _split = peb_core.scoring.disagreements(scores)
    mo.vstack(
        [
            mo.md(f"## Tasks where they disagree ({_split.height})"),
            mo.ui.table(_split, selection=None, show_column_summaries=False),
        ]
    )
    return


@app.cell
def _(card, mo):
    reference_pick = mo.ui.dropdown(
        options=card["run"].unique(maintain_order=True).to_list(),
        value=card["run"][0],
        label="Reference run",
    )
    mo.hstack([reference_pick], justify="start")
    return (reference_pick,)


@app.cell
def _(card, mo, peb_core, pl, reference_pick):
    _diff = peb_core.scoring.metric_differences(card, reference_pick.value)
    mo.vstack(
        [
            mo.md(f"## Differences per metric (run minus `{reference_pick.value}`)"),
            mo.ui.table(
                _diff.with_columns(pl.selectors.float().round(3)),
                selection=None,
                show_column_summaries=False,
            ),
        ]
    )
    return


@app.cell
def _(mo, peb_core, pl, reference_pick, scores):
    _tests = peb_core.compare_to_reference(scores, reference_pick.value)
    mo.vstack(
        [
            mo.md(
                f"## Paired tests against `{reference_pick.value}`, per family and pooled (`all`)\n"
                f"Over the tasks both ran: A = `{reference_pick.value}`, B = each other run. "
                + peb_core.scoring.COMPARE_NOTE
            ),
            mo.ui.table(
                # pooled rows first
                peb_core.scoring.compare_table(
                    _tests.sort(pl.col("family") != "all", maintain_order=True)
                ),
                selection=None,
                show_column_summaries=False,
                page_size=20,
            ),
        ]
    )
    return


if __name__ == "__main__":
    app.run()
