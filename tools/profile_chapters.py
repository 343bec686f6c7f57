"""Where does a chapter's execution time go? Execute chapters (as the book build does: seed 0,
explorers drawn as frames) and report, per chapter, the wall time, the time JAX spent compiling
(tracing, lowering to MLIR, XLA backend compilation: JAX's own monitoring events), the compilations
served by the persistent compilation cache when one is set (``JAX_COMPILATION_CACHE_DIR``), and
the slowest cells.

    python tools/profile_chapters.py [book/data.md ...] [--jobs 1] [--json out.json] [--keep DIR]
        [--record] [--functions 30]

``--functions N`` lists the N compiled functions that cost the most compile time (tracing, lowering
and XLA compilation), each with its compilation count and the innermost library or chapter line
that called it: a function compiled many times (a jit closure made per call, a shape or static
argument that varies, eager operations on arrays of many sizes) is the place to cut.

Without chapters, every executable chapter (``kernelspec:`` in its front matter). Run on a quiet
machine, or compare ratios within one run (the wall times scale with the load).
"""

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECONDS = ROOT / "benchmarks" / "results" / "chapter_seconds.json"

# Injected first cell: sum JAX's compile-phase durations in this kernel.
_LISTEN = """
import jax.monitoring as _m, collections as _c, sys as _s
_LOC_PROFILE = _c.defaultdict(float)
def _loc_where():
    # the innermost library or chapter line on the stack: who asked for the compilation
    frame = _s._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        lib = "/localization/" in name and "/site-packages/" not in name
        if lib or "ipykernel" in name and frame.f_code.co_name == "<module>":
            return f"{name.rsplit('/localization/', 1)[-1]}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"
def _loc_listen(event, duration, **kwargs):
    _LOC_PROFILE[event] += duration
    _LOC_PROFILE[event + "#count"] += 1
    if event.startswith("/jax/core/compile/") and "fun_name" in kwargs:
        key = f"{kwargs['fun_name']} @ {_loc_where()}"
        _LOC_PROFILE["fs:" + key] += duration
        if event.endswith("backend_compile_duration"):
            _LOC_PROFILE["fn:" + key] += 1
_m.register_event_duration_secs_listener(_loc_listen)
def _loc_count(event, **kwargs):
    _LOC_PROFILE[event] += 1
_m.register_event_listener(_loc_count)
"""
# Injected last cell: write the sums.
_DUMP = """
import json as _j
with open({path!r}, "w") as _f:
    _j.dump(dict(_LOC_PROFILE), _f)
"""

COMPILE_EVENTS = (
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "/jax/core/compile/backend_compile_duration",
)


def profile(chapter: Path, env: dict, keep: Path | None = None) -> dict:
    """Execute one chapter in its own kernel (localization.book.notebooks.execute); its timings."""
    import nbformat

    from localization.book import notebooks

    nb = notebooks.read_source(chapter)
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "profile.json"
        nb.cells.insert(0, nbformat.v4.new_code_cell(_LISTEN))
        nb.cells.append(nbformat.v4.new_code_cell(_DUMP.format(path=str(dump))))
        done = notebooks.execute(nb, cwd=chapter.parent, env=env, record_timing=True)
        wall = done.seconds
        error = None if done.error is None else done.error.splitlines()[-1][:300]
        events = json.loads(dump.read_text()) if dump.exists() else {}
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, keep / f"{chapter.stem}.ipynb")
    cells = []
    for i, cell in enumerate(nb.cells[1:-1]):
        timing = cell.get("metadata", {}).get("execution", {})
        if "iopub.execute_input" in timing and "shell.execute_reply" in timing:
            from datetime import datetime

            t0 = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
            t1 = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
            cells.append((round((t1 - t0).total_seconds(), 1), i, cell.source.splitlines()[:3]))
    cells.sort(reverse=True)
    compile_s = sum(events.get(e, 0.0) for e in COMPILE_EVENTS)
    return {
        "chapter": chapter.stem,
        "wall": round(wall, 1),
        "compile": round(compile_s, 1),
        "backend_compile": round(events.get(COMPILE_EVENTS[2], 0.0), 1),
        "compilations": int(events.get(COMPILE_EVENTS[2] + "#count", 0)),
        "cache_hits": int(events.get("/jax/compilation_cache/cache_hits", 0)),
        "saved": round(events.get("/jax/compilation_cache/compile_time_saved_sec", 0.0), 1),
        "slowest_cells": cells[:4],
        # (seconds tracing, lowering and compiling, compilations, function @ caller), costliest first
        "functions": sorted(
            ((round(t, 2), int(events.get("fn:" + k[3:], 0)), k[3:]) for k, t in events.items() if k.startswith("fs:")),
            reverse=True,
        ),
        "error": error,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", type=Path)
    parser.add_argument("--jobs", type=int, default=1, help="chapters executed side by side")
    parser.add_argument("--seed", default="0")
    parser.add_argument(
        "--functions", type=int, default=0, help="list the N functions with the most compile time (function @ caller)"
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--keep", type=Path, help="write the executed notebooks here")
    parser.add_argument(
        "--record",
        action="store_true",
        help=f"write the walls to {SECONDS.relative_to(ROOT)} (the order chapters execute in: longest first)",
    )
    args = parser.parse_args()
    from localization.book.claims_sweep import executable_chapters

    chapters = [c.resolve() for c in args.chapters] or [ROOT / "book" / f"{c}.md" for c in executable_chapters()]
    tmp = tempfile.mkdtemp()
    env = {
        **os.environ,
        "JAX_PLATFORMS": "cpu",
        "LOCALIZATION_SEED": args.seed,
        "LOCALIZATION_STATIC_WIDGETS": "frames",
        "LOCALIZATION_EXPLORER_LOG": str(Path(tmp) / "explorers.jsonl"),
    }
    print(f"load before: {os.getloadavg()}", flush=True)
    results = []
    start = time.perf_counter()

    def run(chapter):
        result = profile(chapter, env, args.keep)
        print(
            f"{result['chapter']:20s} wall {result['wall']:6.1f} s  compile {result['compile']:6.1f} s "
            f"({100 * result['compile'] / max(result['wall'], 1e-9):3.0f} %)  "
            f"compilations {result['compilations']:4d}  "
            f"cache hits {result['cache_hits']:4d} (saved {result['saved']} s)  load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        if result["error"]:
            print(f"    FAILED: {result['error']}", flush=True)
        for seconds, i, head in result["slowest_cells"]:
            print(f"    cell {i:3d} {seconds:6.1f} s  {' | '.join(head)[:100]}", flush=True)
        if args.functions:
            print("    the costliest compiled functions (s, compilations, function @ caller):", flush=True)
            for t, n, where in result["functions"][: args.functions]:
                print(f"    {t:6.2f} {n:4d}  {where}", flush=True)
        return result

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(run, chapters))
    total = time.perf_counter() - start
    wall = sum(r["wall"] for r in results)
    comp = sum(r["compile"] for r in results)
    print(
        f"total: {total:.1f} s elapsed, {wall:.1f} s of chapter walls, "
        f"{comp:.1f} s compiling ({100 * comp / wall:.0f} %)"
    )
    if args.record:
        SECONDS.parent.mkdir(parents=True, exist_ok=True)
        SECONDS.write_text(json.dumps({r["chapter"]: r["wall"] for r in results}, indent=1) + "\n", encoding="utf-8")
    print(f"load after: {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps({"total": total, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
