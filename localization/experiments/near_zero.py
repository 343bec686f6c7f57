r"""Beyond Fig. 5: the SGD fields just below zero excess kurtosis at the paper's settings (simulation chapter).

The paper's Fig. 5 shows a low IPR for the values just below zero excess kurtosis. The IPR mixes
*whether* a field has a bump with *how wide* the bump is (:mod:`localization.field_analysis.localized`);
this module measures the two apart on SGD runs, with the book's definition of a localized field
(:func:`~localization.field_analysis.is_localized`) and the bump's width
(:func:`~localization.field_analysis.bump_width`). The noise-free counterpart, the effective flow's
fixed point and its spectrum, is :mod:`localization.experiments.bump_flow`.

* :class:`NearZeroSettings`, :data:`NEAR_ZERO` — M2 trained at the paper's Fig. 5 settings (batch
  5000, learning rate 0.1, 10 000 steps, N = 40) for NLGP and Kur values near zero excess kurtosis;
  :func:`near_zero_run` trains from one key, :func:`near_zero_seed` from one integer seed, and
  :func:`near_zero_record` writes the record over several seeds, ``book/data/fig5_near_zero.json``
  (``python -m localization.experiments.runs near_zero PATH``).
* :class:`BatchScanSettings`, :data:`BATCH_SCAN` — the same tasks from the same initialisations at
  several batches (is the width set by the gradient noise?); :func:`batch_scan_run` trains from one
  key, :func:`batch_scan_seed` from one seed, :func:`batch_scan_record` writes
  ``book/data/fig5_batch_scan.json`` (``... near_zero_batch PATH``).

The settings are flat frozen dataclasses (the records' ``settings``), validated when built; their run
fields are those of :class:`localization.sgd.OnlineSettings` (``NearZeroSettings.run``,
``BatchScanSettings.run(batch)``). The key of seed ``s`` in the records is
``fold_in(jax.random.key(s), crc32(label))`` with the label "near-zero" or "batch-scan": kept as the
records were written, so that they reproduce.

What the records say (pooled over seeds) is :mod:`localization.experiments.near_zero_summary`.

Time is ``steps × lr`` throughout; simulations run in float32.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from localization import data, records
from localization import validation as v
from localization.experiments.near_zero_summary import field_paths
from localization.experiments.simulation import check_family_values, check_xi, ipr_sweep
from localization.sgd import OnlineSettings

__all__ = [
    "NearZeroSettings",
    "NEAR_ZERO",
    "NEAR_ZERO_POSITIVE",
    "near_zero_run",
    "near_zero_seed",
    "batch_scan_run",
    "near_zero_record",
    "BatchScanSettings",
    "BATCH_SCAN",
    "batch_scan_seed",
    "batch_scan_record",
    "RECORDS",
    "write_named_record",
]

#: Paper Fig. 5 gains logspace(-1, 1, 10): the three nearest zero excess kurtosis, 0.1, 0.167, 0.278.
_G1, _G2, _G3 = (float(g) for g in np.logspace(-1.0, 1.0, 10)[:3])


# -------------------------------------------------------------------------------------------------
# the recorded sweeps
# -------------------------------------------------------------------------------------------------
def _check_seeds(seeds: Any) -> None:
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, tuple | list):
        raise TypeError(f"seeds must be a sequence of non-negative integers, got {seeds!r}")
    for i, seed in enumerate(seeds):
        v.integer(f"seeds[{i}]", seed, 0)


@dataclass(frozen=True)
class NearZeroSettings:
    """Settings of the near-zero sweep at the paper's Fig. 5 training settings (:func:`near_zero_seed`).

    Attributes
    ----------
    n, xi, lr, batch, steps, init_scale : as the paper's Fig. 5 (``experiments.PAPER_FIG5``).
    gains, ks : NLGP gains and Kur exponents near zero excess kurtosis (the paper's 0.1, 0.167, 0.278
        and 5.4, 6.1 among them).
    wide_xi, wide_gains, wide_ks : a second pair of length-scales (twice the first) and the values
        trained there.
    inits : initialisations per seed (one shared data stream per seed and family).
    checkpoints : evenly spaced checkpoints.
    seeds : the integer seeds of the record (development seeds).

    Raises
    ------
    TypeError, ValueError
        Naming the field, its value and the valid range.
    """

    n: int = 40
    xi: tuple[float, float] = (0.3, 0.7)
    gains: tuple[float, ...] = (_G1, 0.14, _G2, 0.19, 0.22, _G3)
    ks: tuple[float, ...] = (5.4, 5.8, 5.85, 5.9, 6.0, 6.1)
    wide_xi: tuple[float, float] = (0.6, 1.4)
    wide_gains: tuple[float, ...] = (_G3,)
    wide_ks: tuple[float, ...] = (6.1,)
    inits: int = 6
    init_scale: float = 1e-3
    lr: float = 0.1
    batch: int = 5000
    steps: int = 10_000
    checkpoints: int = 21
    seeds: tuple[int, ...] = tuple(range(10))

    def __post_init__(self) -> None:
        """Validate the fields (the run's by building :attr:`run`)."""
        check_xi("xi", self.xi)
        check_xi("wide_xi", self.wide_xi)
        for name in ("gains", "ks", "wide_gains", "wide_ks"):
            check_family_values(name, getattr(self, name), empty=True)
        v.integer("inits", self.inits, 1)
        v.positive("init_scale", self.init_scale)
        _check_seeds(self.seeds)
        self.run  # noqa: B018 -- validates the run fields

    @property
    def run(self) -> OnlineSettings:
        """The :class:`~localization.sgd.OnlineSettings` of every run (balanced batches, one shared stream)."""
        return OnlineSettings(
            lr=self.lr, batch=self.batch, steps=self.steps, checkpoints=self.checkpoints, n=self.n, balanced=True
        )

    def replace(self, **changes: Any) -> NearZeroSettings:
        """Return a copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)


#: The recorded near-zero sweep (``book/data/fig5_near_zero.json``).
NEAR_ZERO = NearZeroSettings()
#: Kur between 5.4 and 5.8, all of positive excess kurtosis, on five of the seeds
#: (``book/data/fig5_near_zero_positive.json``).
NEAR_ZERO_POSITIVE = NEAR_ZERO.replace(gains=(), ks=(5.5, 5.6, 5.7), wide_gains=(), wide_ks=(), seeds=tuple(range(5)))


@dataclass(frozen=True)
class BatchScanSettings:
    """Settings of the batch scan (:func:`batch_scan_seed`): the same tasks and initialisations at several batches.

    Attributes
    ----------
    n, xi, lr, init_scale : as :class:`NearZeroSettings`.
    tasks : (family, parameter) pairs.
    batches : batch sizes (the paper's is 5000).
    inits, steps, checkpoints, seeds : as :class:`NearZeroSettings`.

    Raises
    ------
    TypeError, ValueError
        Naming the field, its value and the valid range.
    """

    n: int = 40
    xi: tuple[float, float] = (0.3, 0.7)
    tasks: tuple[tuple[str, float], ...] = (("NLGP", _G3), ("Kur", 6.1))
    batches: tuple[int, ...] = (1000, 5000, 25_000)
    inits: int = 4
    init_scale: float = 1e-3
    lr: float = 0.1
    steps: int = 6000
    checkpoints: int = 13
    seeds: tuple[int, ...] = (0, 1, 2)

    def __post_init__(self) -> None:
        """Validate the fields (the runs' by building :meth:`run` at every batch)."""
        check_xi("xi", self.xi)
        if isinstance(self.tasks, (str, bytes)) or not isinstance(self.tasks, tuple | list) or not self.tasks:
            raise TypeError(f"tasks must be a non-empty sequence of (family, parameter) pairs, got {self.tasks!r}")
        for i, task in enumerate(self.tasks):
            if not (isinstance(task, tuple | list) and len(task) == 2 and task[0] in data.FAMILIES):
                raise ValueError(f"tasks[{i}] must be a (family, parameter) pair of data.FAMILIES, got {task!r}")
            v.real_scalar(f"tasks[{i}][1]", task[1])
        if isinstance(self.batches, (str, bytes)) or not isinstance(self.batches, tuple | list) or not self.batches:
            raise TypeError(f"batches must be a non-empty sequence of batch sizes, got {self.batches!r}")
        v.integer("inits", self.inits, 1)
        v.positive("init_scale", self.init_scale)
        _check_seeds(self.seeds)
        for batch in self.batches:
            self.run(batch)

    def run(self, batch: int) -> OnlineSettings:
        """Return the :class:`~localization.sgd.OnlineSettings` of the runs at ``batch`` (balanced batches)."""
        return OnlineSettings(
            lr=self.lr, batch=batch, steps=self.steps, checkpoints=self.checkpoints, n=self.n, balanced=True
        )

    def replace(self, **changes: Any) -> BatchScanSettings:
        """Return a copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)


#: The recorded batch scan (``book/data/fig5_batch_scan.json``).
BATCH_SCAN = BatchScanSettings()


def _rounded(a: np.ndarray, digits: int) -> list:
    return np.round(np.asarray(a, dtype=np.float64), digits).tolist()


def _group_record(sweep, n: int) -> dict:
    paths = field_paths(sweep.path, sweep.times, n)
    return dict(
        params=sweep.params.tolist(),
        excess_kurtosis=sweep.excess_kurtosis.tolist(),
        ipr=_rounded(paths.ipr, 5),
        share=_rounded(paths.share, 5),
        width=paths.width.tolist(),
        final_weights=_rounded(paths.final, 5),
    )


def _seed_key(seed: int, label: str) -> jax.Array:
    import zlib

    return jax.random.fold_in(jax.random.key(seed), zlib.crc32(label.encode()))


def near_zero_run(key: jax.Array, settings: NearZeroSettings = NEAR_ZERO) -> dict:
    """Train M2 on the near-zero values of :class:`NearZeroSettings` from one key; return its JSON-able record.

    One vmapped :func:`~localization.experiments.simulation.ipr_sweep` per group (NLGP and Kur at
    ``xi``, and at ``wide_xi``; a group without values is left out), all with ``key`` (the same
    initialisations; one data stream per group, which its initialisations share, as in the
    paper-scale record).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    settings : NearZeroSettings
        The sweep's settings.

    Returns
    -------
    dict
        ``times`` (C,), ``seconds`` and per group (``NLGP``, ``Kur``, ``NLGP_wide``, ``Kur_wide``):
        ``params``, ``excess_kurtosis``, ``ipr`` and ``share`` (P, I, C), ``width`` (P, I, C),
        ``final_weights`` (P, I, N) of unit norm.
    """
    import time

    key = v.key("key", key)
    if not isinstance(settings, NearZeroSettings):
        raise TypeError(f"settings must be a NearZeroSettings, got {type(settings).__name__}")
    kw = dict(inits=settings.inits, init_scale=settings.init_scale, keep_weights=True)
    groups = {
        "NLGP": ("NLGP", settings.gains, settings.xi),
        "Kur": ("Kur", settings.ks, settings.xi),
        "NLGP_wide": ("NLGP", settings.wide_gains, settings.wide_xi),
        "Kur_wide": ("Kur", settings.wide_ks, settings.wide_xi),
    }
    start = time.perf_counter()
    out: dict[str, Any] = {}
    for name, (family, params, xi) in groups.items():
        if not params:
            continue
        tasks = [data.family_task(family, float(p), xi=tuple(xi)) for p in params]
        sweep = ipr_sweep(key, tasks, settings.run, params=params, **kw)
        out[name] = _group_record(sweep, settings.n)
        out["times"] = sweep.times.tolist()
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def near_zero_seed(seed: int, settings: NearZeroSettings = NEAR_ZERO) -> dict:
    """Return :func:`near_zero_run` from the key of an integer seed, with ``seed`` added (a record's entry).

    Parameters
    ----------
    seed : int
        Non-negative integer seed (key: ``jax.random.key(seed)`` with the label "near-zero" folded in).
    settings : NearZeroSettings
        The sweep's settings.

    Returns
    -------
    dict
        ``seed`` and the fields of :func:`near_zero_run`.
    """
    seed = v.integer("seed", seed, 0)
    return dict(seed=seed, **near_zero_run(_seed_key(seed, "near-zero"), settings))


def batch_scan_run(key: jax.Array, settings: BatchScanSettings = BATCH_SCAN) -> dict:
    """Train M2 on each task of :class:`BatchScanSettings` at every batch from one key; return its record.

    The same initialisations (and the same data key) at every batch, so that only the batch, i.e. the
    gradient noise, differs.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    settings : BatchScanSettings
        The scan's settings.

    Returns
    -------
    dict
        ``runs``: one entry per (task, batch) with ``family``, ``param``, ``batch`` and the fields of
        :func:`near_zero_run`'s groups (P = 1); ``times``, ``seconds``.
    """
    import time

    key = v.key("key", key)
    if not isinstance(settings, BatchScanSettings):
        raise TypeError(f"settings must be a BatchScanSettings, got {type(settings).__name__}")
    start = time.perf_counter()
    out: dict[str, Any] = dict(runs=[])
    for family, param in settings.tasks:
        task = data.family_task(family, float(param), xi=tuple(settings.xi))
        for batch in settings.batches:
            sweep = ipr_sweep(
                key,
                [task],
                settings.run(batch),
                params=[param],
                inits=settings.inits,
                init_scale=settings.init_scale,
                keep_weights=True,
            )
            out["runs"].append(dict(family=family, param=param, batch=batch, **_group_record(sweep, settings.n)))
            out["times"] = sweep.times.tolist()
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def batch_scan_seed(seed: int, settings: BatchScanSettings = BATCH_SCAN) -> dict:
    """Return :func:`batch_scan_run` from the key of an integer seed, with ``seed`` added (a record's entry).

    Parameters
    ----------
    seed : int
        Non-negative integer seed (key: ``jax.random.key(seed)`` with the label "batch-scan" folded in).
    settings : BatchScanSettings
        The scan's settings.

    Returns
    -------
    dict
        ``seed`` and the fields of :func:`batch_scan_run`.
    """
    seed = v.integer("seed", seed, 0)
    if not isinstance(settings, BatchScanSettings):
        raise TypeError(f"settings must be a BatchScanSettings, got {type(settings).__name__}")
    return dict(seed=seed, **batch_scan_run(_seed_key(seed, "batch-scan"), settings))


def _check_results(results: Any, points, done) -> None:
    """``results`` (point → entry, computed elsewhere) must hold every point not ``done``."""
    if results is None:
        return
    if not isinstance(results, dict):
        raise TypeError(f"results must be a dict of point to entry or None, got {type(results).__name__}")
    missing = [p for p in points if p not in done and p not in results]
    if missing:
        raise ValueError(f"results must hold every point to run, missing {missing}")


def _write_record(kind: str, settings, seed_fn, path, seeds, resume: bool, description: str, results=None) -> dict:
    import os

    commit = records.commit()
    asdict = json.loads(json.dumps(dataclasses.asdict(settings)))
    record: dict[str, Any] = dict(
        description=description,
        command=f"nice -n 10 .venv/bin/python -m localization.experiments.runs {kind} {path}",
        settings=asdict,
        seeds=[],
    )
    if resume and path is not None and os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
        if old["settings"] != asdict:
            raise ValueError(f"resume: the settings of {path} differ from {settings}")
        record["seeds"] = old["seeds"]
    done = {s["seed"] for s in record["seeds"]}
    _check_results(results, seeds, done)
    for seed in seeds:
        if seed in done:
            continue
        entry = seed_fn(seed, settings) if results is None else results[seed]
        record["seeds"].append({**entry, "commit": commit})
        if path is not None and results is None:
            records.write(path, record, compact=True)
    if path is not None and results is not None:
        records.write(path, record, compact=True)
    return record


def near_zero_record(
    settings: NearZeroSettings = NEAR_ZERO,
    *,
    path: str | None = None,
    resume: bool = False,
    name: str = "near_zero",
    results: dict[int, dict] | None = None,
) -> dict:
    """Run :func:`near_zero_seed` for every seed of ``settings`` and return (and optionally write) the record.

    The file is written after every seed; with ``resume`` the seeds already in ``path`` are kept
    (same settings required).

    Parameters
    ----------
    settings : NearZeroSettings
        The sweep's settings.
    path : str or None
        JSON file to write.
    resume : bool
        Keep the seeds already in ``path``.
    name : str
        The subcommand of ``python -m localization.experiments.runs`` quoted in the record.
    results : dict of int to dict, optional
        The entries of the seeds to run, computed elsewhere (by ``python -m localization.experiments.runs``
        on a Dask cluster: the same function of the same seed); the record is then written once.

    Returns
    -------
    dict
        ``settings``, ``seeds`` (a list of :func:`near_zero_seed` records, each with the commit that ran it).
    """
    if not isinstance(settings, NearZeroSettings):
        raise TypeError(f"settings must be a NearZeroSettings, got {type(settings).__name__}")
    description = (
        "experiments.near_zero.near_zero_record: M2 at the paper's Fig. 5 training settings for NLGP and Kur "
        "values near zero excess kurtosis, per seed: IPR, localization share and bump width at every "
        "checkpoint, final fields of unit norm"
    )
    return _write_record(name, settings, near_zero_seed, path, settings.seeds, resume, description, results)


def batch_scan_record(
    settings: BatchScanSettings = BATCH_SCAN,
    *,
    path: str | None = None,
    resume: bool = False,
    results: dict[int, dict] | None = None,
) -> dict:
    """Run :func:`batch_scan_seed` for every seed of ``settings`` and return (and optionally write) the record.

    Parameters
    ----------
    settings : BatchScanSettings
        The scan's settings.
    path : str or None
        JSON file to write.
    resume : bool
        Keep the seeds already in ``path``.
    results : dict of int to dict, optional
        The entries of the seeds to run, computed elsewhere (by ``python -m localization.experiments.runs``
        on a Dask cluster: the same function of the same seed); the record is then written once.

    Returns
    -------
    dict
        ``settings``, ``seeds`` (a list of :func:`batch_scan_seed` records).
    """
    if not isinstance(settings, BatchScanSettings):
        raise TypeError(f"settings must be a BatchScanSettings, got {type(settings).__name__}")
    description = (
        "experiments.near_zero.batch_scan_record: M2 on near-zero tasks from the same initialisations at "
        "several batches, per seed: IPR, localization share and bump width at every checkpoint"
    )
    return _write_record(
        "near_zero_batch", settings, batch_scan_seed, path, settings.seeds, resume, description, results
    )


#: The records of this module by the name of their ``python -m localization.experiments.runs`` subcommand.
RECORDS = ("near_zero", "near_zero_positive", "near_zero_batch")


def write_named_record(name: str, *, path: str | None = None, resume: bool = False) -> dict:
    """Run the record named by its subcommand (:data:`RECORDS`) with its module settings; return (and write) it.

    Parameters
    ----------
    name : str
        ``"near_zero"`` (:data:`NEAR_ZERO`), ``"near_zero_positive"`` (:data:`NEAR_ZERO_POSITIVE`) or
        ``"near_zero_batch"`` (:data:`BATCH_SCAN`).
    path : str or None
        JSON file to write.
    resume : bool
        Keep the seeds already in ``path``.

    Returns
    -------
    dict
        The record.
    """
    if name == "near_zero_batch":
        return batch_scan_record(path=path, resume=resume)
    if name not in RECORDS:
        raise ValueError(f"name must be one of {RECORDS}, got {name!r}")
    settings = NEAR_ZERO_POSITIVE if name == "near_zero_positive" else NEAR_ZERO
    return near_zero_record(settings, path=path, resume=resume, name=name)
