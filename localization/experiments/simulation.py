r"""Experiments of the chapter *Localization in simulation* (paper Section 4.1, Fig. 5).

They are one-call, vectorised sweeps.

The paper validates Claim 3.2 (the sign of the marginals' excess kurtosis decides whether the single
ReLU neuron (M2) localizes) by training M2 from 30 initialisations for every value of a family
parameter — the NLGP gain ``g`` and the Kur exponent ``k`` — and plotting the final inverse
participation ratio (IPR, paper App. A.3) against the excess kurtosis of the marginals (Fig. 5).

* :func:`ipr_sweep` — train M2 on a list of tasks that differ only in array-valued parameters
  (``vmap`` over the tasks, and over the initialisations, one ``jit``) and return the IPR along the
  trajectories together with the *exact* excess kurtosis of every task's marginal.
* :func:`fig5` — paper Fig. 5: one :func:`ipr_sweep` per family (NLGP, Kur); its defaults
  (:data:`PAPER_FIG5`) are the paper's settings, ``benchmarks/bench.py`` runs it at that scale.
* :func:`phase_diagram` — beyond the paper: final IPR over (excess kurtosis of Kur(k)) ×
  (length-scale ratio ξ₁/ξ₀), in a single vmapped sweep. The length-scale is a static (compile-time)
  field of the data models, so the sweep uses ``data.RootedKur``, a Kur model that carries its
  covariance's spectral amplitudes as an array leaf (same samples as ``data.Kur`` for the same key).

* :func:`large_n_sweep` — beyond the paper: the transition of Fig. 5 at several input sizes N
  (:data:`LARGE_N`; :data:`LARGE_N_LONG` and :data:`LARGE_N_BATCH` at N = 100 with a longer horizon or
  a larger batch), widths :func:`sites_holding` and 1/IPR, summarised by :func:`large_n_summary`
  (:func:`transition_point`, the localization time). Recorded in ``book/data/large_n*.json`` by
  ``python -m localization.experiments.simulation large_n|large_n_long|large_n_batch PATH``.
* :func:`data_init_grid` — beyond the paper: M2 on every pair of D data streams × J initialisations;
  :func:`two_way_variance` splits a (D, J) table (real, or points on the circle) into data,
  initialisation and residual parts, :func:`peak_agreement_by_pair` compares peaks by what two runs
  share. Recorded in ``book/data/variance_data_init.json`` by ``... data_init PATH``
  (:func:`data_init_record`, :data:`DATA_INIT`).

The tasks come from ``data.family_task``; how long an IPR curve takes to settle is
``metrics.settling_step``.

Conventions: loss paper Eq. (9) without ½, plain SGD, time ``t = steps × lr`` (see
:mod:`localization.train`). Simulations run in ``dtype`` (float32 by default); IPR and kurtosis
values are returned as float64 NumPy arrays.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike, DTypeLike

from localization import data, initialisation, metrics, train
from localization import validation as v

__all__ = [
    "Fig5Settings",
    "PAPER_FIG5",
    "IPRSweep",
    "Fig5Result",
    "PhaseDiagram",
    "init_neurons",
    "ipr_sweep",
    "grouped_ipr_sweep",
    "fig5",
    "phase_diagram",
    "fig5_table",
    "LargeNSettings",
    "LARGE_N",
    "LARGE_N_LONG",
    "LARGE_N_BATCH",
    "sites_holding",
    "large_n_size",
    "large_n_sweep",
    "transition_point",
    "LargeNSize",
    "large_n_summary",
    "DataInitGrid",
    "data_init_grid",
    "TwoWay",
    "two_way_variance",
    "peak_agreement_by_pair",
    "DATA_INIT",
    "data_init_keys",
    "data_init_record",
]

#: Paper Fig. 5 exponents k of Kur(k) (reference settings).
PAPER_KS = (4.1, 4.3, 4.5, 4.74, 5.0, 5.4, 6.1, 7.7, 10.0, 50.0)
#: Paper Fig. 5 gains g of NLGP(g): logspace(-1, 1, 10).
PAPER_GAINS = tuple(float(g) for g in np.logspace(-1.0, 1.0, 10))


@dataclass(frozen=True)
class Fig5Settings:
    """Settings of the IPR-vs-excess-kurtosis sweep (paper Section 4.1, Fig. 5).

    Attributes
    ----------
    n : input size N.
    xi : (ξ₀, ξ₁) length-scales of the two classes (y = 1 for ξ₁ > ξ₀).
    gains : NLGP gains g. ks : Kur exponents k (> 2).
    inits : initialisations per parameter value. init_scale : variance multiplier of the Xavier
        initialisation (:func:`localization.initialisation.init_weights`).
    lr : learning rate. batch : examples per SGD step. steps : SGD steps (time ``steps × lr``).
    checkpoints : number of evenly spaced checkpoints (IPR is recorded there).
    balanced : exactly half of every batch per class (see :func:`localization.train.train_online`).
    streams : "shared" (every initialisation on one data stream) or "per_init" (each initialisation
        on its own stream, as the paper's code, which draws new data for each seed); see
        :func:`localization.train.train_online`.
    """

    n: int = 40
    xi: tuple[float, float] = (0.3, 0.7)
    gains: tuple[float, ...] = PAPER_GAINS
    ks: tuple[float, ...] = PAPER_KS
    inits: int = 30
    init_scale: float = 1e-3
    lr: float = 0.1
    batch: int = 5000
    steps: int = 10_000
    checkpoints: int = 41
    balanced: bool = True
    streams: str = "shared"

    def replace(self, **changes: Any) -> Fig5Settings:
        """Return a copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)


