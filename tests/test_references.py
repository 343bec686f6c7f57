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
CHAPTERS = sorted(p for p in (ROOT / "book").glob("*.md") if "\nkernelspec:" in p.read_text(encoding="utf-8")[:600])


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


# --- What the references may compare: nothing seed- or machine-dependent -------------------------

GLUE_TEXT = "application/papermill.record/text/plain"


def _compared_glue_values(nb):
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            text = out.get("data", {}).get(GLUE_TEXT)
            if text is not None:
                yield index, out["metadata"].get("scrapbook", {}).get("name", "?"), text


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_reference_compares_no_float32_number(chapter):
    """A glued number stored in a reference is compared as text by nbval: it must not carry float32
    arithmetic, whose last bits differ between machines (glue it with book.glue_measured)."""
    from localization.book import is_measured_output, looks_float32

    ref = ROOT / "tests" / "references" / f"{chapter.stem}.ipynb"
    nb = nbformat.read(ref, as_version=4)
    offenders = []
    for cell in nb.cells:
        assert not any(is_measured_output(out) for out in cell.get("outputs", [])), (
            f"{ref.name} stores a measured output: regenerate it with `make references`"
        )
    for index, name, text in _compared_glue_values(nb):
        try:
            value = float(text)
        except ValueError:
            continue
        if looks_float32(value):
            offenders.append(f"cell {index}: {name} = {text}")
    assert not offenders, f"{ref.name} compares float32-derived glued numbers: {offenders}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_uses_the_book_conventions(chapter):
    """Keys come from the book seed and values are glued through localization.book, so that the
    two rules (one seed; measured values never compared) hold by construction."""
    code = "\n".join(c.source for c in jupytext.read(chapter).cells if c.cell_type == "code")
    for forbidden, instead in (
        ("jax.random.key(", "book.key(...)"),
        ("jax.random.PRNGKey(", "book.key(...)"),
        ("from myst_nb import glue", "book.glue_exact / glue_measured / glue_figure"),
        ("myst_nb.glue(", "book.glue_exact / glue_measured / glue_figure"),
    ):
        assert forbidden not in code, f"{chapter.name} uses {forbidden!r}; use {instead}"
