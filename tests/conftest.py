"""Strict test configuration: float64 everywhere, CPU only; nbval compares text, not pictures, and
never a measured (seed- or machine-dependent) value; numbers in compared text are compared with a
tolerance (localization.book.notebooks.align_outputs), since rounding is not portable between machines."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import localization  # (fails collection early if the package does not import)

localization.enable_float64()  # the one call that turns on JAX's 64-bit mode (importing changes nothing)

# Payloads nbval must not compare (figures and widget views): the list the reference notebooks are
# stripped of. Everything else a chapter prints or returns as text is compared with its reference,
# except the outputs of localization.book.glue_measured / show_measured, which the references do
# not store (notebooks.strip drops them) and which are dropped from the executed outputs below.
from localization.book import is_measured_output  # noqa: E402
from localization.book.notebooks import UNCOMPARED as _UNCOMPARED  # noqa: E402
from localization.book.notebooks import align_outputs  # noqa: E402


def _without_measured(outputs):
    return [out for out in outputs if not is_measured_output(out)]


def pytest_collection_modifyitems(session, config, items):
    try:
        from nbval.plugin import IPyNbCell, IPyNbFile
    except ImportError:  # nbval not in use for this run
        return
    if not getattr(IPyNbCell, "_book_measured_filter", False):
        compare = IPyNbCell.compare_outputs

        def compare_outputs(self, test, ref, skip_compare=None):
            ref = _without_measured(ref)
            test = align_outputs(_without_measured(test), ref)
            return compare(self, test, ref, skip_compare)

        IPyNbCell.compare_outputs = compare_outputs
        IPyNbCell._book_measured_filter = True
    if config.getoption("--book-cache"):
        _book_cache_hooks(IPyNbCell, IPyNbFile)
    _longest_first(items, IPyNbFile)
    for item in items:
        parent = item.parent
        if isinstance(parent, IPyNbFile) and not getattr(parent, "_book_skips", False):
            parent.skip_compare = tuple(parent.skip_compare) + _UNCOMPARED
            parent._book_skips = True


# --- nbval as the book's executor (make test) ----------------------------------------------------
# `make test` executes every chapter once: nbval runs it under the second seed and compares its
# outputs, and with --book-cache DIR each chapter it executed without error is also stored in the
# book build's execution cache (the chapter's MyST source with nbval's outputs, as
# localization.book.notebooks stores the chapters it executes), so the strict build that follows
# renders those executions instead of executing every chapter a second time.


def pytest_addoption(parser):
    parser.addoption(
        "--book-cache",
        metavar="DIR",
        default=None,
        help="store each chapter nbval executes in this jupyter-cache (the book build's execution cache)",
    )


def _longest_first(items, nb_file):
    """Reorder the cells notebook by notebook, longest notebook first (cells keep their order)."""
    import json
    from pathlib import Path

    from localization.book.notebooks import SECONDS

    seconds = json.loads(SECONDS.read_text(encoding="utf-8")) if SECONDS.exists() else {}
    groups: dict = {}
    for item in items:
        parent = item.parent if isinstance(item.parent, nb_file) else None
        groups.setdefault(parent, []).append(item)

    def expected(parent):
        return 0.0 if parent is None else -seconds.get(Path(str(parent.fspath)).stem, 1e9)

    items[:] = [item for parent in sorted(groups, key=expected) for item in groups[parent]]


def _store_chapter(nb_file, cache_dir: str) -> str | None:
    """Store the chapter nbval just executed in the build's cache; why not, or None when stored."""
    import time
    from pathlib import Path

    from nbformat import NotebookNode

    from localization.book.notebooks import BOOK, read_chapter, store

    outputs = nb_file._book_outputs
    if nb_file._book_failed:
        return "a cell raised an error"
    chapter = BOOK / f"{Path(str(nb_file.fspath)).stem}.md"
    nb = read_chapter(chapter)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    reference = [cell for cell in nb_file.nb.cells if cell.cell_type == "code"]
    if [c.source.strip() for c in code] != [c.source.strip() for c in reference]:
        return f"its reference's cells are not those of {chapter.name}"
    if sorted(outputs) != list(range(len(code))):
        return "not every cell was executed"
    for number, cell in enumerate(code):
        cell.outputs = [NotebookNode(out) for out in outputs[number]]
        cell.execution_count = number + 1
    seconds = time.perf_counter() - nb_file._book_started
    for attempt in range(5):  # the two workers share one SQLite file
        try:
            store(chapter, nb, seconds, cache_dir)
            return None
        except Exception as exc:  # a locked database: retry, then give the build the chapter back
            reason = f"{type(exc).__name__}: {exc}"
            time.sleep(1 + attempt)
    return reason


def _book_cache_hooks(nb_cell, nb_file):
    """Record each cell's outputs as nbval runs it; store the chapter when its notebook ends."""
    import time

    if getattr(nb_cell, "_book_cache_hooks", False):
        return
    run, teardown = nb_cell.runtest, nb_file.teardown

    def runtest(self):
        parent = self.parent
        if not hasattr(parent, "_book_outputs"):
            parent._book_outputs, parent._book_failed = {}, False
            parent._book_started = time.perf_counter()
        try:
            run(self)
        finally:
            outs = self.test_outputs
            if outs is None:  # skipped or never executed
                parent._book_failed = True
            else:
                parent._book_outputs[self.cell_num] = [dict(out) for out in outs]
                if not self.options["check_exception"] and any(o.get("output_type") == "error" for o in outs):
                    parent._book_failed = True

    def file_teardown(self):
        cache_dir = self.config.getoption("--book-cache")
        if cache_dir and hasattr(self, "_book_outputs"):
            why = _store_chapter(self, cache_dir)
            if why is not None:
                print(f"\n{self.fspath}: not stored for the book build ({why}); the build executes it")
        teardown(self)

    nb_cell.runtest, nb_file.teardown = runtest, file_teardown
    nb_cell._book_cache_hooks = True
