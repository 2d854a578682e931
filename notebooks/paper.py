import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="partial-evidence-bench paper")


@app.cell
def _():
    from pathlib import Path

    import marimo as mo

    from peb_core import reporting, runs, tasks

    # `python notebooks/paper.py -- --out DIR [--runs DIR] [--tier hard]` exports headless.
    ARGS = mo.cli_args()
    RUNS = Path(str(ARGS.get("runs"))) if ARGS.get("runs") else runs.runs_root()
    return ARGS, Path, RUNS, mo, reporting, tasks


@app.cell
def _(ARGS, mo, tasks):
    tier_pick = mo.ui.dropdown(
        options=list(tasks.TIERS), value=str(ARGS.get("tier") or "paper"), label="Tier"
    )
    mo.hstack([tier_pick], justify="start")
    return (tier_pick,)


@app.cell
def _(RUNS, mo, reporting, tier_pick):
    tables = reporting.tables(RUNS, tier_pick.value)
    figures = reporting.figures(RUNS, tier_pick.value)
    mo.md(
        f"# Paper tables and figures ({tier_pick.value} tier)\n\n"
        f"Regenerated from `scenarios/` and the runs in `{RUNS}`; nothing is copied from the "
        "paper except the published Table 4, shown beside the measured one."
    )
    return figures, tables


@app.cell
def _(mo, reporting, tables):
    mo.vstack(
        [
            mo.vstack([mo.md(f"## {reporting.CAPTIONS[stem]}"), mo.ui.table(frame, selection=None)])
            for stem, frame in tables.items()
            if stem != "table4_baselines"
        ]
    )
    return


@app.cell
def _(mo, reporting, tables):
    table4 = tables["table4_baselines"]
    mismatches = table4.filter(~table4["matches_published"])
    mo.vstack(
        [
            mo.md(f"## {reporting.CAPTIONS['table4_baselines']}"),
            mo.ui.table(table4, selection=None),
            mo.callout(
                f"{mismatches.height} of {table4.height} rows differ from the published table",
                kind="danger",
            )
            if mismatches.height
            else mo.callout("Every row equals the published table", kind="success"),
        ]
    )
    return


@app.cell
def _(figures, mo, reporting):
    mo.vstack(
        [mo.md("## Figures")]
        + [
            mo.vstack([mo.md(f"### {reporting.CAPTIONS[stem]}"), chart])
            for stem, chart in figures.items()
        ]
        if figures
        else [mo.md("## Figures"), mo.callout("No runs found: no figures.", kind="warn")]
    )
    return


@app.cell
def _(ARGS, Path, mo):
    out_text = mo.ui.text(
        value=str(ARGS.get("out") or Path.cwd() / "paper_export"),
        label="Output folder",
        full_width=True,
    )
    export_button = mo.ui.run_button(
        label="Export tables (md, tex, csv) and figures (png, svg, pdf)"
    )
    mo.vstack([mo.md("## Export"), out_text, export_button])
    return export_button, out_text


@app.cell
def _(ARGS, Path, RUNS, export_button, mo, out_text, reporting, tier_pick):
    target = ARGS.get("out") or (out_text.value if export_button.value else None)
    if target:
        written = reporting.export_report(Path(str(target)), RUNS, tier_pick.value)
        print(*written, sep="\n")
        result = mo.callout(f"Wrote {len(written)} files to `{target}`", kind="success")
    else:
        result = mo.md("Press the button to export.")
    mo.vstack([result])
    return


if __name__ == "__main__":
    app.run()
