"""report.html in headless Chromium (DevTools over a pipe): no console errors, charts load."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from ragloop.experiments.experiment import run_experiment
from tests.test_experiment import write_spec

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
    "--remote-debugging-pipe",
]  # fmt: skip
#: a guard against a hung browser, not a speed requirement
HANG_S = 90.0
IMAGES = """JSON.stringify([...document.images].map(i => ({
  id: i.id, alt: i.alt, complete: i.complete, width: i.naturalWidth, height: i.naturalHeight,
  png: i.src.startsWith("data:image/png;base64,")})))"""


class Browser:
    """Chromium driven through ``--remote-debugging-pipe`` (fd 3 in, fd 4 out, NUL-framed JSON)."""

    def __init__(self, profile: Path):
        to_chrome, self._out = os.pipe()
        self._in, from_chrome = os.pipe()
        high = [os.dup(fd) for fd in (to_chrome, from_chrome)]  # out of the way of fds 3 and 4
        for fd in (to_chrome, from_chrome):
            os.close(fd)
        self.proc = subprocess.Popen(
            [
                "bash",
                "-c",
                f'exec "$@" 3<&{high[0]} 4>&{high[1]} {high[0]}<&- {high[1]}>&-',
                "chromium",
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            pass_fds=high,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for fd in high:
            os.close(fd)
        self._buf, self._next, self.events = b"", 0, []

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._in], [], [], max(left, 0))
            if not ready:
                raise TimeoutError("Chromium did not answer over the DevTools pipe")
            chunk = os.read(self._in, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one command and return its result; events seen meanwhile are kept."""
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._out, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + HANG_S
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> None:
        deadline = time.monotonic() + HANG_S
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._read(deadline))

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.call("Browser.close")
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._in)
        os.close(self._out)


def console_errors(events: list[dict[str, Any]]) -> list[str]:
    """Uncaught exceptions, console.error/assert calls and browser log entries at level error."""
    errors = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            errors.append(details.get("exception", {}).get("description") or details["text"])
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            errors.append(
                " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            )
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            errors.append(params["entry"]["text"])
    return errors


def open_page(path: Path, profile: Path) -> tuple[list[str], list[dict[str, Any]]]:
    """Load ``path`` and return (console errors, facts about every <img>)."""
    browser = Browser(profile)
    try:
        target = browser.call("Target.createTarget", url="about:blank")["targetId"]
        session = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            browser.call(f"{domain}.enable", session)
        browser.call("Page.navigate", session, url=path.resolve().as_uri())
        browser.wait_for("Page.loadEventFired")
        value = browser.call("Runtime.evaluate", session, expression=IMAGES, returnByValue=True)
        images = json.loads(value["result"]["value"])
        return console_errors(browser.events), images
    finally:
        browser.close()


@pytest.fixture(scope="module")
def chromium() -> str:
    if not (shutil.which(CHROMIUM) or Path(CHROMIUM).is_file()):
        reason = (
            f"headless Chromium not found at {CHROMIUM}: install Debian's package with "
            "`apt-get install -y chromium` (or set CHROMIUM_PATH)"
        )
        pytest.skip(reason)
    return CHROMIUM


@pytest.fixture(scope="module")
def report(tmp_path_factory, wordllama) -> Path:
    folder = tmp_path_factory.mktemp("html")
    result = run_experiment(write_spec(folder), out=folder / "out", embeddings=wordllama)
    return result.files["report.html"]


def test_report_opens_without_console_errors_and_shows_its_charts(chromium, report, tmp_path):
    errors, images = open_page(report, tmp_path / "profile")
    assert errors == []
    charts = {i["id"]: i for i in images}
    assert set(charts) == {"chart-metrics", "chart-cost"}
    for chart in charts.values():
        assert chart["png"] and chart["complete"]
        assert chart["width"] > 100 and chart["height"] > 100


def test_the_check_sees_errors_and_broken_images(chromium, tmp_path):
    page = tmp_path / "broken.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head>'
        '<body><img id="bad" src="data:image/png;base64,bm90IGEgcG5n">'
        '<img id="gone" src="gone.png">'
        '<script>console.error("drawn wrong"); undefinedFunction();</script></body></html>',
        encoding="utf-8",
    )
    errors, images = open_page(page, tmp_path / "profile")
    assert any("drawn wrong" in e for e in errors)
    assert any("undefinedFunction" in e for e in errors)
    assert any("ERR_FILE_NOT_FOUND" in e for e in errors)
    assert {i["id"]: i["width"] for i in images} == {"bad": 0, "gone": 0}


