"""Execute the book's chapters side by side into the execution cache the book build reads.

Jupyter Book 1 executes the chapters one after the other. This runs them ``--jobs`` at a time
(longest first) exactly as the build would (MyST-NB's reader and its jupyter-cache execution:
the notebook's own directory as working directory, the timeout and ``allow_errors`` of
``_config.yml``, the caller's environment) and stores each executed notebook in
``_build/.jupyter_cache``; the build that follows then finds every chapter there ("Using cached
notebook") and executes nothing. A chapter already in the cache is skipped. A chapter that fails
is not stored: the build executes it again and reports the error as it always does.

    python tools/execute_chapters.py book/data.md book/gdln.md ... [--jobs 2]

The expected durations that order the chapters (longest first) are read from
``benchmarks/results/chapter_seconds.json`` (written by ``tools/profile_chapters.py --record``);
an unknown chapter is started first.
"""

import argparse
import json
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / ".jupyter_cache"
SECONDS = ROOT / "benchmarks" / "results" / "chapter_seconds.json"


def _config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def read_chapter(path: Path):
    """The chapter as the book build reads it (MyST-NB's reader under the book's MyST settings)."""
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    # The build's parser settings as its log prints them: the extensions of _config.yml (the code
    # cells, which alone make a notebook's cache key, do not depend on them).
    parse = _config().get("parse", {})
    config = MdParserConfig(enable_extensions=set(parse.get("myst_enable_extensions", [])))
    return read_myst_markdown_notebook(path.read_text("utf8"), config=config, add_source_map=True, path=path)


def store(cache, path: Path, executed, seconds: float) -> None:
    """Store an executed chapter in the build's execution cache, as the build itself would."""
    from jupyter_cache.base import CacheBundleIn

    bundle = CacheBundleIn(executed, str(path), data={"execution_seconds": seconds})
    cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)


def _execute(path: str, timeout: int, allow_errors: bool) -> tuple[str, float, str | None]:
    """In a worker: execute one chapter; (executed notebook as JSON, seconds, error or None)."""
    import nbformat
    from jupyter_cache.executors.utils import single_nb_execution

    nb = read_chapter(Path(path))
    result = single_nb_execution(
        nb, cwd=str(Path(path).parent), timeout=timeout, allow_errors=allow_errors, meta_override=True
    )
    error = None if result.err is None else (result.exc_string or repr(result.err))[-3000:]
    return nbformat.writes(nb), result.time, error


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="+", type=Path)
    parser.add_argument("--jobs", type=int, default=2, help="chapters executed side by side (default 2)")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error(f"--jobs must be a positive integer, got {args.jobs}")

    import nbformat
    from jupyter_cache import get_cache

    execute = _config().get("execute", {})
    if execute.get("execute_notebooks") != "cache":
        print("execute_chapters: _config.yml does not execute through the cache; nothing to do")
        return 0
    timeout, allow_errors = int(execute.get("timeout", 30)), bool(execute.get("allow_errors", False))
    cache = get_cache(str(CACHE))
    todo = []
    for chapter in args.chapters:
        path = chapter.resolve()
        try:
            cache.match_cache_notebook(read_chapter(path))
        except KeyError:
            todo.append(path)
    expected = json.loads(SECONDS.read_text(encoding="utf-8")) if SECONDS.exists() else {}
    todo.sort(key=lambda p: -expected.get(p.stem, 1e9))
    if not todo:
        print("execute_chapters: every chapter is in the execution cache")
        return 0
    print(f"execute_chapters: {len(todo)} chapter(s), {args.jobs} at a time", flush=True)
    start = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        running = {pool.submit(_execute, str(p), timeout, allow_errors): p for p in todo}
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                path = running.pop(future)
                try:
                    text, seconds, error = future.result()
                except Exception as exc:  # the worker itself failed: the build executes the chapter
                    text, seconds, error = "", 0.0, f"{type(exc).__name__}: {exc}"
                if error is None:
                    store(cache, path, nbformat.reads(text, as_version=4), seconds)
                    print(f"  {path.relative_to(ROOT)}: {seconds:.1f} s", flush=True)
                else:
                    name = path.relative_to(ROOT)
                    print(
                        f"  {name}: FAILED after {seconds:.1f} s (the build runs it again and reports it)", flush=True
                    )
                    print(error, flush=True)
    print(f"execute_chapters: {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
