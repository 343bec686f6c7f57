"""One way to run a batch of independent jobs: on a local Dask cluster, or on a running one by address.

A :class:`Job` is one call ``function(**kwargs)`` (a chapter executed under a seed; one point of an
experiment sweep) with an identity: the hash of the source it runs, its seed, and the project's
commit. :func:`run_jobs` runs a batch on a Dask ``distributed`` cluster and stores each job's result
as it finishes, one JSON file per job in a directory (written to a temporary file, then renamed, so a
file is never half written). A batch that was interrupted resumes where it stopped: a job whose file
holds its identity is never run again. By default the cluster is a ``LocalCluster`` sized to the
machine (one process per core, one thread each); ``scheduler="tcp://HOST:8786"`` or the environment
variable :data:`SCHEDULER_ENV` sends the jobs to a cluster started elsewhere (``dask scheduler``,
``dask worker ADDRESS``: see the README's "On a cluster").

What it refuses, with an error that says why:

* a scheduler it cannot reach within ``connect_timeout`` seconds (``ConnectionError``, with the address);
* a worker that cannot import the project, or that runs another commit of it (or, in another checkout,
  the same commit with other uncommitted changes): :class:`WorkerMismatchError` naming both versions.
  Every worker is asked before any job is submitted (``client.run``), and every job checks its worker
  again before it runs, since workers may join a running cluster later: two commits are never mixed;
* a job that raises, returns something JSON cannot hold, or runs longer than ``timeout`` seconds:
  the other jobs go on and are stored, then :class:`JobFailedError` lists each failed job and why.

A worker that dies mid-job (killed, out of memory) has its jobs run again on another worker by the
scheduler, up to ``retries`` times on the cluster this module starts (the scheduler's
``allowed-failures``; a running cluster keeps its own setting, Dask's default 3). Distributed's
``submit(retries=...)`` is not used: it re-runs a job that *raised*, which for deterministic jobs
raises again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib
import json
import math
import os
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from localization import records

__all__ = [
    "SCHEDULER_ENV",
    "CONNECT_TIMEOUT",
    "Job",
    "ProjectVersion",
    "WorkerMismatchError",
    "JobFailedError",
    "project_version",
    "scheduler_address",
    "stored_result",
    "discard",
    "run_jobs",
]

#: Environment variable naming a running scheduler (``tcp://HOST:PORT``) when ``scheduler`` is not given.
SCHEDULER_ENV = "LOCALIZATION_SCHEDULER"
#: Seconds to wait for a scheduler (and for its first worker) before saying it cannot be reached.
CONNECT_TIMEOUT = 10.0

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
_FUNCTION_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


class WorkerMismatchError(RuntimeError):
    """A worker cannot import the project, or runs another version of it than the client."""


class JobFailedError(RuntimeError):
    """Jobs of a batch failed; the others finished and are stored.

    Attributes
    ----------
    failures : dict of str to str
        Job name → what went wrong (the exception, or the timeout, with the worker's address).
    results : dict of str to Any
        Job name → result, for every job of the batch that finished (stored ones included).
    """

    def __init__(self, failures: Mapping[str, str], results: Mapping[str, Any]):
        self.failures, self.results = dict(failures), dict(results)
        lines = "\n".join(f"  {name}: {why}" for name, why in self.failures.items())
        super().__init__(
            f"{len(self.failures)} job(s) failed ({len(self.results)} finished and stored; run the batch "
            f"again to retry only the failed ones):\n{lines}"
        )


def _json_text(value: Any, what: str, sort_keys: bool = True) -> str:
    try:
        return json.dumps(value, allow_nan=False, sort_keys=sort_keys)
    except (TypeError, ValueError) as e:
        raise TypeError(
            f"{what} must be JSON (str, finite numbers, bool, None, lists, dicts), got {value!r}: {e}"
        ) from None


def _function_path(function: str | Callable[..., Any]) -> str:
    if isinstance(function, str):
        return function
    return f"{getattr(function, '__module__', '?')}:{getattr(function, '__qualname__', repr(function))}"


@dataclasses.dataclass(frozen=True)
class Job:
    """One independent call ``function(**kwargs)`` of a batch, with the identity of what it computes.

    Attributes
    ----------
    name : str
        Unique within its batch, and the name of its result file ``<name>.json``: letters, digits,
        ``.``, ``_`` and ``-``, starting with a letter or digit (e.g. ``"simulation.103"``).
    function : str or callable
        ``"package.module:function"`` (imported on the worker), or a function that pickles (a
        module-level function of an importable module, or one ``cloudpickle`` ships by value).
    kwargs : Mapping
        Keyword arguments, JSON values only (they are stored beside the result, as provenance).
    source : str
        The hash of the source the job runs (a chapter's :func:`localization.book.claims.source_hash`,
        or a digest of an experiment's settings): part of the identity.
    seed : int
        The job's seed (non-negative): part of the identity.
    """

    name: str
    function: str | Callable[..., Any]
    kwargs: Mapping[str, Any]
    source: str
    seed: int

    def __post_init__(self):
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ValueError(
                f"name must be 1 to 200 letters, digits, '.', '_' or '-' starting with a letter or digit, "
                f"got {self.name!r}"
            )
        if isinstance(self.function, str):
            if not _FUNCTION_PATH.fullmatch(self.function):
                raise ValueError(f"function must be 'package.module:function' or a callable, got {self.function!r}")
        elif not callable(self.function):
            raise TypeError(f"function must be 'package.module:function' or a callable, got {self.function!r}")
        if not isinstance(self.kwargs, Mapping) or not all(isinstance(k, str) for k in self.kwargs):
            raise TypeError(f"kwargs must be a mapping with str keys, got {self.kwargs!r}")
        _json_text(dict(self.kwargs), f"kwargs of job {self.name!r}")
        if not isinstance(self.source, str) or not self.source:
            raise ValueError(f"source must be a non-empty str (a hash of the job's source), got {self.source!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {self.seed!r}")
        object.__setattr__(self, "kwargs", dict(self.kwargs))

    def identity(self, commit: str) -> dict[str, Any]:
        """Return what makes a stored result this job's: ``{"source", "seed", "commit"}``.

        ``commit`` is the batch's :attr:`ProjectVersion.stamp`.
        """
        return {"source": self.source, "seed": self.seed, "commit": commit}


@dataclasses.dataclass(frozen=True)
class ProjectVersion:
    """Which code of the project a process runs.

    Attributes
    ----------
    commit : str
        :func:`localization.records.commit` of the paths asked for (``"<hash>"``, ``"<hash>+uncommitted"``
        or ``"unknown"`` outside a git checkout).
    digest : str
        SHA-256 of the library's Python source (every ``localization/**/*.py``, path and content), which
        tells apart two checkouts of one commit with different uncommitted changes.
    checkout : str
        ``"<host>:<repository root>"``: processes of one checkout read the same files.
    """

    commit: str
    digest: str
    checkout: str

    @property
    def stamp(self) -> str:
        """What stored results are keyed by: the commit, and with uncommitted changes the library's digest too.

        ``"<hash>+uncommitted"`` names every state of an edited tree alike; a result computed before an
        edit of the library must not be taken for one computed after it (``"<hash>+uncommitted:<digest[:16]>"``).
        """
        return f"{self.commit}:{self.digest[:16]}" if self.commit.endswith("+uncommitted") else self.commit

    def runs_same_code_as(self, other: ProjectVersion) -> bool:
        """Whether a worker of this version may run the jobs of a client of version ``other``.

        Two checkouts: the same commit, and the same digest. One checkout (a local cluster): the same
        commit; its uncommitted files are the client's by definition, and may be edited while the
        workers start, which must not refuse them.
        """
        if self.checkout == other.checkout:
            return self.commit.split("+")[0] == other.commit.split("+")[0]
        return self.commit == other.commit and self.digest == other.digest


def project_version(paths: tuple[str, ...] = ("localization",)) -> ProjectVersion:
    """Return the :class:`ProjectVersion` of this process's checkout.

    Parameters
    ----------
    paths : tuple of str
        Paths, relative to the repository's root, whose uncommitted changes mark the commit.

    Returns
    -------
    ProjectVersion
    """
    if not isinstance(paths, tuple) or not paths or not all(isinstance(p, str) for p in paths):
        raise TypeError(f"paths must be a non-empty tuple of str, got {paths!r}")
    package = Path(records.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    checkout = f"{socket.gethostname()}:{records.ROOT}"
    return ProjectVersion(records.commit(paths), digest.hexdigest(), checkout)


@functools.cache
def _worker_version(paths: tuple[str, ...]) -> ProjectVersion:
    """Return :func:`project_version` once per worker process.

    Asked before the batch, it is what the worker's jobs run (modules already imported stay as they
    were), even if the checkout changes meanwhile.
    """
    return project_version(paths)


def scheduler_address(scheduler: str | None = None) -> str | None:
    """Return the scheduler to use: ``scheduler``, else :data:`SCHEDULER_ENV`, else None (a local cluster).

    Parameters
    ----------
    scheduler : str or None
        ``"tcp://HOST:PORT"`` (or ``"HOST:PORT"``) of a running Dask scheduler.

    Returns
    -------
    str or None
    """
    if scheduler is None:
        scheduler = os.environ.get(SCHEDULER_ENV) or None
        where = f"the environment variable {SCHEDULER_ENV}"
    else:
        where = "scheduler"
    if scheduler is not None and (
        not isinstance(scheduler, str) or not re.fullmatch(r"(\w+://)?[^\s/]+:\d+", scheduler)
    ):
        raise ValueError(f"{where} must be a scheduler's address like 'tcp://HOST:8786', got {scheduler!r}")
    return scheduler


def _result_path(store: Path, name: str) -> Path:
    return store / f"{name}.json"


def stored_result(store: str | os.PathLike, job: Job, commit: str) -> dict | None:
    """Return the stored entry of ``job`` if ``store`` holds one of the same identity, else None.

    Parameters
    ----------
    store : str or PathLike
        The batch's directory of results.
    job : Job
        The job.
    commit : str
        The code the batch runs (:attr:`ProjectVersion.stamp`).

    Returns
    -------
    dict or None
        ``name``, ``identity``, ``function``, ``kwargs``, ``result``, ``seconds``, ``worker``; None when
        there is no file, or its identity differs (another source, seed or commit: it will be rerun).
    """
    path = _result_path(Path(store), job.name)
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) and entry.get("identity") == job.identity(commit) else None


def discard(store: str | os.PathLike, jobs: Sequence[Job]) -> int:
    """Remove the stored results of ``jobs`` from ``store``; return how many were removed.

    The store is for resuming an interrupted batch, not a cache: once what the batch computes is
    written (a record), its results are discarded, so that running the batch again runs it again
    (files the jobs read may have changed without changing any job's identity).

    Parameters
    ----------
    store : str or PathLike
        The batch's directory of results (need not exist).
    jobs : sequence of Job
        The jobs whose results to remove.

    Returns
    -------
    int
        The number of files removed.
    """
    if isinstance(jobs, (str, bytes)) or not isinstance(jobs, Sequence) or not all(isinstance(j, Job) for j in jobs):
        raise TypeError(f"jobs must be a sequence of Job, got {jobs!r}")
    removed = 0
    for job in jobs:
        path = _result_path(Path(store), job.name)
        if path.exists():
            path.unlink()
            removed += 1
    return removed


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)  # atomic on POSIX: a reader sees the old file or the new one


def _resolve(function: str | Callable[..., Any]) -> Callable[..., Any]:
    if not isinstance(function, str):
        return function
    module, qualname = function.split(":")
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _call_with_timeout(function: Callable[..., Any], kwargs: Mapping[str, Any], timeout: float | None):
    """(finished, value): run in a helper thread, abandoned (still running) after ``timeout`` seconds."""
    if timeout is None:
        return True, function(**kwargs)
    outcome: dict[str, Any] = {}

    def target():
        try:
            outcome["value"] = function(**kwargs)
        except BaseException as e:  # handed to the worker's thread below, which raises it
            outcome["error"] = e

    thread = threading.Thread(target=target, name="localization-job", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return False, None
    if "error" in outcome:
        raise outcome["error"]
    return True, outcome["value"]


def _mismatch(worker: str, found: ProjectVersion, expected: ProjectVersion) -> str:
    if found.commit.split("+")[0] != expected.commit.split("+")[0] or found.checkout == expected.checkout:
        return (
            f"worker {worker} runs commit {found.commit} of the project, the client {expected.commit}: "
            "results of two commits are not mixed (check out the client's commit on that worker)"
        )
    return (
        f"worker {worker} runs commit {found.commit} with other uncommitted changes than the client (library "
        f"digest {found.digest[:12]} vs {expected.digest[:12]}): commit, or give the worker the same tree"
    )


def _run_on_worker(
    function: str | Callable[..., Any],
    kwargs: Mapping[str, Any],
    expected: ProjectVersion,
    paths: tuple[str, ...],
    timeout: float | None,
) -> tuple[bool, Any, float, str]:
    """In a worker: check its version, then run one job; (finished in time, result, seconds, worker)."""
    from distributed import get_worker

    worker = get_worker().address
    found = _worker_version(paths)
    if not found.runs_same_code_as(expected):
        raise WorkerMismatchError(_mismatch(worker, found, expected))
    start = time.perf_counter()
    finished, value = _call_with_timeout(_resolve(function), kwargs, timeout)
    return finished, value, time.perf_counter() - start, worker


def _check_workers(client, expected: ProjectVersion, paths: tuple[str, ...], address: str) -> None:
    """Ask every worker which code it runs (before anything is submitted)."""
    found = client.run(_worker_version, paths, on_error="return")
    if not found:
        raise WorkerMismatchError(f"no worker is connected to the scheduler at {address}")
    for worker, version in sorted(found.items()):
        if isinstance(version, BaseException):
            raise WorkerMismatchError(
                f"worker {worker} cannot import the project (localization): {type(version).__name__}: {version} "
                "(install it there: pip install -e . in a checkout of the client's commit)"
            )
        if not version.runs_same_code_as(expected):
            raise WorkerMismatchError(_mismatch(worker, version, expected))


def _machine_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextlib.contextmanager
def _client(address: str | None, workers: int | None, retries: int, connect_timeout: float) -> Iterator[Any]:
    """Yield a ``distributed.Client`` of the scheduler at ``address``, or of a local cluster it starts."""
    from distributed import Client, LocalCluster

    if address is None:
        # memory_limit=0: no per-worker memory cap (as the process pool it replaces); dashboard on a free port
        with (
            LocalCluster(
                n_workers=workers or _machine_cores(),
                threads_per_worker=1,
                processes=True,
                memory_limit=0,
                dashboard_address=":0",
                scheduler_kwargs={"allowed_failures": retries},
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client
        return
    try:
        client = Client(address, timeout=connect_timeout)
    except (OSError, TimeoutError) as e:
        raise ConnectionError(
            f"cannot reach the Dask scheduler at {address} within {connect_timeout:g} s ({e}); start one with "
            f"`dask scheduler` and workers with `dask worker {address}`, or unset {SCHEDULER_ENV} to run locally"
        ) from None
    with client:
        try:
            client.wait_for_workers(1, timeout=connect_timeout)
        except TimeoutError:
            raise WorkerMismatchError(
                f"no worker joined the scheduler at {address} within {connect_timeout:g} s (start one with "
                f"`dask worker {address}`)"
            ) from None
        yield client


def _dashboard(client, local: bool) -> str | None:
    """Return the dashboard's address, if the scheduler serves one (a local one needs bokeh installed)."""
    if "dashboard" not in client.scheduler_info().get("services", {}):
        return None
    if local:
        import importlib.util

        if importlib.util.find_spec("bokeh") is None:
            return None
    return client.dashboard_link


def _check_options(jobs, workers, timeout, retries, connect_timeout) -> None:
    if isinstance(jobs, (str, bytes)) or not isinstance(jobs, Sequence):
        raise TypeError(f"jobs must be a sequence of Job, got {type(jobs).__name__}")
    for i, job in enumerate(jobs):
        if not isinstance(job, Job):
            raise TypeError(f"jobs[{i}] must be a Job, got {type(job).__name__}")
    names = [job.name for job in jobs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"job names must be unique in a batch, got repeated {repeated}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive int or None (one per core), got {workers!r}")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries must be a non-negative int, got {retries!r}")
    for name, value in (("timeout", timeout), ("connect_timeout", connect_timeout)):
        if value is None and name == "timeout":
            continue  # no limit
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive finite number of seconds, got {value!r}")


def run_jobs(
    jobs: Sequence[Job],
    store: str | os.PathLike,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    timeout: float | None = None,
    retries: int = 2,
    paths: tuple[str, ...] = ("localization",),
    progress: bool = True,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> dict[str, Any]:
    """Run a batch of independent jobs on a Dask cluster, storing each result as it finishes.

    Jobs whose result ``store`` already holds for their identity (source, seed and this code:
    :attr:`ProjectVersion.stamp`) are not run again; the others are submitted at once, in the order
    given (put the longest first), and each is written to ``store/<name>.json`` as soon as it returns.
    Interrupted (Ctrl-C, a lost client), the batch resumes with the jobs it had not stored.

    Parameters
    ----------
    jobs : sequence of Job
        The batch; names unique.
    store : str or PathLike
        Directory of the results (created), one JSON file per job: ``name``, ``identity``,
        ``function``, ``kwargs``, ``result``, ``seconds``, ``worker``.
    scheduler : str or None
        Address of a running Dask scheduler (``"tcp://HOST:8786"``); None: :data:`SCHEDULER_ENV` if
        set, else a ``LocalCluster`` started for the batch and closed after it.
    workers : int or None
        Worker processes of the local cluster (one thread each); None: one per core. Ignored with a
        scheduler.
    timeout : float or None
        Seconds a job may run before it counts as failed (its worker is then restarted, which frees it);
        None: no limit.
    retries : int
        How many times the local cluster's scheduler runs a job again after its worker died.
    paths : tuple of str
        Paths whose commit identifies the code (:func:`localization.records.commit`): the claims
        sweep passes ``("book", "localization")``.
    progress : bool
        Show a progress bar over the jobs, and the dashboard's address when there is one.
    connect_timeout : float
        Seconds to wait for the scheduler, and for its first worker.

    Returns
    -------
    dict
        Job name → its result, in the order of ``jobs``.

    Raises
    ------
    ConnectionError
        The scheduler cannot be reached.
    WorkerMismatchError
        A worker cannot import the project or runs another version of it (nothing was submitted), or
        no worker joined the scheduler.
    JobFailedError
        Some jobs raised, timed out, returned something JSON cannot hold, or lost their worker more
        than ``retries`` times; the others finished and are stored.
    """
    _check_options(jobs, workers, timeout, retries, connect_timeout)
    address = scheduler_address(scheduler)
    from distributed import as_completed  # imported here: a second or so, and only when a batch runs
    from tqdm.auto import tqdm

    store = Path(store)
    store.mkdir(parents=True, exist_ok=True)
    expected = project_version(paths)
    results: dict[str, Any] = {}
    for job in jobs:
        entry = stored_result(store, job, expected.stamp)
        if entry is not None:
            results[job.name] = entry["result"]
    pending = [job for job in jobs if job.name not in results]
    failures: dict[str, str] = {}
    if pending:
        with _client(address, workers, retries, connect_timeout) as client:
            _check_workers(client, expected, paths, address or "the local cluster")
            link = _dashboard(client, local=address is None)
            if progress and link:
                print(f"Dask dashboard: {link}", file=sys.stderr)
            futures = {
                client.submit(
                    _run_on_worker,
                    job.function,
                    job.kwargs,
                    expected,
                    paths,
                    timeout,
                    key=f"{job.name}-{uuid.uuid4().hex}",
                    pure=False,
                ): job
                for job in pending
            }
            bar = tqdm(total=len(jobs), initial=len(results), desc="jobs", unit="job", disable=not progress)
            try:
                for future in as_completed(futures):
                    job = futures.pop(future)
                    why = _store(store, job, expected.stamp, future, client, timeout, results)
                    if why:
                        failures[job.name] = why
                        bar.write(f"{job.name}: {why}")
                    bar.set_postfix_str(job.name)
                    bar.update()
            finally:
                bar.close()
                client.cancel(list(futures))
    ordered = {job.name: results[job.name] for job in jobs if job.name in results}
    if failures:
        raise JobFailedError(failures, ordered)
    return ordered


def _store(store: Path, job: Job, commit: str, future, client, timeout, results: dict) -> str | None:
    """Write one finished job's result (or say why it failed); the reason, or None when stored."""
    from distributed.client import FutureCancelledError

    try:
        finished, value, seconds, worker = future.result()
    except WorkerMismatchError as e:
        return str(e)
    except FutureCancelledError:
        return "cancelled (its worker died, or the scheduler closed)"
    except Exception as e:  # the job's own exception, as the worker raised it; KilledWorker too
        return f"{type(e).__name__}: {e}"
    if not finished:
        # the job's thread cannot be stopped from outside: restart its worker process to free it
        try:
            client.restart_workers([worker])
            freed = "that worker was restarted"
        except Exception as e:  # a worker without a nanny cannot be restarted from here
            freed = f"that worker could not be restarted ({type(e).__name__}), the job may still run there"
        return f"timed out: still running after {timeout:g} s on worker {worker} ({freed})"
    try:
        text = _json_text(value, f"the result of job {job.name!r}", sort_keys=False)  # keys in the job's order
    except TypeError as e:
        return str(e)
    entry = dict(
        name=job.name,
        identity=job.identity(commit),
        function=_function_path(job.function),
        kwargs=job.kwargs,
        result=json.loads(text),
        seconds=round(seconds, 3),
        worker=worker,
    )
    _write_atomically(_result_path(store, job.name), json.dumps(entry, indent=1) + "\n")
    results[job.name] = entry["result"]
    return None
