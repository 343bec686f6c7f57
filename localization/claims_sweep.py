"""The recorded sweep: execute chapters under many seeds and record every measured claim.

``python -m localization claims --seeds 100-109`` executes each chapter once per seed (the book seed
``LOCALIZATION_SEED``) in a fresh kernel, with :func:`localization.claims.claim` recording every
observation and going on past a claim that fails, two chapters at a time, and writes one record per
chapter to ``book/data/claims/<chapter>.json``: the commit, the chapter's source hash, each seed's
run time and error (if a plain ``assert`` or anything else stopped the chapter), and every claim's
observations. A chapter re-swept with unchanged source keeps its other seeds' observations.

The seeds are meant to be held out: no bound of any check was chosen from them (the chapters'
bounds come from seeds 0-9; the references use seed 0 and nbval seed 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from localization import claims

__all__ = ["ROOT", "BOOK", "DEFAULT_SEEDS", "executable_chapters", "parse_seeds", "sweep"]

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
#: Held-out seeds of the committed record.
DEFAULT_SEEDS = tuple(range(100, 110))

# Executed in a child process, so that its kernel inherits the seed and the log file.
_RUN_ONE = """
import sys, jupytext, nbclient
nb = jupytext.read(sys.argv[1])
nbclient.NotebookClient(nb, timeout=1800, kernel_name="python3",
                        resources={"metadata": {"path": sys.argv[2]}}).execute()
"""


def executable_chapters(book_dir: Path = BOOK) -> list[str]:
    """Names of the chapters that execute (MyST notebooks with a kernelspec)."""
    return sorted(p.stem for p in Path(book_dir).glob("*.md") if "\nkernelspec:" in p.read_text(encoding="utf-8"))


def parse_seeds(text: str) -> tuple[int, ...]:
    """``"100-109"`` or ``"3,5,8"`` (or both, comma-separated) as a tuple of distinct seeds."""
    seeds: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                low, high = (int(x) for x in part.split("-", 1))
                if high < low:
                    raise ValueError
                seeds.extend(range(low, high + 1))
            else:
                seeds.append(int(part))
    except ValueError:
        raise ValueError(f"seeds must be like '100-109' or '3,5,8' (non-negative integers), got {text!r}") from None
    if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct non-negative integers, got {text!r}")
    return tuple(seeds)


def _commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "book", "localization"], cwd=ROOT,
                               capture_output=True, text=True, check=True)  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("+uncommitted" if dirty.stdout.strip() else "")


def _run_one(chapter: str, seed: int, log: Path, cache: Path) -> tuple[float, str | None]:
    env = dict(
        os.environ,
        LOCALIZATION_SEED=str(seed),
        LOCALIZATION_STATIC_WIDGETS="1",
        JAX_PLATFORMS="cpu",
        JAX_COMPILATION_CACHE_DIR=str(cache),
        JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0.5",
        **{claims.LOG_ENV: str(log), claims.KEEP_GOING_ENV: "1", claims.CHAPTER_ENV: chapter},
    )
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", _RUN_ONE, str(BOOK / f"{chapter}.md"), str(BOOK)],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    if result.returncode == 0:
        return seconds, None
    lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
    error = next((line for line in reversed(lines) if "Error" in line), lines[-1] if lines else "failed")
    return seconds, error[-500:]


def _merge(chapter: str, seeds, outcomes: dict, observations: list[dict], out_dir: Path, commit: str) -> dict:
    path = out_dir / f"{chapter}.json"
    digest = claims.source_hash(BOOK / f"{chapter}.md")
    record = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    if record is None or record.get("source_sha256") != digest:
        record = {"chapter": chapter, "source_sha256": digest, "commit": commit, "seeds": [], "runs": {}, "claims": {}}
    record["commit"] = commit
    record["seeds"] = sorted(set(record["seeds"]) | set(seeds))
    for seed in seeds:
        seconds, error = outcomes[seed]
        record["runs"][str(seed)] = {"seconds": round(seconds, 1), "error": error}
        for entry in record["claims"].values():
            entry["observations"] = [o for o in entry["observations"] if o["seed"] != seed]
    for line in observations:
        entry = record["claims"].setdefault(line["id"], {"says": line["says"], "op": line["op"], "observations": []})
        entry.update(says=line["says"], op=line["op"], loose=line["loose"])
        entry["observations"].append({k: line[k] for k in ("seed", "value", "bound", "holds")})
    for entry in record["claims"].values():
        entry["observations"].sort(key=lambda o: o["seed"])
    record["runs"] = dict(sorted(record["runs"].items(), key=lambda kv: int(kv[0])))
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def sweep(chapters, seeds, *, jobs: int = 2, out_dir: Path = claims.RECORD_DIR, progress: bool = True) -> dict:
    """Execute every chapter under every seed and write the records; returns them by chapter."""
    from tqdm.auto import tqdm

    known = executable_chapters()
    for chapter in chapters:
        if chapter not in known:
            raise ValueError(f"chapter {chapter!r} is not an executable chapter of the book ({', '.join(known)})")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    commit = _commit()
    cache = ROOT / "_build" / "jax-cache"
    cache.mkdir(parents=True, exist_ok=True)
    records = {}
    with tempfile.TemporaryDirectory() as tmp:
        logs = {(c, s): Path(tmp) / f"{c}-{s}.jsonl" for c in chapters for s in seeds}
        outcomes: dict = {c: {} for c in chapters}
        bar = tqdm(total=len(logs), desc="chapters x seeds", unit="run", disable=not progress)
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(_run_one, c, s, logs[c, s], cache): (c, s) for (c, s) in logs}
            for future in as_completed(futures):
                chapter, seed = futures[future]
                outcomes[chapter][seed] = future.result()
                if outcomes[chapter][seed][1]:
                    bar.write(f"{chapter} seed {seed}: {outcomes[chapter][seed][1]}")
                bar.set_postfix_str(f"{chapter} {seed}")
                bar.update()
        bar.close()
        for chapter in chapters:
            lines = []
            for seed in seeds:
                log = logs[chapter, seed]
                if log.exists():
                    lines.extend(json.loads(line) for line in log.read_text(encoding="utf-8").splitlines())
            records[chapter] = _merge(chapter, seeds, outcomes[chapter], lines, Path(out_dir), commit)
    return records
