"""localization.book: the seed, the keys, and which glued values nbval may compare."""

import os
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import book


def test_seed_defaults_to_zero_and_reads_the_environment(monkeypatch):
    monkeypatch.delenv(book.SEED_ENV, raising=False)
    assert book.seed() == 0
    monkeypatch.setenv(book.SEED_ENV, " 17 ")
    assert book.seed() == 17
    monkeypatch.setenv(book.SEED_ENV, "")
    assert book.seed() == 0


@pytest.mark.parametrize("text", ["-1", "1.5", "abc", str(2**32)])
def test_bad_seed_names_the_variable(monkeypatch, text):
    monkeypatch.setenv(book.SEED_ENV, text)
    with pytest.raises(ValueError, match=book.SEED_ENV):
        book.seed()


def test_keys_depend_on_labels_and_seed_only(monkeypatch):
    monkeypatch.setenv(book.SEED_ENV, "3")
    a = jax.random.key_data(book.key("simulation", "fig5", 2))
    assert np.array_equal(a, jax.random.key_data(book.key("simulation", "fig5", 2)))
    others = [book.key("simulation", "fig5", 3), book.key("simulation", "fig5"), book.key("data", "fig5", 2)]
    for other in others:
        assert not np.array_equal(a, jax.random.key_data(other))
    monkeypatch.setenv(book.SEED_ENV, "4")
    assert not np.array_equal(a, jax.random.key_data(book.key("simulation", "fig5", 2)))


def test_key_labels_are_validated():
    with pytest.raises(ValueError, match="at least one label"):
        book.key()
    with pytest.raises(TypeError, match=r"labels\[1\]"):
        book.key("intro", 1.5)
    with pytest.raises(ValueError, match=r"labels\[0\]"):
        book.key(-1)


def test_looks_float32_separates_float32_results_from_float64_and_short_decimals():
    x32 = jnp.float32(0.1) * jnp.float32(3.3)
    assert book.looks_float32(float(x32)) and book.looks_float32(x32)
    assert book.looks_float32(jnp.ones(3, jnp.float32))
    assert not book.looks_float32(0.1 * 3.3)  # float64 arithmetic
    assert not book.looks_float32(float(np.float64(2) / 3))
    for simple in (0.5, 0.25, 3.0, 1e-3, 7, -0.125):  # short decimals are exact anyway
        assert not book.looks_float32(simple)
    assert not book.looks_float32(np.array([0.1 * 3.3, 0.5]))


def test_glue_exact_refuses_float32_values_and_non_finite_numbers():
    with pytest.raises(TypeError, match="glue_measured"):
        book.glue_exact("x", float(jnp.float32(0.1) * jnp.float32(3.3)))
    with pytest.raises(ValueError, match="finite"):
        book.glue_exact("x", float("nan"))
    with pytest.raises(TypeError, match="number or a string"):
        book.glue_exact("x", [1, 2])
    with pytest.raises(ValueError, match="significant"):
        book.glue_exact("x", 1.0, significant=0)


def test_measured_outputs_are_marked_and_exact_ones_are_not(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw, metadata: shown.append((obj, metadata)))
    book.glue_measured("m", jnp.float32(0.3))
    book.glue_exact("e", 2 / 3)
    book.show_measured("IPR 0.56")
    book.glue_exact("r", 0.1 + 0.2, significant=3)
    book.show_measured("| a |\n| - |", markdown=True)
    (m_data, m_meta), (e_data, e_meta), (s_data, s_meta), (r_data, _), (t_data, t_meta) = shown
    assert r_data["application/papermill.record/text/plain"] == "0.3"  # 0.30000000000000004 rounded
    assert t_data["text/markdown"] == "| a |\n| - |" and book.is_measured_output({"metadata": t_meta})
    assert book.is_measured_output({"metadata": m_meta}) and m_meta["scrapbook"]["name"] == "m"
    assert not book.is_measured_output({"metadata": e_meta})
    assert e_data["application/papermill.record/text/plain"] == "0.6666666667"  # 10 significant digits
    assert book.is_measured_output({"metadata": s_meta}) and s_data == {"text/plain": "IPR 0.56"}


