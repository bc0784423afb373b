"""``report.html`` opened in a real headless browser (Chromium, driven over its DevTools
protocol): the page renders its tables, and every embedded picture decodes."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from websockets.sync.client import ClientConnection, connect
from written_runs import write_report

from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols.scoring import score_run

BROWSER = next(
    (
        found
        for name in ("chromium", "chromium-browser", "google-chrome")
        if (found := shutil.which(name))
    ),
    None,
)
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no headless browser (make browser installs Debian's chromium; .ci/run does)",
)

#: Resolves once every picture of the page has loaded or failed: how many decoded.
_PAGE_STATE = """
new Promise((resolve) => {
  const report = () => {
    const images = Array.from(document.images);
    Promise.all(images.map((i) => i.decode().then(() => true, () => false))).then((ok) =>
      resolve(JSON.stringify({
        images: images.length,
        decoded: ok.filter(Boolean).length,
        external: images.filter((i) => !i.src.startsWith("data:image/png")).length,
        widths: images.map((i) => i.naturalWidth),
        headings: Array.from(document.querySelectorAll("h2")).map((h) => h.textContent),
        tables: document.querySelectorAll("table").length,
        title: document.title,
      })));
  };
  document.readyState === "complete" ? report() : window.addEventListener("load", report);
})
"""


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Callable[[Path], ClientConnection]]:
    """Opens a file in headless Chromium; yields a DevTools connection to its page."""
    assert BROWSER is not None
    profile = tmp_path / "profile"
    processes: list[subprocess.Popen[bytes]] = []
    connections: list[ClientConnection] = []

    def open_page(page: Path) -> ClientConnection:
        process = subprocess.Popen(
            [
                BROWSER,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--window-size=1280,2000",
                page.as_uri(),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        processes.append(process)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            assert process.poll() is None, f"{BROWSER} exited with {process.returncode}"
            assert time.monotonic() < deadline, "the browser never opened its DevTools port"
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as reply:
            targets = json.load(reply)
        page_target = next(t for t in targets if t["type"] == "page")
        connection = connect(page_target["webSocketDebuggerUrl"], max_size=None)
        connections.append(connection)
        return connection

    yield open_page
    for connection in connections:
        connection.close()
    for process in processes:
        process.terminate()
        process.wait(timeout=30)


def _call(connection: ClientConnection, method: str, **params: Any) -> dict[str, Any]:
    call_id = int(time.monotonic_ns() % 1_000_000_000)
    connection.send(json.dumps({"id": call_id, "method": method, "params": params}))
    while True:
        message = json.loads(connection.recv(timeout=60))
        if message.get("id") == call_id:
            assert "error" not in message, message
            result: dict[str, Any] = message["result"]
            return result


def test_the_html_report_renders_with_every_picture_embedded(
    make_trace: Callable[..., EpisodeTrace],
    browser: Callable[[Path], ClientConnection],
    tmp_path: Path,
) -> None:
    traces = [
        make_trace(episode_id="win"),
        make_trace(
            episode_id="crash",
            collided=True,
            collision_step=2,
            stop_called=False,
            termination="collided",
        ),
        make_trace(
            episode_id="far",
            positions=((10, 0, 10), (7, 0, 10)),
            stop_called=False,
            termination="budget_exhausted",
            scene="Mountain_0",
            family="natural",
        ),
    ]
    run = tmp_path / "run"
    write_report(score_run(traces), run, traces)
    page = run / "report.html"
    assert '<img src="radar.png"' not in page.read_text()  # embedded, not linked

    connection = browser(page)
    # The page target exists before it has navigated to the file: wait until it has.
    deadline = time.monotonic() + 60
    while True:
        where = _call(connection, "Runtime.evaluate", expression="location.href")
        if where["result"]["value"] == page.as_uri():
            break
        assert time.monotonic() < deadline, f"the browser never opened {page}"
        time.sleep(0.1)
    evaluated = _call(connection, "Runtime.evaluate", expression=_PAGE_STATE, awaitPromise=True)
    state = json.loads(evaluated["result"]["value"])
    # Radar, radius sweep, the failures' contact sheet and a map per episode.
    assert state["images"] == 3 + len(traces)
    assert state["decoded"] == state["images"] and state["external"] == 0
    assert all(width > 100 for width in state["widths"])
    assert {"Summary", "Plots", "Trajectory maps", "Episodes"} <= set(state["headings"])
    assert state["tables"] >= 3
    assert state["title"] == "Run report: AerialDojo-200K (run)"

    shot = _call(connection, "Page.captureScreenshot", format="png")
    (tmp_path / "screenshot.png").write_bytes(base64.b64decode(shot["data"]))
    with Image.open(tmp_path / "screenshot.png") as picture:
        pixels = np.asarray(picture.convert("L"))
    assert pixels.std() > 10  # text and tables, not a blank page
