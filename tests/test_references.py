"""The nbval references must be the executed form of the current chapter sources.

nbval re-runs ``tests/references/*.ipynb`` and compares outputs; that only tests the book if the
references' cells are exactly the cells of ``book/*.md``. This test fails when a chapter changed
and its reference was not regenerated (``make references``), or when a reference is missing.
"""

from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(
    p for p in (ROOT / "book").glob("*.md") if "\nkernelspec:" in p.read_text(encoding="utf-8")[:600]
)


def _cells(nb):
    return [(c.cell_type, c.source.strip(), tuple(c.metadata.get("tags", []))) for c in nb.cells]


def test_every_chapter_is_a_notebook():
    assert CHAPTERS, "no MyST notebook chapters found under book/"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_reference_matches_source(chapter):
    ref = ROOT / "tests" / "references" / f"{chapter.stem}.ipynb"
    assert ref.exists(), f"missing nbval reference {ref.relative_to(ROOT)}: run `make references`"
    source = jupytext.read(chapter)
    reference = nbformat.read(ref, as_version=4)
    assert _cells(reference) == _cells(source), (
        f"{ref.relative_to(ROOT)} is stale: {chapter.relative_to(ROOT)} changed. "
        "Run `make references` and review the diff."
    )
    executed = [c for c in reference.cells if c.cell_type == "code"]
    assert executed and all(c.execution_count is not None for c in executed), (
        f"{ref.relative_to(ROOT)} has unexecuted cells: nbval would only check that they run"
    )
