r"""Executing chapters: the one module that runs, stores, strips and compares a chapter.

Every execution of a chapter goes through :func:`execute` (one kernel per chapter, the chapter's
directory as working directory, the per-cell timeout :data:`TIMEOUT` of ``_config.yml``):

* the book build (``make book``): ``python -m localization.book.notebooks execute`` runs the chapters
  ``--jobs`` at a time, longest first, and stores each in the build's execution cache
  (:func:`store`), where Jupyter Book then finds it ("Using cached notebook");
* the nbval references (``make references``): ``references`` executes under seed 0 and writes the
  stripped notebook (:func:`strip`) to ``tests/references/``;
* the refactoring check: ``compare`` executes under seed 0 and compares every compared output with the
  reference (:func:`differences`), ``--write`` replacing the reference when they agree;
* the claims sweep (:mod:`localization.book.claims_sweep`) and the profiler
  (``tools/profile_chapters.py``) call :func:`execute` / :func:`execute_all`.

``make test`` executes through nbval (its own kernel driver, with the same timeout): its outputs are
compared with :func:`align_outputs` and each chapter is stored in the build's cache with :func:`store`
(``tests/conftest.py``), so the strict build renders nbval's executions.

Comparing numbers: rounding is never portable (a float64 value whose last-bit difference between two
machines straddles a rounding boundary prints differently however many digits are kept), so a compared
text agrees with its reference when the text between its numbers is identical, its integers equal and
every other number within :data:`RTOL` relative with an absolute floor (:data:`ATOL`, or the accuracy
an exact value states, :data:`localization.book.page.ACCURACY_METADATA_KEY`).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import multiprocessing
import os
import re
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, NamedTuple

from localization.book.page import ACCURACY_METADATA_KEY, BOOK_DIR, is_measured_output

__all__ = [
    "ROOT",
    "BOOK",
    "BUILD_CACHE",
    "REFERENCES",
    "TIMEOUT",
    "RTOL",
    "ATOL",
    "UNCOMPARED",
    "Execution",
    "chapters",
    "read_chapter",
    "read_source",
    "execute",
    "execute_all",
    "store",
    "strip",
    "numbers_agree",
    "align_outputs",
    "differences",
    "main",
]

#: The chapters' directory (:data:`localization.book.page.BOOK_DIR`) and the repository holding it.
BOOK = BOOK_DIR
ROOT = BOOK.parent
#: The book build's execution cache (jupyter-cache), which Jupyter Book reads.
BUILD_CACHE = ROOT / "_build" / ".jupyter_cache"
#: The nbval references: every chapter executed under seed 0 and stripped (:func:`strip`).
REFERENCES = ROOT / "tests" / "references"
#: Expected seconds per chapter (``tools/profile_chapters.py --record``): longest chapters start first.
SECONDS = ROOT / "benchmarks" / "results" / "chapter_seconds.json"


def _config() -> dict:
    import yaml

    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


#: Seconds a cell may run, for every executor (``execute: timeout`` in ``_config.yml``; nbval's
#: ``--nbval-cell-timeout`` in the Makefile reads the same line).
TIMEOUT = int(_config().get("execute", {}).get("timeout", 600))

#: Relative tolerance of compared numbers: far above float64 noise between math libraries (~1e-15),
#: far below any difference a reader could see (a change in the 4th significant digit is 1e-4 or more).
RTOL = 1e-7
#: Absolute floor for numbers near zero whose reference states no accuracy of its own.
ATOL = 1e-13

#: Output payloads never compared (figures and widget views): references are stripped of them and
#: nbval is told to skip them (``tests/conftest.py``).
UNCOMPARED = (
    "image/png",
    "image/jpeg",
    "image/svg+xml",
    "application/papermill.record/image/png",
    "application/papermill.record/image/svg+xml",
    "application/vnd.jupyter.widget-view+json",
)


#: Terminal colour codes, which a kernel's traceback carries.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Execution(NamedTuple):
    """One executed chapter.

    Attributes
    ----------
    notebook : nbformat.NotebookNode or None
        The chapter with its outputs (``None`` when the executor itself failed).
    seconds : float
        Wall time of the execution.
    error : str or None
        The error that stopped it (the end of its traceback), or ``None``.
    """

    notebook: Any
    seconds: float
    error: str | None


# -------------------------------------------------------------------------------------------------
# reading and executing
# -------------------------------------------------------------------------------------------------
def chapters(book_dir: Path = BOOK) -> list[Path]:
    """List the chapters that execute (MyST notebooks with a ``kernelspec``), sorted by name."""
    return sorted(p for p in Path(book_dir).glob("*.md") if "\nkernelspec:" in p.read_text(encoding="utf-8"))


def _chapter_path(path: Path | str) -> Path:
    path = Path(path)
    if path.suffix != ".md" or not path.is_file() or "\nkernelspec:" not in path.read_text(encoding="utf-8"):
        raise ValueError(f"chapter must be an executable chapter (a MyST notebook book/<name>.md), got {str(path)!r}")
    return path.resolve()


def read_chapter(path: Path | str):
    """Read a chapter as the book build reads it (MyST-NB's reader, the book's MyST extensions).

    Its code cells, which alone make a notebook's key in the execution cache, are the chapter's.
    """
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    path = _chapter_path(path)
    parse = _config().get("parse", {})
    config = MdParserConfig(enable_extensions=set(parse.get("myst_enable_extensions", [])))
    return read_myst_markdown_notebook(path.read_text("utf8"), config=config, add_source_map=True, path=path)


def read_source(path: Path | str):
    """Read a chapter as jupytext does: every cell with its tags, the form of its nbval reference."""
    import jupytext

    nb = jupytext.read(_chapter_path(path))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata.get("jupytext", {}).pop("text_representation", None)
    return nb


def execute(
    notebook,
    *,
    cwd: Path | str,
    env: dict | None = None,
    timeout: int = TIMEOUT,
    allow_errors: bool = False,
    record_timing: bool = False,
) -> Execution:
    """Execute a notebook in a fresh ``python3`` kernel, in place.

    Parameters
    ----------
    notebook : nbformat.NotebookNode
        A chapter (:func:`read_chapter` or :func:`read_source`); its cells receive their outputs.
    cwd : path
        The kernel's working directory (the chapter's directory, as the build executes it).
    env : dict, optional
        The kernel's environment (default: this process's), e.g. with ``LOCALIZATION_SEED``.
    timeout : int
        Seconds a cell may run (default :data:`TIMEOUT`).
    allow_errors : bool
        Whether execution continues past a cell that raises.
    record_timing : bool
        Whether each cell's metadata records its start and end (the profiler's); off by default,
        since the build's cache keys a notebook by its cells' metadata too.

    Returns
    -------
    Execution
        The notebook, the wall time and the error (``None`` if every cell ran).
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout < 1:
        raise ValueError(f"timeout must be a positive integer of seconds, got {timeout!r}")
    if not Path(cwd).is_dir():
        raise ValueError(f"cwd must be an existing directory, got {str(cwd)!r}")
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=allow_errors,
        record_timing=record_timing,
        resources={"metadata": {"path": str(cwd)}},
    )
    start = time.perf_counter()
    error = None
    try:
        client.execute(env=dict(os.environ if env is None else env))
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
        error = _ANSI.sub("", str(exc)).strip()[-3000:] or type(exc).__name__
    return Execution(notebook, time.perf_counter() - start, error)


