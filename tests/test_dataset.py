"""The dataset release (`peb dataset export`): each configuration, loaded from the folder by the
Hugging Face `datasets` library (offline, in a subprocess with its own HF_HOME), holds exactly
the generated tasks and their model views, byte for byte in their JSON; the card's YAML lists
every configuration with files that exist and its numbers are the files'; the model views leak
nothing hidden; and the card's own command exports the same bytes again."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from leaks import model_view_leaks

from peb_core import ScenarioFile, Task, generate_tasks, load_families, model_view, scenario_hash
from peb_core._provenance import package_version
from peb_core.access import agent_view
from peb_core.dataset import (
    CARD,
    COLUMNS,
    JSON_COLUMN,
    KINDS,
    LICENSE,
    config_name,
    size_category,
)
from peb_core.frontends.cli import main
from peb_core.tasks import PRESSURE_KINDS, TIERS, Tier, get_tier

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("datasets") is None,
    reason="the `datasets` library is not installed (the `dev` extra installs it)",
)

ROOT = Path(__file__).resolve().parent.parent

LOAD = """
import json, sys
import datasets
from huggingface_hub import DatasetCard

folder = sys.argv[1]
out = {"card": DatasetCard.load(f"{folder}/README.md").data.to_dict(), "configs": {}}
for name in datasets.get_dataset_config_names(folder):
    loaded = datasets.load_dataset(folder, name)
    out["configs"][name] = {split: rows.to_list() for split, rows in loaded.items()}
out["default"] = {split: rows.to_list() for split, rows in datasets.load_dataset(folder).items()}
json.dump(out, sys.stdout)
"""
"""Every configuration the card names, and the one loaded with no name, loaded as a user would,
as JSON on stdout."""

Rows = list[dict[str, Any]]
GAP = '{"response": {"answer": null, "completeness": "incomplete", "gap_report": null}}'
"""A submit that reports a gap: the user who pushes back answers it."""


def _export(out: Path, *options: str) -> None:
    assert main(["dataset", "export", "--out", str(out), *options]) == 0


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default release: every tier of every family at its canonical seeds."""
    out = tmp_path_factory.mktemp("release") / "dataset"
    _export(out)
    return out


