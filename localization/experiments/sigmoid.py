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
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special
from numpy.typing import ArrayLike

from localization import validation as v
from localization.theory.sigmoid import DEFAULT_C

__all__ = ["monte_carlo_bias_drift", "monte_carlo_spread", "monte_carlo_start_loss"]


def _class_samples(key: Any, task: Any, num: int, n: int) -> tuple[jax.Array, jax.Array]:
    if not (hasattr(task, "model0") and hasattr(task, "model1")):
        raise TypeError(f"task must be a LengthscaleTask (e.g. data.family_task('NLGP', 1.0)), got {task!r}")
    num = v.integer("num", num, minimum=4)
    k0, k1 = jax.random.split(v.key("key", key))
    x0 = task.model0.sample(k0, num, n, jnp.float64)
    x1 = task.model1.sample(k1, num, n, jnp.float64)
    return x0, x1


def monte_carlo_bias_drift(key: Any, task: Any, w: ArrayLike, b: float, *, num: int = 100_000) -> tuple[float, float]:
    r"""(estimate, standard error) of the single-neuron bias flow :func:`bias_drift` (labels ±1) by sampling.

    ``task``: a :class:`~localization.data.task.LengthscaleTask` (class 1 = label +1); ``w`` (N,);
    ``num`` samples per class. The estimator is the class-balanced average of
    :math:`(y-\sigma(h+b))\sigma'(h+b)`.
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


def monte_carlo_spread(key: Any, task: Any, W: ArrayLike, *, num: int = 100_000) -> tuple[np.ndarray, np.ndarray]:
    r"""(estimates (M,), standard errors (M,)) of the spread probability for each row of ``W`` (M, N).

    The probability is :math:`P(|\langle w,X_1\rangle|>|\langle w,X_0\rangle|)` (notes 004 Eq. (9)).

    One pair of independent class samples per draw, ``num`` draws, shared by all rows.
    """
    W = np.asarray(v.finite_real_array("W", W))
    if W.ndim != 2 or W.shape[1] < 2:
        raise ValueError(f"W must have shape (M, N) with N >= 2, got {W.shape}")
    x0, x1 = _class_samples(key, task, num, W.shape[1])
    hit = np.abs(np.asarray(x1 @ jnp.asarray(W.T))) > np.abs(np.asarray(x0 @ jnp.asarray(W.T)))
    p = hit.mean(axis=0)
    return p, np.sqrt(p * (1 - p) / hit.shape[0])


def monte_carlo_start_loss(
    key: Any, task: Any, w: ArrayLike, activation: str, *, num: int = 100_000
) -> tuple[float, float]:
    r"""(estimate, standard error) of :math:`4\mathcal L` of one neuron at :math:`b=0` (notes 004 Eqs. (19), (26)).

    ``activation``: ``"erf"`` (σ = erf(·/√2), labels ±1) or ``"relu"`` (labels 0/1).
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
