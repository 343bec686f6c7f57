"""localization.book.notebooks: bad arguments get clear errors; strip and compare on small notebooks."""

import nbformat
import pytest

from localization.book import notebooks


def test_a_chapter_must_be_an_executable_chapter(tmp_path):
    prose = tmp_path / "prose.md"
    prose.write_text("# no kernelspec\n")
    for bad in (prose, tmp_path / "missing.md", tmp_path / "x.ipynb"):
        with pytest.raises(ValueError, match="chapter must be an executable chapter"):
            notebooks.read_source(bad)
    with pytest.raises(ValueError, match="chapter must be an executable chapter"):
        list(notebooks.execute_all([prose]))


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True])
def test_jobs_must_be_a_positive_integer(jobs):
    with pytest.raises(ValueError, match=r"jobs must be a positive integer, got"):
        list(notebooks.execute_all([], jobs=jobs))


def test_reader_timeout_and_cwd_are_checked(tmp_path):
    with pytest.raises(ValueError, match=r"reader must be 'build' or 'source', got 'md'"):
        list(notebooks.execute_all([], reader="md"))
    nb = nbformat.v4.new_notebook()
    for timeout in (0, 2.5, True):
        with pytest.raises(ValueError, match="timeout must be a positive integer of seconds"):
            notebooks.execute(nb, cwd=tmp_path, timeout=timeout)
    with pytest.raises(ValueError, match="cwd must be an existing directory"):
        notebooks.execute(nb, cwd=tmp_path / "nowhere")


def test_every_chapter_is_found():
    names = {p.stem for p in notebooks.chapters()}
    assert {"data", "simulation", "claims"} <= names and "reproducibility" not in names


def test_strip_and_differences():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(1)", execution_count=1)
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="a = 0.1234567890\n"),
        nbformat.v4.new_output("stream", name="stdout", text="1\n"),
        nbformat.v4.new_output("display_data", data={"image/png": "xx", "text/plain": "fig"}),
    ]
    nb.cells.append(cell)
    reference = notebooks.strip(nb)
    assert reference.cells[0].id == "cell-0" and len(reference.cells[0].outputs) == 2  # streams merged
    assert "image/png" not in reference.cells[0].outputs[1]["data"]
    now = nbformat.reads(nbformat.writes(reference), as_version=4)
    now.cells[0].outputs[0]["text"] = "a = 0.1234567891\n1\n"  # the 10th digit: agrees
    assert notebooks.differences(reference, now) == []
    now.cells[0].outputs[0]["text"] = "a = 0.1235\n1\n"  # the 4th digit: differs
    assert len(notebooks.differences(reference, now)) == 1
    now.cells[0].outputs[0]["text"] = "a = 0.1234567891\n2\n"  # an integer: differs
    assert len(notebooks.differences(reference, now)) == 1
