"""The reference pages generated from the code are up to date, and the pages cite only
files that exist."""

import re
from pathlib import Path

import pytest

from irc import docgen


def test_generated_docs_are_current() -> None:
    assert docgen.main(["--check"]) == 0, "run `.venv/bin/python -m irc.docgen`"


def test_every_nn_op_is_documented() -> None:
    from irc.dialects.nn import NN

    text = docgen.nn_ops_markdown()
    for op in NN.operations:
        assert f"## `{op.name}`" in text
        assert op.__doc__ and op.__doc__.strip(), f"{op.name} has no docstring"


ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
CITED_PATH = re.compile(r"`((?:irc|tests|docs|bench|demo|tools|models)/[\w./-]+)`")


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_pages_cite_only_files_that_exist(page: Path) -> None:
    """Every relative link and every cited repository path of a page exists: the docs
    describe this repository, so they cite nothing outside it (no `DESIGN.md`)."""
    text = page.read_text()
    assert "DESIGN.md" not in text
    missing = []
    for target in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        if not (page.parent / target).exists():
            missing.append(target)
    for cited in CITED_PATH.findall(text):
        if any(mark in cited for mark in ("NAME", "*", "...")) or not re.search(
            r"\.\w+$|/$", cited
        ):
            continue
        if not (ROOT / cited).exists():
            missing.append(cited)
    assert not missing, f"{page.name} cites files that do not exist: {missing}"
