"""The long recorded runs of the simulation chapter, one command: ``python -m localization.experiments.runs``.

Each writes one record under ``book/data/`` (the commands are listed with the records,
:data:`localization.records.MANIFEST`): the large-N sweeps (:mod:`~localization.experiments.large_n`),
the final field's variance split into its data and initialisation parts
(:mod:`~localization.experiments.data_init`) and the paper's Fig. 5 just below zero
(:mod:`~localization.experiments.near_zero`). Kept apart from the experiments it runs, so that none of
them imports another back. Usage::

    python -m localization.experiments.runs NAME PATH [--seed S] [--resume] [--workers W] [--scheduler ADDRESS]

with NAME one of ``large_n``, ``large_n_long``, ``large_n_batch``, ``large_n_near_zero``,
``large_n_near_zero_long``, ``data_init``, ``near_zero``,
``near_zero_positive``, ``near_zero_batch``, ``t3_protocol_long`` (the elliptical chapter's Student-t
protocols continued, :func:`~localization.experiments.elliptical.t3_protocol_record`).

Every record but ``data_init`` (one computation) is a sweep of independent points: one seed
(``near_zero*``, ``t3_protocol_long``) or one input size N (``large_n*``). Each point is one job of
:mod:`localization.jobs` (:func:`run_point`), run on a local Dask cluster of ``--workers`` processes
(default one per core) or on a running cluster (``--scheduler`` or the environment variable
``LOCALIZATION_SCHEDULER``: the README's "On a cluster"), and stored under ``_build/runs-jobs/NAME``
as it finishes, so that an interrupted run, started again, runs only the points it had not finished.
The record is assembled in the order of its settings and written once by the experiment's own record
function, the same JSON as a run in one process (``--serial``, which writes it after every point).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
from collections.abc import Sequence
from typing import Any

import jax

from localization import jobs, records
from localization.experiments import data_init, elliptical, large_n, near_zero

__all__ = ["RUNS", "SWEEPS", "T3_SEEDS", "JOB_STORE", "run_point", "main"]

#: The large-N settings by record name (the command's other names: ``data_init`` and the keys of
#: :data:`localization.experiments.near_zero.RECORDS`).
RUNS = {
    "large_n": large_n.LARGE_N,
    "large_n_long": large_n.LARGE_N_LONG,
    "large_n_batch": large_n.LARGE_N_BATCH,
    "large_n_near_zero": large_n.LARGE_N_NEAR_ZERO,
    "large_n_near_zero_long": large_n.LARGE_N_NEAR_ZERO_LONG,
}
#: The records run point by point as jobs (every name but ``data_init``).
SWEEPS = (*RUNS, "t3_protocol_long", *near_zero.RECORDS)
#: The seeds of ``t3_protocol_long`` (:func:`~localization.experiments.elliptical.t3_protocol_record`'s default).
T3_SEEDS = (0, 1, 2)
#: Where each point's result is kept until its record is written (``<name>/<point>.json``).
JOB_STORE = records.ROOT / "_build" / "runs-jobs"


def _settings(name: str) -> Any:
    """Return the settings of a sweep as the module defines them now (a dataclass; t3: a dict of protocols)."""
    if name in RUNS:
        return RUNS[name]
    if name == "t3_protocol_long":
        return elliptical.T3_PROTOCOLS
    if name == "near_zero_batch":
        return near_zero.BATCH_SCAN
    return near_zero.NEAR_ZERO_POSITIVE if name == "near_zero_positive" else near_zero.NEAR_ZERO


def _as_json(settings: Any) -> dict:
    """Return the settings as their record holds them (JSON: tuples become lists)."""
    if isinstance(settings, dict):
        return json.loads(json.dumps({k: dataclasses.asdict(p) for k, p in settings.items()}))
    return json.loads(json.dumps(dataclasses.asdict(settings)))


def _tuples(value: Any) -> Any:
    return tuple(_tuples(x) for x in value) if isinstance(value, list) else value


def _from_json(kind: type, fields: dict) -> Any:
    """Rebuild a settings dataclass from its JSON (every list was a tuple), validated by its constructor."""
    return kind(**{k: _tuples(x) for k, x in fields.items()})


def run_point(record: str, settings: dict, seed: int, n: int | None = None) -> dict:
    """Compute one point of a recorded sweep: the job :func:`main` runs on each worker.

    The same call the record's function makes for that point in one process, so the entry is the same
    (``seconds`` apart): :func:`~localization.experiments.near_zero.near_zero_seed`,
    :func:`~localization.experiments.near_zero.batch_scan_seed`, every protocol's
    :func:`~localization.experiments.elliptical.t3_protocol_run` under
    :func:`~localization.experiments.elliptical.t3_seed_key` (in float64, as ``main`` runs it), or
    :func:`~localization.experiments.large_n.large_n_size` with ``jax.random.key(seed)``.

    Parameters
    ----------
    record : str
        One of :data:`SWEEPS`.
    settings : dict
        The record's settings as JSON (what the record stores; the protocols by key for t3).
    seed : int
        The point's seed (``large_n*``: the seed of the key every size shares).
    n : int or None
        ``large_n*``: the input size N of the point; otherwise None.

    Returns
    -------
    dict
        The point's entry (JSON values).
    """
    if record not in SWEEPS:
        raise ValueError(f"record must be one of {SWEEPS}, got {record!r}")
    if not isinstance(settings, dict):
        raise TypeError(f"settings must be a dict (the record's settings as JSON), got {type(settings).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    if (n is None) == (record in RUNS):
        raise ValueError(f"n must be an input size for the large_n records and None otherwise, got {n!r} for {record}")
    # Set per job, thread-locally: a worker may run jobs of several records (t3 needs float64, the
    # others run in float32 as in their own process).
    with jax.enable_x64(record == "t3_protocol_long"):
        if record in RUNS:
            return large_n.large_n_size(jax.random.key(seed), n, _from_json(large_n.LargeNSettings, settings))
        if record == "t3_protocol_long":
            protocols = {k: _from_json(elliptical.T3Protocol, p) for k, p in settings.items()}
            return {k: elliptical.t3_protocol_run(elliptical.t3_seed_key(seed, p), p) for k, p in protocols.items()}
        if record == "near_zero_batch":
            return near_zero.batch_scan_seed(seed, _from_json(near_zero.BatchScanSettings, settings))
        return near_zero.near_zero_seed(seed, _from_json(near_zero.NearZeroSettings, settings))


def _points(name: str, settings: Any, seed: int) -> list[tuple[int, dict]]:
    """(point, kwargs of :func:`run_point`) of a sweep, in the order its record lists them."""
    as_json = _as_json(settings)
    if name in RUNS:
        return [(n, dict(record=name, settings=as_json, seed=seed, n=n)) for n in settings.ns]
    seeds = T3_SEEDS if name == "t3_protocol_long" else settings.seeds
    return [(s, dict(record=name, settings=as_json, seed=s)) for s in seeds]


def _done(name: str, settings: Any, path: str, resume: bool) -> set[int]:
    """Return the points ``path`` holds (with ``resume``); refuse a record of other settings before any job."""
    if not resume or not os.path.exists(path):
        return set()
    with open(path, encoding="utf-8") as f:
        old = json.load(f)
    if old.get("settings") != _as_json(settings):
        raise ValueError(f"resume: the settings of {path} differ from {settings}")
    return {size["n"] for size in old["sizes"]} if name in RUNS else {entry["seed"] for entry in old["seeds"]}


def _run_on_jobs(name: str, path: str, seed: int, resume: bool, command: str, **options) -> dict:
    """Run a sweep's missing points as jobs, then write its record with the experiment's record function."""
    settings = _settings(name)
    done = _done(name, settings, path, resume)
    batch = []
    for point, kwargs in _points(name, settings, seed):
        if point in done:
            continue
        source = hashlib.sha256(json.dumps(kwargs | {"seed": None}, sort_keys=True).encode()).hexdigest()
        label = f"n{point}" if name in RUNS else f"seed{point}"
        batch.append(jobs.Job(f"{name}.{label}", f"{__name__}:run_point", kwargs, source, kwargs["seed"]))
    store = JOB_STORE / name
    found = jobs.run_jobs(batch, store, **options) if batch else {}
    results = {job.kwargs.get("n", job.kwargs["seed"]): found[job.name] for job in batch}
    if name == "t3_protocol_long":
        record = elliptical.t3_protocol_record(path, seeds=T3_SEEDS, resume=resume, results=results)
    elif name in near_zero.RECORDS:
        if name == "near_zero_batch":
            record = near_zero.batch_scan_record(settings, path=path, resume=resume, results=results)
        else:
            record = near_zero.near_zero_record(settings, path=path, resume=resume, name=name, results=results)
    else:
        provenance = dict(command=command, seed=seed)
        key = jax.random.key(seed)
        record = large_n.large_n_sweep(key, settings, path=path, resume=resume, provenance=provenance, results=results)
    jobs.discard(store, batch)  # the record holds them now: a new run runs again
    return record


def main(argv: Sequence[str] | None = None) -> dict:
    """Run one named record and write it to PATH; return the record.

    Parameters
    ----------
    argv : sequence of str or None
        The command's arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    dict
        The record written.
    """
    p = argparse.ArgumentParser(prog="python -m localization.experiments.runs")
    p.add_argument("name", choices=[*RUNS, "data_init", "t3_protocol_long", *near_zero.RECORDS])
    p.add_argument("path")
    p.add_argument("--seed", type=int, default=0, help="large_n*, data_init (near_zero*: the settings' seeds)")
    p.add_argument("--resume", action="store_true", help="large_n*, near_zero*, t3_protocol_long: keep what PATH holds")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes of the local Dask cluster (default: one per core)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help=f"a running Dask scheduler (tcp://HOST:8786) to run the points on (default: ${jobs.SCHEDULER_ENV}, "
        "else a local cluster of --workers processes)",
    )
    p.add_argument(
        "--serial", action="store_true", help="run every point in this process, one after the other (no Dask)"
    )
    a = p.parse_args(argv)
    if a.workers is not None and a.workers < 1:
        p.error(f"--workers must be a positive integer, got {a.workers}")
    command = f"nice -n 10 .venv/bin/python -m localization.experiments.runs {a.name} {a.path} --seed {a.seed}"
    if a.name in SWEEPS and not a.serial:
        try:
            return _run_on_jobs(a.name, a.path, a.seed, a.resume, command, scheduler=a.scheduler, workers=a.workers)
        except ValueError as e:
            p.error(str(e))
        except (ConnectionError, jobs.WorkerMismatchError, jobs.JobFailedError) as e:
            raise SystemExit(f"{p.prog} {a.name}: {e}") from None
    if a.name == "data_init":
        return data_init.data_init_record(a.seed, path=a.path)
    if a.name == "t3_protocol_long":  # elliptical chapter; its flow needs float64
        import localization

        localization.enable_float64()
        return elliptical.t3_protocol_record(a.path, resume=a.resume)
    if a.name in near_zero.RECORDS:
        return near_zero.write_named_record(a.name, path=a.path, resume=a.resume)
    key, provenance = jax.random.key(a.seed), dict(command=command, seed=a.seed)
    return large_n.large_n_sweep(key, RUNS[a.name], path=a.path, resume=a.resume, provenance=provenance)


if __name__ == "__main__":
    main()
