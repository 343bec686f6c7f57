r"""Experiments of the chapter *Localization in simulation* (paper Section 4.1, Fig. 5): one-call, vectorised sweeps.

The paper validates Claim 3.2 (the sign of the marginals' excess kurtosis decides whether the single
ReLU neuron (M2) localizes) by training M2 from 30 initialisations for every value of a family
parameter — the NLGP gain ``g`` and the Kur exponent ``k`` — and plotting the final inverse
participation ratio (IPR, paper App. A.3) against the excess kurtosis of the marginals (Fig. 5).

* :func:`ipr_sweep` — train M2 on a list of tasks that differ only in array-valued parameters
  (``vmap`` over the tasks, and over the initialisations, one ``jit``) and return the IPR along the
  trajectories together with the *exact* excess kurtosis of every task's marginal;
  :func:`grouped_ipr_sweep` and :func:`six_models` (the chapter's six data models) group such sweeps.
* :func:`fig5` — paper Fig. 5: one :func:`ipr_sweep` per family (NLGP, Kur); its defaults
  (:data:`PAPER_FIG5`) are the paper's settings, ``benchmarks/bench.py`` runs it at that scale.
* :func:`phase_diagram` — beyond the paper: final IPR over (excess kurtosis of Kur(k)) ×
  (length-scale ratio ξ₁/ξ₀), in a single vmapped sweep. The length-scale is a static (compile-time)
  field of the data models, so the sweep uses ``data.RootedKur``, a Kur model that carries its
  covariance's spectral amplitudes as an array leaf (same samples as ``data.Kur`` for the same key).

Tasks: ``data.family_task``; how long an IPR curve takes to settle: ``metrics.settling_step``
(:func:`settling_times` of a :class:`Fig5Result`).

Settings. What one SGD run is — learning rate, batch, steps, checkpoints, input size, balanced
batches, data streams, dtype — is a :class:`localization.sgd.OnlineSettings` everywhere (the
``settings`` argument of :func:`ipr_sweep`, as of :func:`localization.train.train_online`; its
defaults are :data:`PAPER_RUN`). A sweep's own settings (:class:`Fig5Settings`, and those of
:mod:`~localization.experiments.large_n`, :mod:`~localization.experiments.near_zero`,
:mod:`~localization.experiments.many_neurons`) are frozen dataclasses with flat fields — the format
their JSON records hold — whose run fields carry the names and meanings of ``OnlineSettings``'s; they
are validated when built, by building that ``OnlineSettings``, and their ``run`` (a property, or a
method of the swept quantity) is what every run of the sweep trains with.

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
from jax.typing import DTypeLike

from localization import data, initialisation, metrics, train
from localization import validation as v
from localization.sgd import OnlineSettings

__all__ = [
    "PAPER_RUN",
    "check_xi",
    "check_family_values",
    "Fig5Settings",
    "PAPER_FIG5",
    "IPRSweep",
    "Fig5Result",
    "PhaseDiagram",
    "init_neurons",
    "ipr_sweep",
    "grouped_ipr_sweep",
    "SixModels",
    "six_models",
    "fig5",
    "settling_times",
    "PHASE_RUN",
    "phase_diagram",
    "fig5_table",
]

#: Paper Fig. 5 exponents k of Kur(k) (reference settings).
PAPER_KS = (4.1, 4.3, 4.5, 4.74, 5.0, 5.4, 6.1, 7.7, 10.0, 50.0)
#: Paper Fig. 5 gains g of NLGP(g): logspace(-1, 1, 10).
PAPER_GAINS = tuple(float(g) for g in np.logspace(-1.0, 1.0, 10))
#: One run of paper Fig. 5 (the defaults of :func:`ipr_sweep`): N = 40, learning rate 0.1, batch
#: 5000 with exactly half of every batch per class, 10 000 steps, 41 checkpoints, one shared stream.
PAPER_RUN = OnlineSettings(lr=0.1, batch=5000, steps=10_000, checkpoints=41, n=40, balanced=True)


def check_xi(name: str, xi: Any) -> tuple[float, float]:
    """Return the length-scales ``(xi0, xi1)`` validated: two positive numbers with xi1 > xi0.

    Parameters
    ----------
    name : str
        The argument's name, for the error message.
    xi : pair of float
        The length-scales (ξ₀, ξ₁) of the two classes.

    Returns
    -------
    tuple of float
        (ξ₀, ξ₁).
    """
    if isinstance(xi, (str, bytes)) or not isinstance(xi, Sequence) or len(xi) != 2:
        raise ValueError(f"{name} must be a pair (xi0, xi1), got {xi!r}")
    xi0, xi1 = v.positive(f"{name}[0]", xi[0]), v.positive(f"{name}[1]", xi[1])
    if not xi1 > xi0:
        raise ValueError(f"{name} must be (xi0, xi1) with xi1 > xi0, got {tuple(xi)}")
    return xi0, xi1


def check_family_values(name: str, values: Any, *, empty: bool = False) -> None:
    """Check that ``values`` (gains, exponents, ...) is a sequence of real numbers.

    Parameters
    ----------
    name : str
        The argument's name, for the error message.
    values : sequence of float
        The family parameter values.
    empty : bool
        Whether an empty sequence is allowed.
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of numbers, got {values!r}")
    if not empty and len(values) == 0:
        raise ValueError(f"{name} must be non-empty")
    for i, x in enumerate(values):
        v.real_scalar(f"{name}[{i}]", x)


