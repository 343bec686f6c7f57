r"""Beyond the paper: how much of a learned field is decided by the data and by the initialisation.

* :func:`data_init_grid` — M2 on every pair of D data streams × J initialisations (one vmapped call
  per stream), final IPR and peak site.
* :func:`two_way_variance` — random-effects split of a (D, J) table (real, or points on the circle)
  into data, initialisation and residual parts, with F tests; :func:`peak_agreement_by_pair`.
* :data:`DATA_INIT`, :func:`data_init_keys`, :func:`data_init_record` — the recorded grid
  (``book/data/variance_data_init.json``, ``python -m localization.experiments.runs data_init PATH``);
  :func:`data_init_summary` — its variance splits (:class:`DataInit`).

A run is a :class:`localization.sgd.OnlineSettings` (default :data:`DATA_INIT_RUN`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import jax
import numpy as np
from jax.typing import ArrayLike

from localization import data, metrics, records, train
from localization import validation as v
from localization.sgd import OnlineSettings

__all__ = [
    "DATA_INIT_RUN",
    "DataInitGrid",
    "data_init_grid",
    "TwoWay",
    "two_way_variance",
    "peak_agreement_by_pair",
    "DATA_INIT",
    "data_init_keys",
    "data_init_record",
    "DataInit",
    "data_init_summary",
]

#: The run of :func:`data_init_grid` by default: N = 40, learning rate 0.1, batch 1000, 4000 steps,
#: the initial and the final weights (2 checkpoints), i.i.d. labels.
DATA_INIT_RUN = OnlineSettings(lr=0.1, batch=1000, steps=4000, checkpoints=2, n=40)


class DataInitGrid(NamedTuple):
    """Final fields of M2 on a grid of data streams × initialisations.

    Attributes
    ----------
    params : (P,) Kur exponents (or family parameters: the ``values`` of :func:`data_init_grid`, not
        weights); excess_kurtosis : (P,).
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
    settings: OnlineSettings | None = None,
    *,
    values: Sequence[float] | None = None,
    data_streams: int = 6,
    inits: int = 6,
    init_scale: float = 1e-3,
    **fields: Any,
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
    settings : OnlineSettings or None
        The run (model "neuron", ``n`` a ring size); None: :data:`DATA_INIT_RUN`.
    values : Sequence[float] or None
        (P,) family parameter values (e.g. Kur exponents), stored as ``DataInitGrid.params``.
    data_streams, inits : int
        D >= 2 streams and J >= 2 initialisations.
    init_scale : float
        Variance multiplier of the initialisation (:func:`~localization.experiments.simulation.init_neurons`).
    **fields
        Fields of ``OnlineSettings`` replacing those of ``settings`` (``n``, ``lr``, ``batch``, ``steps``, ...).

    Returns
    -------
    DataInitGrid
        ``ipr`` and ``peak`` (P, D, J).
    """
    from localization.experiments.simulation import init_neurons
    from localization.field_analysis import peak_position

    data_key = v.key("data_key", data_key)
    init_key = v.key("init_key", init_key)
    data_streams = v.integer("data_streams", data_streams, 2)
    inits = v.integer("inits", inits, 2)
    run = OnlineSettings.of(DATA_INIT_RUN if settings is None else settings, **fields)
    if run.model != "neuron" or run.n is None or len(run.n) != 1:
        raise ValueError(f"settings must train the model 'neuron' on a ring (n an int), got {run.model!r}, n {run.n}")
    n = v.integer("n", run.n[0], 2)
    if isinstance(tasks, (str, bytes)) or not isinstance(tasks, Sequence) or len(tasks) == 0:
        raise TypeError(f"tasks must be a non-empty sequence of tasks, got {tasks!r}")
    if values is not None and len(values) != len(tasks):
        raise ValueError(f"values must have one value per task (length {len(tasks)}), got length {len(values)}")
    w0 = init_neurons(init_key, inits, n, init_scale, run.dtype)
    finals = []
    for d in range(data_streams):
        k = jax.random.fold_in(data_key, d)
        if len(tasks) == 1:
            w = np.asarray(train.train_online(k, tasks[0], w0, run).weights, dtype=np.float64)[None]
        else:
            w = np.asarray(train.train_sweep(k, list(tasks), w0, run).weights, dtype=np.float64)
        finals.append(w[:, :, -1, :])  # (P, J, C=-1, N)
    w = np.stack(finals, axis=1)  # (P, D, J, N)
    par = np.full(len(tasks), np.nan) if values is None else np.asarray(values, dtype=np.float64)
    return DataInitGrid(
        params=par,
        excess_kurtosis=np.array([float(t.marginals[1].excess_kurtosis) for t in tasks], dtype=np.float64),
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
    import time

    commit = records.commit()
    s = dict(settings)
    tasks = [data.family_task("Kur", k, xi=tuple(s["xi"])) for k in s["ks"]]
    start = time.perf_counter()
    g = data_init_grid(
        *data_init_keys(seed),
        tasks,
        values=s["ks"],
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
        command=f"nice -n 10 .venv/bin/python -m localization.experiments.runs data_init {path} --seed {seed}",
        commit=commit,
        seed=seed,
        settings={k: list(x) if isinstance(x, tuple) else x for k, x in s.items()},
        seconds=round(time.perf_counter() - start, 1),
        ks=list(s["ks"]),
        excess_kurtosis=g.excess_kurtosis.tolist(),
        ipr=g.ipr.tolist(),
        peak=g.peak.tolist(),
    )
    if path is not None:
        records.write(path, record)
    return record


class DataInit(NamedTuple):
    """The recorded data x initialisation grid and its variance splits (:func:`data_init_summary`).

    Attributes
    ----------
    record : dict
        The JSON record (``ipr``, ``peak`` (P, D, J), ``ks``, ``excess_kurtosis``, settings).
    ipr, peak : list of TwoWay
        Per k: the split of the final IPR, and of the peak site as a point on the circle.
    agreement : list of dict
        Per k: :func:`peak_agreement_by_pair` (within 1 site).
    """

    record: dict
    ipr: list
    peak: list
    agreement: list


def data_init_summary(record: Mapping[str, Any]) -> DataInit:
    r"""Split the variance of a :func:`data_init_record` record's final IPR and peak site, per task.

    The peak site :math:`p` of a ring of ``n`` sites is split as the point :math:`e^{2\pi i p/n}` on
    the circle (:func:`two_way_variance` of complex entries).

    Parameters
    ----------
    record : Mapping
        The record (``settings["n"]``, ``ipr`` and ``peak`` (P, D, J)).

    Returns
    -------
    DataInit
        The record and, per task, the splits and the peak agreement.
    """
    if not isinstance(record, Mapping) or not {"settings", "ipr", "peak"} <= set(record):
        raise TypeError("record must be a data_init_record record (settings, ipr, peak)")
    n = int(record["settings"]["n"])
    ipr = [two_way_variance(np.asarray(t)) for t in record["ipr"]]
    peak = [two_way_variance(np.exp(2j * np.pi * np.asarray(t) / n)) for t in record["peak"]]
    agree = [peak_agreement_by_pair(np.asarray(t), n) for t in record["peak"]]
    return DataInit(record=record, ipr=ipr, peak=peak, agreement=agree)
