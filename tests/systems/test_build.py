"""From a name to a system: baselines by name, model strings into model systems, and one clear
SystemSpecError for every name, protocol or setting that cannot be built."""

from __future__ import annotations

import pytest

from peb_core.systems import BASELINES, ModelSystem, SystemSpecError, build_system
from peb_core.tasks import load_families

FAMILIES = list(load_families().values())


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_a_baseline_is_found_by_its_name(name: str) -> None:
    assert build_system(name, FAMILIES) is BASELINES[name]


def test_a_model_string_builds_a_model_system_with_what_was_asked() -> None:
    system = build_system(
        "openai/m",
        FAMILIES,
        protocol="plain",
        temperature=0.3,
        max_tokens=77,
        api_base="http://user:secret@127.0.0.1:9/v1",
        timeout_s=5,
    )
    assert isinstance(system, ModelSystem)
    assert system.name == "openai/m:plain@1" and system.view == "model"
    config = system.config()
    assert config["protocol"] == "plain@1" and config["temperature"] == 0.3
    assert config["max_tokens"] == 77 and config["timeout_s"] == 5
    assert "secret" not in str(config["api_base"])
    assert build_system("openai/m", FAMILIES, protocol="boundary_metadata").view == "boundary"


@pytest.mark.parametrize(
    ("name", "kwargs", "fragment"),
    [
        ("", {}, "neither a baseline"),
        ("gpt 4o", {}, "neither a baseline"),
        ("openai/m", {"protocol": "nope@1"}, "nope"),
        ("openai/m", {"timeout_s": 0}, "timeout must be positive"),
        ("openai/m", {"max_tokens": -1}, "max_tokens must be positive"),
        ("local/no-such-model", {}, "no-such-model"),
        ("nosuchprovider/model-x", {}, "unknown provider 'nosuchprovider'"),
        ("model-x", {}, "no provider in model 'model-x'"),
    ],
)
def test_what_cannot_be_built_is_one_line_naming_it(
    name: str, kwargs: dict[str, object], fragment: str
) -> None:
    with pytest.raises(SystemSpecError) as caught:
        build_system(name, FAMILIES, **kwargs)  # type: ignore[arg-type]
    message = str(caught.value)
    assert fragment in message and "\n" not in message
