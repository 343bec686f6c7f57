r"""Building blocks of the derivation of Lemma 3.1 (paper App. C.1–C.2, C.4).

Each function is one step of the derivation written as something that can be *measured* on a batch
of samples or *evaluated* in closed form, so that the book can check every step numerically:

* :func:`mse_loss`, :func:`mse_gradient`, :func:`gradient_terms` — the empirical loss of the single
  ReLU neuron (paper Eq. (9), no ½), its chain-rule gradient and the two terms it splits into
  (App. C.1);
* :func:`gated_mean` — the Monte Carlo estimate of :math:`\mathbb E[\mathbb 1(\langle w,X\rangle\ge0)X]`,
  the vector that Lemma 3.1 replaces by :math:`\tfrac12\varphi(\cdot)` (App. C.2);
* :func:`elliptical_gated_mean` — the exact value of that vector for elliptical data (App. C.4);
* :func:`empirical_gate_probability` and :func:`gaussian_gate_probability` — the conditional
  probability :math:`P(\langle w,X\rangle\ge0\mid X_i=x)` measured from samples and as predicted by
  the Gaussian approximation of :math:`\langle w,X\rangle\mid X_i` (A1–A3, App. C.2);
* :func:`ising_preactivation_law` and :func:`ising_gated_mean` — the exact conditional law of
  :math:`\langle w,X\rangle` given :math:`X_i` and the exact gated mean for the periodic Ising chain with
  integer weights (a transfer matrix over the partial sums; no sampling, no Gaussian approximation).

φ itself and its evaluation at concrete points are in ``theory.amplifier``; φ against the linear
reference (App. B.1) is in ``theory.linearity``.

Conventions: labels :math:`y\in\{0,1\}`, loss :math:`\mathcal L(w)=\mathbb E[(y-\mathrm{ReLU}\langle w,x\rangle)^2]`,
time = steps × learning rate (so gradient descent is forward Euler of :math:`\dot w=-\nabla\mathcal L`).
Shapes: weights ``(..., n)``, batches ``(num, n)``, labels ``(num,)``. Everything float64.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v

__all__ = [
    "GradientTerms",
    "GateEstimate",
    "mse_loss",
    "mse_gradient",
    "gradient_terms",
    "gated_mean",
    "gaussian_gated_mean",
    "elliptical_gated_mean",
    "empirical_gate_probability",
    "gaussian_gate_probability",
    "PreactivationLaw",
    "ising_preactivation_law",
    "ising_gated_mean",
]


# --- validation helpers -----------------------------------------------------------------------------------------------
def _batch(x, n=None):
    x = jnp.asarray(v.float_array("x", x, ndim_min=2), dtype=jnp.float64)
    if x.ndim != 2:
        raise ValueError(f"x must be a batch of shape (num, n), got shape {tuple(x.shape)}")
    if x.shape[0] < 1:
        raise ValueError("x must contain at least one sample, got an empty batch")
    if n is not None and x.shape[1] != n:
        raise ValueError(f"x must have {n} columns (the length of w), got shape {tuple(x.shape)}")
    if not bool(jnp.all(jnp.isfinite(x))):
        raise ValueError("x must be finite, got non-finite entries")
    return x


def _weights(w):
    w = jnp.asarray(v.float_array("w", w, ndim_min=1), dtype=jnp.float64)
    if not bool(jnp.all(jnp.isfinite(w))):
        raise ValueError("w must be finite, got non-finite entries")
    return w


def _labels(y, num):
    y = jnp.asarray(v.float_array("y", y, ndim_min=1), dtype=jnp.float64)
    if y.shape != (num,):
        raise ValueError(f"y must have shape ({num},) (one label per sample), got shape {tuple(y.shape)}")
    if not bool(jnp.all(jnp.isfinite(y))):
        raise ValueError("y must be finite, got non-finite entries")
    return y


def _preactivation(w, x):
    """H = <w, x_b> for every sample: (..., n), (num, n) -> (..., num)."""
    return jnp.einsum("bn,...n->...b", x, w)


# --- App. C.1: the loss and its gradient on a batch -------------------------------------------------------------------
@jax.jit
def _mse_loss(w, x, y):
    h = _preactivation(w, x)
    return jnp.mean((y - jax.nn.relu(h)) ** 2, axis=-1)


def mse_loss(w: ArrayLike, x: ArrayLike, y: ArrayLike) -> jax.Array:
    r"""Return the empirical MSE of the single ReLU neuron (paper Eq. (9), model M2, no ½ factor).

    .. math:: \hat{\mathcal L}(w)=\frac1B\sum_{b=1}^B\bigl(y_b-\mathrm{ReLU}\langle w,x_b\rangle\bigr)^2 .

    Differentiable in ``w`` through :func:`jax.grad` of the unvalidated core (``mse_loss.core``).

    Parameters
    ----------
    w, x, y : ArrayLike
        Weights (..., n) (leading axes: independent weight vectors), inputs (B, n), labels (B,).

    Returns
    -------
    jax.Array
        (...) the loss of each weight vector.
    """
    w = _weights(w)
    x = _batch(x, w.shape[-1])
    y = _labels(y, x.shape[0])
    return _mse_loss(w, x, y)


mse_loss.core = _mse_loss  # type: ignore[attr-defined]


@jax.jit
def _gradient_terms(w, x, y):
    h = _preactivation(w, x)
    gate = (h >= 0).astype(x.dtype)
    num = x.shape[0]
    label = jnp.einsum("...b,bn->...n", y * gate, x) / num
    relu = jnp.einsum("...b,bn->...n", jax.nn.relu(h), x) / num
    return label, relu


class GradientTerms(NamedTuple):
    r"""The two batch averages the MSE gradient splits into (App. C.1), each of shape ``(..., n)``.

    ``label`` = :math:`\frac1B\sum_b y_b\,\mathbb 1(\langle w,x_b\rangle\ge0)\,x_b` (population:
    :math:`\mathbb E[Y\mathbb 1(\langle w,X\rangle\ge0)X]`), ``relu`` =
    :math:`\frac1B\sum_b\mathrm{ReLU}(\langle w,x_b\rangle)\,x_b` (population, by sign symmetry:
    :math:`\tfrac12\mathbb E[XX^\top]w`). The gradient is ``-2 * label + 2 * relu``.
    """

    label: jax.Array
    relu: jax.Array


def gradient_terms(w: ArrayLike, x: ArrayLike, y: ArrayLike) -> GradientTerms:
    """Return the two terms of the batch gradient, :class:`GradientTerms` (shapes as :func:`mse_loss`).

    Parameters
    ----------
    w, x, y : ArrayLike
        Weights (..., n) (leading axes: independent weight vectors), inputs (B, n), labels (B,).

    Returns
    -------
    GradientTerms
        ``label`` and ``relu``, each (..., n).
    """
    w = _weights(w)
    x = _batch(x, w.shape[-1])
    y = _labels(y, x.shape[0])
    return GradientTerms(*_gradient_terms(w, x, y))


def mse_gradient(w: ArrayLike, x: ArrayLike, y: ArrayLike) -> jax.Array:
    r"""Return the chain-rule gradient of :func:`mse_loss` (App. C.1, before taking expectations).

    .. math::

       \nabla_w\hat{\mathcal L} &= -\frac2B\sum_b\bigl(y_b-\mathrm{ReLU}\langle w,x_b\rangle\bigr) \\
       &\qquad\times\mathbb 1(\langle w,x_b\rangle\ge0)\,x_b ,

    using the convention ReLU'(0) = 1 (the event :math:`\langle w,x_b\rangle=0` has probability 0 for
    continuous data and generic ``w``).

    Parameters
    ----------
    w, x, y : ArrayLike
        Weights (..., n) (leading axes: independent weight vectors), inputs (B, n), labels (B,).

    Returns
    -------
    jax.Array
        (..., n) the gradient.
    """
    terms = gradient_terms(w, x, y)
    return -2.0 * terms.label + 2.0 * terms.relu


@jax.jit
def _gated_mean(w, x):
    gate = (_preactivation(w, x) >= 0).astype(x.dtype)
    return jnp.einsum("...b,bn->...n", gate, x) / x.shape[0]


def gated_mean(w: ArrayLike, x: ArrayLike) -> jax.Array:
    r"""Monte Carlo estimate of :math:`\mathbb E[\mathbb 1(\langle w,X\rangle\ge0)\,X]` (App. C.2).

    Lemma 3.1 approximates its
    population value, for class-1 samples, by :math:`\tfrac12\varphi(\Sigma_1w/\sqrt{w^\top\Sigma_1w})`.

    Parameters
    ----------
    w, x : ArrayLike
        Weights (..., n) and samples (B, n) of one class.

    Returns
    -------
    jax.Array
        (..., n) the sample mean of :math:`\mathbb 1(\langle w,x_b\rangle\ge0)\,x_b`.
    """
    w = _weights(w)
    x = _batch(x, w.shape[-1])
    return _gated_mean(w, x)


def gaussian_gated_mean(w: ArrayLike, cov: ArrayLike) -> jax.Array:
    r"""Return the exact :math:`\mathbb E[\mathbb 1(\langle w,X\rangle\ge0)\,X]` for :math:`X\sim\mathcal N(0,\Sigma)`.

    .. math:: \mathbb E[\mathbb 1(\langle w,X\rangle\ge0)X]=\frac{\Sigma w}{\sqrt{2\pi\,w^\top\Sigma w}}

    (Stein's lemma: :math:`\mathbb E[Xg(\langle w,X\rangle)]=\Sigma w\,\mathbb E[g'(\langle w,X\rangle)]` with
    :math:`g=\mathbb 1(\cdot\ge0)`, :math:`g'=\delta_0`). Any positive-definite ``cov`` (no unit-variance
    requirement).

    Parameters
    ----------
    w, cov : ArrayLike
        Non-zero weights (..., n) and a positive-definite covariance Σ (n, n).

    Returns
    -------
    jax.Array
        (..., n) float64.
    """
    w = _weights(w)
    n = w.shape[-1]
    cov = v.float_array("cov", cov, ndim_min=2)
    if tuple(cov.shape) != (n, n):
        raise ValueError(f"cov must have shape ({n}, {n}) to match w, got shape {tuple(cov.shape)}")
    cov = jnp.asarray(cov, dtype=jnp.float64)
    u = w @ cov
    q = jnp.sum(u * w, axis=-1, keepdims=True)
    if not bool(jnp.all(q > 0)):
        raise ValueError("w must satisfy w^T Sigma w > 0 (non-zero w, positive-definite cov)")
    return u / jnp.sqrt(2.0 * math.pi * q)


def elliptical_gated_mean(w: ArrayLike, cov: ArrayLike, mean_abs: float) -> jax.Array:
    r"""Return the exact :math:`\mathbb E[\mathbb 1(\langle w,X\rangle\ge0)\,X]` for a centred elliptical law.

    The law has covariance ``cov``:

    .. math::

       \mathbb E[\mathbb 1(\langle w,X\rangle\ge0)X]=\frac C2\,\frac{\Sigma w}{\sqrt{w^\top\Sigma w}},

       C=\frac{\mathbb E|\langle w,X\rangle|}{\sqrt{w^\top\Sigma w}} .

    Derivation: for an elliptical law the conditional mean is linear,
    :math:`\mathbb E[X\mid S]=\Sigma w\,S/(w^\top\Sigma w)` with :math:`S=\langle w,X\rangle`, so the left
    side is :math:`\Sigma w\,\mathbb E[S\mathbb 1(S\ge0)]/(w^\top\Sigma w)=\Sigma w\,\mathbb E|S|/(2w^\top\Sigma w)`
    (S is symmetric). The standardised :math:`S/\sqrt{w^\top\Sigma w}` has the same law for every w, so
    C is a constant of the law: ``mean_abs`` :math:`=\mathbb E|X_1|/\sqrt{\Sigma_{11}}` (for unit
    variance, :math:`\mathbb E|X_1|` of the marginal). Gaussian data: :math:`C=\sqrt{2/\pi}`, which is
    :func:`gaussian_gated_mean`.

    Parameters
    ----------
    w, cov : ArrayLike
        Non-zero weights (..., n) and a positive-definite covariance Σ (n, n).
    mean_abs : float
        The constant C of the law, in (0, 1] (Cauchy–Schwarz).

    Returns
    -------
    jax.Array
        (..., n) float64.
    """
    c = v.in_range("mean_abs", mean_abs, 0.0, 1.0, low_open=True)
    return gaussian_gated_mean(w, cov) * (c * math.sqrt(math.pi / 2.0))


# --- App. C.2: conditioning on one coordinate -------------------------------------------------------------------------
class GateEstimate(NamedTuple):
    r"""Empirical :math:`P(\langle w,X\rangle\ge0\mid X_i\in\text{bin})` (float64 NumPy arrays, shape (bins,)).

    ``x``: mean of :math:`X_i` in each bin (the atom itself for discrete marginals); ``prob``: fraction
    of samples in the bin with :math:`\langle w,X\rangle\ge0`; ``count``: samples in the bin;
    ``stderr``: binomial standard error :math:`\sqrt{p(1-p)/\text{count}}`.
    """

    x: np.ndarray
    prob: np.ndarray
    count: np.ndarray
    stderr: np.ndarray


def empirical_gate_probability(w: ArrayLike, x: ArrayLike, i: int, bins: int = 20) -> GateEstimate:
    r"""Measure :math:`P(\langle w,X\rangle\ge0\mid X_i)` from samples (the inner probability of App. C.2).

    Parameters
    ----------
    w : (n,) weight vector.
    x : (B, n) samples of one class.
    i : the conditioning coordinate, ``0 <= i < n``.
    bins : int >= 1. If :math:`X_i` takes at most ``bins`` distinct values in the batch (a discrete
        marginal, e.g. Ising ±1) the samples are grouped by value, which makes the law of total
        expectation hold *exactly* for the empirical measure; otherwise ``bins`` equal-count
        (quantile) bins are used.

    Returns
    -------
    GateEstimate
        Pure measurement on concrete arrays (NumPy), no randomness.
    """
    w = np.asarray(_weights(w))
    if w.ndim != 1:
        raise ValueError(f"w must be a single weight vector of shape (n,), got shape {w.shape}")
    x = np.asarray(_batch(x, w.shape[0]))
    n = w.shape[0]
    i = v.integer("i", i, minimum=0)
    if i >= n:
        raise ValueError(f"i must satisfy 0 <= i < n = {n}, got {i}")
    bins = v.integer("bins", bins, minimum=1)
    xi = x[:, i]
    positive = (x @ w) >= 0
    values = np.unique(xi)
    if values.size <= bins:
        index = np.searchsorted(values, xi)
        nb = values.size
    else:
        edges = np.quantile(xi, np.linspace(0.0, 1.0, bins + 1))
        index = np.clip(np.searchsorted(edges, xi, side="right") - 1, 0, bins - 1)
        nb = bins
    count = np.bincount(index, minlength=nb).astype(np.float64)
    keep = count > 0
    xsum = np.bincount(index, weights=xi, minlength=nb)
    psum = np.bincount(index, weights=positive.astype(np.float64), minlength=nb)
    count = count[keep]
    xm = xsum[keep] / count
    prob = psum[keep] / count
    stderr = np.sqrt(prob * (1.0 - prob) / count)
    return GateEstimate(xm, prob, count, stderr)


def gaussian_gate_probability(w: ArrayLike, cov: ArrayLike, i: int, x: ArrayLike) -> jax.Array:
    r"""Return the Gaussian prediction of :math:`P(\langle w,X\rangle\ge0\mid X_i=x)` (App. C.2 under A1–A3).

    .. math::

       \tfrac12+\tfrac12\operatorname{erf}\Bigl(\frac{x\,\langle w,\sigma_i\rangle}{\Sigma_{ii}\sqrt{2v_i}}\Bigr),

       v_i = w^\top\Sigma w-\langle w,\sigma_i\rangle^2/\Sigma_{ii},

    i.e. :math:`\langle w,X\rangle\mid X_i=x` treated as Gaussian with the conditional mean and
    covariance of a Gaussian vector, :math:`\mathbb E[X\mid X_i=x]=x\sigma_i/\Sigma_{ii}` and
    :math:`\mathrm{Cov}[X\mid X_i]=\Sigma-\sigma_i\sigma_i^\top/\Sigma_{ii}`. For unit variance
    (:math:`\Sigma_{ii}=1`) these are the paper's A1 and A2. With
    :math:`a=\langle w,\sigma_i\rangle/\sqrt{w^\top\Sigma w}`
    and unit variance the argument is :math:`x\,\mathrm{alg}^{-1}(a)/\sqrt2`.

    ``w`` must not be parallel to :math:`\Sigma^{-1}\sigma_i` (then the conditional variance is 0).

    Parameters
    ----------
    w, cov : ArrayLike
        Weights (n,) and the covariance (n, n) of the class.
    i, x : int, ArrayLike
        The conditioning coordinate (in [0, n)) and values of :math:`X_i` (any shape).

    Returns
    -------
    jax.Array
        The probabilities, the shape of ``x``.
    """
    w = _weights(w)
    if w.ndim != 1:
        raise ValueError(f"w must be a single weight vector of shape (n,), got shape {tuple(w.shape)}")
    n = w.shape[0]
    cov = v.float_array("cov", cov, ndim_min=2)
    if tuple(cov.shape) != (n, n):
        raise ValueError(f"cov must have shape ({n}, {n}) to match w, got shape {tuple(cov.shape)}")
    cov = jnp.asarray(cov, dtype=jnp.float64)
    i = v.integer("i", i, minimum=0)
    if i >= n:
        raise ValueError(f"i must satisfy 0 <= i < n = {n}, got {i}")
    x = jnp.asarray(v.float_array("x", jnp.atleast_1d(jnp.asarray(x)), ndim_min=1), dtype=jnp.float64)
    sii = cov[i, i]
    if not float(sii) > 0:
        raise ValueError(f"cov[i, i] must be positive, got {float(sii)}")
    c = jnp.dot(w, cov[i])
    cond_var = jnp.dot(w, cov @ w) - c**2 / sii
    if not float(cond_var) > 1e-14 * float(jnp.dot(w, cov @ w)):
        raise ValueError(
            "w gives zero conditional variance of <w, X> given X_i (w parallel to Sigma^-1 sigma_i); "
            "the Gaussian approximation is degenerate"
        )
    return 0.5 + 0.5 * jax.scipy.special.erf(x * (c / sii) / jnp.sqrt(2.0 * cond_var))


class PreactivationLaw(NamedTuple):
    r"""A law on the integers: ``values`` (sorted int64) and their probabilities ``prob`` (float64, sum 1)."""

    values: np.ndarray
    prob: np.ndarray


_MAX_LATTICE = 10**6  # bound on sum |w| (the transfer matrix has 2 (2 sum|w| + 1) states)


def _integer_weights(w):
    w = np.asarray(v.float_array("w", w, ndim_min=1))
    if w.ndim != 1 or w.shape[0] < 2:
        raise ValueError(f"w must be a single weight vector of shape (n,) with n >= 2, got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w != np.round(w)):
        raise ValueError("w must have integer entries (round a real w to a lattice first), got non-integers")
    w = np.round(w).astype(np.int64)
    total = int(np.abs(w).sum())
    if total > _MAX_LATTICE:
        raise ValueError(f"w must satisfy sum |w_j| <= {_MAX_LATTICE} (memory), got {total}")
    return w, total


def _ising_law(J, w, total, i):
    """Unnormalised transfer-matrix pass; returns the probability of every partial sum (index + total)."""
    n = w.shape[0]
    q = math.exp(-2.0 * J)  # e^{-J} / e^{+J}: the weight of an unequal neighbour pair, relative
    up = np.zeros(2 * total + 1)
    down = np.zeros(2 * total + 1)
    up[total + w[i]] = 1.0  # X_i = +1
    for k in range(1, n):
        wj = int(w[(i + k) % n])
        to_up = np.roll(up + q * down, wj)  # the partial sums never leave [-total, total]: no wrap
        to_down = np.roll(q * up + down, -wj)
        scale = to_up.sum() + to_down.sum()
        up, down = to_up / scale, to_down / scale
    law = up + q * down  # the bond closing the ring, back to X_i = +1
    return law / law.sum()


def ising_preactivation_law(J: float, w: ArrayLike, i: int) -> PreactivationLaw:
    r"""Exact law of :math:`\langle w,X\rangle` given :math:`X_i=+1` for the periodic Ising chain ``data.Ising(J)``.

    :math:`p(x)\propto\exp(J\sum_jx_jx_{j+1})`, :math:`x_{n+1}=x_1`, :math:`J\ge0`. The weights ``w`` (n,)
    must be integers, so that :math:`\langle w,X\rangle` lives on the lattice :math:`\{-\sum|w_j|,\dots,\sum|w_j|\}`;
    the chain is walked once from coordinate i around the ring, carrying the law of (current spin,
    partial sum) — a transfer matrix over :math:`2(2\sum|w_j|+1)` states, exact up to rounding. By the
    sign flip :math:`X\mapsto-X` the law given :math:`X_i=-1` is that of :math:`-\langle w,X\rangle` given
    :math:`X_i=+1`.

    Parameters
    ----------
    J, w, i : float, ArrayLike, int
        Coupling (>= 0), integer weights (n,) and the conditioning coordinate (in [0, n)).

    Returns
    -------
    PreactivationLaw
        The values with probability > 0 and their probabilities.
    """
    J = v.nonnegative("J", J)  # also rejects inf and NaN
    w, total = _integer_weights(w)
    i = v.integer("i", i, minimum=0)
    if i >= w.shape[0]:
        raise ValueError(f"i must satisfy 0 <= i < n = {w.shape[0]}, got {i}")
    law = _ising_law(J, w, total, i)
    keep = law > 0
    return PreactivationLaw(np.arange(-total, total + 1, dtype=np.int64)[keep], law[keep])


def ising_gated_mean(J: float, w: ArrayLike) -> np.ndarray:
    r"""Exact :math:`\mathbb E[\mathbb 1(\langle w,X\rangle\ge0)\,X]` for the periodic Ising chain and integer ``w``.

    Entry i by the law of total expectation over :math:`X_i=\pm1` (probability ½ each), with the
    exact conditional laws of :func:`ising_preactivation_law`:
    :math:`\tfrac12P(h\ge0\mid X_i=1)-\tfrac12P(h\ge0\mid X_i=-1)
    =\tfrac12\bigl[P(h>0\mid X_i=1)-P(h<0\mid X_i=1)\bigr]`,
    :math:`h=\langle w,X\rangle` (ties :math:`h=0` count as active, as in :func:`gated_mean`).

    Parameters
    ----------
    J, w : float, ArrayLike
        Coupling (>= 0) and integer weights (n,), as in :func:`ising_preactivation_law`.

    Returns
    -------
    np.ndarray
        (n,) float64.
    """
    J = v.nonnegative("J", J)  # also rejects inf and NaN
    w, total = _integer_weights(w)
    s = np.arange(-total, total + 1)
    out = np.empty(w.shape[0])
    for i in range(w.shape[0]):
        law = _ising_law(J, w, total, i)
        out[i] = 0.5 * (law[s > 0].sum() - law[s < 0].sum())
    return out
