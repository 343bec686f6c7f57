r"""Experiments of the chapter *Frequency specialisation in sigmoid networks* (notes 004 §1–2, notes 001 §3).

Two populations of receptive fields in the sigmoid soft committee machine, the effect of a more
positive initialisation, tiling and weight sharing as K grows, and the reduced two-population model.

* :data:`SPEC_BASE` — the runs' setting: the paper's Fig. 6 (left) SCM on Kur(10) at 2000 steps.
* :func:`shifted_params`, :func:`train_shifted` — the SCM started from Xavier fields shifted by ``shift``
  standard deviations (same variance, more positive entries), trained by
  :func:`localization.train.train_online`.
* :class:`Measurements`, :func:`measure` — per neuron: bias, window share, localized flag, dominant mode,
  readout where present.
* :func:`contingency` — localized vs sign of the bias, a 2 × 2 table (similarity of fields up to
  translation and sign: :func:`localization.field_analysis.aligned_correlation`).
* :class:`ReducedParams`, :func:`reduced_predict`, :func:`expand_reduced`, :func:`init_reduced`,
  :func:`train_reduced` — the reduced model of notes 004 Eqs. (3)–(4): P shared fields with all their
  translates (and both signs) and one bias each, trained by online SGD.
* :func:`tiling`, :func:`null_gap_cv` — per network, how alike the localized fields are and how
  evenly their peaks tile the ring, and the gap CV of random sites.
* :func:`draw_populations`, :func:`draw_reduced` — the chapter's two figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import field_analysis, initialisation, models, sgd
from localization import validation as v
from localization.data.task import Task
from localization.experiments import many_neurons as mn
from localization.trajectory import checkpoint_gaps, require_finite

__all__ = [
    "SPEC_BASE",
    "shifted_params",
    "train_shifted",
    "Measurements",
    "measure",
    "contingency",
    "ReducedParams",
    "reduced_predict",
    "expand_reduced",
    "init_reduced",
    "train_reduced",
    "reduced_loss",
    "tiling",
    "null_gap_cv",
]

#: The chapter's setting: paper Fig. 6 (left) — SCM, logistic sigmoid, K = 10, N = 40, trainable biases,
#: init 0.1, lr 100, batch 1000, labels {0, 1}, on Kur(10), ξ = (1, 3) — shortened to 2000 steps.
SPEC_BASE = mn.FIG6_KUR10.replace(steps=2000, inits=8)


# -------------------------------------------------------------------------------------------------
# the full network from a shifted initialisation
# -------------------------------------------------------------------------------------------------
def shifted_params(key: jax.Array, settings: mn.PopulationSettings, shift: float = 0.0) -> models.Params:
    r"""Return initial SCM parameters with every first-layer entry :math:`w_{ki}=s\,(z_{ki}+\text{shift})`.

    :math:`z_{ki}` are the standard normals of :func:`localization.initialisation.init_params` (same key, so
    ``shift = 0`` is exactly the library's Xavier initialisation) and :math:`s^2=\text{init\_scale}\cdot
    2/(N+K)` its variance: the shift moves the mean to ``shift``·s and keeps the variance :math:`s^2`; a
    fraction Φ(shift) of the entries is positive. Biases start at 0.

    Returns :class:`localization.models.Params` with ``w`` (inits, K, N) and ``b`` (inits, K) (or None).
    """
    if not isinstance(settings, mn.PopulationSettings):
        raise TypeError(f"settings must be a PopulationSettings, got {type(settings).__name__}")
    if settings.model != "committee":
        raise ValueError(f"settings.model must be 'committee' (the SCM of notes 004 Eq. (1)), got {settings.model!r}")
    shift = v.real_scalar("shift", shift)
    if not math.isfinite(shift):
        raise ValueError(f"shift must be finite, got {shift}")
    p = initialisation.init_params(
        key,
        settings.K,
        settings.shape,
        settings.init_scale,
        model="committee",
        bias=settings.bias,
        num=settings.inits,
        dtype=jnp.float32,
    )
    std = math.sqrt(settings.init_scale * 2.0 / (settings.N + settings.K))
    return p._replace(w=p.w + jnp.float32(shift * std))


def train_shifted(
    key: jax.Array, settings: mn.PopulationSettings, shifts: Sequence[float] = (0.0,)
) -> list[mn.PopulationRun]:
    """Train the SCM of ``settings`` from :func:`shifted_params` for every shift in ``shifts``.

    The same normal draws (key ``fold_in(key, 0)``) for every shift, all on one data stream
    ``fold_in(key, 1)`` (one vmapped run of ``len(shifts)·inits`` initialisations; with
    ``shifts = (0,)`` the run of :func:`localization.experiments.many_neurons.train_population`).
    Returns one ``PopulationRun`` per shift.
    """
    key = v.key("key", key)
    shifts = [v.real_scalar("shifts", s) for s in shifts]
    if not shifts:
        raise ValueError("shifts must contain at least one shift, got an empty sequence")
    parts = [shifted_params(jax.random.fold_in(key, 0), settings, s) for s in shifts]
    params = jax.tree_util.tree_map(lambda *a: jnp.concatenate(a), *parts)
    I = settings.inits
    run = mn.train_population(key, settings.replace(inits=len(shifts) * I), params=params)
    blocks = [slice(j * I, (j + 1) * I) for j in range(len(shifts))]  # one block of initialisations per shift
    return [
        run._replace(
            settings=settings,
            fields=run.fields[block],
            bias=None if run.bias is None else run.bias[block],
            diverged=run.diverged[block],
        )
        for block in blocks
    ]


# -------------------------------------------------------------------------------------------------
# measurements
# -------------------------------------------------------------------------------------------------
class Measurements(NamedTuple):
    """Per-neuron measurements of the final fields of a population (float64 / int64 NumPy).

    Attributes
    ----------
    bias : (I, K) learned biases (NaN-free: diverged initialisations are dropped, I counts the rest).
    share : (I, K) window share :math:`s_W` in the best quarter-ring window
        (:func:`localization.field_analysis.localization_share`).
    localized : (I, K) bool, :func:`localization.field_analysis.is_localized` (``share`` > 0.8).
    mode : (I, K) dominant Fourier mode, the mean excluded (:func:`localization.field_analysis.dominant_frequency`).
    readout : (I, K) readout weights, or None (SCM).
    fields : (I, K, N) the final fields.
    """

    bias: np.ndarray
    share: np.ndarray
    localized: np.ndarray
    mode: np.ndarray
    readout: np.ndarray | None
    fields: np.ndarray


def measure(pop: mn.PopulationRun) -> Measurements:
    """Return the :class:`Measurements` of the last checkpoint of ``pop``.

    A neuron is localized by the book's one definition, :func:`localization.field_analysis.is_localized`
    (more than 0.8 of its squared weight in one quarter-ring window; ``share`` is that window's share,
    :func:`localization.field_analysis.localization_share`).

    Parameters
    ----------
    pop : many_neurons.PopulationRun
        A run on a ring with trainable biases (diverged initialisations are dropped).

    Returns
    -------
    Measurements
        Per neuron, (I, K) arrays (fields (I, K, N)).
    """
    if not isinstance(pop, mn.PopulationRun):
        raise TypeError(f"pop must be a many_neurons.PopulationRun, got {type(pop).__name__}")
    if len(pop.settings.shape) != 1 or pop.bias is None:
        raise ValueError("pop must be trained on a ring with trainable biases")
    keep = ~pop.diverged
    W = pop.fields[keep, -1]
    N = W.shape[-1]
    share = field_analysis.localization_share(W, N)
    localized = field_analysis.is_localized(W, N)
    readout = None if pop.readout is None else pop.readout[keep, -1]
    mode = field_analysis.dominant_frequency(W, exclude_mean=True)
    return Measurements(pop.bias[keep, -1], share, localized, mode, readout, W)


def contingency(localized: ArrayLike, bias: ArrayLike) -> np.ndarray:
    """2 × 2 counts: rows (localized, not localized), columns (bias < 0, bias ≥ 0); inputs of one shape."""
    loc = np.asarray(localized)
    b = np.asarray(v.float_array("bias", bias, ndim_min=1), np.float64)
    if loc.dtype != bool or loc.shape != b.shape:
        raise ValueError(f"localized must be a bool array of the bias' shape {b.shape}, got {loc.dtype} {loc.shape}")
    neg = b < 0
    return np.array([[np.sum(loc & neg), np.sum(loc & ~neg)], [np.sum(~loc & neg), np.sum(~loc & ~neg)]])


def tiling(m: Measurements) -> np.ndarray:
    """Per network with at least two localized fields: their similarity and the evenness of their peaks.

    Parameters
    ----------
    m : Measurements
        From :func:`measure`, fields (I, K, N).

    Returns
    -------
    numpy.ndarray
        (J, 2), one row per network with ≥ 2 localized fields (J ≤ I): the mean similarity up to
        translation and sign of its localized fields (:func:`localization.field_analysis.within_similarity`,
        the ρ of the chapter's Eq. (eq-sp-xcorr)) and the coefficient of variation of the gaps between
        their peaks (:func:`localization.field_analysis.gap_cv`).
    """
    if not isinstance(m, Measurements):
        raise TypeError(f"m must be Measurements, got {type(m).__name__}")
    N = m.fields.shape[-1]
    rows = [
        (
            field_analysis.within_similarity(W[loc]),
            field_analysis.gap_cv(field_analysis.peak_sites(W[loc])[0][:, 0], N),
        )
        for W, loc in zip(m.fields, m.localized, strict=True)
        if loc.sum() >= 2
    ]
    return np.asarray(rows)


def null_gap_cv(key: jax.Array, m: int, n: int, draws: int = 500) -> float:
    """Mean gap CV (:func:`localization.field_analysis.gap_cv`) of ``m`` peaks at uniform random sites.

    Parameters
    ----------
    key : JAX PRNG key of the sites.
    m : number of peaks (≥ 1).
    n : ring size (≥ 1).
    draws : Monte Carlo draws (≥ 1).

    Returns
    -------
    float
        The mean over ``draws`` sets of ``m`` independent uniform sites on ``0..n-1``.
    """
    key = v.key("key", key)
    m, n, draws = v.integer("m", m, 1), v.integer("n", n, 1), v.integer("draws", draws, 1)
    sites = np.asarray(jax.random.randint(key, (draws, m), 0, n))
    return float(np.mean([field_analysis.gap_cv(row, n) for row in sites]))


# -------------------------------------------------------------------------------------------------
# the reduced model (notes 004 Eqs. (3)-(4))
# -------------------------------------------------------------------------------------------------
class ReducedParams(NamedTuple):
    """Parameters of the reduced model: ``w`` (..., P, N) shared fields, ``b`` (..., P) their biases."""

    w: Any
    b: Any


def _reduced(params: ReducedParams, x: jax.Array, activation: str, signs: bool) -> jax.Array:
    act = models.activation_fn(activation)
    N = params.w.shape[-1]
    idx = (jnp.arange(N)[None, :] - jnp.arange(N)[:, None]) % N  # row tau, column i -> i - tau
    # h[m, p, tau] = <T_tau w_p, x_m>: the circular cross-correlation of field_analysis.cross_correlate, as
    # one matmul with the circulant matrices (on CPU at the chapter's N = 40 a third faster than the FFT)
    h = jnp.einsum("mi,pti->mpt", x, params.w[:, idx])  # (num, P, N)
    b = params.b[None, :, None]
    out = act(h + b) + act(-h + b) if signs else act(h + b)
    return out.mean(axis=(1, 2)) / (2.0 if signs else 1.0)


def reduced_predict(
    params: ReducedParams, x: ArrayLike, activation: str = "sigmoid", *, signs: bool = True
) -> jax.Array:
    r"""Predict with the reduced model, notes 004 Eq. (3) with weight sharing (the discrete Eq. (4)).

    :math:`\hat y=\frac1K\sum_{p=1}^P\sum_{\tau=0}^{N-1}\sum_{s=\pm1}\sigma(s\,h_{p\tau}+b_p)`,
    :math:`h_{p\tau}=\langle T_\tau w_p,x\rangle`, K = 2PN (``signs=False``: s = +1 only, K = PN).

    ``params`` : :class:`ReducedParams`, w (P, N), b (P,); ``x`` (num, N). Returns (num,) predictions,
    equal to :func:`localization.models.committee` on :func:`expand_reduced`.
    """
    w, b = _check_reduced(params)
    models.check_architecture("committee", activation)
    if x is None or getattr(x, "ndim", 0) != 2 or x.shape[-1] != w.shape[-1]:
        raise ValueError(f"x must be (num, N = {w.shape[-1]}), got {getattr(x, 'shape', x)!r}")
    return _reduced(ReducedParams(w, b), jnp.asarray(x), activation, bool(signs))


def _check_reduced(params):
    if not isinstance(params, ReducedParams):
        raise TypeError(f"params must be a ReducedParams, got {type(params).__name__}")
    w = v.float_array("params.w", params.w, ndim_min=2)
    b = v.float_array("params.b", params.b, ndim_min=1)
    if w.ndim != 2 or b.shape != w.shape[:1]:
        raise ValueError(f"params.w must be (P, N) and params.b (P,), got shapes {w.shape} and {b.shape}")
    return jnp.asarray(w), jnp.asarray(b)


def expand_reduced(params: ReducedParams, *, signs: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Return the full SCM equivalent to the reduced model.

    W (K, N) has rows ``s·T_τ w_p`` in the order (p, s = +1 then −1, τ) and b (K,) = b_p,
    K = 2PN (PN with ``signs=False``).
    """
    w, b = (np.asarray(a, np.float64) for a in _check_reduced(params))
    P, N = w.shape
    idx = (np.arange(N)[None, :] - np.arange(N)[:, None]) % N  # row τ, column i -> i - τ
    trans = w[:, idx]  # (P, N, N): trans[p, τ, i] = w_p[i - τ]
    sgn = np.array([1.0, -1.0]) if signs else np.array([1.0])
    W = (sgn[None, :, None, None] * trans[:, None]).reshape(-1, N)
    return W, np.repeat(b, sgn.size * N)


def init_reduced(key: jax.Array, P: int, n: int, init_scale: float = 0.1, *, num: int = 1) -> ReducedParams:
    """Draw ``num`` initialisations of the reduced model.

    Parameters
    ----------
    key : JAX PRNG key.
    P : number of shared fields (≥ 1).
    n : input size (≥ 2).
    init_scale : positive scale; the fields are Xavier-normal with variance init_scale·2/(n + P).
    num : number of initialisations (≥ 1).

    Returns
    -------
    ReducedParams
        Fields ``w`` (num, P, n) and biases ``b`` (num, P) at 0, float32.
    """
    key = v.key("key", key)
    P, n, num = v.integer("P", P, 1), v.integer("n", n, 2), v.integer("num", num, 1)
    std = math.sqrt(v.positive("init_scale", init_scale) * 2.0 / (n + P))
    return ReducedParams(std * jax.random.normal(key, (num, P, n), jnp.float32), jnp.zeros((num, P), jnp.float32))


@partial(jax.jit, static_argnames=("batch", "n", "activation", "signs"))
def _train_reduced(key, task, params, lr, gaps, *, batch, n, activation, signs):
    def loss(p, x, y):
        return models.mean_squared_error(y, _reduced(p, x, activation, signs))

    def sample(k):
        x, y = task.sample(k, batch, n, jnp.float32)
        return x, y.astype(jnp.float32)

    ws, _ = sgd.gradient_descent(params, loss, sgd.online_batches(key, sample), lr, gaps)
    return jax.tree_util.tree_map(lambda a: a[-1], ws)


def train_reduced(
    key: jax.Array,
    task: Task,
    params: ReducedParams,
    *,
    lr: float,
    batch: int,
    steps: int,
    activation: str = "sigmoid",
    signs: bool = True,
) -> ReducedParams:
    """Train the reduced model by online SGD on the MSE (no ½, as :func:`localization.train.train_online`).

    The loss is that of :func:`reduced_predict`; batch ``t`` is drawn by
    ``task.sample(fold_in(key, t), batch, n)``; the initialisations are trained on the same stream
    (vmapped, one ``jit``) by :func:`localization.sgd.gradient_descent`.

    Parameters
    ----------
    key : JAX PRNG key of the data stream.
    task : a task with ``sample(key, num, n, dtype)`` (e.g. ``data.LengthscaleTask``).
    params : :class:`ReducedParams` with ``w`` (num, P, n) and ``b`` (num, P), independent
        initialisations (e.g. from :func:`init_reduced`).
    lr : learning rate > 0.
    batch : examples per step (≥ 1).
    steps : number of steps (≥ 1).
    activation : committee activation (see :mod:`localization.models`), default "sigmoid".
    signs : include the sign-flipped copies (K = 2PN) or not (K = PN).

    Returns
    -------
    ReducedParams
        The final parameters, float64 NumPy, shapes as ``params``.

    Raises
    ------
    localization.trajectory.DivergenceError
        When SGD leaves the finite numbers (a ``FloatingPointError``; lower ``lr``).
    """
    key = v.key("key", key)
    if not isinstance(params, ReducedParams) or np.ndim(params.w) != 3 or np.shape(params.b) != np.shape(params.w)[:2]:
        raise ValueError("params must be ReducedParams with w (num, P, n) and b (num, P)")
    models.check_architecture("committee", activation)
    lr = v.positive("lr", lr)
    batch, steps = v.integer("batch", batch, 1), v.integer("steps", steps, 1)
    n = int(np.shape(params.w)[-1])
    p = ReducedParams(jnp.asarray(params.w, jnp.float32), jnp.asarray(params.b, jnp.float32))
    gaps = checkpoint_gaps(np.array([steps]))
    out = _train_reduced(
        key, task, p, jnp.float32(lr), gaps, batch=batch, n=n, activation=activation, signs=bool(signs)
    )
    w, b = np.asarray(out.w, np.float64), np.asarray(out.b, np.float64)
    require_finite((w, b), f"reduced-model SGD diverged at lr = {lr}; lower the learning rate")
    return ReducedParams(w, b)


def reduced_loss(key: jax.Array, task: Task, params: ReducedParams, num: int = 20_000, **kw: Any) -> np.ndarray:
    """Return the test MSE (no ½) of each initialisation in ``params`` on ``num`` fresh examples.

    Parameters
    ----------
    key : JAX PRNG key of the test examples (drawn in float64).
    task : a task with ``sample(key, num, n, dtype)``.
    params : :class:`ReducedParams`, ``w`` (..., P, n) and ``b`` (..., P).
    num : number of test examples (≥ 1).
    **kw : ``activation``, ``signs`` for :func:`reduced_predict`.

    Returns
    -------
    numpy.ndarray
        (...) float64 test losses.
    """
    key = v.key("key", key)
    w = np.asarray(params.w)
    x, y = task.sample(key, v.integer("num", num, 1), w.shape[-1], jnp.float64)
    flat_w, flat_b = w.reshape(-1, *w.shape[-2:]), np.asarray(params.b).reshape(-1, w.shape[-2])
    out = [
        np.mean((np.asarray(y) - np.asarray(reduced_predict(ReducedParams(a, c), x, **kw))) ** 2)
        for a, c in zip(flat_w, flat_b, strict=True)
    ]
    return np.asarray(out, np.float64).reshape(w.shape[:-2])


# -------------------------------------------------------------------------------------------------
# the chapter's figures
# -------------------------------------------------------------------------------------------------
