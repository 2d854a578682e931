"""Driving a notebook served by `marimo run` from headless Chromium (Debian's /usr/bin/chromium,
through playwright; `playwright install` is never needed). Shared by tests/test_browser.py and
benchmarks/bench_workbench.py."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = ROOT / "test-artifacts"


def scratch_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment with HOME and the XDG folders in `home` (marimo writes there)."""
    home.mkdir(parents=True, exist_ok=True)
    return {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        **extra,
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def browser_available() -> bool:
    try:
        import playwright  # noqa: F401
    except ImportError:
        return False
    return CHROMIUM.exists()


TOKEN = "browser-test-token"
"""The access token the notebooks are served with here."""


@contextmanager
def serve(notebook: Path, env: dict[str, str], *, timeout_s: float = 60.0) -> Iterator[str]:
    """`notebook` served as `./dev workbench` serves it (`python -m
    peb_core.frontends.workbench`: an access token, local Host and Origin only) on 127.0.0.1 at
    a free port; yields its URL with the token, stops it after."""
    port = free_port()
    log = open(Path(env["HOME"]) / f"marimo-{port}.log", "wb")  # noqa: SIM115
    command = [sys.executable, "-m", "peb_core.frontends.workbench", str(notebook), "--headless"]
    proc = subprocess.Popen(
        [*command, "--port", str(port)],
        cwd=ROOT,
        env={**env, "PYTHONPATH": str(ROOT), "PEB_WORKBENCH_TOKEN": TOKEN},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the notebook server exited with {proc.returncode}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the notebook server did not answer at {url}") from None
                time.sleep(0.2)
        yield f"{url}/?access_token={TOKEN}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@contextmanager
def chromium_browser() -> Iterator[Any]:
    """Headless Chromium; each `new_page()` opens in a fresh context (empty HTTP cache)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def chromium_page(*, width: int = 1600, height: int = 1200) -> Iterator[Any]:
    """A page in headless Chromium."""
    with chromium_browser() as browser:
        yield browser.new_page(viewport={"width": width, "height": height})


_ARM = """(target) => {
  window.__pebWait = new Promise((resolve) => {
    setTimeout(() => resolve(-1), 60000);
    let t0 = null;
    window.addEventListener('pointerdown', () => { if (t0 === null) t0 = performance.now(); },
                            {capture: true, once: true});
    const obs = new MutationObserver(() => {
      if (t0 !== null && document.body.innerText.includes(target)) {
        obs.disconnect();
        resolve(performance.now() - t0);
      }
    });
    obs.observe(document.body, {subtree: true, childList: true, characterData: true});
  });
}"""


def arm_timer(page: Any, text: str) -> None:
    """Start timing at the next pointer press; `wait_timer` returns the milliseconds from it
    until `text` is on the page (measured in the page, so the driver's latency is left out)."""
    page.evaluate(_ARM, text)


def wait_timer(page: Any) -> float:
    ms: float = page.evaluate("window.__pebWait")
    if ms < 0:
        raise TimeoutError("the text awaited was not on the page within 60 s")
    return ms


def multiselect(page: Any, which: int | str) -> Any:
    """The `which`-th multiselect of the page, or the one labelled `which` exactly."""
    every = page.locator("marimo-multiselect")
    if isinstance(which, int):
        return every.nth(which)
    every.first.wait_for(state="attached")
    labels = every.evaluate_all("els => els.map(e => e.getAttribute('data-label') || '\"\"')")
    (index,) = [i for i, label in enumerate(labels) if f">{which}<" in json.loads(label)]
    return every.nth(index)


def table(page: Any, label: str) -> Any:
    """The table whose label includes `label` (plain text: no `<`, `>` or `&`)."""
    return page.locator(f'marimo-table[data-label*="{label}"]')


def toggle_option(page: Any, which: int | str, option: str, expect: str) -> float:
    """Toggle `option` of a multiselect (`multiselect(page, which)`) and return the
    milliseconds from the click until `expect` shows."""
    multiselect(page, which).locator("button").first.click()
    item = page.get_by_role("option", name=option, exact=True).filter(visible=True)
    item.wait_for()
    arm_timer(page, expect)
    item.click()
    ms = wait_timer(page)
    page.keyboard.press("Escape")
    return ms


def pick_options(page: Any, which: int | str, options: list[str]) -> None:
    """Make `options` the whole selection of a multiselect (`multiselect(page, which)`; none:
    empty)."""
    multiselect(page, which).locator("button").first.click()
    clear = page.get_by_role("option", name="Deselect all", exact=True)  # lists of 3 or more
    if clear.get_attribute("aria-disabled") != "true":  # disabled when nothing is picked
        clear.click()
    for option in options:
        page.get_by_role("option", name=option, exact=True).filter(visible=True).click()
    page.keyboard.press("Escape")


def fill(page: Any, label: str, value: str) -> None:
    """Type `value` into the text input labelled `label` (and press Enter, as a user would)."""
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")


def select_table_row(page: Any, which: int | str, row: int, column: str) -> str:
    """Tick row `row` (0-based, on the page shown) of the `which`-th table or the one labelled
    `which`; return the text of its `column` cell."""
    found = (
        table(page, which) if isinstance(which, str) else page.locator("marimo-table").nth(which)
    )
    line = found.get_by_role("row").nth(row + 1)
    text: str = line.locator(f'td[data-cell-id$="_{column}"]').inner_text()
    line.locator('[data-testid="select-row-checkbox"]').click()
    return text.strip()


def wait_count(locator: Any, n: int, timeout_ms: float = 60_000) -> None:
    """Wait until `locator` matches exactly `n` elements (the page re-renders on its own
    schedule; a count read at once races it)."""
    from playwright.sync_api import expect

    expect(locator).to_have_count(n, timeout=timeout_ms)


def screenshot_of(page: Any, text: str, path: Path) -> None:
    """Scroll `text` into view and save a screenshot of the viewport."""
    path.parent.mkdir(parents=True, exist_ok=True)
    page.get_by_text(text).first.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    page.screenshot(path=str(path))


def chart_svgs(page: Any) -> list[str]:
    """Every chart on the page as SVG text, saved through its menu (Save as SVG) as a person
    would: a chart is drawn on a canvas, so its text is not in the page's DOM."""
    found = []
    embeds = page.locator("div.vega-embed")
    for i in range(embeds.count()):
        embed = embeds.nth(i)
        embed.scroll_into_view_if_needed()
        embed.locator("summary").click()
        with page.expect_download() as saved:
            embed.get_by_text("Save as SVG").click()
        found.append(Path(saved.value.path()).read_text(encoding="utf-8"))
        page.keyboard.press("Escape")
    return found