#: The paper's settings for Fig. 5 (K = 1, lr 0.1, batch 5000, 10 000 steps, 30 initialisations).
PAPER_FIG5 = Fig5Settings()


class IPRSweep(NamedTuple):
    """IPR of M2 trained on P tasks from I initialisations, recorded at C checkpoints.

    Attributes
    ----------
    params : (P,) family parameter of each task (gain, k, ...), float64 (NaN if not given).
    excess_kurtosis : (P,) exact excess kurtosis of the class-1 marginal (``inf`` where divergent).
    times : (C,) checkpoint times ``steps × lr``. steps : (C,) checkpoint step indices.
    ipr : (P, I, C) float64 IPR along the trajectories.
    weights : (P, I, N) final weights (float64 copy).
    path : (P, I, C, N) weights at every checkpoint (float64), or ``None`` unless requested with
        ``keep_weights=True``.
    """

    params: np.ndarray
    excess_kurtosis: np.ndarray
    times: np.ndarray
    steps: np.ndarray
    ipr: np.ndarray
    weights: np.ndarray
    path: Any = None

    @property
    def final_ipr(self) -> np.ndarray:
        """(P, I) IPR at the last checkpoint."""
        return self.ipr[..., -1]

    @property
    def mean(self) -> np.ndarray:
        """(P,) mean final IPR over initialisations."""
        return self.final_ipr.mean(axis=-1)

    @property
    def std(self) -> np.ndarray:
        """(P,) standard deviation (ddof = 0) of the final IPR over initialisations."""
        return self.final_ipr.std(axis=-1)


class Fig5Result(NamedTuple):
    """Paper Fig. 5: one :class:`IPRSweep` per family and the settings used."""

    nlgp: IPRSweep
    kur: IPRSweep
    settings: Fig5Settings


class PhaseDiagram(NamedTuple):
    """Final IPR over Kur(k) × length-scale ratio.

    Attributes
    ----------
    ks : (K,) exponents; excess_kurtosis : (K,) exact excess kurtosis of Kur(k).
    ratios : (R,) length-scale ratios ξ₁/ξ₀; xi0 : ξ₀.
    ipr : (R, K, I) final IPR; times : (C,) checkpoint times; ipr_path : (R, K, I, C).
    """

    ks: np.ndarray
    excess_kurtosis: np.ndarray
    ratios: np.ndarray
    xi0: float
    ipr: np.ndarray
    times: np.ndarray
    ipr_path: np.ndarray

    @property
    def mean(self) -> np.ndarray:
        """(R, K) mean final IPR over initialisations."""
        return self.ipr.mean(axis=-1)


# -------------------------------------------------------------------------------------------------
# helpers
# -------------------------------------------------------------------------------------------------
def init_neurons(
    key: jax.Array, inits: int, n: int | tuple[int, ...], init_scale: float = 1e-3, dtype: DTypeLike = jnp.float32
) -> jax.Array:
    """Return (inits, N) initial weights of M2: Xavier-normal × sqrt(init_scale) (paper reference settings).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    inits : int
        Number of initialisations, >= 1.
    n : int or tuple[int, ...]
        A ring size or a grid shape (N = prod(n), weights over the flattened grid).
    init_scale : float
        Variance multiplier, > 0 (paper: 1e-3).
    dtype : DTypeLike
        Floating dtype.

    Returns
    -------
    jax.Array
        (inits, N) weights.
    """
    inits = v.integer("inits", inits, 1)
    v.shape("n", n, minimum=2)
    return initialisation.init_weights(key, n, init_scale, num=inits, dtype=dtype)


def _excess_kurtosis(task) -> float:
    return float(task.marginals[1].excess_kurtosis)


