"""docs/benchmark.md §9.3: the contract's source is a generation parameter of the tiers with
corpora. A run records it in its manifest (so another source is another run, in a folder of its
own, and a manifest written before it was recorded reads as `given`), and every scorecard row
carries it as a column (`-` for a one-shot run), which `peb score` prints and `peb compare`
names; a run given its contract and one that must find it pair task by task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from peb_core import load_families, run_system
from peb_core.frontends import cli
from peb_core.runs import read_manifest, run_folder_name
from peb_core.systems import BASELINES, build_system

DD = load_families()["due_diligence_v1"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("contract_runs")
    careful = build_system("agent_fail_and_report", [DD])
    made = {name: root / name for name in ("given", "corpus", "one_shot")}
    run_system(careful, [DD], made["given"], seeds=[11], tier="agent")
    run_system(careful, [DD], made["corpus"], seeds=[11], tier="agent", contract="corpus")
    run_system(BASELINES["fail_and_report"], [DD], made["one_shot"], seeds=[11])
    return made


def test_a_run_records_where_its_contract_is_found(runs: dict[str, Path]) -> None:
    assert read_manifest(runs["corpus"]).contract == "corpus"
    assert read_manifest(runs["given"]).contract == "given"
    assert read_manifest(runs["one_shot"]).contract is None  # a tier without corpora
    careful = build_system("agent_fail_and_report", [DD])
    with pytest.raises(ValueError, match="holds a different run: contract corpus -> given"):
        run_system(careful, [DD], runs["corpus"], seeds=[11], tier="agent")
    folders = {
        contract: run_folder_name(careful, [DD], [11], "agent", contract=contract)
        for contract in (None, "given", "corpus")
    }
    assert folders[None] == folders["given"] != folders["corpus"]


def test_a_manifest_from_before_reads_as_given(runs: dict[str, Path], tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    for name in ("manifest.json", "responses.jsonl"):
        (old / name).write_bytes((runs["given"] / name).read_bytes())
    manifest = json.loads((old / "manifest.json").read_text())
    del manifest["contract"]
    (old / "manifest.json").write_text(json.dumps(manifest))
    assert read_manifest(old).contract is None
    careful = build_system("agent_fail_and_report", [DD])
    resumed = run_system(careful, [DD], old, seeds=[11], tier="agent")  # the same run
    assert resumed.counts.ok == 6


def test_score_and_compare_name_the_contract(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [str(runs[name]) for name in ("given", "corpus", "one_shot")]
    assert cli.main(["score", *paths, "--json"]) in (0, None)
    rows = {r["run"]: r for r in json.loads(capsys.readouterr().out)}
    assert {run: r["contract"] for run, r in rows.items()} == {
        "given": "given",
        "corpus": "corpus",
        "one_shot": "-",
    }
    for row in (rows["given"], rows["corpus"]):  # the careful agent, either way
        assert (row["unsafe_completeness_rate"], row["answer_correctness"]) == (0.0, 1.0)
        assert row["gap_report_quality"] == 1.0
    assert cli.main(["score", *paths]) in (0, None)
    table = capsys.readouterr().out
    header = next(line for line in table.splitlines() if "contract" in line)
    assert header.index("disclosure") < header.index("contract") < header.index("max_steps")
    assert cli.main(["compare", paths[0], paths[1]]) in (0, None)
    out = capsys.readouterr().out
    assert out.startswith(
        f"A = {paths[0]} (agent_fail_and_report contract=given), "
        f"B = {paths[1]} (agent_fail_and_report contract=corpus)"
    )
    assert cli.main(["compare", paths[0], paths[1], "--json"]) in (0, None)
    [answer] = [
        r
        for r in json.loads(capsys.readouterr().out)
        if r["family"] == "all" and r["metric"] == "answer_correctness"
    ]
    assert answer["n_pairs"] == 6 and answer["difference"] == 0.0  # the same six tasks


def test_the_paper_s_agent_table_is_by_contract(runs: dict[str, Path]) -> None:
    """The same system given its contract and finding it are two rows told apart by their
    `contract`, with no run column needed."""
    from peb_core.reporting import agent_results, tables

    table = agent_results([runs["given"], runs["corpus"]], "agent")
    assert "run" not in table.columns
    assert table.select("system", "contract").rows() == [
        ("agent_fail_and_report", "corpus"),
        ("agent_fail_and_report", "given"),
    ]
    assert (table["coverage"] == 1.0).all()
    assert tables([runs["given"], runs["corpus"]], "agent")["table_agents"].equals(table)
