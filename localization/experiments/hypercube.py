r"""The hypercube chapter's back-end: Monte Carlo laws of :math:`\operatorname{sign}Z` on small rings.

The NLGP at :math:`g\to\infty` is :math:`X=\operatorname{sign}Z`, :math:`Z\sim\mathcal N(0,C(\xi))` with the
ring covariance of :mod:`localization.data.spectral`. Its law on :math:`\{-1,+1\}^n` is a closed form only
for :math:`n\le3` (:func:`localization.theory.hypercube_laws.nlgp_limit_law`, Sheppard's formula); for larger
:math:`n` it is estimated here by sampling :math:`Z`:

* :func:`nlgp_limit_law_mc` — the plain frequencies with their binomial standard errors;
* :func:`sign_gaussian_ring_law` — the frequencies averaged over the 4n ring symmetries;
* :func:`task_laws` — the two class laws of a hypercube task (exact for Ising, Monte Carlo for NLGP),
  the input of :mod:`localization.theory.hypercube_flow`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from localization import prng
from localization import validation as v
from localization.data.spectral import covariance_sqrt
from localization.theory import hypercube_flow, hypercube_laws

__all__ = ["FAMILIES", "nlgp_limit_law_mc", "sign_gaussian_ring_law", "task_laws"]

#: The task families with a hypercube law: exact Ising rings and the NLGP's g -> inf limit.
FAMILIES = ("Ising", "NLGP")


def _sign_counts(key: jax.Array, xi: float, n: int, num: int, min_n: int, max_n: int) -> tuple[np.ndarray, int, int]:
    """(2^n,) counts of the vertex sign(Z) over ``num`` draws, the number of draws and n."""
    n = v.integer("n", n, min_n)
    if n > max_n:
        raise ValueError(f"n must be <= {max_n} (exact enumeration of 2^n vertices), got {n}")
    key = v.key("key", key)
    num = v.integer("num", num, 2)
    z = np.asarray(prng.flat_normal(key, (num, n), jnp.float64)) @ np.asarray(covariance_sqrt(xi, n)).T
    index = ((z < 0).astype(np.int64) << np.arange(n)[None, :]).sum(axis=1)
    return np.bincount(index, minlength=2**n).astype(np.float64), num, n


def nlgp_limit_law_mc(key: jax.Array, xi: float, n: int, num: int = 1_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo law of sign(Z), Z ~ N(0, C(xi)) on the ring of n <= 6 sites.

    Parameters
    ----------
    key : JAX PRNG key of the draws.
    xi : length-scale of the ring covariance C(xi) (``data.spectral.covariance``), > 0.
    n : number of sites, 2 <= n <= 6.
    num : number of draws, >= 2.

    Returns
    -------
    (probabilities, standard_errors) : both (2^n,) float64; the standard error of each frequency is the
        binomial sqrt(p (1 - p) / num) at the estimate.
    """
    counts, num, _ = _sign_counts(key, xi, n, num, 1, 6)
    prob = counts / num
    return prob, np.sqrt(prob * (1 - prob) / num)


def sign_gaussian_ring_law(key: jax.Array, xi: float, n: int, num: int = 2_000_000) -> np.ndarray:
    r"""Monte Carlo law of :math:`\operatorname{sign}Z`, :math:`Z\sim\mathcal N(0,C(\xi))`, symmetrised.

    The frequencies on a ring of ``n`` <= 16 sites (the NLGP of ``data.spectral`` at :math:`g\to\infty`)
    are averaged over the 4n ring symmetries (``theory.hypercube_flow.ring_symmetry_images``), which the
    exact law has; every vertex keeps a positive weight only if it was drawn in some symmetric image (the
    law is otherwise unbiased).

    Parameters
    ----------
    key : JAX PRNG key of the draws.
    xi : length-scale of the ring covariance, > 0.
    n : number of sites, 2 <= n <= 16.
    num : number of draws, >= 2.

    Returns
    -------
    (2^n,) float64 probabilities summing to 1.
    """
    counts, _, n = _sign_counts(key, xi, n, num, 2, hypercube_laws.MAX_DIMENSION)
    sym = np.zeros(counts.size)
    for g in hypercube_flow.ring_symmetry_images(n):  # p_sym(x) = mean_g p(g x)
        sym += counts[g]
    return sym / sym.sum()


def task_laws(
    family: str,
    param: float,
    n: int,
    *,
    xi: tuple[float, float] = (1.0, 3.0),
    key: jax.Array | None = None,
    num: int = 2_000_000,
) -> hypercube_flow.HypercubeTask:
    r"""Build the hypercube counterpart of ``data.family_task(family, param, xi)`` on a ring of ``n`` sites.

    Parameters
    ----------
    family : ``"Ising"``: exact ring laws with couplings (0.3, ``param``); ``"NLGP"``: the
        :math:`g\to\infty` limit, :func:`sign_gaussian_ring_law` at ``xi = (xi0, xi1)``.
    param : the coupling J1 > 0.3 for Ising; for NLGP the finite gain of the SGD task, which does not
        enter.
    n : number of sites.
    xi : (xi0, xi1) with xi1 > xi0 (NLGP only; label 1 has the longer length-scale).
    key : JAX PRNG key of the NLGP draws (keyword-only: the exact Ising laws need none).
    num : draws per class (NLGP only).

    Returns
    -------
    :class:`~localization.theory.hypercube_flow.HypercubeTask`.
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    param = v.real_scalar("param", param)
    n = v.integer("n", n, 2)
    if family == "Ising":
        if not param > 0.3:
            raise ValueError(f"param (J1) must be > J0 = 0.3 for Ising, got {param}")
        laws = hypercube_laws.ising_ring_law(0.3, n), hypercube_laws.ising_ring_law(param, n)
        return hypercube_flow.HypercubeTask.of(*laws, n)
    if key is None:
        raise ValueError("key must be a JAX PRNG key for family 'NLGP' (its law is estimated by Monte Carlo)")
    xi0, xi1 = (v.positive("xi", x) for x in xi)
    if not xi1 > xi0:
        raise ValueError(f"xi must be (xi0, xi1) with xi1 > xi0 (label 1 has the longer length-scale), got {xi}")
    k0, k1 = jax.random.split(v.key("key", key))
    return hypercube_flow.HypercubeTask.of(
        sign_gaussian_ring_law(k0, xi0, n, num), sign_gaussian_ring_law(k1, xi1, n, num), n
    )