def ipr_sweep(
    key: jax.Array,
    tasks: Sequence[Any],
    *,
    params: Sequence[float] | None = None,
    n: int | tuple[int, ...] = 40,
    inits: int = 30,
    init_scale: float = 1e-3,
    lr: float = 0.1,
    batch: int = 5000,
    steps: int = 10_000,
    checkpoints: int | Sequence[int] = 41,
    balanced: bool = True,
    dtype: DTypeLike = jnp.float32,
    keep_weights: bool = False,
    streams: str = "shared",
) -> IPRSweep:
    """Train M2 (paper model M2, ReLU neuron without bias) on every task at once and record its IPR.

    One :func:`localization.train.train_sweep` call: ``vmap`` over the tasks (which must share one
    pytree structure, e.g. NLGP tasks at the same length-scales and different gains; a single task
    goes through :func:`localization.train.train_online` with the same data stream) and over
    ``inits`` initialisations (the same initial weights for every task, drawn from ``key``), with a
    common data stream (common random numbers across tasks): by default one stream for all
    initialisations, with ``streams="per_init"`` one per initialisation (the same for every task).

    Parameters
    ----------
    key : JAX PRNG key; split into an initialisation key and a data key.
    tasks : sequence of P tasks with numeric leaves and ``marginals`` (``data.LengthscaleTask``,
        ``data.CovarianceTask``).
    params : optional (P,) family parameter values, stored in the result (NaN if omitted).
    n : input size, a ring size or a grid shape such as (12, 12) (fields over the flattened grid).
    inits, init_scale, lr, batch, steps, checkpoints, balanced, dtype : as in
        :func:`localization.train.train_sweep` / :class:`Fig5Settings`.
    keep_weights : also return the weights at every checkpoint (``IPRSweep.path``).
    streams : "shared" (default) or "per_init", as in :func:`localization.train.train_online`.

    Returns
    -------
    :class:`IPRSweep` with ``ipr`` (P, inits, C) and the exact excess kurtosis of each task's class-1
    marginal (the two classes share their marginal in the paper's tasks).
    """
    key = v.key("key", key)
    if isinstance(tasks, (str, bytes)) or not isinstance(tasks, Sequence) or len(tasks) == 0:
        raise TypeError(f"tasks must be a non-empty sequence of tasks, got {tasks!r}")
    if not isinstance(keep_weights, bool):
        raise TypeError(f"keep_weights must be a bool, got {keep_weights!r}")
    P = len(tasks)
    if params is None:
        par = np.full(P, np.nan)
    else:
        par = np.asarray([v.real_scalar(f"params[{i}]", p) for i, p in enumerate(params)], dtype=np.float64)
        if par.shape != (P,):
            raise ValueError(f"params must have one value per task (length {P}), got length {par.size}")
    k_init, k_data = jax.random.split(key)
    w0 = init_neurons(k_init, inits, n, init_scale, dtype)
    kw = dict(
        lr=lr, batch=batch, steps=steps, checkpoints=checkpoints, n=n, balanced=balanced, dtype=dtype, streams=streams
    )
    if P == 1:  # also serves tasks without array leaves (e.g. Gaussian clones); same data stream
        traj = train.train_online(k_data, tasks[0], w0, **kw)
        w = np.asarray(traj.weights, dtype=np.float64)[None]
    else:
        traj = train.train_sweep(k_data, list(tasks), w0, **kw)
        w = np.asarray(traj.weights, dtype=np.float64)  # (P, I, C, N)
    ipr = np.asarray(metrics.ipr(w), dtype=np.float64)
    exk = np.array([_excess_kurtosis(t) for t in tasks], dtype=np.float64)
    return IPRSweep(
        params=par,
        excess_kurtosis=exk,
        times=np.asarray(traj.times),
        steps=np.asarray(traj.steps),
        ipr=ipr,
        weights=w[:, :, -1, :],
        path=w if keep_weights else None,
    )


def grouped_ipr_sweep(
    key: jax.Array, tasks: Mapping[str, Any], groups: Sequence[Sequence[str]], **kwargs: Any
) -> dict[str, IPRSweep]:
    """One :func:`ipr_sweep` per group of task labels, split into one single-task sweep per label.

    Tasks of one group must share one pytree structure (one family at fixed length-scales) and train
    in one vmapped call, with the same key — hence the same initialisations and data stream — for
    every group. Every label of ``tasks`` must be in exactly one group.

    Parameters
    ----------
    key : JAX PRNG key, passed unchanged to every :func:`ipr_sweep` call.
    tasks : label → task.
    groups : sequences of labels.
    **kwargs : passed to :func:`ipr_sweep` (``n``, ``inits``, ``lr``, ``batch``, ``keep_weights``, ...).

    Returns
    -------
    dict label → :class:`IPRSweep` with one task (P = 1), in the order of ``tasks``.
    """
    key = v.key("key", key)
    if not isinstance(tasks, Mapping) or not tasks:
        raise TypeError(f"tasks must be a non-empty mapping label -> task, got {type(tasks).__name__}")
    flat = [label for group in groups for label in group]
    if sorted(flat) != sorted(tasks) or len(set(flat)) != len(flat):
        raise ValueError(f"groups must hold every label of tasks exactly once: labels {list(tasks)}, groups {groups}")
    runs = {}
    for group in groups:
        sweep = ipr_sweep(key, [tasks[label] for label in group], **kwargs)
        for i, label in enumerate(group):
            runs[label] = sweep._replace(
                params=sweep.params[i : i + 1],
                excess_kurtosis=sweep.excess_kurtosis[i : i + 1],
                ipr=sweep.ipr[i : i + 1],
                weights=sweep.weights[i : i + 1],
                path=None if sweep.path is None else sweep.path[i : i + 1],
            )
    return {label: runs[label] for label in tasks}