@pytest.fixture(scope="module")
def loaded(release: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("hf_home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env |= {"HF_HOME": str(home), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-c", LOAD, str(release)],
        capture_output=True,
        cwd=home,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _split(loaded: dict[str, Any], tier: str, kind: str) -> Rows:
    splits = loaded["configs"][f"{tier}-{kind}"]
    assert list(splits) == ["test"]
    rows: Rows = splits["test"]
    return rows


@pytest.mark.parametrize("tier", TIERS)
def test_each_configuration_loads_as_the_generated_tasks_and_views(
    loaded: dict[str, Any], families: dict[str, ScenarioFile], tier: Tier
) -> None:
    tasks = generate_tasks(families.values(), tier=tier)
    rows, views = _split(loaded, tier, "tasks"), _split(loaded, tier, "model_views")
    assert [r["task_json"] for r in rows] == [t.model_dump_json() for t in tasks]
    assert [v["view_json"] for v in views] == [
        model_view(t, families[t.family]).model_dump_json() for t in tasks
    ]
    for kind, got in zip(KINDS, (rows, views), strict=True):
        assert all(list(r) == [c.name for c in COLUMNS[kind]] for r in got), kind
    for row, view, task in zip(rows, views, tasks, strict=True):
        assert (row["task_id"], row["family"], row["template"], row["seed"], row["tier"]) == (
            task.task_id,
            task.family,
            task.template,
            task.seed,
            task.tier,
        )
        gap = task.oracles.gap_report
        assert row["completeness"] == task.oracles.completeness
        assert row["partial_response_permitted"] == task.contract.partial_response_permitted
        assert row["missing_requirements"] == (gap.missing_requirements if gap else [])
        assert row["missing_scopes"] == (gap.missing_scopes if gap else [])
        assert row["topologies"] == list(task.topologies)
        # what the user says when it pushes back (§10.3): on tiers with corpora, for a harness
        # of its own to play; the live session's words, drawn from the seed
        pushed = get_tier(tier).corpus is not None
        assert (row["pressure"] is not None, row["pressure_kind"] is not None) == (pushed, pushed)
        if pushed:
            session = agent_view(task, families[task.family]).session(followup="pressure")
            said = json.loads(session.call("submit", GAP).content)["user"]
            assert row["pressure"] == said and row["pressure_kind"] in PRESSURE_KINDS
            session = agent_view(task, families[task.family]).session(
                followup="pressure", pushes=3
            )
            later = [json.loads(session.call("submit", GAP).content)["user"] for _ in range(3)]
            assert later[0] == said and row["later_pressures"] == later[1:]
        else:
            assert row["later_pressures"] == []
        assert (view["family"], view["prompt"]) == (task.family, task.prompt)
        assert row["view_sha256"] == view["view_sha256"] == _sha256(view["view_json"].encode())
    assert len({v["view_sha256"] for v in views}) == len(views)


def test_the_card_lists_every_configuration_with_its_files_and_numbers(
    loaded: dict[str, Any], release: Path, tmp_path: Path
) -> None:
    card = loaded["card"]
    names = [config_name(tier, kind) for tier in TIERS for kind in KINDS]
    assert [c["config_name"] for c in card["configs"]] == names == list(loaded["configs"])
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert card["license"] == LICENSE == pyproject["project"]["license"].lower()
    assert card["size_categories"] == ["n<1K"] and card["language"] == ["en"]
    assert card["task_categories"] and card["tags"] and card["pretty_name"]

    text = (release / CARD).read_text(encoding="utf-8")
    listed = set()
    for config in card["configs"]:
        [data_files] = config["data_files"]
        assert data_files["split"] == "test"
        paths = sorted(release.glob(data_files["path"]))
        assert paths, data_files["path"]
        listed.update(paths)
        tier, kind = config["config_name"].split("-")
        rows = len(loaded["configs"][config["config_name"]]["test"])
        for path in paths:
            data = path.read_bytes()
            cells = [rows, f"`{path.relative_to(release)}`", f"{len(data):,}", f"`{_sha256(data)}`"]
            assert f"| `{config['config_name']}` | {' | '.join(map(str, cells))} |" in text
        # The JSON column's lines are what `peb tasks export` writes.
        jsonl = tmp_path / f"{config['config_name']}.jsonl"
        view = ["--model-view"] if kind == "model_views" else []
        assert main(["tasks", "export", "--tier", tier, *view, "--out", str(jsonl)]) == 0
        digest = _sha256(jsonl.read_bytes())
        assert f"| `{config['config_name']}` | `{JSON_COLUMN[kind]}` | `{digest}` |" in text
    assert listed == set(release.rglob("*.parquet"))
    assert f"`{scenario_hash()}`" in text
    versions = f"partial-evidence-bench {package_version()}, the parquet files written by polars"
    assert f"{versions} {pl.__version__}:" in text


def test_the_folder_loads_with_no_configuration_named_as_the_paper_tiers_tasks(
    loaded: dict[str, Any],
) -> None:
    """As a Hub dataset does: one configuration is marked the default (without one,
    `load_dataset(folder)` fails with "Config name is missing")."""
    defaults = [c["config_name"] for c in loaded["card"]["configs"] if c.get("default")]
    assert defaults == ["paper-tasks"]
    assert loaded["default"] == loaded["configs"]["paper-tasks"]
    assert len(loaded["default"]["test"]) == 24 * len(load_families())


def test_a_release_without_the_paper_tier_defaults_to_its_first_tiers_tasks(
    tmp_path: Path,
) -> None:
    out = tmp_path / "hard"
    _export(out, "--tier", "hard", "--family", "procurement_v1")
    header = (out / CARD).read_text(encoding="utf-8").split("---")[1]
    assert header.count("default: true") == 1
    assert '- config_name: "hard-tasks"\n  default: true\n' in header


def _joined(loaded: dict[str, Any], tier: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each model view row with its task row, joined on `view_sha256`."""
    tasks = {r["view_sha256"]: r for r in _split(loaded, tier, "tasks")}
    return [(v, tasks[v["view_sha256"]]) for v in _split(loaded, tier, "model_views")]


@pytest.mark.parametrize("tier", TIERS)
def test_model_views_leak_nothing_the_tasks_hide(
    loaded: dict[str, Any], families: dict[str, ScenarioFile], tier: str
) -> None:
    """Each model view row, every column and value (its view parsed), against its task; the same
    check flags every task row, so it can fail."""
    for view, row in _joined(loaded, tier):
        task = Task.model_validate_json(row["task_json"])
        spec = families[task.family]
        shown = json.dumps({**view, "view_json": json.loads(view["view_json"])})
        assert model_view_leaks(shown, task, spec) == [], task.task_id
        whole = json.dumps({**row, "task_json": json.loads(row["task_json"])})
        assert model_view_leaks(whole, task, spec), task.task_id


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--tier", "hard", "--family", "due_diligence_v1", "--seeds", "400-401,9"],
        ["--tier", "agent", "--family", "procurement_v1", "--seeds", "11", "--contract", "corpus"],
    ],
    ids=["default", "selection", "contract"],
)
def test_the_cards_command_exports_the_same_bytes(
    release: Path, tmp_path: Path, options: list[str]
) -> None:
    """The command in a card, run again, writes byte-identical files: parquet and card alike."""
    first = release if not options else tmp_path / "first"
    if options:
        _export(first, *options)
    command = re.search(r"```bash\n(peb dataset export [^\n]*)\n```", (first / CARD).read_text())
    assert command is not None
    again = tmp_path / "again"
    args = [str(again) if a == "DIR" else a for a in shlex.split(command[1])[1:]]
    assert main(args) == 0
    assert _files(again) == _files(first)
    if "hard" in options:  # only the tier asked for, and its 18 tasks
        assert sorted(p.name for p in (first / "data").iterdir()) == [
            "hard-model_views",
            "hard-tasks",
        ]
        assert "| `hard-tasks` | 18 |" in (first / CARD).read_text()


def test_a_release_whose_contracts_are_found_says_so(tmp_path: Path) -> None:
    """`--contract corpus`: each task of a tier with corpora says where its contract is found,
    its model view lists no requirement (its procedure does, among the documents), and the
    card's commands ask for the same (an agent to run on it); the paper tier's stay given."""
    out = tmp_path / "found"
    _export(out, "--family", "legal_review_v1", "--seeds", "11", "--contract", "corpus")
    for tier in TIERS:
        source = "given" if TIERS[tier].corpus is None else "corpus"
        tasks = pl.read_parquet(out / f"data/{tier}-tasks/test-00000-of-00001.parquet")
        views = pl.read_parquet(out / f"data/{tier}-model_views/test-00000-of-00001.parquet")
        assert tasks["contract"].to_list() == [source] * tasks.height == [source] * 6
        by_view = {
            r["view_sha256"]: Task.model_validate_json(r["task_json"]) for r in tasks.to_dicts()
        }
        for row in views.iter_rows(named=True):
            view = json.loads(row["view_json"])
            task = by_view[row["view_sha256"]]
            procedure = {d.doc_id for d in task.documents if d.role == "procedure"}
            procedures = [d for d in view["documents"] if d["doc_id"] in procedure]
            if source == "corpus":
                assert view["contract"]["required_evidence"] == [] and len(procedures) == 1
            else:
                assert view["contract"]["required_evidence"] and not procedures
    card = (out / CARD).read_text()
    assert "--contract corpus" in card
    assert "peb run --model agent:openai/NAME" in card and "--tier agent" in card
    assert re.search(r"peb run --model openai/NAME [^\n]*--tier paper", card)
    assert not re.search(r"--contract corpus[^\n]*--tier paper", card)


@pytest.mark.parametrize(
    ("rows", "category"),
    [(0, "n<1K"), (999, "n<1K"), (1_000, "1K<n<10K"), (99_999, "10K<n<100K"), (10**12, "n>1T")],
)
def test_size_category_is_the_hubs_bucket(rows: int, category: str) -> None:
    assert size_category(rows) == category