VIEW = """(() => {
  const h2 = [...document.querySelectorAll("h2")].map(h => h.textContent);
  const verdictTable = document.querySelector("#verdict table");
  const firstHead = verdictTable.querySelector("th").textContent;
  const verdicts = [...verdictTable.querySelectorAll("tbody tr")].map(r => r.cells[0].textContent);
  const cell = verdictTable.querySelector("tbody tr td");
  const questions = [...document.querySelectorAll("#questions details.question")];
  const q = questions[0];
  q.open = true;
  const rows = [...q.querySelectorAll("tbody tr")].map(r => ({
    config: r.cells[0].querySelector("b").textContent,
    answer: r.cells[1].textContent,
    contexts: r.cells[2].querySelectorAll("li").length,
    scores: [...r.querySelectorAll("td.num")].map(td => td.textContent),
    visible: r.getBoundingClientRect().height > 0,
  }));
  return JSON.stringify({h2, firstHead, verdicts, verdictRight: cell.getBoundingClientRect().right,
    width: window.innerWidth, questions: questions.length,
    summary: q.querySelector("summary").textContent, rows});
})()"""


def page_facts(path: Path, profile: Path, expression: str) -> Any:
    """Load ``path`` in a 1280-pixel-wide window and return ``expression``'s JSON value."""
    browser = Browser(profile)
    try:
        target = browser.call("Target.createTarget", url="about:blank")["targetId"]
        session = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        browser.call("Page.enable", session)
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=1280,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )
        browser.call("Page.navigate", session, url=path.resolve().as_uri())
        browser.wait_for("Page.loadEventFired")
        value = browser.call("Runtime.evaluate", session, expression=expression, returnByValue=True)
        return json.loads(value["result"]["value"])
    finally:
        browser.close()


def test_verdict_comes_first_and_each_question_compares_every_configuration(
    chromium, report, tmp_path
):
    facts = page_facts(report, tmp_path / "profile", VIEW)
    assert facts["h2"][0] == "Verdict"
    assert facts["firstHead"] == "verdict"
    assert facts["verdictRight"] < facts["width"]  # on screen, not scrolled off to the right
    rows = [json.loads(line) for line in (report.parent / "rows.jsonl").read_text().splitlines()]
    configs = sorted({r["config"] for r in rows})
    with (report.parent / "results.csv").open(encoding="utf-8") as fh:
        records = list(csv.DictReader(fh))
    expected = [
        "chosen"
        if r["chosen"] == "yes"
        else "best"
        if r["best"] == "yes"
        else "tied"
        if r["within_noise"] == "yes"
        else "ok"
        if r["feasible"] == "yes"
        else "fails"
        for r in records
    ]
    assert facts["verdicts"] == expected and "chosen" in expected
    assert facts["questions"] == len({r["index"] for r in rows})
    first = [r for r in rows if r["index"] == 0]
    assert first[0]["user_input"] in facts["summary"]
    assert [r["config"] for r in facts["rows"]] == configs
    by_config = {r["config"]: r for r in first}
    metrics = list(first[0]["metrics"])
    for shown in facts["rows"]:
        row = by_config[shown["config"]]
        assert shown["visible"]
        assert shown["answer"] == row["response"]
        assert shown["contexts"] == len(row["retrieved_contexts"])
        expected = [
            "–" if row["metrics"][m] is None else f"{row['metrics'][m]:.3f}" for m in metrics
        ]
        assert shown["scores"] == expected
