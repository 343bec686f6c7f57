r"""Laws on the hypercube :math:`\{-1, +1\}^n` (notes 002 §2–3), the inputs of the threshold mean.

A law is a vector of :math:`2^n` probabilities, one per vertex, in the order of :func:`vertices`
(vertex ``k`` has :math:`x_i = 1 - 2\,\mathrm{bit}_i(k)`), or a callable mapping the vertices to them;
:func:`law_probabilities` checks either. The threshold mean :math:`f(w)` of such a law and its
closed forms are :mod:`localization.theory.hypercube`; the neuron's exact flow on a pair of laws is
:mod:`localization.theory.hypercube_flow`. Enumeration is exact and float64, for
:math:`n \le` :data:`MAX_DIMENSION`.

The laws: :func:`uniform_law` (iid signs), :func:`ising_ring_law` (exact Boltzmann weights of the periodic
chain), :func:`_sign_gaussian_law` / :func:`nlgp_limit_law` (the law of :math:`\operatorname{sign} Z`,
:math:`Z\sim\mathcal N(0, C)`: NLGP at :math:`g\to\infty`; exact orthant probabilities for
:math:`n \le 3` by Sheppard's formula and its trivariate extension); their Monte Carlo estimate for
:math:`n \le 6` is ``localization.experiments.hypercube.nlgp_limit_law_mc``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.data.spectral import covariance as _latent_covariance

__all__ = [
    "MAX_DIMENSION",
    "check_dimension",
    "vertices",
    "law_probabilities",
    "uniform_law",
    "ising_ring_law",
    "nlgp_limit_law",
]

MAX_DIMENSION = 16
"""Largest n enumerated: the preactivation table has 2^n entries per w (65 536 at n = 16)."""


def check_dimension(n: Any, maximum: int = MAX_DIMENSION) -> int:
    """Return the dimension ``n`` of a hypercube that can be enumerated, or raise.

    Parameters
    ----------
    n : Any
        The dimension, an integer in [1, ``maximum``].
    maximum : int
        The largest allowed n (default :data:`MAX_DIMENSION`).

    Returns
    -------
    int
        ``n``.
    """
    n = v.integer("n", n, 1)
    if n > maximum:
        raise ValueError(f"n must be <= {maximum} (exact enumeration of 2^n vertices), got {n}")
    return n


def vertices(n: int) -> np.ndarray:
    """(2^n, n) float64 array of all vertices of {-1, +1}^n; row k has x_i = 1 - 2 bit_i(k).

    Parameters
    ----------
    n : int
        Dimension, 1 <= n <= :data:`MAX_DIMENSION`.

    Returns
    -------
    np.ndarray
        (2^n, n) float64 vertices.
    """
    n = check_dimension(n)
    k = np.arange(2**n)[:, None]
    return (1 - 2 * ((k >> np.arange(n)[None, :]) & 1)).astype(np.float64)


def law_probabilities(p: ArrayLike, n: int) -> np.ndarray:
    """Validate a law on {-1, +1}^n and return its (2^n,) float64 probabilities.

    ``p`` is either an array of 2^n probabilities (non-negative, finite, summing to 1 within 1e-9,
    ordered as :func:`vertices`) or a callable mapping the (2^n, n) vertex array to (2^n,)
    non-negative weights (normalised here; their sum must be positive).

    Parameters
    ----------
    p : ArrayLike or Callable
        (2^n,) probabilities, or a callable giving (2^n,) weights of the vertices.
    n : int
        Dimension, 1 <= n <= :data:`MAX_DIMENSION`.

    Returns
    -------
    np.ndarray
        (2^n,) float64 probabilities, ordered as :func:`vertices`.
    """
    n = check_dimension(n)
    if callable(p):
        w = np.asarray(p(vertices(n)), dtype=np.float64)
        if w.shape != (2**n,):
            raise ValueError(f"p(vertices) must have shape ({2**n},), got {w.shape}")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError("p(vertices) must be finite, non-negative weights with a positive sum")
        return w / w.sum()
    w = np.asarray(p, dtype=np.float64)
    if w.shape != (2**n,):
        raise ValueError(f"p must have shape ({2**n},) for n = {n}, got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("p must be finite and non-negative")
    if abs(w.sum() - 1.0) > 1e-9:
        raise ValueError(f"p must sum to 1 (within 1e-9), got {w.sum()!r}")
    return w


def uniform_law(n: int) -> np.ndarray:
    """Return the (2^n,) probabilities of iid uniform signs (all 2^-n).

    Parameters
    ----------
    n : int
        Dimension.

    Returns
    -------
    np.ndarray
        (2^n,) float64.
    """
    n = check_dimension(n)
    return np.full(2**n, 2.0**-n)


def ising_ring_law(J: float, n: int) -> np.ndarray:
    r"""(2^n,) exact Boltzmann probabilities :math:`\propto \exp(J\sum_i x_i x_{i+1 \bmod n})`.

    The periodic chain of the paper's Ising model; for n = 2 the ring has the bond counted twice.
    Its correlations equal :func:`localization.data.ising_correlation` (transfer matrix).

    Parameters
    ----------
    J : float
        Coupling.
    n : int
        Ring size, 2 <= n <= 16.

    Returns
    -------
    np.ndarray
        (2^n,) float64 probabilities, ordered as :func:`vertices`.
    """
    J = v.real_scalar("J", J)
    n = check_dimension(n, 16)
    if n < 2:
        raise ValueError(f"n must be >= 2 for a ring, got {n}")
    x = vertices(n)
    energy = np.sum(x * np.roll(x, -1, axis=1), axis=1)
    w = np.exp(J * (energy - energy.max()))
    return w / w.sum()


def _orthant(r: np.ndarray) -> float:
    """P(Z > 0) for Z ~ N(0, R), R a correlation matrix of size 1, 2 or 3 (Sheppard; trivariate)."""
    m = r.shape[0]
    if m == 1:
        return 0.5
    if m == 2:
        return 0.25 + math.asin(r[0, 1]) / (2 * math.pi)
    return 0.125 + sum(math.asin(r[i, j]) for i, j in ((0, 1), (0, 2), (1, 2))) / (4 * math.pi)


def _correlation(cov: ArrayLike, n_max: int) -> np.ndarray:
    c = np.asarray(v.finite_real_array("cov", cov), dtype=np.float64)
    if c.ndim != 2 or c.shape[0] != c.shape[1] or not 1 <= c.shape[0] <= n_max:
        raise ValueError(f"cov must be a square (n, n) matrix with 1 <= n <= {n_max}, got shape {c.shape}")
    if not np.allclose(c, c.T, atol=1e-12) or np.any(np.diag(c) <= 0):
        raise ValueError("cov must be symmetric with a positive diagonal")
    if np.linalg.eigvalsh(c).min() < -1e-10 * np.abs(c).max():
        raise ValueError("cov must be positive semi-definite")
    d = 1 / np.sqrt(np.diag(c))
    return np.clip(c * d[:, None] * d[None, :], -1.0, 1.0)


def _sign_gaussian_law(cov: ArrayLike) -> np.ndarray:
    r"""(2^n,) exact law of :math:`\operatorname{sign} Z`, :math:`Z\sim\mathcal N(0, C)`, n <= 3.

    Vertex :math:`x` has probability :math:`P(x\odot Z > 0)`, the positive orthant of the
    correlation :math:`R_{ij}x_ix_j`: :math:`\tfrac14 + \arcsin(\rho)/(2\pi)` for n = 2 (Sheppard)
    and :math:`\tfrac18 + \sum_{i<j}\arcsin(\rho_{ij})/(4\pi)` for n = 3. Larger n: use
    ``localization.experiments.hypercube.nlgp_limit_law_mc``.

    Parameters
    ----------
    cov : ArrayLike
        (n, n) covariance C of Z, n <= 3 (symmetric, positive diagonal, positive semi-definite).

    Returns
    -------
    np.ndarray
        (2^n,) float64 probabilities, ordered as :func:`vertices`.
    """
    r = _correlation(cov, 3)
    x = vertices(r.shape[0])
    return np.array([_orthant(r * np.outer(v, v)) for v in x])


def nlgp_limit_law(xi: float, n: int) -> np.ndarray:
    """Return the (2^n,) exact law of NLGP(g -> inf) = sign(Z), Z with the ring covariance C(xi); n <= 3.

    Parameters
    ----------
    xi, n : float, int
        Length-scale (> 0) of ``data.spectral``'s ring covariance; ring size n <= 3.

    Returns
    -------
    np.ndarray
        (2^n,) float64 probabilities, ordered as :func:`vertices`.
    """
    n = check_dimension(n, 3)
    return _sign_gaussian_law(_latent_covariance(xi, n))
