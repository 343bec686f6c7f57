r"""The steps of the derivation of Lemma 3.1 measured on a batch (paper App. C.1–C.2).

Each function evaluates one step of the derivation on a given batch of samples, so that the book can
check every step numerically against its closed form (:mod:`localization.theory.exact_gated_mean`):

* :func:`mse_loss`, :func:`mse_gradient`, :func:`gradient_terms` — the empirical loss of the single
  ReLU neuron (paper Eq. (9), no ½), its chain-rule gradient and the two terms it splits into
  (App. C.1);
* :func:`gated_mean` — the batch mean of :math:`\mathbb 1(\langle w,X\rangle\ge0)X`, the vector that
  Lemma 3.1 replaces by :math:`\tfrac12\varphi(\cdot)` (App. C.2);
* :func:`empirical_gate_probability` — the conditional probability
  :math:`P(\langle w,X\rangle\ge0\mid X_i=x)` binned from samples (the inner probability of App. C.2).

These evaluate a definition on arrays they are given (no sampling, no fit, no run): the batch is the
caller's. The training loss of the networks is ``localization.models.mse``; this module's
:func:`mse_loss` is the same loss for the single neuron, written out step by step.

Conventions: labels :math:`y\in\{0,1\}`, loss :math:`\mathcal L(w)=\mathbb E[(y-\mathrm{ReLU}\langle w,x\rangle)^2]`,
time = steps × learning rate (so gradient descent is forward Euler of :math:`\dot w=-\nabla\mathcal L`).
Shapes: weights ``(..., n)``, batches ``(num, n)``, labels ``(num,)``. Everything float64.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.theory.binned_discrepancies import quantile_bins

__all__ = [
    "GradientTerms",
    "GateEstimate",
    "mse_loss",
    "mse_gradient",
    "gradient_terms",
    "gated_mean",
    "empirical_gate_probability",
]


# --- validation helpers -----------------------------------------------------------------------------------------------
def _batch(x, n=None):
    x = v.float64("x", v.float_array("x", x, ndim_min=2))
    if x.ndim != 2:
        raise ValueError(f"x must be a batch of shape (num, n), got shape {tuple(x.shape)}")
    if x.shape[0] < 1:
        raise ValueError("x must contain at least one sample, got an empty batch")
    if n is not None and x.shape[1] != n:
        raise ValueError(f"x must have {n} columns (the length of w), got shape {tuple(x.shape)}")
    if not bool(jnp.all(jnp.isfinite(x))):
        raise ValueError("x must be finite, got non-finite entries")
    return x


def _labels(y, num):
    y = v.float64("y", v.float_array("y", y, ndim_min=1))
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
    # The formula of localization.models.mean_squared_error (the library's MSE), written out: the theory
    # layer may not import the core (tests/test_layout.py); tests/test_models.py checks they agree.
    h = _preactivation(w, x)
    return jnp.mean((y - jax.nn.relu(h)) ** 2, axis=-1)


def mse_loss(w: ArrayLike, x: ArrayLike, y: ArrayLike) -> jax.Array:
    r"""Return the empirical MSE of the single ReLU neuron (paper Eq. (9), model M2, no ½ factor).

    .. math:: \hat{\mathcal L}(w)=\frac1B\sum_{b=1}^B\bigl(y_b-\mathrm{ReLU}\langle w,x_b\rangle\bigr)^2 .

    Differentiable in ``w`` through :func:`jax.grad` of the unvalidated core (``mse_loss.core``). The
    same loss as ``localization.models.mean_squared_error`` of the neuron's predictions (to rounding),
    for several weight vectors at once; restated here because ``theory`` may not import the core.

    Parameters
    ----------
    w : ArrayLike
        (..., n) weights; leading axes are independent weight vectors.
    x : ArrayLike
        (B, n) inputs.
    y : ArrayLike
        (B,) labels.

    Returns
    -------
    jax.Array
        (...) the loss of each weight vector.
    """
    w = v.finite_weights("w", w)
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
    w : ArrayLike
        (..., n) weights; leading axes are independent weight vectors.
    x : ArrayLike
        (B, n) inputs.
    y : ArrayLike
        (B,) labels.

    Returns
    -------
    GradientTerms
        ``label`` and ``relu``, each (..., n).
    """
    w = v.finite_weights("w", w)
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
    w : ArrayLike
        (..., n) weights; leading axes are independent weight vectors.
    x : ArrayLike
        (B, n) inputs.
    y : ArrayLike
        (B,) labels.

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
    w : ArrayLike
        (..., n) weights.
    x : ArrayLike
        (B, n) samples of one class.

    Returns
    -------
    jax.Array
        (..., n) the sample mean of :math:`\mathbb 1(\langle w,x_b\rangle\ge0)\,x_b`.
    """
    w = v.finite_weights("w", w)
    x = _batch(x, w.shape[-1])
    return _gated_mean(w, x)


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
    w = np.asarray(v.finite_weights("w", w))
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
    index, nb = quantile_bins(xi, bins)
    count = np.bincount(index, minlength=nb).astype(np.float64)
    keep = count > 0
    xsum = np.bincount(index, weights=xi, minlength=nb)
    psum = np.bincount(index, weights=positive.astype(np.float64), minlength=nb)
    count = count[keep]
    xm = xsum[keep] / count
    prob = psum[keep] / count
    stderr = np.sqrt(prob * (1.0 - prob) / count)
    return GateEstimate(xm, prob, count, stderr)
