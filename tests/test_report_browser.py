"""report.html in a real browser: headless Chromium loads every image and shows
the outcome table. The screenshot is kept in tests/artifacts/ (gitignored).

Skipped only when Chromium is missing outside CI; in CI (``CI`` set) a
missing Chromium fails the test, since `.ci/run` installs Debian's `chromium`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from fixtures_runs import shared_c2_report

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio"]

#: Appended to a copy of the page: after load, writes what it sees into the DOM.
CHECK = """
<script>
window.addEventListener("load", () => {
  const images = [...document.images].map(i => ({src: i.getAttribute("src"), complete: i.complete,
                                                width: i.naturalWidth, height: i.naturalHeight}));
  const t = document.getElementById("outcomes-table");
  const result = {images, title: document.title,
                  outcomeRows: t ? t.tBodies[0].rows.length : -1,
                  outcomeHeader: t ? [...t.tHead.rows[0].cells].map(c => c.textContent) : [],
                  outcomeVisible: t ? t.getBoundingClientRect().height > 0 : false};
  const pre = document.createElement("pre");
  pre.id = "fca-check";
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
});
</script>
"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed (CI installs Debian's chromium: see .ci/run)")
    pytest.skip("chromium is not installed")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the c2 report (every outcome), so the check page stays out of it."""
    shared = shared_c2_report(tmp_path_factory.getbasetemp() / "fixture-runs")
    copy = tmp_path_factory.mktemp("browser") / "report"
    shutil.copytree(shared.parent, copy)
    return copy / shared.name


def run_chromium(args: list[str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([chromium(), *FLAGS, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def test_every_image_loads_and_the_outcome_table_is_there(page: Path) -> None:
    check = page.with_name("check.html")
    check.write_text(page.read_text().replace("</body>", CHECK + "</body>"))
    done = run_chromium(["--virtual-time-budget=10000", "--dump-dom", check.as_uri()])
    m = re.search(r'<pre id="fca-check">(.*?)</pre>', done.stdout, re.S)
    assert m, done.stdout[-2000:]
    result = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    images = result["images"]
    expected = re.findall(r'<img src="([^"]+)"', page.read_text())
    assert len(images) == len(expected) >= 4
    for img in images:
        assert img["complete"] and img["width"] > 0 and img["height"] > 0, img
    assert result["outcomeRows"] >= 1 and result["outcomeVisible"]
    assert result["outcomeHeader"][:4] == ["variant", "cells", "move_rule", "rows"]
    assert "freecell" in result["title"]


def test_screenshot(page: Path) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    shot.unlink(missing_ok=True)
    run_chromium(["--window-size=1280,4200", f"--screenshot={shot}", page.as_uri()])
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 50_000  # a blank page compresses to far less