def fig5(key: jax.Array, settings: Fig5Settings = PAPER_FIG5, *, dtype: DTypeLike = jnp.float32) -> Fig5Result:
    """Train paper Fig. 5: IPR of M2 vs the exact excess kurtosis for NLGP(g) and Kur(k).

    One vectorised :func:`ipr_sweep` per family (the families have different pytree structures),
    with the same key, hence the same initialisations, for both. ``settings`` defaults to the paper's
    (:data:`PAPER_FIG5`); pass ``PAPER_FIG5.replace(batch=..., steps=...)`` for a reduced run.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    settings : Fig5Settings
        The sweep's settings.
    dtype : DTypeLike
        Training dtype.

    Returns
    -------
    Fig5Result
        One :class:`IPRSweep` per family (``nlgp``, ``kur``).
    """
    key = v.key("key", key)
    if not isinstance(settings, Fig5Settings):
        raise TypeError(f"settings must be a Fig5Settings, got {type(settings).__name__}")
    xi0, xi1 = (v.positive("settings.xi[0]", settings.xi[0]), v.positive("settings.xi[1]", settings.xi[1]))
    if not xi1 > xi0:
        raise ValueError(f"settings.xi must be (xi0, xi1) with xi1 > xi0, got {settings.xi}")
    if len(settings.gains) == 0 or len(settings.ks) == 0:
        raise ValueError("settings.gains and settings.ks must be non-empty")
    common = dict(
        n=settings.n,
        inits=settings.inits,
        init_scale=settings.init_scale,
        lr=settings.lr,
        batch=settings.batch,
        steps=settings.steps,
        checkpoints=settings.checkpoints,
        balanced=settings.balanced,
        dtype=dtype,
        streams=settings.streams,
    )
    nlgp_tasks = [data.family_task("NLGP", float(g), xi=(xi0, xi1)) for g in settings.gains]
    kur_tasks = [data.family_task("Kur", float(k), xi=(xi0, xi1)) for k in settings.ks]
    nlgp = ipr_sweep(key, nlgp_tasks, params=settings.gains, **common)
    kur = ipr_sweep(key, kur_tasks, params=settings.ks, **common)
    return Fig5Result(nlgp=nlgp, kur=kur, settings=settings)


def fig5_table(result: Fig5Result) -> list[dict]:
    """Return the rows (family, parameter, excess_kurtosis, mean, std) of a :class:`Fig5Result`, NLGP then Kur.

    ``mean``/``std`` are over initialisations of the final IPR. For printing (the chapter's table,
    ``benchmarks/bench.py``).

    Parameters
    ----------
    result : Fig5Result
        The result of :func:`fig5`.

    Returns
    -------
    list[dict]
        One dict per task.
    """
    if not isinstance(result, Fig5Result):
        raise TypeError(f"result must be a Fig5Result, got {type(result).__name__}")
    rows = []
    for family, sweep in (("NLGP", result.nlgp), ("Kur", result.kur)):
        for p, e, m, s in zip(sweep.params, sweep.excess_kurtosis, sweep.mean, sweep.std, strict=True):
            rows.append(dict(family=family, parameter=float(p), excess_kurtosis=float(e), mean=float(m), std=float(s)))
    return rows


