"""The documentation's examples run: every ```python block of the README
(its ``print(...)  # value`` comments are checked against what it prints),
and every docstring example of the packages (pytest --doctest-modules,
configured in pyproject.toml; checked here so that it stays on)."""

from __future__ import annotations

import ast
import contextlib
import io
import re
import tomllib
from pathlib import Path

import pytest
from test_jobs import make_run_dir

from jobs.config import build_config

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PACKAGES = ("analyzer", "jobs", "reports")


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", markdown, re.MULTILINE | re.DOTALL)


def expected_prints(block: str) -> list[object]:
    """For each top-level ``print(...)`` line, the value its trailing
    comment promises (a Python literal), or ``None`` when it promises none."""
    out: list[object] = []
    for line in block.splitlines():
        if not line.startswith("print("):
            continue
        code, _, comment = line.partition("#")
        try:
            out.append(ast.literal_eval(comment.strip()) if comment.strip() else None)
        except (ValueError, SyntaxError):
            out.append(None)
        assert code.rstrip().endswith(")"), line
    return out


@pytest.fixture(scope="module")
def readme_blocks() -> list[str]:
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    return blocks


def test_readme_python_examples(
    readme_blocks: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Parquet example reads runs/ms32000: a small run around deal 11982
    # (the only unsolvable deal of 1..32,000) stands in for the full one.
    make_run_dir(tmp_path / "runs" / "ms32000", "11978-11987", build_config(), 5)
    monkeypatch.chdir(tmp_path)
    for number, block in enumerate(readme_blocks, start=1):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, f"README.md python block {number}", "exec"), {"__name__": "readme"})
        printed = out.getvalue().splitlines()
        promised = expected_prints(block)
        assert len(printed) == len(promised), (number, printed)
        for line, value in zip(printed, promised, strict=True):
            if value is not None:
                assert ast.literal_eval(line) == value, (number, line, value)


def test_expected_prints_reads_the_comments() -> None:
    block = "x = 1\nprint(x)                 # 3\nprint([1, 2])  # [1, 2]\nprint('a')  # a word\n"
    assert expected_prints(block) == [3, [1, 2], None]


def test_pytest_collects_the_docstring_examples() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "--doctest-modules" in options["addopts"].split()
    assert set(PACKAGES) <= set(options["testpaths"])
    with_examples = [p for pkg in PACKAGES for p in (ROOT / pkg).glob("*.py") if ">>> " in p.read_text()]
    assert len(with_examples) >= 15