def _execute_in_worker(path: str, env: dict | None, timeout: int, allow_errors: bool, reader: str):
    """In a worker process: execute one chapter; the notebook travels back as JSON."""
    import nbformat

    nb = read_chapter(path) if reader == "build" else read_source(path)
    done = execute(nb, cwd=Path(path).parent, env=env, timeout=timeout, allow_errors=allow_errors)
    return nbformat.writes(done.notebook), done.seconds, done.error


def _expected_seconds() -> dict:
    return json.loads(SECONDS.read_text(encoding="utf-8")) if SECONDS.exists() else {}


def execute_all(
    paths: Iterable[Path | str],
    *,
    jobs: int = 2,
    env: dict | None = None,
    timeout: int = TIMEOUT,
    allow_errors: bool = False,
    reader: str = "build",
) -> Iterator[tuple[Path, Execution]]:
    """Execute chapters ``jobs`` at a time (longest first), each in its own process and kernel.

    Parameters
    ----------
    paths : iterable of path
        Chapter files ``book/<name>.md``.
    jobs : int
        Chapters executed at once (>= 1).
    env, timeout, allow_errors
        As for :func:`execute`.
    reader : {"build", "source"}
        :func:`read_chapter` (what the build stores) or :func:`read_source` (what a reference holds).

    Yields
    ------
    (Path, Execution)
        Each chapter as it finishes; a worker that died yields ``notebook=None`` with its error.
    """
    import nbformat

    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    if reader not in ("build", "source"):
        raise ValueError(f"reader must be 'build' or 'source', got {reader!r}")
    todo = [_chapter_path(p) for p in paths]
    expected = _expected_seconds()
    todo.sort(key=lambda p: -expected.get(p.stem, 1e9))
    # spawn, not fork: the parent may hold JAX's threads, which a forked child would inherit broken
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(min(jobs, max(len(todo), 1)), mp_context=context) as pool:
        running = {pool.submit(_execute_in_worker, str(p), env, timeout, allow_errors, reader): p for p in todo}
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                path = running.pop(future)
                try:
                    text, seconds, error = future.result()
                    yield path, Execution(nbformat.reads(text, as_version=4), seconds, error)
                except Exception as exc:  # the worker process itself failed
                    yield path, Execution(None, 0.0, f"{type(exc).__name__}: {exc}")