def phase_diagram(
    key: jax.Array,
    ks: Sequence[float],
    ratios: Sequence[float],
    *,
    xi0: float = 0.3,
    n: int = 40,
    inits: int = 8,
    init_scale: float = 1e-3,
    lr: float = 0.1,
    batch: int = 1000,
    steps: int = 3000,
    checkpoints: int | Sequence[int] = 11,
    balanced: bool = True,
    dtype: DTypeLike = jnp.float32,
) -> PhaseDiagram:
    """Return the final IPR of M2 over Kur(k) exponents × length-scale ratios ξ₁/ξ₀, in one vmapped sweep.

    Every (ratio, k) pair is one task ``Kur(ξ₀, k)`` vs ``Kur(ratio·ξ₀, k)``; all R·K tasks are stacked
    (``data.RootedKur`` carries the covariance's spectral amplitudes as an array) and trained with a single
    :func:`localization.train.train_sweep` call.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    ks : Sequence[float]
        The K exponents k of Kur(k).
    ratios : Sequence[float]
        The R length-scale ratios ξ₁/ξ₀, each > 1.
    xi0 : float
        The shorter length-scale ξ₀ > 0.
    n, inits, init_scale, lr, batch, steps, checkpoints, balanced, dtype
        As in :func:`ipr_sweep`.

    Returns
    -------
    PhaseDiagram
        With ``ipr`` (R, K, inits).
    """
    key = v.key("key", key)
    ks = [v.real_scalar(f"ks[{i}]", k) for i, k in enumerate(ks)]
    ratios = [v.real_scalar(f"ratios[{i}]", r) for i, r in enumerate(ratios)]
    if not ks or not ratios:
        raise ValueError("ks and ratios must be non-empty")
    for i, r in enumerate(ratios):
        if not r > 1:
            raise ValueError(f"ratios[{i}] must be > 1 (xi1 = ratio * xi0 is the longer length-scale), got {r}")
    xi0 = v.positive("xi0", xi0)
    n = v.integer("n", n, 2)
    tasks = [
        data.LengthscaleTask(data.RootedKur.of(xi0, k, n), data.RootedKur.of(r * xi0, k, n)) for r in ratios for k in ks
    ]
    sweep = ipr_sweep(
        key,
        tasks,
        n=n,
        inits=inits,
        init_scale=init_scale,
        lr=lr,
        batch=batch,
        steps=steps,
        checkpoints=checkpoints,
        balanced=balanced,
        dtype=dtype,
    )
    R, K = len(ratios), len(ks)
    path = sweep.ipr.reshape(R, K, inits, -1)
    return PhaseDiagram(
        ks=np.asarray(ks),
        excess_kurtosis=sweep.excess_kurtosis[:K].copy(),
        ratios=np.asarray(ratios),
        xi0=xi0,
        ipr=path[..., -1],
        times=sweep.times,
        ipr_path=path,
    )


