"""The recorded sweep: execute chapters under many seeds and record every measured claim.

``python -m localization claims --seeds 100-109`` executes each chapter once per seed (the book seed
``LOCALIZATION_SEED``) in a fresh kernel, with :func:`localization.book.claims.claim` recording every
observation and going on past a claim that fails, two chapters at a time, and writes one record per
chapter to ``book/data/claims/<chapter>.json``: the commit, the chapter's source hash, each seed's
run time and error (if a plain ``assert`` or anything else stopped the chapter), and every claim's
observations. A chapter re-swept with unchanged source keeps its other seeds' observations.

Each (chapter, seed) execution is one job of :mod:`localization.jobs` (:func:`run_chapter`): on a
local Dask cluster of ``jobs`` workers by default, or on a running cluster (``scheduler=`` or the
environment variable ``LOCALIZATION_SCHEDULER``: the README's "On a cluster"). Each job's result is
stored under ``_build/claims-jobs`` as it finishes, so an interrupted sweep, run again, executes only
the executions it had not finished (same chapter source, seed and code); the records are written once
every job has finished, in the same order as a serial run, and the stored results are then discarded.

Seeds are of two kinds (:mod:`localization.book.claims`). The default, 100-109, are **development**
seeds: the first recorded sweep, after which some bounds were revised. ``held_out=True``
(``--held-out``) runs the fresh **held-out** seeds :data:`~localization.book.claims.HELD_OUT_SEEDS`, which no
bound was chosen from: only on chapters whose record is current for the development seeds (the bounds
are frozen), and once per chapter source; each such run is kept in the record's ``held_out_runs``
(surviving later re-sweeps), so a held-out set re-run after a change shows, and the change must be
listed in :data:`~localization.book.claims.REVISIONS`. The references use seed 0 and nbval seed 1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from localization import jobs as jobs_engine
from localization import records
from localization.book import claims, notebooks

__all__ = [
    "ROOT",
    "BOOK",
    "DEFAULT_SEEDS",
    "CARRY_RTOL",
    "CARRY_ATOL",
    "executable_chapters",
    "parse_seeds",
    "held_out_ready",
    "JOB_STORE",
    "JOB_TIMEOUT",
    "run_chapter",
    "sweep",
    "carry_differences",
    "restate",
    "carry_over",
]

ROOT, BOOK = notebooks.ROOT, notebooks.BOOK
#: Development seeds of the committed record (see :data:`localization.book.claims.DEVELOPMENT_SEEDS`).
DEFAULT_SEEDS = tuple(range(100, 110))
#: Where a sweep stores each execution's result until its records are written (to resume an interrupted one).
JOB_STORE = ROOT / "_build" / "claims-jobs"
#: Seconds one chapter execution may take before its job counts as failed (the longest take minutes).
JOB_TIMEOUT = 4 * 3600.0


def executable_chapters(book_dir: Path = BOOK) -> list[str]:
    """Names of the chapters that execute (MyST notebooks with a kernelspec)."""
    return [p.stem for p in notebooks.chapters(book_dir)]


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
    return records.commit(("book", "localization"))


def _run_one(chapter: str, seed: int, log: Path, cache: Path, root: Path = ROOT) -> tuple[float, str | None]:
    """In a worker process: execute one chapter under one seed, its claims logged to ``log``."""
    env = dict(
        os.environ,
        LOCALIZATION_SEED=str(seed),
        LOCALIZATION_STATIC_WIDGETS="1",
        JAX_PLATFORMS="cpu",
        JAX_COMPILATION_CACHE_DIR=str(cache),
        JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0.5",
        **{claims.LOG_ENV: str(log), claims.KEEP_GOING_ENV: "1", claims.CHAPTER_ENV: chapter},
    )
    if root != ROOT:  # another checkout (a baseline): its own library, its own chapter
        env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    path = root / "book" / f"{chapter}.md"
    done = notebooks.execute(notebooks.read_source(path), cwd=path.parent, env=env)
    if done.error is None:
        return done.seconds, None
    lines = [line for line in done.error.splitlines() if line.strip()]
    error = next((line for line in reversed(lines) if "Error" in line), lines[-1] if lines else "failed")
    return done.seconds, error[-500:]


def run_chapter(chapter: str, seed: int, digest: str, root: str | None = None) -> dict:
    """Execute one chapter under one seed and return what its claims logged: the job of a sweep.

    Run by a worker of :mod:`localization.jobs` (or directly: the serial path). The chapter must be
    the source the sweep hashed before it started: a worker whose chapter differs (edited since, or
    another checkout) refuses rather than attribute its results to that hash.

    Parameters
    ----------
    chapter : str
        An executable chapter's name (``book/<chapter>.md``).
    seed : int
        The book seed ``LOCALIZATION_SEED`` (non-negative).
    digest : str
        The chapter's :func:`localization.book.claims.source_hash` as the sweep found it.
    root : str or None
        The checkout whose chapter and library run (a baseline worktree); None: this worker's own.

    Returns
    -------
    dict
        ``seconds`` (wall time, float), ``error`` (the line that stopped the chapter, or None) and
        ``observations`` (the logged claims, in the order stated: ``id``, ``value``, ``op``, ``bound``,
        ``holds``, ``seed``, ``chapter``, ``says``, ``loose``).

    Raises
    ------
    ValueError
        A bad argument, a missing chapter, or a chapter whose source hash is not ``digest``.
    """
    if not isinstance(chapter, str) or not re.fullmatch(r"[A-Za-z0-9_][\w-]*", chapter):
        raise ValueError(f"chapter must be a chapter's name (letters, digits, '_', '-'), got {chapter!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    if not isinstance(digest, str) or not digest:
        raise ValueError(f"digest must be the chapter's source hash (a non-empty str), got {digest!r}")
    if root is not None and not isinstance(root, str):
        raise TypeError(f"root must be a checkout's path (str) or None, got {root!r}")
    checkout = ROOT if root is None else Path(root)
    path = checkout / "book" / f"{chapter}.md"
    if not path.is_file():
        raise ValueError(f"chapter {chapter!r}: no {path} on this worker")
    found = claims.source_hash(path)
    if found != digest:
        raise ValueError(
            f"digest: {path} has source hash {found[:12]}, the sweep hashed {digest[:12]} (the chapter was edited "
            "since the sweep started, or this worker has another checkout): not executed"
        )
    cache = ROOT / "_build" / "jax-cache"
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "claims.jsonl"
        seconds, error = _run_one(chapter, seed, log, cache, checkout)
        text = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return {"seconds": seconds, "error": error, "observations": [json.loads(line) for line in text]}


def _merge(
    chapter: str, seeds, outcomes: dict, observations: list[dict], out_dir: Path, commit: str, digest: str
) -> dict:
    # digest: the hash of the source as executed (taken before the runs, so an edit made during a sweep
    # leaves the record stale instead of attributing old results to new code)
    path = out_dir / f"{chapter}.json"
    record = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    history = record.get("held_out_runs", []) if record else []
    if record is None or record.get("source_sha256") != digest:
        record = {"chapter": chapter, "source_sha256": digest, "commit": commit, "seeds": [], "runs": {}, "claims": {}}
    record["held_out_runs"] = history
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
    held = sorted(set(seeds) & set(claims.HELD_OUT_SEEDS))
    if held:
        failing = sorted(
            claim_id
            for claim_id, entry in record["claims"].items()
            if any(not o["holds"] for o in entry["observations"] if o["seed"] in held)
        )
        errors = [s for s in held if record["runs"][str(s)]["error"]]
        history.append({"commit": commit, "source_sha256": digest, "seeds": held, "failing": failing, "errors": errors})
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def _check_chapters(chapters, jobs: int) -> None:
    known = executable_chapters()
    for chapter in chapters:
        if chapter not in known:
            raise ValueError(f"chapter {chapter!r} is not an executable chapter of the book ({', '.join(known)})")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")


def _job_name(chapter: str, seed: int, r: int) -> str:
    return f"{chapter}.{seed}" + (".baseline" if r else "")


def _execute(
    chapters,
    seeds,
    jobs: int,
    progress: bool,
    roots: tuple[Path, ...] = (ROOT,),
    *,
    digests: Mapping[tuple[str, int], str] | None = None,
    scheduler: str | None = None,
    store: Path = JOB_STORE,
) -> tuple[dict, dict, list]:
    """Run every chapter under every seed (and root) as jobs of :mod:`localization.jobs`.

    Returns (outcomes[chapter][seed] = (seconds, error), observation lines by chapter, the jobs); the
    key of a chapter under ``roots[r]``, r > 0, is ``(chapter, r)``. The results are gathered in the
    order of the jobs (chapter, seed, root), not the order they finished in: the records come out as a
    serial run writes them. ``digests[(chapter, r)]`` is the source hash each job must find (default:
    hashed now).
    """
    if digests is None:
        digests = {
            (c, r): claims.source_hash(root / "book" / f"{c}.md") for c in chapters for r, root in enumerate(roots)
        }
    batch, keys = [], {}
    for c in chapters:
        for s in seeds:
            for r, root in enumerate(roots):
                kwargs = {"chapter": c, "seed": s, "digest": digests[c, r], "root": None if root == ROOT else str(root)}
                job = jobs_engine.Job(_job_name(c, s, r), f"{__name__}:run_chapter", kwargs, digests[c, r], s)
                batch.append(job)
                keys[job.name] = ((c, r) if r else c, s)
    results = jobs_engine.run_jobs(
        batch,
        store,
        scheduler=scheduler,
        workers=jobs,
        timeout=JOB_TIMEOUT,
        paths=("book", "localization"),
        progress=progress,
    )
    outcomes: dict = {(c, r) if r else c: {} for c in chapters for r in range(len(roots))}
    lines: dict = {key: [] for key in outcomes}
    for job in batch:
        key, seed = keys[job.name]
        result = results[job.name]
        outcomes[key][seed] = (result["seconds"], result["error"])
        lines[key].extend(result["observations"])
        if progress and result["error"]:
            print(f"{job.name.replace('.', ' seed ', 1)}: {result['error']}", file=sys.stderr)
    return outcomes, lines, batch


def held_out_ready(chapter: str, out_dir: Path = claims.RECORD_DIR) -> str | None:
    """Why ``chapter`` cannot be run under the held-out seeds now (None: it can).

    It can when its record is current (its code unchanged since the development sweep, i.e. the bounds
    are frozen), holds at least :data:`~localization.book.claims.MIN_DEVELOPMENT` development seeds of
    :data:`DEFAULT_SEEDS`, and has no held-out run of this source yet.
    """
    path = Path(out_dir) / f"{chapter}.json"
    if not path.exists():
        return f"{chapter} has no record: sweep the development seeds first"
    record = json.loads(path.read_text(encoding="utf-8"))
    digest = claims.source_hash(BOOK / f"{chapter}.md")
    if record.get("source_sha256") != digest:
        return f"{chapter}'s code changed since its record: sweep the development seeds first (bounds not frozen)"
    held = sorted(set(DEFAULT_SEEDS) & set(record["seeds"]))
    if len(held) < claims.MIN_DEVELOPMENT:
        return (
            f"{chapter}'s record holds {len(held)} development seeds of {DEFAULT_SEEDS[0]}-{DEFAULT_SEEDS[-1]}, "
            f"fewer than {claims.MIN_DEVELOPMENT}"
        )
    if record["source_sha256"] == digest and claims.held_out_current(record):
        return f"{chapter}'s held-out seeds already ran on this source (once only)"
    return None


def sweep(
    chapters,
    seeds=DEFAULT_SEEDS,
    *,
    jobs: int = 2,
    out_dir: Path = claims.RECORD_DIR,
    progress: bool = True,
    held_out: bool = False,
    scheduler: str | None = None,
) -> dict:
    """Execute every chapter under every seed and write the records; returns them by chapter.

    With ``held_out=True`` the seeds are :data:`~localization.book.claims.HELD_OUT_SEEDS` (``seeds`` is
    ignored) and every chapter must pass :func:`held_out_ready`; otherwise ``seeds`` must not include a
    held-out seed.

    The executions run as jobs (:func:`run_chapter`) on a local Dask cluster of ``jobs`` workers, or
    on the running cluster at ``scheduler`` (default: the environment variable
    ``LOCALIZATION_SCHEDULER``, if set); each result is stored in :data:`JOB_STORE` as it finishes, so
    a sweep interrupted and run again executes only what it had not finished. Raises
    :class:`localization.jobs.JobFailedError` (no record written; the finished executions stay stored)
    if an execution could not run: a worker whose chapter differs from the hashed source, a timeout,
    a worker lost too often; a chapter that *raises* is a result (its run's ``error``), not a failure.
    """
    _check_chapters(chapters, jobs)
    if held_out:
        seeds = claims.HELD_OUT_SEEDS
        refused = [why for why in (held_out_ready(c, Path(out_dir)) for c in chapters) if why]
        if refused:
            raise ValueError("held-out seeds refused: " + "; ".join(refused))
    elif set(seeds) & set(claims.HELD_OUT_SEEDS):
        raise ValueError(
            f"seeds must not include the held-out seeds {list(claims.HELD_OUT_SEEDS)} (run them with held_out=True), "
            f"got {sorted(set(seeds) & set(claims.HELD_OUT_SEEDS))}"
        )
    commit = _commit()
    digests = {c: claims.source_hash(BOOK / f"{c}.md") for c in chapters}
    outcomes, lines, batch = _execute(
        chapters, seeds, jobs, progress, digests={(c, 0): d for c, d in digests.items()}, scheduler=scheduler
    )
    written = {c: _merge(c, seeds, outcomes[c], lines[c], Path(out_dir), commit, digests[c]) for c in chapters}
    jobs_engine.discard(JOB_STORE, batch)  # the records hold them now; a new sweep runs again
    return written


#: Agreement a carried-over record needs: every claim's value and bound, re-executed under a recorded seed.
CARRY_RTOL, CARRY_ATOL = 1e-9, 1e-12


def carry_differences(record: dict, seed: int, lines: list[dict]) -> list[str]:
    """How a re-execution under a recorded ``seed`` disagrees with the record (empty: it agrees).

    Parameters
    ----------
    record : dict
        A chapter's record (:func:`localization.book.claims.read_records`).
    seed : int
        A seed the record holds observations of.
    lines : list of dict
        The claims logged by the re-execution (``id``, ``op``, ``value``, ``bound``, ``holds``).

    Returns
    -------
    list of str
        One line per disagreement: a claim missing on either side, or a different operator, value,
        bound or verdict (values and bounds compared to relative 1e-9, absolute 1e-12).
    """
    old = {
        claim_id: (entry["op"], o)
        for claim_id, entry in record["claims"].items()
        for o in entry["observations"]
        if o["seed"] == seed
    }
    new = {line["id"]: line for line in lines if line.get("seed", seed) == seed}
    found = [f"{i}: recorded, not stated now" for i in sorted(set(old) - set(new))]
    found += [f"{i}: stated now, not recorded" for i in sorted(set(new) - set(old))]

    def close(a, b) -> bool:
        a, b = np.ravel(np.asarray(a, dtype=float)), np.ravel(np.asarray(b, dtype=float))
        return a.shape == b.shape and bool(np.all(np.abs(a - b) <= CARRY_ATOL + CARRY_RTOL * np.abs(a)))

    for claim_id in sorted(set(old) & set(new)):
        (op, was), now = old[claim_id], new[claim_id]
        if op != now["op"] or was["holds"] != now["holds"]:
            found.append(f"{claim_id}: was {op} (holds {was['holds']}), now {now['op']} (holds {now['holds']})")
        elif not close(was["value"], now["value"]) or not close(was["bound"], now["bound"]):
            found.append(
                f"{claim_id}: was {was['value']!r} vs {was['bound']!r}, now {now['value']!r} vs {now['bound']!r}"
            )
    return found


def restate(record: dict, lines: list[dict]) -> dict:
    """Give a record's claims the statement and loose-bound reason the chapter gives now.

    A carry-over keeps the observations (the values did not change) but moves the record to the current
    source, whose ``says`` and ``loose`` texts may have been edited.

    Parameters
    ----------
    record : dict
        A chapter's record (:func:`localization.book.claims.read_records`), changed in place.
    lines : list of dict
        The claims logged by a re-execution (``id``, ``says``, ``loose``).

    Returns
    -------
    dict
        The record.
    """
    for line in lines:
        entry = record["claims"].get(line["id"])
        if entry is not None:
            entry.update(says=line["says"], loose=line.get("loose"))
    return record


def _as_record(lines: list[dict], seed: int) -> dict:
    """Return the observations of one execution in the shape of a record (for :func:`carry_differences`)."""
    found: dict = {}
    for line in lines:
        entry = found.setdefault(line["id"], {"op": line["op"], "observations": []})
        entry["observations"].append({"seed": seed, **{k: line[k] for k in ("value", "bound", "holds")}})
    return {"claims": found}


def _baseline_tree(commit: str, where: Path) -> Path:
    """Check out ``commit`` (detached, no branch) at ``where``: the source a refactor is compared with."""
    if not isinstance(commit, str) or not re.fullmatch(r"[0-9a-fA-F]{7,40}", commit):
        raise ValueError(f"baseline must be a commit hash (7 to 40 hex digits), got {commit!r}")
    try:
        subprocess.run(["git", "worktree", "add", "--detach", str(where), commit], cwd=ROOT, capture_output=True,
                       text=True, check=True)  # fmt: skip
    except (OSError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or str(e)
        raise ValueError(f"baseline {commit!r}: cannot check it out ({detail.strip()})") from None
    return where


def carry_over(
    chapters,
    seed: int,
    *,
    jobs: int = 2,
    out_dir: Path = claims.RECORD_DIR,
    progress: bool = True,
    baseline: str | None = None,
    scheduler: str | None = None,
) -> dict[str, list[str]]:
    """Carry records over a change of code that should not change any claim (a refactor).

    Each chapter whose record is stale (its code cells changed) is executed once more under ``seed``,
    one of the seeds its record holds, and compared claim by claim (:func:`carry_differences`: value,
    bound and verdict, to a relative 1e-9) with

    * the record's observation under ``seed`` (no ``baseline``): right on the machine that wrote the
      record; on another, float32 SGD differs in its last bits and the comparison fails for that alone;
    * or, with ``baseline`` (a commit whose chapter is the recorded source, same hash), that commit's
      chapter and library executed now, on this machine, under ``seed``: the refactor's own effect.

    If every claim agrees, the record is moved to the current source (its hash, and the claims'
    statements and loose-bound reasons as the chapter now gives them: :func:`restate`) with an entry in
    its ``carried_over`` list (the commits, the seed, the number of claims compared, the baseline), and
    its observations are kept. A chapter that disagrees keeps its stale record: sweep it again.

    Parameters
    ----------
    chapters : sequence of str
        Executable chapters; those whose record is current are skipped.
    seed : int
        A seed every one of their records holds.
    jobs : int
        Chapters executed at once.
    out_dir : Path
        The records' directory.
    progress : bool
        Show a progress bar.
    baseline : str or None
        A commit to compare with instead of the recorded observations (its worktree is made here:
        not with a scheduler).
    scheduler : str or None
        A running Dask scheduler's address (default: ``LOCALIZATION_SCHEDULER`` if set, else a local
        cluster of ``jobs`` workers); the executions' results are kept in a temporary store.

    Returns
    -------
    dict
        chapter → its disagreements (empty list: carried over).
    """
    _check_chapters(chapters, jobs)
    if baseline is not None and jobs_engine.scheduler_address(scheduler) is not None:
        raise ValueError(
            f"baseline {baseline!r} needs a local cluster (its worktree is checked out on this machine), but a "
            f"scheduler is set ({jobs_engine.scheduler_address(scheduler)}): unset {jobs_engine.SCHEDULER_ENV}"
        )
    records = claims.read_records(out_dir)
    stale, digests = [], {chapter: claims.source_hash(BOOK / f"{chapter}.md") for chapter in chapters}
    for chapter in chapters:
        record = records.get(chapter)
        if record is None and not claims.claim_ids(BOOK / f"{chapter}.md"):
            continue  # a chapter stating no claim (the claims page itself) has nothing to carry
        if record is None:
            raise ValueError(f"chapter {chapter!r} has no record to carry over: sweep it")
        if record["source_sha256"] == digests[chapter]:
            continue
        if seed not in record["seeds"]:
            raise ValueError(f"seed must be one of the seeds recorded for {chapter} {record['seeds']}, got {seed}")
        stale.append(chapter)
    commit = _commit()
    with tempfile.TemporaryDirectory() as tmp:
        roots: tuple[Path, ...] = (ROOT,)
        if baseline is not None and stale:
            tree = _baseline_tree(baseline, Path(tmp) / "baseline")
            roots = (ROOT, tree)
            for chapter in stale:
                old = claims.source_hash(tree / "book" / f"{chapter}.md")
                if old != records[chapter]["source_sha256"]:
                    raise ValueError(
                        f"baseline {baseline!r}: its {chapter}.md is not the source {chapter}'s record was written "
                        "from (another hash); choose the commit of that source"
                    )
        try:
            expected = {(c, 0): digests[c] for c in stale} | {(c, 1): records[c]["source_sha256"] for c in stale}
            outcomes, lines, _ = _execute(
                stale, (seed,), jobs, progress, roots, digests=expected, scheduler=scheduler, store=Path(tmp) / "jobs"
            )
        finally:
            if len(roots) > 1:
                subprocess.run(["git", "worktree", "remove", "--force", str(roots[1])], cwd=ROOT, capture_output=True)
    result = {}
    for chapter in stale:
        record = records[chapter]
        errors = [outcomes[chapter][seed][1]] + ([outcomes[chapter, 1][seed][1]] if baseline else [])
        if any(errors):
            result[chapter] = [f"raised: {e}" for e in errors if e]
            continue
        reference = _as_record(lines[chapter, 1], seed) if baseline else record
        found = carry_differences(reference, seed, lines[chapter])
        result[chapter] = found
        if not found:
            compared = sum(any(o["seed"] == seed for o in e["observations"]) for e in reference["claims"].values())
            restate(record, lines[chapter])
            entry = {"from_commit": record["commit"], "commit": commit, "seed": seed, "claims": compared}
            entry["from_source_sha256"] = record["source_sha256"]
            record["source_sha256"] = digests[chapter]  # the source that was executed, hashed before the run
            if baseline:
                entry["baseline"] = baseline  # compared with that commit executed on the same machine
            record.setdefault("carried_over", []).append(entry)
            path = Path(out_dir) / f"{chapter}.json"
            path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return result