@dataclass(frozen=True)
class Fig5Settings:
    """Settings of the IPR-vs-excess-kurtosis sweep (paper Section 4.1, Fig. 5).

    The run fields (``n``, ``lr``, ``batch``, ``steps``, ``checkpoints``, ``balanced``, ``streams``)
    are those of :class:`localization.sgd.OnlineSettings`, which :attr:`run` builds; the settings are
    validated when built.

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

    Raises
    ------
    TypeError, ValueError
        Naming the field, its value and the valid range.
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

    def __post_init__(self) -> None:
        """Validate the fields (the run's by building :attr:`run`)."""
        check_xi("xi", self.xi)
        check_family_values("gains", self.gains)
        check_family_values("ks", self.ks)
        v.integer("inits", self.inits, 1)
        v.positive("init_scale", self.init_scale)
        self.run  # noqa: B018 -- validates the run fields

    @property
    def run(self) -> OnlineSettings:
        """The :class:`~localization.sgd.OnlineSettings` of every run of the sweep (float32)."""
        return OnlineSettings(
            lr=self.lr,
            batch=self.batch,
            steps=self.steps,
            checkpoints=self.checkpoints,
            n=self.n,
            balanced=self.balanced,
            streams=self.streams,
        )

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
    weights : (R, K, I, N) final weights (float64), e.g. for ``field_analysis.is_localized``.
    """

    ks: np.ndarray
    excess_kurtosis: np.ndarray
    ratios: np.ndarray
    xi0: float
    ipr: np.ndarray
    times: np.ndarray
    ipr_path: np.ndarray
    weights: np.ndarray

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
    settings: OnlineSettings | None = None,
    *,
    params: Sequence[float] | None = None,
    inits: int = 30,
    init_scale: float = 1e-3,
    keep_weights: bool = False,
    **fields: Any,
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
    settings : :class:`~localization.sgd.OnlineSettings` of the run (model "neuron", ``n`` given: a
        ring size or a grid shape such as (12, 12), fields over the flattened grid), or None for
        :data:`PAPER_RUN`.
    params : optional (P,) family parameter values (gains, exponents, ...; not weights), stored in
        the result (NaN if omitted).
    inits : initialisations (≥ 1). init_scale : variance multiplier of their Xavier initialisation
        (:func:`init_neurons`).
    keep_weights : also return the weights at every checkpoint (``IPRSweep.path``).
    **fields : fields of ``OnlineSettings`` that replace those of ``settings`` (``lr``, ``batch``,
        ``steps``, ``checkpoints``, ``n``, ``balanced``, ``dtype``, ``streams``), as for
        :func:`localization.train.train_online`.

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
    run = OnlineSettings.of(PAPER_RUN if settings is None else settings, **fields)
    if run.model != "neuron" or run.n is None:
        raise ValueError(f"settings must train the model 'neuron' with n given, got model {run.model!r}, n {run.n}")
    P = len(tasks)
    if params is None:
        par = np.full(P, np.nan)
    else:
        par = np.asarray([v.real_scalar(f"params[{i}]", p) for i, p in enumerate(params)], dtype=np.float64)
        if par.shape != (P,):
            raise ValueError(f"params must have one value per task (length {P}), got length {par.size}")
    k_init, k_data = jax.random.split(key)
    w0 = init_neurons(k_init, inits, run.n, init_scale, run.dtype)
    if P == 1:  # also serves tasks without array leaves (e.g. Gaussian clones); same data stream
        traj = train.train_online(k_data, tasks[0], w0, run)
        w = np.asarray(traj.weights, dtype=np.float64)[None]
    else:
        traj = train.train_sweep(k_data, list(tasks), w0, run)
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
    key: jax.Array,
    tasks: Mapping[str, Any],
    groups: Sequence[Sequence[str]],
    settings: OnlineSettings | None = None,
    **kwargs: Any,
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
    settings : the run's :class:`~localization.sgd.OnlineSettings` (None: :data:`PAPER_RUN`).
    **kwargs : passed to :func:`ipr_sweep` (``inits``, ``keep_weights``, fields of the run such as
        ``n``, ``lr``, ``batch``, ...).

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
        sweep = ipr_sweep(key, [tasks[label] for label in group], settings, **kwargs)
        for i, label in enumerate(group):
            runs[label] = sweep._replace(
                params=sweep.params[i : i + 1],
                excess_kurtosis=sweep.excess_kurtosis[i : i + 1],
                ipr=sweep.ipr[i : i + 1],
                weights=sweep.weights[i : i + 1],
                path=None if sweep.path is None else sweep.path[i : i + 1],
            )
    return {label: runs[label] for label in tasks}


class SixModels(NamedTuple):
    """M2 trained on several data models, keeping the weights (:func:`six_models`).

    Attributes
    ----------
    tasks : dict of str to data task
        Label → its task.
    runs : dict of str to IPRSweep
        Label → a single-task sweep with the weights kept (``path``).
    """

    tasks: dict[str, Any]
    runs: dict[str, IPRSweep]


def six_models(
    key: jax.Array,
    models: Mapping[str, tuple[str, float]],
    groups: Sequence[Sequence[str]],
    settings: OnlineSettings | None = None,
    **kwargs: Any,
) -> SixModels:
    """Train M2 on the tasks ``data.family_task(*spec)`` of ``models``, keeping the weights.

    One :func:`grouped_ipr_sweep` (tasks of one group in one vmapped call) with ``keep_weights``;
    the simulation chapter's six data models (paper Fig. 3 style).

    Parameters
    ----------
    key : JAX PRNG key, the same for every group.
    models : label → (family, parameter) of :func:`localization.data.family_task` (its default ξ).
    groups : sequences of the labels, as in :func:`grouped_ipr_sweep`.
    settings, **kwargs : as in :func:`grouped_ipr_sweep` (``inits``, fields of the run).

    Returns
    -------
    SixModels
        The tasks and one single-task sweep per label, in the order of ``models``.
    """
    if not isinstance(models, Mapping) or not models:
        raise TypeError(f"models must be a non-empty mapping label -> (family, parameter), got {models!r}")
    tasks = {label: data.family_task(*spec) for label, spec in models.items()}
    return SixModels(tasks, grouped_ipr_sweep(key, tasks, groups, settings, keep_weights=True, **kwargs))


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
    run = OnlineSettings.of(settings.run, dtype=dtype)
    common = dict(inits=settings.inits, init_scale=settings.init_scale)
    xi = check_xi("settings.xi", settings.xi)
    nlgp_tasks = [data.family_task("NLGP", float(g), xi=xi) for g in settings.gains]
    kur_tasks = [data.family_task("Kur", float(k), xi=xi) for k in settings.ks]
    nlgp = ipr_sweep(key, nlgp_tasks, run, params=settings.gains, **common)
    kur = ipr_sweep(key, kur_tasks, run, params=settings.ks, **common)
    return Fig5Result(nlgp=nlgp, kur=kur, settings=settings)


def fig5_table(result: Fig5Result) -> list[dict]:
    """Return the rows (family, parameter, excess_kurtosis, mean, std) of a :class:`Fig5Result`, NLGP then Kur.

    ``mean``/``std`` over initialisations of the final IPR; for the chapter's table and ``benchmarks/bench.py``.

    Parameters
    ----------
    result : Fig5Result
        The result of :func:`fig5`.

    Returns
    -------
    list[dict]: one dict per task.
    """
    if not isinstance(result, Fig5Result):
        raise TypeError(f"result must be a Fig5Result, got {type(result).__name__}")
    rows = []
    for family, sweep in (("NLGP", result.nlgp), ("Kur", result.kur)):
        for p, e, m, s in zip(sweep.params, sweep.excess_kurtosis, sweep.mean, sweep.std, strict=True):
            rows.append(dict(family=family, parameter=float(p), excess_kurtosis=float(e), mean=float(m), std=float(s)))
    return rows


def settling_times(result: Fig5Result, tol: float, labels: tuple[str, str] = ("NLGP", "Kur")) -> dict:
    """Return when the mean IPR curve of every value of a Fig. 5 sweep settles, NLGP values first.

    A curve (the mean over initialisations) settles at the first checkpoint after which it stays
    within ``tol`` times its final value of that value (:func:`localization.metrics.settling_step`
    with tolerance ``tol·|final|``).

    Parameters
    ----------
    result : Fig5Result
        The sweep (:func:`fig5`).
    tol : float
        Relative band, > 0.
    labels : (str, str)
        The family labels of the keys (NLGP, Kur).

    Returns
    -------
    dict
        (family label, parameter) → settling time (``steps × lr``).
    """
    if not isinstance(result, Fig5Result):
        raise TypeError(f"result must be a Fig5Result, got {type(result).__name__}")
    tol = v.positive("tol", tol)
    settle = {}
    for sweep, family in ((result.nlgp, labels[0]), (result.kur, labels[1])):
        for p, path in zip(sweep.params, sweep.ipr, strict=True):
            m = path.mean(axis=0)
            settle[(family, float(p))] = sweep.times[metrics.settling_step(m, tol * abs(m[-1]))]
    return settle


#: The run of :func:`phase_diagram` by default: :data:`PAPER_RUN` with batch 1000, 3000 steps and
#: 11 checkpoints.
PHASE_RUN = dataclasses.replace(PAPER_RUN, batch=1000, steps=3000, checkpoints=11)


def phase_diagram(
    key: jax.Array,
    ks: Sequence[float],
    ratios: Sequence[float],
    settings: OnlineSettings | None = None,
    *,
    xi0: float = 0.3,
    inits: int = 8,
    init_scale: float = 1e-3,
    **fields: Any,
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
    settings : OnlineSettings or None
        The run (``n`` a ring size); None: :data:`PHASE_RUN`.
    xi0 : float
        The shorter length-scale ξ₀ > 0.
    inits, init_scale, **fields
        As in :func:`ipr_sweep`.

    Returns
    -------
    PhaseDiagram: ``ipr`` (R, K, inits), ``weights`` (R, K, inits, N).
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
    run = OnlineSettings.of(PHASE_RUN if settings is None else settings, **fields)
    if run.n is None or len(run.n) != 1:
        raise ValueError(f"settings.n must be a ring size, got {run.n}")
    n = v.integer("n", run.n[0], 2)
    tasks = [
        data.LengthscaleTask(data.RootedKur.of(xi0, k, n), data.RootedKur.of(r * xi0, k, n)) for r in ratios for k in ks
    ]
    sweep = ipr_sweep(key, tasks, run, inits=inits, init_scale=init_scale)
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
        weights=sweep.weights.reshape(R, K, inits, -1),
    )
