r"""The amplifier chapter's back-end: the A2 discrepancy of a data model by conditional Monte Carlo.

Assumption A2 of paper §3.1 says :math:`\operatorname{Cov}[X\mid X_i=x]=\Sigma-\sigma_i\sigma_i^\top` does not depend
on :math:`x`; its discrepancy :math:`D_2` is defined in :mod:`localization.theory.assumptions`, which also
computes A1 by quadrature, A2 exactly for laws with finitely many atoms, and A3. For Gaussian-copula models
(NLGP, Kur) the conditional variance of :math:`\langle w,X\rangle` has no closed form: at Gauss–Hermite
nodes :math:`z` of :math:`Z_i` the latent :math:`Z_{-i}\mid Z_i=z` is sampled exactly, and two independent
halves give an unbiased estimate of :math:`(v(z)-v_{A2})^2` (:func:`a2_discrepancy_copula`,
:func:`a2_discrepancy`).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import data
from localization import validation as v
from localization.theory.assumptions import GaussianCopula, gaussian_copula, holds_exactly, normal_rule_hermite

__all__ = ["a2_discrepancy", "a2_discrepancy_copula"]


def a2_discrepancy_copula(
    key: jax.Array,
    copula: GaussianCopula,
    cov: ArrayLike,
    w: ArrayLike,
    i: int = 0,
    *,
    nodes: int = 24,
    num: int = 4000,
) -> float:
    r"""Estimate the A2 discrepancy :math:`D_2` (module docstring) of a Gaussian-copula model for weights ``w``.

    At ``nodes`` Gauss–Hermite nodes :math:`z` of :math:`Z_i` we draw ``num`` exact samples of
    :math:`Z_{-i}\mid Z_i=z`; two independent halves give unbiased :math:`\widehat{(v(z)-v_{A2})^2}`. The
    result's Monte Carlo standard error is about :math:`\sqrt{2/\text{num}}\,\max(1,\cdot)`-relative
    (≈ 0.03 for 4000).

    Parameters
    ----------
    key : JAX PRNG key of the conditional samples.
    copula : the model's :class:`~localization.theory.assumptions.GaussianCopula`
        (``theory.assumptions.gaussian_copula(model, n)``).
    cov : exact (N, N) covariance of X (``model.covariance(n)``).
    w : (N,) weights, with a non-zero entry off coordinate ``i``.
    i : the conditioning coordinate, in [0, N).
    nodes : Gauss–Hermite nodes, >= 2.
    num : conditional samples per node, >= 4.

    Returns
    -------
    float
        :math:`D_2 \ge 0`.
    """
    R = np.asarray(copula.latent, dtype=np.float64)
    N = R.shape[0]
    cov = np.asarray(v.float_array("cov", cov, ndim_min=2), dtype=np.float64)
    if cov.shape != (N, N):
        raise ValueError(f"cov must have shape ({N}, {N}), got {cov.shape}")
    w = np.asarray(v.float_array("w", w, ndim_min=1, last_dim=N), dtype=np.float64)
    if w.ndim != 1:
        raise ValueError(f"w must be a single weight vector of shape ({N},), got {w.shape}")
    i = v.integer("i", i, minimum=0)
    if i >= N:
        raise ValueError(f"i must be a coordinate index in [0, {N - 1}], got {i}")
    key = v.key("key", key)
    nodes = v.integer("nodes", nodes, minimum=2)
    num = v.integer("num", num, minimum=4)
    keep = np.arange(N) != i
    rho = R[i, keep]
    cond = R[np.ix_(keep, keep)] - np.outer(rho, rho)
    evals, evecs = np.linalg.eigh(cond)
    root = evecs * np.sqrt(np.clip(evals, 0, None))
    z, wz = normal_rule_hermite(nodes)
    # drawn flat and reshaped: XLA:CPU compiles a 4-D normal draw pathologically slowly (~30 s)
    shape = (nodes, 2, num // 2, N - 1)
    eps = np.asarray(jax.random.normal(key, (math.prod(shape),), dtype=jnp.float64)).reshape(shape)
    Z = z[:, None, None, None] * rho + eps @ root.T
    proj = copula.transform(Z) @ w[keep]  # (nodes, 2, M)
    var = proj.var(axis=-1, ddof=1)  # (nodes, 2)
    ci = cov[i]
    cond_cov = cov - np.outer(ci, ci) / cov[i, i]
    wk = w.copy()
    wk[i] = 0.0
    v_a2 = wk @ cond_cov @ wk
    if v_a2 <= 0:
        raise ValueError("w must have a non-zero component off coordinate i (v_A2 = 0)")
    sq = wz @ ((var[:, 0] - v_a2) * (var[:, 1] - v_a2))
    return float(np.sqrt(max(sq, 0.0)) / v_a2)


def a2_discrepancy(
    model: data.DataModel,
    n: int | tuple[int, ...],
    w: ArrayLike,
    i: int = 0,
    *,
    key: jax.Array | None = None,
    nodes: int = 24,
    num: int = 4000,
) -> float:
    r"""Return the A2 discrepancy :math:`D_2` of a data model for weights ``w`` (module docstring).

    Exact 0 for Gaussian and ±s-valued sign-symmetric models (Ising,
    ``theory.assumptions.holds_exactly``); conditional Monte Carlo at quadrature nodes for NLGP, Kur
    (:func:`a2_discrepancy_copula`).

    Parameters
    ----------
    model : a ``localization.data`` model.
    n : input size (int or grid tuple).
    w : (N,) weights.
    i : the conditioning coordinate.
    key : JAX PRNG key; needed only for models without an exact answer (keyword-only, default None).
    nodes, num : as :func:`a2_discrepancy_copula`.

    Returns
    -------
    float
        :math:`D_2 \ge 0`.
    """
    if holds_exactly(model):
        v.shape("n", n)
        return 0.0
    cop = gaussian_copula(model, n)
    if key is None:
        raise ValueError(f"key must be a JAX PRNG key for {type(model).__name__} (its D2 is estimated by Monte Carlo)")
    return a2_discrepancy_copula(key, cop, model.covariance(n), w, i, nodes=nodes, num=num)