# -------------------------------------------------------------------------------------------------
# the build's execution cache
# -------------------------------------------------------------------------------------------------
def _cache(cache_dir: Path | str):
    from jupyter_cache import get_cache

    return get_cache(str(cache_dir))


def _in_cache(path: Path | str, cache_dir: Path | str = BUILD_CACHE) -> bool:
    """Whether the build's execution cache holds the chapter's current code."""
    try:
        _cache(cache_dir).match_cache_notebook(read_chapter(path))
    except KeyError:
        return False
    return True


def store(path: Path | str, notebook, seconds: float, cache_dir: Path | str = BUILD_CACHE) -> None:
    """Store an executed chapter (read by :func:`read_chapter`) in the build's cache, as the build would."""
    from jupyter_cache.base import CacheBundleIn

    bundle = CacheBundleIn(notebook, str(_chapter_path(path)), data={"execution_seconds": float(seconds)})
    _cache(cache_dir).cache_notebook_bundle(bundle, check_validity=False, overwrite=True)


# -------------------------------------------------------------------------------------------------
# references: what nbval compares
# -------------------------------------------------------------------------------------------------
def _coalesce_streams(outputs: list) -> list:
    """Merge consecutive outputs of one stream: the kernel splits a print at random points."""
    merged = []
    for out in outputs:
        if (
            merged
            and out.get("output_type") == "stream"
            and merged[-1].get("output_type") == "stream"
            and merged[-1].get("name") == out.get("name")
        ):
            merged[-1]["text"] = merged[-1]["text"] + out["text"]
        else:
            merged.append(out)
    return merged


def strip(notebook):
    """Normalise an executed chapter into its nbval reference, in place (and return it).

    Keeps every compared text output; drops what is never compared (:data:`UNCOMPARED`, execution
    timing, every measured value, :func:`localization.book.page.is_measured_output`), so references stay
    small, their diffs readable, and no seed- or machine-dependent number is stored as text.
    """
    notebook.metadata.pop("widgets", None)
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index}"  # stable ids: a regenerated reference diffs only where outputs changed
        cell.metadata.pop("execution", None)
        if "outputs" in cell:
            cell.outputs = _coalesce_streams([out for out in cell.outputs if not is_measured_output(out)])
        for output in cell.get("outputs", []):
            for key in UNCOMPARED:
                output.get("data", {}).pop(key, None)
            if "metadata" in output:  # only an exact value's stated accuracy is kept: nbval compares at it
                accuracy = output["metadata"].get(ACCURACY_METADATA_KEY)
                output["metadata"] = {} if accuracy is None else {ACCURACY_METADATA_KEY: accuracy}
    return notebook


# -------------------------------------------------------------------------------------------------
# comparing outputs up to their numbers' last digits
# -------------------------------------------------------------------------------------------------
# A decimal number: optional sign, digits with an optional fraction (or a bare fraction), optional
# exponent. "nan"/"inf" are words and so must match as text.
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _is_integer(token: str) -> bool:
    return not any(c in token for c in ".eE")


