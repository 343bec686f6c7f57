r"""Exact gated means and gate probabilities: the closed forms of Lemma 3.1's steps (App. C.2, C.4).

The vector :math:`\mathbb E[\mathbb 1(\langle w,X\rangle\ge0)\,X]` that Lemma 3.1 replaces by
:math:`\tfrac12\varphi(\cdot)`, and the conditional probability :math:`P(\langle w,X\rangle\ge0\mid X_i=x)`
inside it, in closed form; their batch estimates are :mod:`localization.theory.batch_gradient`.

* :func:`gaussian_gated_mean` — the exact gated mean for Gaussian data (Stein's lemma);
* :func:`elliptical_gated_mean` — the exact gated mean for elliptical data (App. C.4);
* :func:`gaussian_gate_probability` — the conditional probability as predicted by the Gaussian
  approximation of :math:`\langle w,X\rangle\mid X_i` (A1–A3, App. C.2);
* :func:`ising_preactivation_law` and :func:`ising_gated_mean` — the exact conditional law of
  :math:`\langle w,X\rangle` given :math:`X_i` and the exact gated mean for the periodic Ising chain with
  integer weights (a transfer matrix over the partial sums; no sampling, no Gaussian approximation).

φ itself and its evaluation at concrete points are in ``theory.amplifier``; φ against the linear
reference (App. B.1) is in ``theory.linearity``.

Shapes: weights ``(..., n)`` (one ``(n,)`` vector where stated), covariances ``(n, n)``. Everything
float64.
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
    "gaussian_gated_mean",
    "elliptical_gated_mean",
    "gaussian_gate_probability",
    "PreactivationLaw",
    "ising_preactivation_law",
    "ising_gated_mean",
]


def gaussian_gated_mean(w: ArrayLike, cov: ArrayLike) -> jax.Array:
    r"""Return the exact :math:`\mathbb E[\mathbb 1(\langle w,X\rangle\ge0)\,X]` for :math:`X\sim\mathcal N(0,\Sigma)`.

    .. math:: \mathbb E[\mathbb 1(\langle w,X\rangle\ge0)X]=\frac{\Sigma w}{\sqrt{2\pi\,w^\top\Sigma w}}

    (Stein's lemma: :math:`\mathbb E[Xg(\langle w,X\rangle)]=\Sigma w\,\mathbb E[g'(\langle w,X\rangle)]` with
    :math:`g=\mathbb 1(\cdot\ge0)`, :math:`g'=\delta_0`). Any positive-definite ``cov`` (no unit-variance
    requirement).

    Parameters
    ----------
    w : ArrayLike
        (..., n) non-zero weights.
    cov : ArrayLike
        (n, n) positive-definite covariance Σ.

    Returns
    -------
    jax.Array
        (..., n) float64.
    """
    w = v.finite_weights("w", w)
    n = w.shape[-1]
    cov = v.float_array("cov", cov, ndim_min=2)
    if tuple(cov.shape) != (n, n):
        raise ValueError(f"cov must have shape ({n}, {n}) to match w, got shape {tuple(cov.shape)}")
    cov = v.float64("cov", cov)
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
    w : ArrayLike
        (..., n) non-zero weights.
    cov : ArrayLike
        (n, n) positive-definite covariance Σ.
    mean_abs : float
        The constant C of the law, in (0, 1] (Cauchy–Schwarz).

    Returns
    -------
    jax.Array
        (..., n) float64.
    """
    c = v.in_range("mean_abs", mean_abs, 0.0, 1.0, low_open=True)
    return gaussian_gated_mean(w, cov) * (c * math.sqrt(math.pi / 2.0))


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
    w = v.finite_weights("w", w)
    if w.ndim != 1:
        raise ValueError(f"w must be a single weight vector of shape (n,), got shape {tuple(w.shape)}")
    n = w.shape[0]
    cov = v.float_array("cov", cov, ndim_min=2)
    if tuple(cov.shape) != (n, n):
        raise ValueError(f"cov must have shape ({n}, {n}) to match w, got shape {tuple(cov.shape)}")
    cov = v.float64("cov", cov)
    i = v.integer("i", i, minimum=0)
    if i >= n:
        raise ValueError(f"i must satisfy 0 <= i < n = {n}, got {i}")
    x = v.float64("x", v.float_array("x", jnp.atleast_1d(jnp.asarray(x)), ndim_min=1))
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
