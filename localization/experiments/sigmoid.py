r"""The sigmoid chapter's back-end: Monte Carlo counterparts of :mod:`localization.theory.sigmoid`.

Each estimator samples both classes of a :class:`~localization.data.task.LengthscaleTask` (any
marginal, not only the Gaussian classes of the closed forms) and returns an estimate with its
standard error:

* :func:`monte_carlo_bias_drift` — the single-neuron bias flow (notes 001 Eq. (42), labels ±1);
* :func:`monte_carlo_spread` — the spread probability :math:`P(|\langle w,X_1\rangle|>|\langle w,X_0\rangle|)`
  (notes 004 Eq. (9));
* :func:`monte_carlo_start_loss` — the starting loss :math:`4\mathcal L` at :math:`b=0` (notes 004
  Eqs. (19), (26)).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special
from jax.typing import ArrayLike

from localization import validation as v
from localization.data.task import LengthscaleTask
from localization.theory.sigmoid import DEFAULT_C

__all__ = ["monte_carlo_bias_drift", "monte_carlo_spread", "monte_carlo_start_loss"]


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
