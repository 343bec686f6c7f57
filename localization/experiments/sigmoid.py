r"""The sigmoid chapter's back-end: Monte Carlo counterparts of :mod:`localization.theory.sigmoid`.

Each estimator samples both classes of a :class:`~localization.data.task.LengthscaleTask` (any
marginal, not only the Gaussian classes of the closed forms) and returns an estimate with its
standard error:

* :func:`monte_carlo_bias_drift` — the single-neuron bias flow (notes 001 Eq. (42), labels ±1);
* :func:`monte_carlo_spread` — the spread probability :math:`P(|\langle w,X_1\rangle|>|\langle w,X_0\rangle|)`
  (notes 004 Eq. (9));
* :func:`monte_carlo_start_loss` — the starting loss :math:`4\mathcal L` at :math:`b=0` (notes 004
  Eqs. (19), (26)).

Quadrature counterparts (deterministic, for the chapter's checks of the closed forms and of the
notes' printed integrals): :func:`gaussian_expectation`, :func:`cross_term_quadrature`,
:func:`notes004_spread_integral`, :func:`start_loss_quadrature`, :func:`folded_start_loss_quadrature`.
The chapter's fields and figure: :func:`spread_fields`, :func:`drift_figure`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.integrate
import scipy.special
from jax.typing import ArrayLike

from localization import validation as v
from localization.data.task import LengthscaleTask
from localization.theory.sigmoid import DEFAULT_C

__all__ = [
    "monte_carlo_bias_drift",
    "monte_carlo_spread",
    "monte_carlo_start_loss",
    "gaussian_expectation",
    "cross_term_quadrature",
    "notes004_spread_integral",
    "start_loss_quadrature",
    "folded_start_loss_quadrature",
    "spread_fields",
]


def _class_samples(key: jax.Array, task: LengthscaleTask, num: int, n: int) -> tuple[jax.Array, jax.Array]:
    if not (hasattr(task, "model0") and hasattr(task, "model1")):
        raise TypeError(f"task must be a LengthscaleTask (e.g. data.family_task('NLGP', 1.0)), got {task!r}")
    num = v.integer("num", num, minimum=4)
    k0, k1 = jax.random.split(v.key("key", key))
    x0 = task.model0.sample(k0, num, n, jnp.float64)
    x1 = task.model1.sample(k1, num, n, jnp.float64)
    return x0, x1


def monte_carlo_bias_drift(
    key: jax.Array, task: LengthscaleTask, w: ArrayLike, b: float, *, num: int = 100_000
) -> tuple[float, float]:
    r"""Estimate the single-neuron bias flow ``theory.sigmoid.bias_drift`` (labels ±1) by sampling.

    The estimator is the class-balanced average of :math:`(y-\sigma(h+b))\sigma'(h+b)`, :math:`h=\langle
    w,x\rangle`, :math:`\sigma=\operatorname{erf}(\cdot/\sqrt2)` (notes 001 Eq. (42)).

    Parameters
    ----------
    key : JAX PRNG key of the samples.
    task : a :class:`~localization.data.task.LengthscaleTask` (class 1 = label +1).
    w : (N,) weights, N >= 2, finite.
    b : the bias, finite.
    num : samples per class, >= 4.

    Returns
    -------
    (estimate, standard error) : floats.
    """
    w = np.asarray(v.finite_real_array("w", w))
    if w.ndim != 1 or w.size < 2:
        raise ValueError(f"w must be a vector (N,) with N >= 2, got shape {w.shape}")
    b = v.real_scalar("b", b)
    x0, x1 = _class_samples(key, task, num, w.size)
    out = []
    for y, x in ((1.0, x1), (-1.0, x0)):
        h = np.asarray(x @ jnp.asarray(w)) + b
        s = scipy.special.erf(h * DEFAULT_C)
        out.append(0.5 * (y - s) * math.sqrt(2 / math.pi) * np.exp(-0.5 * h * h))
    term = out[0] + out[1]  # paired sum of the two class terms; each pair is iid
    return float(term.mean()), float(term.std(ddof=1) / math.sqrt(term.size))


def monte_carlo_spread(
    key: jax.Array, task: LengthscaleTask, W: ArrayLike, *, num: int = 100_000
) -> tuple[np.ndarray, np.ndarray]:
    r"""Estimate the spread probability of each row of ``W`` by sampling.

    The probability is :math:`P(|\langle w,X_1\rangle|>|\langle w,X_0\rangle|)` (notes 004 Eq. (9)); one pair
    of independent class samples per draw, ``num`` draws, shared by all rows.

    Parameters
    ----------
    key : JAX PRNG key of the samples.
    task : a :class:`~localization.data.task.LengthscaleTask`.
    W : (M, N) weights, N >= 2, finite.
    num : draws, >= 4.

    Returns
    -------
    (estimates, standard errors) : each (M,) float64.
    """
    W = np.asarray(v.finite_real_array("W", W))
    if W.ndim != 2 or W.shape[1] < 2:
        raise ValueError(f"W must have shape (M, N) with N >= 2, got {W.shape}")
    x0, x1 = _class_samples(key, task, num, W.shape[1])
    hit = np.abs(np.asarray(x1 @ jnp.asarray(W.T))) > np.abs(np.asarray(x0 @ jnp.asarray(W.T)))
    p = hit.mean(axis=0)
    return p, np.sqrt(p * (1 - p) / hit.shape[0])


def monte_carlo_start_loss(
    key: jax.Array, task: LengthscaleTask, w: ArrayLike, activation: str, *, num: int = 100_000
) -> tuple[float, float]:
    r"""Estimate :math:`4\mathcal L` of one neuron at :math:`b=0` by sampling (notes 004 Eqs. (19), (26)).

    Parameters
    ----------
    key : JAX PRNG key of the samples.
    task : a :class:`~localization.data.task.LengthscaleTask`.
    w : (N,) weights, N >= 2, finite.
    activation : ``"erf"`` (σ = erf(·/√2), labels ±1) or ``"relu"`` (labels 0/1).
    num : samples per class, >= 4.

    Returns
    -------
    (estimate, standard error) : floats.
    """
    if activation not in ("erf", "relu"):
        raise ValueError(f"activation must be 'erf' or 'relu', got {activation!r}")
    w = np.asarray(v.finite_real_array("w", w))
    if w.ndim != 1 or w.size < 2:
        raise ValueError(f"w must be a vector (N,) with N >= 2, got shape {w.shape}")
    x0, x1 = _class_samples(key, task, num, w.size)
    h1, h0 = (np.asarray(x @ jnp.asarray(w)) for x in (x1, x0))
    if activation == "erf":
        term = (scipy.special.erf(h1 * DEFAULT_C) - 1) ** 2 + (scipy.special.erf(h0 * DEFAULT_C) + 1) ** 2
    else:
        term = (np.maximum(h1, 0) - 1) ** 2 + np.maximum(h0, 0) ** 2
    return float(term.mean()), float(term.std(ddof=1) / math.sqrt(term.size))


def _variance(name: str, value: Any) -> float:
    value = v.real_scalar(name, value)
    if not value > 0:
        raise ValueError(f"{name} must be a variance > 0, got {value!r}")
    return value


def _erf(u: float) -> float:
    return math.erf(u * DEFAULT_C)


def gaussian_expectation(f: Callable[[float], float], s2: float, b: float) -> float:
    r"""Return :math:`\mathbb E f(Z+b)`, :math:`Z\sim\mathcal N(0,s^2)`, by adaptive quadrature on :math:`\pm14s`.

    Parameters
    ----------
    f : callable
        A scalar function of one float.
    s2 : float
        The variance :math:`s^2` > 0.
    b : float
        The shift :math:`b`, finite.

    Returns
    -------
    float
    """
    if not callable(f):
        raise TypeError(f"f must be a callable of one float, got {f!r}")
    s2, b = _variance("s2", s2), v.real_scalar("b", b)
    s = math.sqrt(s2)
    dens = s * math.sqrt(2 * math.pi)
    return scipy.integrate.quad(lambda z: f(z + b) * math.exp(-z * z / (2 * s2)) / dens, -14 * s, 14 * s)[0]


def cross_term_quadrature(s11: float, skk: float, s1k: float, b1: float, bk: float) -> float:
    r"""Return :math:`\mathbb E\,\sigma(h_k+b_k)\sigma'(h_1+b_1)` by 2-d quadrature.

    The quadrature counterpart of ``theory.sigmoid.cross_output_slope``.

    :math:`(h_1,h_k)` centred Gaussian with variances ``s11``, ``skk`` and covariance ``s1k``;
    :math:`h_k=s_{1k}/s_{11}\,h_1+\sqrt{s_{kk}-s_{1k}^2/s_{11}}\,z`, integrated over :math:`[-12,12]^2`.

    Parameters
    ----------
    s11, skk : float
        Variances > 0.
    s1k : float
        Covariance, :math:`s_{1k}^2<s_{11}s_{kk}`.
    b1, bk : float
        Biases, finite.

    Returns
    -------
    float
    """
    s11, skk = _variance("s11", s11), _variance("skk", skk)
    s1k, b1, bk = (v.real_scalar(n, x) for n, x in (("s1k", s1k), ("b1", b1), ("bk", bk)))
    if not s1k**2 < s11 * skk:
        raise ValueError(f"s1k must satisfy s1k**2 < s11 * skk, got s1k={s1k!r}")
    cond_var = skk - s1k**2 / s11

    def integrand(z: float, h1: float) -> float:
        hk = s1k / s11 * h1 + math.sqrt(cond_var) * z
        dens = math.exp(-h1 * h1 / (2 * s11) - z * z / 2) / (2 * math.pi * math.sqrt(s11))
        return _erf(hk + bk) * math.sqrt(2 / math.pi) * math.exp(-((h1 + b1) ** 2) / 2) * dens

    return scipy.integrate.dblquad(integrand, -12, 12, -12, 12, epsabs=1e-11)[0]


def notes004_spread_integral(s1: float, s0: float) -> float:
    r"""Return the last integral of notes 004 §2 (after "Gaussian data") by quadrature.

    :math:`\int_0^\infty\frac{2}{\sqrt{2\pi}\sigma_1}\operatorname{erf}\bigl(x/(\sqrt2\sigma_0)\bigr)
    e^{-x^2/(2\sigma_1^2)}\,dx`, which ``theory.sigmoid.spread_probability`` closes.

    Parameters
    ----------
    s1, s0 : float
        Standard deviations :math:`\sigma_1,\sigma_0` > 0 (not variances).

    Returns
    -------
    float
    """
    s1, s0 = _variance("s1", s1), _variance("s0", s0)
    return scipy.integrate.quad(
        lambda x: (
            2 / (math.sqrt(2 * math.pi) * s1) * math.erf(x / (math.sqrt(2) * s0)) * math.exp(-x * x / (2 * s1 * s1))
        ),
        0,
        np.inf,
    )[0]


def start_loss_quadrature(s1sq: float, s0sq: float, activation: str, *, shift: float = 0.0) -> float:
    r"""Return :math:`4\mathcal L` of one neuron at :math:`b=0` by quadrature (``theory.sigmoid.*_start_loss``).

    ``"erf"``: :math:`\mathbb E(\sigma(u_1)-1)^2+\mathbb E(\sigma(u_0)+1)^2` (labels ±1);
    ``"relu"``: :math:`\mathbb E(\mathrm{ReLU}(u_1)-1)^2+\mathbb E\,\mathrm{ReLU}(u_0)^2` (labels 0/1);
    :math:`u_y\sim\mathcal N(\text{shift},\sigma_y^2)` (``shift`` ≠ 0: a non-symmetric law).

    Parameters
    ----------
    s1sq, s0sq : float
        Preactivation variances > 0.
    activation : str
        ``"erf"`` or ``"relu"``.
    shift : float
        Mean of both preactivations, finite.

    Returns
    -------
    float
    """
    if activation == "erf":
        f1, f0 = (lambda u: (_erf(u) - 1) ** 2), (lambda u: (_erf(u) + 1) ** 2)
    elif activation == "relu":
        f1, f0 = (lambda u: (max(u, 0) - 1) ** 2), (lambda u: max(u, 0) ** 2)
    else:
        raise ValueError(f"activation must be 'erf' or 'relu', got {activation!r}")
    return gaussian_expectation(f1, s1sq, shift) + gaussian_expectation(f0, s0sq, shift)


def folded_start_loss_quadrature(s1sq: float, s0sq: float, *, shift: float = 0.0) -> float:
    r"""Return the erf starting loss folded onto :math:`u>0` as notes 004 Eqs. (21)–(24) do, by quadrature.

    :math:`2\sum_y\mathbb E[(\sigma(u_y)^2+1)\,\mathbf 1\{u_y>0\}]`, :math:`u_y\sim\mathcal N(\text{shift},\sigma_y^2)`;
    equal to :func:`start_loss_quadrature` (``"erf"``) only for a symmetric law (``shift`` = 0).

    Parameters
    ----------
    s1sq, s0sq : float
        Preactivation variances > 0.
    shift : float
        Mean of both preactivations, finite.

    Returns
    -------
    float
    """
    return 2 * sum(gaussian_expectation(lambda u: (_erf(u) ** 2 + 1) * (u > 0), s, shift) for s in (s1sq, s0sq))


def spread_fields(n: int) -> np.ndarray:
    r"""Return the chapter's three unit-norm fields: constant, unit-width bump, Gabor (width 2, period 8).

    The bump and the Gabor field are centred at ``n // 2``.

    Parameters
    ----------
    n : int
        Input size N >= 2.

    Returns
    -------
    np.ndarray
        (3, n) float64, rows constant, bump, Gabor.
    """
    n = v.integer("n", n, minimum=2)
    i = np.arange(n)
    const = np.ones(n) / math.sqrt(n)
    bump = np.exp(-0.5 * (i - n // 2) ** 2)
    bump /= np.linalg.norm(bump)
    gabor = np.exp(-0.5 * ((i - n // 2) / 2.0) ** 2) * np.cos(2 * np.pi * (i - n // 2) / 8)
    gabor /= np.linalg.norm(gabor)
    return np.stack([const, bump, gabor])
