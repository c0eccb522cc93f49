"""report.html in a real browser: headless Chromium opens the page alone,
copied into another folder without the files beside it, and checks that it
shows the answer's numbers, that every image loads (they are embedded), and
that a table sorts when its header is clicked. The screenshot is kept in
tests/artifacts/ (gitignored).

Skipped only when Chromium is missing outside CI; in CI (``CI`` set) a
missing Chromium fails the test, since `.ci/run` installs Debian's `chromium`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fixtures_runs import shared_c2_report, shared_runs

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio"]

#: Appended to a copy of the page: after load, reads what a reader sees, clicks
#: the header of a numeric column twice, and writes it all into the DOM.
CHECK = """
<script>
window.addEventListener("load", () => {
  const images = [...document.images].map(i => ({complete: i.complete, width: i.naturalWidth,
                                                height: i.naturalHeight, embedded: i.src.startsWith("data:")}));
  const answer = {};
  document.querySelectorAll(".headline li.outcome").forEach(li => {
    answer[li.dataset.outcome] = li.querySelector(".count").textContent;
  });
  const unsolvable = document.querySelector('.headline p.deals[data-outcome="unsolvable"]').textContent;
  const limit = document.querySelector('.headline p.deals[data-outcome="limit"]').textContent;
  const table = document.getElementById("hardest-table");
  const headers = [...table.tHead.rows[0].cells].map(c => c.textContent);
  const col = headers.indexOf("positions_expanded");
  const column = () => [...table.tBodies[0].rows].map(r => r.cells[col].dataset.v || "");
  const before = column();
  table.tHead.rows[0].cells[col].querySelector("button").click();
  const ascending = column();
  table.tHead.rows[0].cells[col].querySelector("button").click();
  const descending = column();
  const result = {images, title: document.title, answer, unsolvable, limit, headers, before, ascending,
                  descending, sort: table.tHead.rows[0].cells[col].getAttribute("aria-sort"),
                  outcomeVisible: document.getElementById("outcomes-table").getBoundingClientRect().height > 0};
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
    """report.html of the c2 run (every outcome), alone in a folder of its own."""
    shared = shared_c2_report(tmp_path_factory.getbasetemp() / "fixture-runs")
    elsewhere = tmp_path_factory.mktemp("moved") / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    shutil.copy(shared, elsewhere / "report.html")
    return elsewhere / "report.html"


def run_chromium(args: list[str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([chromium(), *FLAGS, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@pytest.fixture(scope="module")
def seen(page: Path) -> dict[str, object]:
    check = page.with_name("check.html")
    check.write_text(page.read_text().replace("</body>", CHECK + "</body>"))
    done = run_chromium(["--virtual-time-budget=10000", "--dump-dom", check.as_uri()])
    m = re.search(r'<pre id="fca-check">(.*?)</pre>', done.stdout, re.S)
    assert m, done.stdout[-2000:]
    result: dict[str, object] = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    return result


def test_the_moved_page_is_alone_and_every_image_loads(page: Path, seen: dict[str, object]) -> None:
    assert sorted(p.name for p in page.parent.iterdir()) == ["check.html", "report.html"]
    images = seen["images"]
    assert isinstance(images, list) and len(images) >= 5  # four measures and difficulty by deal number
    for img in images:
        assert img["embedded"] and img["complete"] and img["width"] > 0 and img["height"] > 0, img
    assert "freecell" in str(seen["title"]) and seen["outcomeVisible"]


def test_the_answer_shows_the_runs_numbers(
    seen: dict[str, object], tmp_path_factory: pytest.TempPathFactory
) -> None:
    c2 = shared_runs(tmp_path_factory.getbasetemp() / "fixture-runs").c2
    rows = pq.read_table(c2).to_pylist()  # the run directory, as any Parquet reader sees it
    counts = Counter(str(r["outcome"]) for r in rows)
    answer = seen["answer"]
    assert isinstance(answer, dict)
    assert {k: int(v) for k, v in answer.items()} == {
        o: counts[o] for o in ("solved", "unsolvable", "limit", "error")
    }
    unsolvable = sorted(int(str(r["deal_number"])) for r in rows if r["outcome"] == "unsolvable")
    assert f"Unsolvable ({len(unsolvable)}): " + ", ".join(map(str, unsolvable)) in str(seen["unsolvable"])
    limits = sorted(int(str(r["deal_number"])) for r in rows if r["outcome"] == "limit")
    assert f"{limits[0]} (positions)" in str(seen["limit"])


def test_a_table_sorts_by_a_numeric_column(seen: dict[str, object]) -> None:
    def values(key: str) -> list[float]:
        column = seen[key]
        assert isinstance(column, list)
        return [float(v) for v in column if v != ""]

    before, up, down = values("before"), values("ascending"), values("descending")
    assert len(up) == len(before) >= 10 and sorted(before) == up and up == sorted(up)
    assert down == sorted(before, reverse=True) and up != down
    assert seen["sort"] == "descending"


def test_screenshot(page: Path) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    shot.unlink(missing_ok=True)
    run_chromium(["--window-size=1280,4200", f"--screenshot={shot}", page.as_uri()])
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 50_000  # a blank page compresses to far less
