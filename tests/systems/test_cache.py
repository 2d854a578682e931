"""The reply cache on its own: keys over the whole request, values kept across instances."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from peb_core.systems import ResponseCache
from peb_core.systems._cache import cache_key

REQUEST: dict[str, Any] = {
    "model": "openai/m",
    "api_base": "http://127.0.0.1:1/v1",
    "messages": [{"role": "user", "content": "Bericht über die Prüfung"}],
    "temperature": 0.0,
    "max_tokens": 64,
    "response_format": {"type": "json_object"},
}


def test_the_key_is_the_canonical_request_and_changes_with_any_part() -> None:
    reordered = dict(reversed(list(REQUEST.items())))
    assert cache_key(reordered) == cache_key(REQUEST)
    assert len(cache_key(REQUEST)) == 64
    keys = {cache_key(REQUEST)}
    for field, other in (
        ("model", "openai/n"),
        ("api_base", None),
        ("messages", [{"role": "user", "content": "Bericht uber die Prufung"}]),
        ("temperature", 0.7),
        ("max_tokens", 65),
        ("response_format", {"type": "json_schema"}),
    ):
        keys.add(cache_key({**REQUEST, field: other}))
    assert len(keys) == 7


def test_a_stored_reply_is_found_by_a_later_cache_on_the_same_folder(tmp_path: Path) -> None:
    payload = {"choices": [{"message": {"content": '{"a": 1}'}}], "usage": {"total_tokens": 9}}
    first = ResponseCache(tmp_path)
    assert first.get(cache_key(REQUEST)) is None
    first.put(cache_key(REQUEST), payload)
    first.put(cache_key({**REQUEST, "temperature": 1.0}), {"other": True})
    again = ResponseCache(tmp_path)
    assert again.get(cache_key(REQUEST)) == payload
    assert again.get(cache_key({**REQUEST, "temperature": 1.0})) == {"other": True}
    assert again.get(cache_key({**REQUEST, "temperature": 0.5})) is None