def numbers_agree(reference: str, test: str, *, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """Whether ``test`` reads as ``reference`` up to its numbers' last digits.

    The text between numbers must match exactly; two integers must be equal; any other pair of
    numbers must satisfy ``|test - reference| <= atol + rtol * |reference|``.
    """
    if not (isinstance(reference, str) and isinstance(test, str)):
        return reference == test
    if reference == test:
        return True
    ref_text, ref_numbers = _NUMBER.split(reference), _NUMBER.findall(reference)
    test_text, test_numbers = _NUMBER.split(test), _NUMBER.findall(test)
    if ref_text != test_text or len(ref_numbers) != len(test_numbers):
        return False
    for r, t in zip(ref_numbers, test_numbers, strict=True):
        if r == t:
            continue
        if _is_integer(r) and _is_integer(t):
            return False
        a, b = float(r), float(t)
        if not (math.isfinite(a) and math.isfinite(b)) or abs(a - b) > atol + rtol * abs(a):
            return False
    return True


def _output_accuracy(output: dict) -> float:
    """Return the absolute floor an output is compared at: :data:`ATOL` or the accuracy it states."""
    value = output.get("metadata", {}).get(ACCURACY_METADATA_KEY)
    return ATOL if value is None else max(ATOL, float(value))


def _compared_fields(output: dict):
    """Yield (key, where) for every compared text field of an output, in nbval's flattening.

    The stream text comes under the stream's name, each MIME type of the data under its own name.
    """
    if output.get("output_type") == "stream":
        yield output.get("name", "stdout"), "text"
    for mime in output.get("data", {}):
        yield mime, ("data", mime)


def _field_value(output: dict, where):
    """Return the value of a compared field (``where`` from :func:`_compared_fields`)."""
    return output[where] if isinstance(where, str) else output[where[0]][where[1]]


def _set(output: dict, where, value) -> None:
    if isinstance(where, str):
        output[where] = value
    else:
        output[where[0]][where[1]] = value


def align_outputs(test: list, ref: list, *, rtol: float = RTOL) -> list:
    """Copy ``test``, replacing every text field that agrees with its reference up to its numbers.

    A field that agrees (:func:`numbers_agree`) takes the reference's text, so nbval's own text
    comparison passes; anything else is left for nbval to report.

    Outputs are paired as nbval pairs them: the i-th value of each key (stream name or MIME type) of
    the test with the i-th value of the same key of the reference.
    """
    reference_values = defaultdict(list)
    for output in ref:
        for key, where in _compared_fields(output):
            reference_values[key].append((_field_value(output, where), _output_accuracy(output)))
    aligned = copy.deepcopy(test)
    seen: dict = defaultdict(int)
    for output in aligned:
        for key, where in _compared_fields(output):
            index = seen[key]
            seen[key] += 1
            if index >= len(reference_values[key]):
                continue
            expected, atol = reference_values[key][index]
            value = _field_value(output, where)
            if isinstance(value, str) and numbers_agree(expected, value, rtol=rtol, atol=atol):
                _set(output, where, expected)
    return aligned


def _compared_texts(notebook) -> list[tuple[str, str, float]]:
    """List (field, text, accuracy) of every compared text output of a stripped notebook, in order."""
    return [
        (key, _field_value(out, where), _output_accuracy(out))
        for cell in notebook.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        for key, where in _compared_fields(out)
        if isinstance(_field_value(out, where), str)
    ]


def differences(reference, executed) -> list[str]:
    """List where a stripped execution's compared outputs differ from its reference's, in order.

    Cells may have been merged, split or moved; the list is empty when the outputs agree.
    """
    ref, new = _compared_texts(reference), _compared_texts(executed)
    found = []
    for i, ((rk, rt, acc), (nk, nt, _)) in enumerate(zip(ref, new, strict=False)):
        if rk != nk or not numbers_agree(rt, nt, atol=acc):
            found.append(f"output {i} ({rk} / {nk}):\n  reference: {rt[:300]!r}\n  now:       {nt[:300]!r}")
    if len(ref) != len(new):
        found.append(f"{len(ref)} compared outputs in the reference, {len(new)} now")
    return found


# -------------------------------------------------------------------------------------------------
# the command line
# -------------------------------------------------------------------------------------------------
def _reference_env() -> dict:
    return {**os.environ, "LOCALIZATION_SEED": "0", "JAX_PLATFORMS": "cpu", "LOCALIZATION_STATIC_WIDGETS": "1"}


def _build(paths: Sequence[Path], jobs: int) -> int:
    execute_config = _config().get("execute", {})
    if execute_config.get("execute_notebooks") != "cache":
        print("notebooks: _config.yml does not execute through the cache; nothing to do")
        return 0
    todo = [p for p in paths if not _in_cache(p)]
    if not todo:
        print("notebooks: every chapter is in the execution cache")
        return 0
    print(f"notebooks: executing {len(todo)} chapter(s), {jobs} at a time", flush=True)
    start = time.perf_counter()
    allow_errors = bool(execute_config.get("allow_errors", False))
    for path, done in execute_all(todo, jobs=jobs, allow_errors=allow_errors):
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        if done.error is None:
            store(path, done.notebook, done.seconds)
            print(f"  {name}: {done.seconds:.1f} s", flush=True)
        else:  # not stored: the build executes the chapter again and reports the error as it always does
            print(f"  {name}: FAILED after {done.seconds:.1f} s (the build runs it again)\n{done.error}", flush=True)
    print(f"notebooks: {time.perf_counter() - start:.1f} s", flush=True)
    return 0


def _references(paths: Sequence[Path], jobs: int, compare: bool, write: bool, keep: Path | None) -> int:
    import nbformat

    agree = True
    for path, done in execute_all(paths, jobs=jobs, env=_reference_env(), reader="source"):
        reference = REFERENCES / f"{path.stem}.ipynb"
        if done.error is not None:
            print(f"{path.name}: execution failed after {done.seconds:.0f} s\n{done.error}", flush=True)
            agree = False
            continue
        executed = strip(done.notebook)
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            nbformat.write(executed, keep / f"{path.stem}.ipynb")
        found = differences(nbformat.read(reference, as_version=4), executed) if compare and reference.exists() else []
        if compare and not reference.exists():
            found = [f"no reference {reference.relative_to(ROOT)}"]
        if not found and write:
            REFERENCES.mkdir(parents=True, exist_ok=True)
            nbformat.write(executed, reference)
        verdict = "same outputs" if compare and not found else (f"{len(found)} difference(s)" if found else "executed")
        print(f"{path.name}: {verdict}{' (reference written)' if write and not found else ''} "
              f"in {done.seconds:.0f} s", flush=True)  # fmt: skip
        for line in found[:8]:
            print(line, flush=True)
        agree = agree and not found
    return 0 if agree else 1


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m localization.book.notebooks {execute,references,compare} [CHAPTER ...] [--jobs N]``."""
    parser = argparse.ArgumentParser(prog="python -m localization.book.notebooks", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    helps = {
        "execute": "execute chapters into the book build's execution cache (what make book does first)",
        "references": "execute chapters under seed 0 and write their stripped nbval references",
        "compare": "execute chapters under seed 0 and compare their outputs with the references",
    }
    for name, text in helps.items():
        sub = commands.add_parser(name, help=text, description=text)
        sub.add_argument("chapters", nargs="*", type=Path, help="book/<name>.md files (default: every chapter)")
        sub.add_argument("--jobs", type=int, default=2, help="chapters executed at once (default 2)")
        if name == "compare":
            sub.add_argument("--write", action="store_true", help="replace a reference whose outputs agree")
            sub.add_argument("--keep", type=Path, default=None, metavar="DIR", help="keep the executions in DIR")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be a positive integer, got {args.jobs}")
    try:
        paths = [_chapter_path(p) for p in args.chapters] or chapters()
    except ValueError as e:
        parser.error(str(e))
    if args.command == "execute":
        return _build(paths, args.jobs)
    if args.command == "references":
        return _references(paths, args.jobs, compare=False, write=True, keep=None)
    return _references(paths, args.jobs, compare=True, write=args.write, keep=args.keep)


if __name__ == "__main__":
    sys.exit(main())