def test_glue_exact_states_its_accuracy_in_metadata_the_references_keep(monkeypatch):
    import nbformat

    from localization.book.notebooks import strip

    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw, metadata: shown.append((obj, metadata)))
    book.glue_exact("residual", 6.167698643e-09, accuracy=1e-14)
    book.glue_exact("plain", 0.5)
    (_, meta), (_, plain_meta) = shown
    assert meta[book.ACCURACY_METADATA_KEY] == 1e-14 and book.ACCURACY_METADATA_KEY not in plain_meta
    for bad, error in ((0.0, ValueError), (-1e-9, ValueError), (float("inf"), ValueError), ("1e-9", TypeError)):
        with pytest.raises(error, match="accuracy"):
            book.glue_exact("x", 1.0, accuracy=bad)
    with pytest.raises(TypeError, match="accuracy applies to a float"):
        book.glue_exact("x", 3, accuracy=1e-9)
    # notebooks.strip keeps the accuracy (nbval compares at it) and drops all other metadata
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data=dict(shown[0][0]), metadata=meta)]
    nb.cells.append(cell)
    assert strip(nb).cells[0].outputs[0].metadata == {book.ACCURACY_METADATA_KEY: 1e-14}


def test_cross_document_glue_has_a_format_spec():
    """myst-nb splits `{glue:text}` at its last colon, so `chapter.md::key` without a format spec is
    read as the key 'chapter.md:' (a build warning that fails `make book`): write `chapter.md::key:s`."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[1] / "book"
    bad = [
        f"{path.relative_to(root)}: {m.group(0)}"
        for path in sorted(root.rglob("*.md"))
        for m in re.finditer(r"\{glue(?::text)?\}`[^`]*\.md::[^:`]*`", path.read_text(encoding="utf-8"))
    ]
    assert not bad, bad


@pytest.mark.slow
def test_importing_the_library_changes_no_jax_setting():
    """``import localization`` (and its modules) leaves JAX in 32-bit mode; enable_float64 is the one switch,
    and asking for float64 without it is a clear error, not a silent truncation."""
    import subprocess
    import sys

    code = (
        "import jax, jax.numpy as jnp\n"
        "import localization\n"
        "from localization import book, data, theory, train\n"
        "assert not jax.config.jax_enable_x64 and not localization.float64_enabled()\n"
        "task = data.LengthscaleTask.of(data.Gaussian, xi=(1.0, 3.0))\n"
        "x, y = task.sample(jax.random.key(0), 4, 8, jnp.float32)\n"
        "assert x.dtype == jnp.float32\n"
        "phi = lambda: theory.amplifier_of(task.model1.marginal)\n"
        "for call in (lambda: task.sample(jax.random.key(0), 4, 8), phi):\n"
        "    try:\n"
        "        call()\n"
        "    except ValueError as e:\n"
        "        assert 'localization.enable_float64()' in str(e), e\n"
        "    else:\n"
        "        raise AssertionError('float64 without x64 did not raise')\n"
        "localization.enable_float64()\n"
        "assert jax.config.jax_enable_x64 and localization.float64_enabled()\n"
        "assert task.sample(jax.random.key(0), 4, 8)[0].dtype == jnp.float64\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    env["JAX_PLATFORMS"] = "cpu"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]


def test_start_opens_a_chapter():
    """book.start validates the chapter's name, turns on float64, applies the book's style, returns the name."""
    import matplotlib as mpl

    from localization import plotting

    with mpl.rc_context({"font.size": 3.0}):
        assert book.start("gaussian") == "gaussian"
        assert jax.config.jax_enable_x64
        assert mpl.rcParams["font.size"] == plotting.FONT_SIZE != 3.0
        assert mpl.rcParams["figure.dpi"] == plotting.FIGURE_DPI
    with pytest.raises(ValueError, match="book/<chapter>.md.*'no_such_chapter'"):
        book.start("no_such_chapter")
    with pytest.raises(ValueError, match="lower-case"):
        book.start("Gaussian")
    with pytest.raises(TypeError, match="chapter must be a str"):
        book.start(3)


def test_every_chapter_opens_with_book_start():
    """One opening-cell convention: every executable chapter calls ``CH = book.start("<its name>")`` in its
    first code cell, makes its keys with ``book.key(CH, ...)`` only, and does not switch x64 itself."""
    root = Path(__file__).resolve().parents[1] / "book"
    for path in sorted(root.glob("*.md")):
        text = path.read_text()
        if not re.search(r"^kernelspec:", text, re.M) or path.stem == "claims":
            continue
        first_cell = text.split("```{code-cell}")[1].split("\n```")[0]
        assert f'CH = book.start("{path.stem}")' in first_cell, path.name
        assert "jax_enable_x64" not in text and "use_book_style" not in text, path.name
        assert re.findall(r"book\.key\((?!CH\b)", text) == [], path.name
        assert "def exact(" not in text, path.name


def _chapter_cells():
    """(chapter file name, cell) for every code cell of every executable chapter (jupytext)."""
    import jupytext

    root = Path(__file__).resolve().parents[1] / "book"
    for path in sorted(root.glob("*.md")):
        if re.search(r"^kernelspec:", path.read_text(), re.M):
            for cell in jupytext.read(path, fmt="md:myst").cells:
                if cell.cell_type == "code":
                    yield path.name, cell


def test_every_check_is_folded_with_its_result_shown():
    """One convention for checks (issue 25): a check cell is tagged ``check`` and ``hide-input`` (the
    site folds its code and shows what it printed), never ``hide-cell``/``hide-output``/``remove-*``,
    and it shows its verdict: a sentence (``book.passed``) or a measured claim's (``book.claim``), each
    rendered from the one statement the cell writes (issue 34: no comment/says/print triple)."""
    checks = 0
    for name, cell in _chapter_cells():
        tags = cell.metadata.get("tags", [])
        if "check" not in tags:
            assert not cell.source.lstrip().startswith("# Check"), f"{name}: an untagged check\n{cell.source[:200]}"
            continue
        checks += 1
        assert "hide-input" in tags, f"{name}: check not folded {tags}\n{cell.source[:200]}"
        hidden = {"hide-cell", "hide-output", "remove-cell", "remove-output", "remove-input"}
        assert not hidden & set(tags), f"{name}: check hides its result {tags}\n{cell.source[:200]}"
        shows = "book.passed(" in cell.source or "book.claim(" in cell.source
        assert shows, f"{name}: a check that shows no verdict\n{cell.source[:200]}"
        assert "check passed" not in cell.source, f"{name}: a verdict printed, not shown\n{cell.source[:200]}"
    assert checks > 150, checks


def test_every_explorer_source_is_folded():
    """Explorer cells (tag ``widget``) fold their source (the site shows the widget first, the code below)."""
    explorers = [
        (name, cell.metadata.get("tags", []))
        for name, cell in _chapter_cells()
        if "explore(" in cell.source or "widget" in cell.metadata.get("tags", [])
    ]
    assert len(explorers) >= 7, explorers
    for name, tags in explorers:
        assert {"widget", "hide-input", "nbval-ignore-output"} <= set(tags), (name, tags)


def test_a_verdict_is_one_sentence_with_numbered_equation_references(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw, metadata=None: shown.append((obj, metadata)))
    book.passed("Eq. (gauss-flow) = -d/dw Eq. (eq-gauss-loss); Eqs. (amp-loss) and (amp-grad) hold")
    ((data, meta),) = shown
    # nbval compares the plain form; the page shows the Markdown, whose roles Sphinx numbers and links
    assert data["text/plain"].startswith("check passed: Eq. (gauss-flow) = -d/dw")
    assert data["text/markdown"] == (
        "\u2714 {eq}`eq-gauss-flow` = -d/dw {eq}`eq-gauss-loss`; {eq}`eq-amp-loss` and {eq}`eq-amp-grad` hold"
    )
    assert not book.is_measured_output({"metadata": meta or {}})
    with pytest.raises(ValueError, match=r"Eq\. \(gauss-nothing\)"):
        book.passed("Eq. (gauss-nothing) holds")
    with pytest.raises(ValueError, match="non-empty"):
        book.passed("  ")
    with pytest.raises(TypeError, match="statement must be a str"):
        book.passed(3)


def test_a_claim_shows_its_statement_then_its_measurement(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw, metadata=None: shown.append((obj, metadata)))
    monkeypatch.setenv(book.SEED_ENV, "7")
    book.claim("test-drift", 0.849, "<", 2.5, says="the drift equals Eq. (gauss-flow) within 2.5 s.e.")
    ((data, meta),) = shown
    assert book.is_measured_output({"metadata": meta})  # the value depends on the seed: never compared
    assert data["text/markdown"] == (
        "\u2714 The drift equals {eq}`eq-gauss-flow` within 2.5 s.e. \u2014 measured 0.849 < 2.5 "
        "(seed 7, claim `test-drift`)"
    )
