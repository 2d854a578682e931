import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="partial-evidence-bench compare")


with app.setup:
    import marimo as mo

    from peb_core import reporting, results, scoring, tasks
    from peb_core.frontends import workbench as wb
    from peb_core.reporting import charts

    RUNS = results.runs_root()
    families = tasks.load_families()
    run_options = wb.run_options(RUNS)


@app.cell
def _():
    # A sweep's folder (`peb sweep`) opens as one table: its runs picked at once.
    sweep_pick = mo.ui.dropdown(
        options=["(none)", *wb.sweep_options(RUNS)], value="(none)", label="Sweep"
    )
    return (sweep_pick,)


@app.cell
def _(sweep_pick):
    _sweep = wb.sweep_options(RUNS).get(sweep_pick.value)
    run_pick = mo.ui.multiselect(
        options=list(run_options),
        value=(
            wb.sweep_picks(run_options, _sweep)
            if _sweep is not None
            else wb.newest_runs(run_options)
        ),
        label=f"Runs to compare (under {RUNS})",
    )
    family_pick = mo.ui.multiselect(options=list(families), value=list(families), label="Families")
    tier_pick = mo.ui.multiselect(options=list(tasks.TIERS), value=list(tasks.TIERS), label="Tiers")
    mo.vstack(
        [
            mo.md("# Compare systems"),
            mo.hstack([sweep_pick, run_pick, family_pick, tier_pick], justify="start"),
        ]
    )
    return family_pick, run_pick, tier_pick


@app.cell
def _(family_pick, run_pick, tier_pick):
    mo.stop(
        len(run_pick.value) < 2,
        mo.callout("Pick two or more runs to compare.", kind="info"),
    )
    mo.stop(
        not family_pick.value or not tier_pick.value,
        mo.callout("Pick at least one family and one tier.", kind="warn"),
    )
    _picked = wb.score_runs(run_options, run_pick.value)
    warnings, left_out = _picked.warnings, _picked.left_out
    mo.stop(
        _picked.scores is None,
        mo.callout(mo.md("  \n".join(left_out) or "No run could be read."), kind="warn"),
    )
    scores = scoring.filter_scores(
        _picked.scores, families=family_pick.value, tiers=tier_pick.value
    )
    mo.stop(
        scores.is_empty(),
        mo.callout("The runs picked hold no task of these families and tiers.", kind="warn"),
    )
    card = scoring.scorecard(scores)
    return card, left_out, scores, warnings


@app.cell
def _(card, left_out, scores, warnings):
    _done, _ = wb.finished(card, scores)
    mo.vstack(
        [
            mo.md(f"## Scorecards ({card.height} rows; only `ok` rows are charted)"),
            wb.scorecard_table(card),
            charts.metric_bars(_done) if _done.height else mo.md("_No finished row to chart._"),
            *(mo.callout(mo.md(line), kind="warn") for line in left_out),
            *(mo.callout(w, kind="warn") for w in warnings[:5]),
        ]
    )
    return


@app.cell
def _(scores):
    mo.vstack(
        [
            mo.md(
                "## Task x system, coloured by verdict\n"
                + ", ".join(scoring.VERDICT_LABELS.values())
            ),
            charts.outcome_grid(scores),
        ]
    )
    return


@app.cell
def _(scores):
    _split = scoring.disagreements(scores)
    mo.vstack(
        [
            mo.md(f"## Tasks where they disagree ({_split.height})"),
            wb.table(_split, freeze_columns_left=["family", "task_id"]),
        ]
    )
    return


@app.cell
def _(scores):
    # The intervention study (docs/benchmark.md §11): shown where a run picked has one.
    _frontier = reporting.frontier_card(scores)
    mo.stop(_frontier.is_empty())
    _paired = scoring.compare_interventions(results.with_intervention(scores))
    mo.vstack(
        [
            mo.md(
                "## Interventions: the frontier they trace\n"
                "Each run pooled over its families: unsafe completeness and answer correctness "
                "against over-blocking, with 95% intervals."
            ),
            wb.table(reporting.frontier_table(_frontier)),
            charts.intervention_frontier(scoring.finished_only(_frontier)),
            mo.md(
                "### Each intervention against `none`, paired on the same tasks (`all`)\n"
                "A = the run of the same system and setting without one, B = with it. "
                + scoring.COMPARE_NOTE
            ),
            wb.table(_paired.filter(_paired["family"] == "all"), page_size=20),
        ]
    )
    return


@app.cell
def _(card):
    reference_pick = mo.ui.dropdown(
        options=card["run"].unique(maintain_order=True).to_list(),
        value=card["run"][0],
        label="Reference run",
    )
    mo.hstack([reference_pick], justify="start")
    return (reference_pick,)


@app.cell
def _(card, reference_pick):
    _diff = wb.differences(card, reference_pick.value)
    mo.vstack(
        [
            mo.md(
                f"## Differences per metric (run minus {wb.markdown_code(reference_pick.value)})"
            ),
            wb.table(_diff),
        ]
    )
    return


@app.cell
def _(reference_pick, scores):
    mo.vstack(
        [
            mo.md(
                f"## Paired tests against {wb.markdown_code(reference_pick.value)}, per family "
                "and pooled (`all`)\n"
                f"Over the tasks both ran: A = {wb.markdown_code(reference_pick.value)}, B = "
                "each other run. " + scoring.COMPARE_NOTE
            ),
            wb.table(wb.paired_tests(scores, reference_pick.value), page_size=20),
        ]
    )
    return


if __name__ == "__main__":
    app.run()