# -------------------------------------------------------------------------------------------------
# beyond the paper: large N, and data versus initialisation
# -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LargeNSettings:
    """Settings of the Fig. 5 transition at several input sizes N (:func:`large_n_sweep`).

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

    def steps(self, n: int) -> int:
        """Return the SGD steps at input size ``n``: ``steps_per_site × n`` clipped to [min_steps, max_steps]."""
        n = v.integer("n", n, 2)
        return min(self.max_steps, max(self.min_steps, self.steps_per_site * n))

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


def sites_holding(w: ArrayLike, fraction: float = 0.9) -> np.ndarray:
    r"""Smallest number of sites holding ``fraction`` of :math:`\|w\|^2` (a width of the field).

    Sort :math:`w_i^2` in decreasing order; return the least :math:`m` with
    :math:`\sum_{i\le m} w_{(i)}^2 \ge \text{fraction}\,\|w\|^2`. A one-hot field gives 1, a constant
    field :math:`\lceil \text{fraction}\cdot N\rceil`.

    Parameters
    ----------
    w : ArrayLike
        ``(..., N)`` weights, not all zero along the last axis.
    fraction : float
        In (0, 1].

    Returns
    -------
    numpy.ndarray
        ``(...)`` integers in ``[1, N]``.
    """
    w = np.asarray(v.float_array("w", w, ndim_min=1), dtype=np.float64)
    fraction = v.real_scalar("fraction", fraction)
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    p = np.sort(w**2, axis=-1)[..., ::-1]
    total = p.sum(axis=-1, keepdims=True)
    if np.any(total <= 0):
        raise ValueError("w must not be all zero along its last axis")
    cum = np.cumsum(p, axis=-1) / total
    # tolerance for rounding at fraction = 1
    return (cum < fraction * (1 - 1e-12)).sum(axis=-1) + 1


def _field_record(sweep: IPRSweep) -> dict:
    w = sweep.weights
    return dict(
        params=sweep.params.tolist(),
        excess_kurtosis=sweep.excess_kurtosis.tolist(),
        ipr_path=sweep.ipr.tolist(),
        final_ipr=sweep.final_ipr.tolist(),
        sites90=sites_holding(w, 0.9).tolist(),
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
        ``sites90`` (P, I) (:func:`sites_holding` at 0.9).
    """
    import time

    key = v.key("key", key)
    n = v.integer("n", n, 2)
    if not isinstance(settings, LargeNSettings):
        raise TypeError(f"settings must be a LargeNSettings, got {type(settings).__name__}")
    steps = settings.steps(n)
    kw = dict(
        n=n,
        inits=settings.inits,
        init_scale=settings.init_scale,
        lr=settings.lr,
        batch=settings.batch,
        steps=steps,
        checkpoints=settings.checkpoints,
        dtype=dtype,
    )
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
        sweep = ipr_sweep(key, tasks, params=params, **kw)
        out[name] = _field_record(sweep)
        out["times"] = sweep.times.tolist()
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def large_n_sweep(
    key: jax.Array,
    settings: LargeNSettings = LARGE_N,
    *,
    path: str | None = None,
    seed: int | None = None,
    name: str = "large_n",
    resume: bool = False,
) -> dict:
    """Run :func:`large_n_size` at every ``settings.ns`` and return (and optionally write) the record.

    The record is written after every size (so a long run leaves the sizes it finished).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key, the same for every size.
    settings : LargeNSettings
        The sweep's settings.
    path : str or None
        JSON file to write.
    seed : int or None
        The integer seed of ``key``, stored in the record.
    name : str
        The subcommand of ``python -m localization.experiments.simulation`` quoted in the record.
    resume : bool
        Keep the sizes already in ``path`` (same settings required) and run only the others (a run
        that was stopped); each size records the commit that ran it.

    Returns
    -------
    dict
        ``settings``, ``seed``, ``sizes`` (a list of :func:`large_n_size` records).
    """
    import json
    import subprocess

    key = v.key("key", key)
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    record: dict[str, Any] = dict(
        description=(
            "experiments.simulation.large_n_sweep: final IPR of M2 against excess kurtosis (NLGP, Kur) "
            "near the Fig. 5 transition at several input sizes N, steps steps_per_site * N clipped to "
            "[min_steps, max_steps]; "
            "width tasks NLGP(width_gain) at xi * scale. sites90: sites holding 90% of |w|^2."
        ),
        command=f"nice -n 10 .venv/bin/python -m localization.experiments.simulation {name} {path} --seed {seed}",
        commit=commit,
        jax_version=jax.__version__,
        seed=seed,
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
    for n in settings.ns:
        if n in done:
            continue
        record["sizes"].append({**large_n_size(key, n, settings), "commit": commit})
        if path is not None:
            with open(path, "w") as f:
                json.dump(record, f, indent=1)
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


class DataInitGrid(NamedTuple):
    """Final fields of M2 on a grid of data streams × initialisations.

    Attributes
    ----------
    params : (P,) Kur exponents (or family parameters); excess_kurtosis : (P,).
    ipr : (P, D, J) final IPR, D data streams × J initialisations.
    peak : (P, D, J) peak site ``argmax |w|``.
    n : ring size.
    """

    params: np.ndarray
    excess_kurtosis: np.ndarray
    ipr: np.ndarray
    peak: np.ndarray
    n: int


def data_init_grid(
    data_key: jax.Array,
    init_key: jax.Array,
    tasks: Sequence[Any],
    *,
    params: Sequence[float] | None = None,
    data_streams: int = 6,
    inits: int = 6,
    n: int = 40,
    init_scale: float = 1e-3,
    lr: float = 0.1,
    batch: int = 1000,
    steps: int = 4000,
    dtype: DTypeLike = jnp.float32,
) -> DataInitGrid:
    """Train M2 on every (data stream d, initialisation j) pair, for P tasks of one structure.

    Initialisation j is the same for every stream (drawn from ``init_key``); stream d is
    ``fold_in(data_key, d)``, the same for every initialisation and task. One :func:`ipr_sweep`-like
    vmapped call (tasks × initialisations) per stream, compiled once.

    Parameters
    ----------
    data_key, init_key : jax.Array
        PRNG keys of the data streams and of the initial weights.
    tasks : Sequence
        P tasks of one pytree structure.
    params : Sequence[float] or None
        (P,) family parameters, stored.
    data_streams, inits : int
        D >= 2 streams and J >= 2 initialisations.
    n, init_scale, lr, batch, steps, dtype
        As in :func:`ipr_sweep`.

    Returns
    -------
    DataInitGrid
        ``ipr`` and ``peak`` (P, D, J).
    """
    from localization.field_analysis import peak_position

    data_key = v.key("data_key", data_key)
    init_key = v.key("init_key", init_key)
    data_streams = v.integer("data_streams", data_streams, 2)
    inits = v.integer("inits", inits, 2)
    n = v.integer("n", n, 2)
    if isinstance(tasks, (str, bytes)) or not isinstance(tasks, Sequence) or len(tasks) == 0:
        raise TypeError(f"tasks must be a non-empty sequence of tasks, got {tasks!r}")
    w0 = init_neurons(init_key, inits, n, init_scale, dtype)
    kw = dict(lr=lr, batch=batch, steps=steps, checkpoints=2, n=n, dtype=dtype)
    finals = []
    for d in range(data_streams):
        k = jax.random.fold_in(data_key, d)
        if len(tasks) == 1:
            w = np.asarray(train.train_online(k, tasks[0], w0, **kw).weights, dtype=np.float64)[None]
        else:
            w = np.asarray(train.train_sweep(k, list(tasks), w0, **kw).weights, dtype=np.float64)
        finals.append(w[:, :, -1, :])  # (P, J, N)
    w = np.stack(finals, axis=1)  # (P, D, J, N)
    par = np.full(len(tasks), np.nan) if params is None else np.asarray(params, dtype=np.float64)
    return DataInitGrid(
        params=par,
        excess_kurtosis=np.array([_excess_kurtosis(t) for t in tasks], dtype=np.float64),
        ipr=np.asarray(metrics.ipr(w), dtype=np.float64),
        peak=np.asarray(peak_position(w)),
        n=n,
    )


class TwoWay(NamedTuple):
    """Random-effects two-way split of a (D, J) table (one value per data stream × initialisation).

    Attributes
    ----------
    data, init, residual : variance components (>= 0, clipped): between data streams, between
        initialisations, and what neither explains alone (interaction and noise).
    total : data + init + residual.
    f_data, f_init : F ratios MS_data / MS_residual and MS_init / MS_residual.
    p_data, p_init : their p-values under no data (initialisation) effect, F distribution with
        (D - 1, (D - 1)(J - 1)) ((J - 1, (D - 1)(J - 1))) degrees of freedom (Gaussian errors).
    """

    data: float
    init: float
    residual: float
    total: float
    f_data: float
    f_init: float
    p_data: float
    p_init: float

    def share(self, part: str) -> float:
        """Return the fraction of ``total`` in ``part`` ("data", "init" or "residual")."""
        if part not in ("data", "init", "residual"):
            raise ValueError(f"part must be 'data', 'init' or 'residual', got {part!r}")
        return getattr(self, part) / self.total if self.total > 0 else float("nan")


def two_way_variance(table: ArrayLike) -> TwoWay:
    r"""Split the variance of a (D, J) table into data, initialisation and residual components.

    Two-way random-effects ANOVA without replication, :math:`y_{dj} = \mu + a_d + b_j + e_{dj}`:
    :math:`MS_a = J\sum_d(\bar y_{d\cdot}-\bar y)^2/(D-1)`, :math:`MS_b = D\sum_j(\bar y_{\cdot j}-\bar
    y)^2/(J-1)`, :math:`MS_e = \sum(y-\bar y_{d\cdot}-\bar y_{\cdot j}+\bar y)^2/((D-1)(J-1))`;
    :math:`\sigma_a^2 = (MS_a-MS_e)/J`, :math:`\sigma_b^2 = (MS_b-MS_e)/D`, :math:`\sigma_e^2 = MS_e`.
    Complex entries (points :math:`e^{i\theta}` on the unit circle) use :math:`|\cdot|^2`: the sum of the
    splits of the real and imaginary parts, i.e. of the circle's points as vectors in the plane.

    Parameters
    ----------
    table : ArrayLike
        (D, J) values, D, J >= 2, real or complex, finite.

    Returns
    -------
    TwoWay
    """
    y = np.asarray(table)
    if y.ndim != 2 or min(y.shape) < 2:
        raise ValueError(f"table must be 2-D with at least 2 rows and 2 columns, got shape {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("table must be finite")
    D, J = y.shape
    m = y.mean()
    a, b = y.mean(axis=1), y.mean(axis=0)
    ms_a = J * np.sum(np.abs(a - m) ** 2) / (D - 1)
    ms_b = D * np.sum(np.abs(b - m) ** 2) / (J - 1)
    ms_e = np.sum(np.abs(y - a[:, None] - b[None, :] + m) ** 2) / ((D - 1) * (J - 1))
    from scipy import stats

    sa, sb, se = max((ms_a - ms_e) / J, 0.0), max((ms_b - ms_e) / D, 0.0), float(ms_e)
    inf = float("inf")
    f_a = float(ms_a / ms_e) if ms_e > 0 else inf
    f_b = float(ms_b / ms_e) if ms_e > 0 else inf
    dfe = (D - 1) * (J - 1)
    return TwoWay(
        data=float(sa),
        init=float(sb),
        residual=se,
        total=float(sa + sb + se),
        f_data=f_a,
        f_init=f_b,
        p_data=float(stats.f.sf(f_a, D - 1, dfe)),
        p_init=float(stats.f.sf(f_b, J - 1, dfe)),
    )


def peak_agreement_by_pair(peak: ArrayLike, n: int, tol: int = 1) -> dict[str, float]:
    """Fraction of run pairs whose peaks lie within ``tol`` sites (circular), by what the pair shares.

    Parameters
    ----------
    peak : ArrayLike
        (D, J) integer peak sites on a ring of ``n`` sites.
    n : int
        Ring size.
    tol : int
        Circular distance counted as the same peak, >= 0.

    Returns
    -------
    dict
        ``same_data`` (pairs with one data stream, different initialisations), ``same_init`` (the
        reverse), ``neither``; and ``chance``, the probability for two independent uniform peaks.
    """
    p = np.asarray(peak)
    if p.ndim != 2 or min(p.shape) < 2:
        raise ValueError(f"peak must be 2-D with at least 2 rows and 2 columns, got shape {p.shape}")
    n = v.integer("n", n, 2)
    tol = v.integer("tol", tol, 0)
    D, J = p.shape
    d = np.abs(p.reshape(D, J, 1, 1) - p.reshape(1, 1, D, J)) % n
    close = np.minimum(d, n - d) <= tol
    same_d = np.eye(D, dtype=bool)[:, None, :, None]
    same_j = np.eye(J, dtype=bool)[None, :, None, :]
    return dict(
        same_data=float(close[same_d & ~same_j].mean()),
        same_init=float(close[~same_d & same_j].mean()),
        neither=float(close[~same_d & ~same_j].mean()),
        chance=min(2 * tol + 1, n) / n,
    )


#: Settings of the recorded data-versus-initialisation grid (``book/data/variance_data_init.json``):
#: Kur(k) at a localizing, a near-zero and a non-localizing excess kurtosis; Fig. 5's length-scales;
#: the chapter's Fig. 5 batch and horizon.
DATA_INIT = dict(ks=(10.0, 6.1, 5.0), xi=(0.3, 0.7), n=40, data_streams=10, inits=10, batch=1000, steps=4000)


def data_init_keys(seed: int) -> tuple[jax.Array, jax.Array]:
    """Return the (data, initialisation) keys of the data-versus-initialisation grid for ``seed``."""
    key = jax.random.key(v.integer("seed", seed, 0))
    return jax.random.fold_in(key, 1), jax.random.fold_in(key, 2)


def data_init_record(seed: int = 0, *, path: str | None = None, settings: Mapping[str, Any] = DATA_INIT) -> dict:
    """Run :func:`data_init_grid` at ``settings`` (default :data:`DATA_INIT`) and return (write) its record.

    Parameters
    ----------
    seed : int
        Seed of :func:`data_init_keys`.
    path : str or None
        JSON file to write.
    settings : Mapping
        ``ks``, ``xi``, ``n``, ``data_streams``, ``inits``, ``batch``, ``steps``.

    Returns
    -------
    dict
        Settings, seed, commit, seconds, and ``ks``, ``excess_kurtosis``, ``ipr`` (P, D, J), ``peak`` (P, D, J).
    """
    import json
    import subprocess
    import time

    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    s = dict(settings)
    tasks = [data.family_task("Kur", k, xi=tuple(s["xi"])) for k in s["ks"]]
    start = time.perf_counter()
    g = data_init_grid(
        *data_init_keys(seed),
        tasks,
        params=s["ks"],
        data_streams=s["data_streams"],
        inits=s["inits"],
        n=s["n"],
        batch=s["batch"],
        steps=s["steps"],
    )
    record = dict(
        description=(
            "experiments.simulation.data_init_record: final IPR and peak site (argmax |w|) of M2 on a grid of "
            "data streams (rows) x initialisations (columns), for Kur(k) tasks."
        ),
        command=f"nice -n 10 .venv/bin/python -m localization.experiments.simulation data_init {path} --seed {seed}",
        commit=commit,
        jax_version=jax.__version__,
        seed=seed,
        settings={k: list(x) if isinstance(x, tuple) else x for k, x in s.items()},
        seconds=round(time.perf_counter() - start, 1),
        ks=list(s["ks"]),
        excess_kurtosis=g.excess_kurtosis.tolist(),
        ipr=g.ipr.tolist(),
        peak=g.peak.tolist(),
    )
    if path is not None:
        with open(path, "w") as f:
            json.dump(record, f, indent=1)
    return record


class LargeNSize(NamedTuple):
    """What the large-N record says at one input size (:func:`large_n_summary`).

    Attributes
    ----------
    n, steps : input size and SGD steps; times : (C,) checkpoint times.
    exk : family → (P,) excess kurtosis; mean, std : family → (P,) final IPR over initialisations.
    crossing : family → excess kurtosis where the mean final IPR crosses ``level`` (NaN: none).
    t_loc : first time the mean IPR of the strongest NLGP gain reaches ``level`` (NaN: never).
    width_ipr, width_sites : width-scale → mean 1/IPR and mean sites holding 90% of |w|² of the
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
        strongest = int(np.argmax(sz["NLGP"]["params"]))
        curve = np.asarray(sz["NLGP"]["ipr_path"], dtype=np.float64)[strongest].mean(axis=0)
        t_loc = float(metrics.first_crossing(times, curve, level))
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


def _main(argv: Sequence[str] | None = None) -> None:
    """``python -m localization.experiments.simulation large_n PATH [--seed S]``: write a record."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m localization.experiments.simulation")
    p.add_argument("name", choices=["large_n", "large_n_long", "large_n_batch", "data_init"])
    p.add_argument("path")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", action="store_true", help="large_n*: keep the sizes already in PATH")
    a = p.parse_args(argv)
    if a.name in ("large_n", "large_n_long", "large_n_batch"):
        settings = {"large_n": LARGE_N, "large_n_long": LARGE_N_LONG, "large_n_batch": LARGE_N_BATCH}[a.name]
        large_n_sweep(jax.random.key(a.seed), settings, path=a.path, seed=a.seed, name=a.name, resume=a.resume)
    else:
        data_init_record(a.seed, path=a.path)


if __name__ == "__main__":
    _main()
