r"""Beyond the paper: the transition of Fig. 5 at several input sizes N (simulation chapter).

* :class:`LargeNSettings`, :data:`LARGE_N` (the recorded sweep), :data:`LARGE_N_LONG` and
  :data:`LARGE_N_BATCH` (N = 100 with four times the horizon, or ten times the batch),
  :data:`LARGE_N_NEAR_ZERO` (N = 100 at batch 5000 = 50 N, points near zero excess kurtosis) and
  :data:`LARGE_N_NEAR_ZERO_LONG` (its points nearest zero for twice the horizon).
* :func:`large_n_size`, :func:`large_n_sweep` — vmapped :func:`~localization.experiments.simulation.ipr_sweep`
  calls per family and size, written to a JSON record (``book/data/large_n*.json``) by
  ``python -m localization.experiments.runs large_n|large_n_long|large_n_batch|large_n_near_zero[_long] PATH``.
* the field's width in sites holding 90 % of :math:`\|w\|^2`
  (:func:`localization.field_analysis.sites_holding`),
  :func:`transition_point` (where a mean IPR curve crosses a level), :func:`large_n_summary`,
  :func:`strongest_gain_ipr` (the mean IPR during training of the strongest NLGP gain at every N),
  :func:`mean_ipr_paths` (every point's mean IPR during training at one size) and :func:`rise_time`
  (when a mean IPR curve has made a given fraction of its rise).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike, DTypeLike

from localization import data, field_analysis, metrics, records
from localization import validation as v
from localization.experiments.simulation import check_family_values, check_xi, ipr_sweep
from localization.sgd import OnlineSettings

__all__ = [
    "LargeNSettings",
    "LARGE_N",
    "LARGE_N_LONG",
    "LARGE_N_BATCH",
    "LARGE_N_NEAR_ZERO",
    "LARGE_N_NEAR_ZERO_LONG",
    "large_n_size",
    "large_n_sweep",
    "transition_point",
    "LargeNSize",
    "large_n_summary",
    "strongest_gain_ipr",
    "mean_ipr_paths",
    "rise_time",
]


@dataclass(frozen=True)
class LargeNSettings:
    """Settings of the Fig. 5 transition at several input sizes N (:func:`large_n_sweep`).

    Flat fields (the format of the records' ``settings``); the run at size N is the
    :class:`~localization.sgd.OnlineSettings` :meth:`run` builds from ``lr``, ``batch``,
    ``checkpoints`` and :meth:`steps` (balanced batches, one shared stream), validated at every
    size of ``ns`` when the settings are built.

    Attributes
    ----------
    ns : input sizes N.
    xi : (ξ₀, ξ₁) of the transition tasks (paper Fig. 5: (0.3, 0.7), in sites).
    gains : NLGP gains g near the transition. ks : Kur exponents k near the transition.
    width_gain : NLGP gain of the width tasks; width_scales : the width tasks use ξ = scale × xi.
    inits : initialisations per task (one shared data stream). init_scale, lr, batch : as in
        :class:`Fig5Settings`.
    min_steps, steps_per_site, max_steps : SGD steps at size N, ``steps_per_site × N`` clipped to
        [min_steps, max_steps] (the time a field needs to localize grows with N; the cap is the budget).
    checkpoints : evenly spaced IPR checkpoints.

    Raises
    ------
    TypeError, ValueError
        Naming the field, its value and the valid range.
    """

    ns: tuple[int, ...] = (40, 100, 200, 400)
    xi: tuple[float, float] = (0.3, 0.7)
    gains: tuple[float, ...] = (0.278, 0.464, 0.774, 10.0)
    ks: tuple[float, ...] = (6.1, 7.7, 10.0)
    width_gain: float = 10.0
    width_scales: tuple[float, ...] = (3.0, 6.0)
    inits: int = 4
    init_scale: float = 1e-3
    lr: float = 0.1
    batch: int = 500
    min_steps: int = 4000
    steps_per_site: int = 60
    max_steps: int = 12_000
    checkpoints: int = 13

    def __post_init__(self) -> None:
        """Validate the fields (the runs' by building :meth:`run` at every size)."""
        if isinstance(self.ns, (str, bytes)) or not isinstance(self.ns, tuple | list):
            raise TypeError(f"ns must be a sequence of input sizes, got {self.ns!r}")
        check_xi("xi", self.xi)
        check_family_values("gains", self.gains)
        check_family_values("ks", self.ks)
        check_family_values("width_scales", self.width_scales, empty=True)
        v.positive("width_gain", self.width_gain)
        v.integer("inits", self.inits, 1)
        v.positive("init_scale", self.init_scale)
        v.integer("min_steps", self.min_steps, 0)
        v.integer("steps_per_site", self.steps_per_site, 0)
        if v.integer("max_steps", self.max_steps, 0) < self.min_steps:
            raise ValueError(f"max_steps must be >= min_steps = {self.min_steps}, got {self.max_steps}")
        for n in self.ns:
            self.run(n)

    def steps(self, n: int) -> int:
        """Return the SGD steps at input size ``n``: ``steps_per_site × n`` clipped to [min_steps, max_steps]."""
        n = v.integer("n", n, 2)
        return min(self.max_steps, max(self.min_steps, self.steps_per_site * n))

    def run(self, n: int, dtype: DTypeLike = jnp.float32) -> OnlineSettings:
        """Return the :class:`~localization.sgd.OnlineSettings` of the runs at input size ``n`` (``dtype``)."""
        steps = self.steps(n)
        return OnlineSettings(
            lr=self.lr, batch=self.batch, steps=steps, checkpoints=self.checkpoints, n=n, balanced=True, dtype=dtype
        )

    def replace(self, **changes: Any) -> LargeNSettings:
        """Return a copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)


#: Settings of the recorded large-N sweep (``book/data/large_n.json``).
LARGE_N = LargeNSettings()
#: Four times the horizon at N = 100 for two values of each family that localize at N = 40 but not
#: at N = 100 within :data:`LARGE_N`'s horizon (``book/data/large_n_long.json``).
LARGE_N_LONG = LargeNSettings(
    ns=(100,), gains=(0.464, 10.0), ks=(7.7, 10.0), width_scales=(), min_steps=24_000, max_steps=24_000, checkpoints=25
)
#: The same points at N = 100 with ten times :data:`LARGE_N`'s batch (less gradient noise), at its
#: horizon (``book/data/large_n_batch.json``).
LARGE_N_BATCH = LARGE_N_LONG.replace(batch=5000, min_steps=6000, max_steps=6000, checkpoints=13)
#: N = 100 at batch 5000 (50 N) for three points of each family near zero excess kurtosis and one
#: well inside the localized side (NLGP 0.464, Kur 7.7); Kur(5.8) has excess kurtosis +0.07. The
#: horizon is the paper's 10 000 steps: at N = 40 and this batch the points near zero settle by
#: about 5500 steps (``book/data/fig5_near_zero.json``), and localization takes longer at larger N.
#: One record per seed (``book/data/large_n_near_zero.json`` seed 0, ``..._seed1.json`` seed 1, ...).
LARGE_N_NEAR_ZERO = LARGE_N_BATCH.replace(
    gains=(0.14, 0.19, 0.278, 0.464), ks=(5.8, 6.0, 6.1, 7.7), min_steps=10_000, max_steps=10_000, checkpoints=21
)
#: The points of :data:`LARGE_N_NEAR_ZERO` nearest zero, for twice its horizon: at N = 100 they were
#: still rising at 10 000 steps (``book/data/large_n_near_zero_long.json``).
LARGE_N_NEAR_ZERO_LONG = LARGE_N_NEAR_ZERO.replace(
    gains=(0.14, 0.19, 0.278), ks=(5.8, 6.0, 6.1), min_steps=20_000, max_steps=20_000, checkpoints=41
)


def _field_record(sweep) -> dict:
    w = sweep.weights
    return dict(
        params=sweep.params.tolist(),
        excess_kurtosis=sweep.excess_kurtosis.tolist(),
        ipr_path=sweep.ipr.tolist(),
        final_ipr=sweep.final_ipr.tolist(),
        sites90=field_analysis.sites_holding(w, 0.9).tolist(),
    )


def large_n_size(key: jax.Array, n: int, settings: LargeNSettings = LARGE_N, *, dtype: DTypeLike = jnp.float32) -> dict:
    """Run the large-N sweep at one input size ``n`` and return its JSON-able record.

    Four vmapped :func:`ipr_sweep` calls with the same key (same initialisations and data stream):
    NLGP(``gains``) and Kur(``ks``) at ``xi``, and NLGP(``width_gain``) at ``scale × xi`` for each
    width scale, all for ``settings.steps(n)`` steps.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    n : int
        Input size N >= 2.
    settings : LargeNSettings
        The sweep's settings.
    dtype : DTypeLike
        Training dtype.

    Returns
    -------
    dict
        ``n``, ``steps``, ``times`` (C,), ``seconds``, and per group (``NLGP``, ``Kur``,
        ``width_<scale>``): ``params``, ``excess_kurtosis``, ``ipr_path`` (P, I, C), ``final_ipr`` (P, I),
        ``sites90`` (P, I) (:func:`localization.field_analysis.sites_holding` at 0.9).
    """
    import time

    key = v.key("key", key)
    n = v.integer("n", n, 2)
    if not isinstance(settings, LargeNSettings):
        raise TypeError(f"settings must be a LargeNSettings, got {type(settings).__name__}")
    run = settings.run(n, dtype)
    steps = run.steps
    kw = dict(inits=settings.inits, init_scale=settings.init_scale)
    xi0, xi1 = settings.xi
    groups = {
        "NLGP": ([data.family_task("NLGP", g, xi=(xi0, xi1)) for g in settings.gains], settings.gains),
        "Kur": ([data.family_task("Kur", k, xi=(xi0, xi1)) for k in settings.ks], settings.ks),
    }
    for s in settings.width_scales:
        groups[f"width_{s:g}"] = ([data.family_task("NLGP", settings.width_gain, xi=(s * xi0, s * xi1))], [s])
    start = time.perf_counter()
    out: dict[str, Any] = dict(n=n, steps=steps)
    for name, (tasks, params) in groups.items():
        sweep = ipr_sweep(key, tasks, run, params=params, **kw)
        out[name] = _field_record(sweep)
        out["times"] = sweep.times.tolist()
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def large_n_sweep(
    key: jax.Array,
    settings: LargeNSettings = LARGE_N,
    *,
    path: str | None = None,
    resume: bool = False,
    provenance: Mapping[str, Any] | None = None,
    results: Mapping[int, dict] | None = None,
) -> dict:
    """Run :func:`large_n_size` at every ``settings.ns`` and return (and optionally write) the record.

    The record is written after every size (so a long run leaves the sizes it finished).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key, the same for every size (the only source of randomness).
    settings : LargeNSettings
        The sweep's settings.
    path : str or None
        JSON file to write.
    resume : bool
        Keep the sizes already in ``path`` (same settings required) and run only the others (a run
        that was stopped); each size records the commit that ran it.
    provenance : Mapping or None
        What the record states about the run, not used to run it: ``command`` (the command line that
        writes it) and ``seed`` (the integer ``key`` was made from);
        :func:`localization.experiments.runs.main` passes both. Missing entries are recorded as None.
    results : Mapping of int to dict, optional
        The :func:`large_n_size` records of the sizes to run by N, computed elsewhere (by
        ``python -m localization.experiments.runs`` on a Dask cluster, from the same key); the record
        is then written once.

    Returns
    -------
    dict
        ``description``, ``command``, ``commit``, ``seed``, ``settings``, ``sizes`` (a list of
        :func:`large_n_size` records).
    """
    import json

    key = v.key("key", key)
    if not isinstance(settings, LargeNSettings):
        raise TypeError(f"settings must be a LargeNSettings, got {type(settings).__name__}")
    provenance = {} if provenance is None else provenance
    if not isinstance(provenance, Mapping) or set(provenance) - {"command", "seed"}:
        raise TypeError(f"provenance must be a mapping with the keys 'command' and 'seed', got {provenance!r}")
    commit = records.commit()
    record: dict[str, Any] = dict(
        description=(
            "experiments.simulation.large_n_sweep: final IPR of M2 against excess kurtosis (NLGP, Kur) "
            "near the Fig. 5 transition at several input sizes N, steps steps_per_site * N clipped to "
            "[min_steps, max_steps]; "
            "width tasks NLGP(width_gain) at xi * scale. sites90: sites holding 90% of |w|^2."
        ),
        command=provenance.get("command"),
        commit=commit,
        seed=provenance.get("seed"),
        settings=dataclasses.asdict(settings),
        sizes=[],
    )
    if resume and path is not None:
        import os

        if os.path.exists(path):
            with open(path) as f:
                old = json.load(f)
            if old["settings"] != json.loads(json.dumps(dataclasses.asdict(settings))):
                raise ValueError(f"resume: the settings of {path} differ from {settings}")
            record["sizes"] = old["sizes"]
            record["commit"] = old["commit"]
    done = {sz["n"] for sz in record["sizes"]}
    if results is not None:
        if not isinstance(results, Mapping):
            raise TypeError(f"results must be a mapping of N to a size's record or None, got {type(results).__name__}")
        missing = [n for n in settings.ns if n not in done and n not in results]
        if missing:
            raise ValueError(f"results must hold every size to run, missing N = {missing}")
    for n in settings.ns:
        if n in done:
            continue
        size = large_n_size(key, n, settings) if results is None else results[n]
        record["sizes"].append({**size, "commit": commit})
        if path is not None and results is None:
            records.write(path, record)
    if path is not None and results is not None:
        records.write(path, record)
    return record


def transition_point(excess_kurtosis: ArrayLike, mean_ipr: ArrayLike, level: float = 0.5) -> float:
    """Excess kurtosis at which the mean final IPR crosses ``level``, interpolated linearly.

    The points are sorted by excess kurtosis; the crossing is the first change of side of ``level``
    (:func:`localization.metrics.first_crossing` with ``direction="either"``), from the localized
    (negative) side. NaN if the curve does not cross.

    Parameters
    ----------
    excess_kurtosis : ArrayLike
        (P,) distinct finite excess kurtoses.
    mean_ipr : ArrayLike
        (P,) mean final IPR at those points.
    level : float
        The IPR level.

    Returns
    -------
    float
        The crossing (grid spacing bounds its accuracy).
    """
    x = np.asarray(v.float_array("excess_kurtosis", excess_kurtosis), dtype=np.float64)
    y = np.asarray(v.float_array("mean_ipr", mean_ipr), dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(f"excess_kurtosis and mean_ipr must be 1-D of one length >= 2, got {x.shape}, {y.shape}")
    order = np.argsort(x)
    return float(metrics.first_crossing(x[order], y[order], level, direction="either"))


def _strongest_gain_curve(size: Mapping[str, Any]) -> np.ndarray:
    """(C,) mean over initialisations of the IPR path of the strongest NLGP gain of one size of a record."""
    strongest = int(np.argmax(size["NLGP"]["params"]))
    return np.asarray(size["NLGP"]["ipr_path"], dtype=np.float64)[strongest].mean(axis=0)


def strongest_gain_ipr(record: Mapping[str, Any]) -> list[np.ndarray]:
    """Return the mean IPR during training of the strongest NLGP gain, one curve per size of a record.

    Parameters
    ----------
    record : Mapping
        A :func:`large_n_sweep` record (JSON dict) with ``sizes``, each holding ``NLGP`` ``params``
        and ``ipr_path`` (P, I, C): P gains, I initialisations, C checkpoints.

    Returns
    -------
    list of numpy.ndarray
        One (C,) float64 curve per size, in the record's order: the IPR path at the largest gain,
        averaged over the initialisations (at the times of ``large_n_summary``'s ``times``).
    """
    sizes = record.get("sizes") if isinstance(record, Mapping) else None
    if not sizes:
        raise ValueError("record must be a large_n_sweep record with at least one size")
    return [_strongest_gain_curve(sz) for sz in sizes]


class LargeNSize(NamedTuple):
    """What the large-N record says at one input size (:func:`large_n_summary`).

    Attributes
    ----------
    n, steps : input size and SGD steps; times : (C,) checkpoint times.
    exk : family → (P,) excess kurtosis; mean, std : family → (P,) final IPR over initialisations.
    crossing : family → excess kurtosis where the mean final IPR crosses ``level`` (NaN: none).
    t_loc : first time the mean IPR of the strongest NLGP gain reaches ``level`` (NaN: never).
    width_ipr, width_sites : width-scale → mean 1/IPR and mean sites holding 90% of ``|w|²`` of the
        width task's final fields; width_final : width-scale → mean final IPR.
    """

    n: int
    steps: int
    times: np.ndarray
    exk: dict
    mean: dict
    std: dict
    crossing: dict
    t_loc: float
    width_ipr: dict
    width_sites: dict
    width_final: dict


def large_n_summary(record: Mapping[str, Any], level: float = 0.5) -> list[LargeNSize]:
    """Summarise a :func:`large_n_sweep` record, one :class:`LargeNSize` per input size.

    Parameters
    ----------
    record : Mapping
        The record (JSON dict).
    level : float
        IPR level of the transition and of the localization time, in (0, 1).

    Returns
    -------
    list of LargeNSize
    """
    level = v.real_scalar("level", level)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    out = []
    for sz in record["sizes"]:
        times = np.asarray(sz["times"], dtype=np.float64)
        exk, mean, std, crossing = {}, {}, {}, {}
        for fam in ("NLGP", "Kur"):
            f = np.asarray(sz[fam]["final_ipr"], dtype=np.float64)
            exk[fam] = np.asarray(sz[fam]["excess_kurtosis"], dtype=np.float64)
            mean[fam], std[fam] = f.mean(axis=1), f.std(axis=1)
            crossing[fam] = transition_point(exk[fam], mean[fam], level)
        t_loc = float(metrics.first_crossing(times, _strongest_gain_curve(sz), level))
        w_ipr, w_sites, w_final = {}, {}, {}
        for name in sz:
            if name.startswith("width_"):
                scale = float(name.removeprefix("width_"))
                f = np.asarray(sz[name]["final_ipr"], dtype=np.float64)[0]
                w_ipr[scale] = float(np.mean(1 / f))
                w_sites[scale] = float(np.mean(sz[name]["sites90"][0]))
                w_final[scale] = float(f.mean())
        out.append(
            LargeNSize(
                n=int(sz["n"]),
                steps=int(sz["steps"]),
                times=times,
                exk=exk,
                mean=mean,
                std=std,
                crossing=crossing,
                t_loc=t_loc,
                width_ipr=w_ipr,
                width_sites=w_sites,
                width_final=w_final,
            )
        )
    return out


def mean_ipr_paths(record: Mapping[str, Any], family: str, n: int | None = None) -> np.ndarray:
    """Return every point's IPR during training, averaged over the initialisations, at one size.

    Parameters
    ----------
    record : Mapping
        A :func:`large_n_sweep` record (JSON dict) with ``sizes``, each holding ``family``'s
        ``ipr_path`` (P, I, C): P points, I initialisations, C checkpoints.
    family : {"NLGP", "Kur"}
        The family.
    n : int or None
        The input size; None for a record of one size.

    Returns
    -------
    numpy.ndarray
        (P, C) float64, in the order of the record's ``params`` (at the size's ``times``).
    """
    sizes = record.get("sizes") if isinstance(record, Mapping) else None
    if not sizes:
        raise ValueError("record must be a large_n_sweep record with at least one size")
    if family not in ("NLGP", "Kur"):
        raise ValueError(f"family must be 'NLGP' or 'Kur', got {family!r}")
    if n is None:
        if len(sizes) != 1:
            raise ValueError(f"n must name a size of a record of {len(sizes)} sizes, got None")
        (size,) = sizes
    else:
        n = v.integer("n", n, 2)
        found = [sz for sz in sizes if sz["n"] == n]
        if not found:
            raise ValueError(f"n must be a size of the record, one of {[sz['n'] for sz in sizes]}, got {n}")
        (size,) = found
    return np.asarray(size[family]["ipr_path"], dtype=np.float64).mean(axis=1)


def rise_time(times: ArrayLike, curve: ArrayLike, fraction: float = 0.5, tail: int = 3) -> float:
    """First time a rising curve has made ``fraction`` of its rise, interpolated linearly.

    The rise goes from the curve's first value to its end, the mean of its last ``tail`` values
    (a noisy IPR curve has no single final value); the time is where the curve first reaches
    ``start + fraction × (end - start)`` (:func:`localization.metrics.first_crossing`). NaN when the
    curve ends no higher than it starts (no rise).

    Parameters
    ----------
    times : ArrayLike
        (C,) strictly increasing checkpoint times, C >= 2.
    curve : ArrayLike
        (C,) finite values (e.g. a mean IPR during training).
    fraction : float
        Fraction of the rise, in (0, 1].
    tail : int
        Number of last values averaged into the end, in [1, C].

    Returns
    -------
    float
        The time (NaN: no rise).
    """
    t = np.asarray(v.finite_real_array("times", times), dtype=np.float64)
    y = np.asarray(v.finite_real_array("curve", curve), dtype=np.float64)
    if t.ndim != 1 or t.shape != y.shape or t.size < 2:
        raise ValueError(f"times and curve must be 1-D of one length >= 2, got {t.shape}, {y.shape}")
    fraction = v.real_scalar("fraction", fraction)
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    tail = v.integer("tail", tail, 1)
    if tail > y.size:
        raise ValueError(f"tail must be at most the number of checkpoints {y.size}, got {tail}")
    start, end = y[0], float(y[-tail:].mean())
    if end <= start:
        return float("nan")
    return float(metrics.first_crossing(t, y, start + fraction * (end - start)))
