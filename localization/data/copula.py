"""Gaussian-copula data models (paper Section 2.3): X_i = T(Z_i), Z ~ N(0, C(xi)).

One latent Gaussian with the periodised squared-exponential covariance C(xi) (see
:mod:`localization.data.spectral`) and one pointwise map T per family, shared by the sampler, the
exact covariance and the theory (:mod:`localization.theory.assumptions`):

- :class:`Gaussian`: T(z) = z;
- :class:`NLGP`: T(z) = erf(g z)/𝒵(g) (paper Eq. (3));
- :class:`Kur`: T(z) = q_k(Phi(z))/𝒵_k (paper Eq. (4));
- :class:`RootedKur`: Kur with the latent covariance given by its spectral amplitudes, an array leaf,
  so that a sweep over length-scales is one ``vmap``.

Exact covariance of a coordinate pair, :func:`copula_covariance`: E[h(Z1) h(Z2)], corr(Z1, Z2) = c.
Used for Kur(k) (and checked against the NLGP closed form). ``h`` is odd and smooth on each side
of 0 (it may be non-analytic at 0 and grow like exp(z^2/(2k)) in the tails).

Method. Write Z1 = a U + b V, Z2 = a U - b V with a = sqrt((1+c)/2), b = sqrt((1-c)/2) and
(U, V) = r (cos t, sin t) iid N(0, 1). Then

    E[h(Z1) h(Z2)] = (1/pi) int_0^pi dt int_0^1 dp  h(r (a cos t + b sin t)) h(r (a cos t - b sin t)),

with r = sqrt(-2 log p) (p = exp(-r^2/2) is uniform), using that the integrand is invariant under
(U, V) -> -(U, V) (h odd). The only non-smooth points are the rays where an argument vanishes,
t = atan(a/b) and t = pi - atan(a/b): the angular integral is split there, and every piece and the
radial integral use tanh-sinh rules, which converge double-exponentially despite the algebraic
endpoint singularities (``|z|^(k+1)`` at z = 0, ``p^(-2/k)`` growth at p -> 0).
"""

from __future__ import annotations

import abc
import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special as sp
from jax.typing import ArrayLike

from localization import validation as v
from localization.data import spectral
from localization.data.base import DataModel, concrete, family_parameter
from localization.data.marginals import (
    GaussianMarginal,
    KurMarginal,
    NLGPMarginal,
    kur_transform,
    nlgp_normaliser,
    nlgp_transform,
    takes_jax_path,
)
from localization.data.quadrature import tanh_sinh
from localization.pytree import pytree_dataclass, static_field

__all__ = ["CopulaModel", "Gaussian", "NLGP", "Kur", "RootedKur", "copula_covariance"]


def copula_covariance(
    h: Callable[[np.ndarray], np.ndarray], c: float, *, order: int = 160, variance: float | None = None
) -> float:
    """Return E[h(Z1) h(Z2)] for standard normals with correlation ``c`` in [-1, 1] (numpy ``h``).

    Parameters
    ----------
    h : Callable
        A vectorised NumPy function.
    c : float
        The correlation, in [-1, 1].
    order : int
        Nodes of each tanh-sinh rule.
    variance : float or None
        E[h(Z)^2] if known: returned exactly at c = ±1.

    Returns
    -------
    float
        The covariance.
    """
    c = float(c)
    if c == 0.0:
        return 0.0
    if c == 1.0 and variance is not None:
        return float(variance)
    if c == -1.0 and variance is not None:
        return -float(variance)
    a = math.sqrt(0.5 * (1.0 + c))
    b = math.sqrt(0.5 * (1.0 - c))
    # radial rule: p in (0, 1); r = sqrt(-2 log p), with p near 1 written as 1 - q
    dl, dr, wr = tanh_sinh(0.0, 1.0, order)
    small = dl < 0.5
    logp = np.where(small, np.log(np.where(small, dl, 1.0)), np.log1p(-np.where(small, 0.0, dr)))
    r = np.sqrt(-2.0 * logp)
    keep = wr > 0
    r, wr = r[keep], wr[keep]
    t1 = math.atan2(a, b)  # a cos t - b sin t = 0
    t2 = math.pi - t1  # a cos t + b sin t = 0
    edges = sorted({0.0, t1, t2, math.pi})
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        if hi - lo <= 0:
            continue
        tl, tr, wt = tanh_sinh(lo, hi, order)
        t = np.where(tl <= tr, lo + tl, hi - tr)
        k2 = wt > 0
        t, wt = t[k2], wt[k2]
        u = a * np.cos(t)
        v = b * np.sin(t)
        z1 = r[:, None] * (u + v)[None, :]
        z2 = r[:, None] * (u - v)[None, :]
        f = h(z1) * h(z2)
        total += float(np.sum(wr[:, None] * wt[None, :] * f))
    return total / math.pi


class CopulaModel(DataModel):
    """X_i = T(Z_i), Z ~ N(0, C(xi)): a Gaussian copula with length-scale ``xi`` (a static field).

    Subclasses define the pointwise map :meth:`transform` (JAX, traceable in the family parameter,
    and NumPy for quadratures) and the exact ``_covariance``. Two models of the same class differ only
    in ``xi`` and their family parameter, which lets :class:`~localization.data.LengthscaleTask` draw
    one latent normal per example for both classes.
    """

    lengthscale_name = "xi"

    def __post_init__(self) -> None:
        object.__setattr__(self, "xi", v.positive("xi", self.xi))

    @abc.abstractmethod
    def transform(self, z: ArrayLike) -> jax.Array | np.ndarray:
        """Return T(z), elementwise: a JAX array in, a JAX array out; a NumPy array in, float64 NumPy out."""

    @property
    def smoothed_transform(self) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
        """Return (mu, s) -> E[T(mu + s U)], U ~ N(0, 1), in closed form (NumPy), or None when there is none."""
        return None

    def latent_covariance(self, n: int | tuple[int, ...]) -> np.ndarray:
        """Return the (N, N) float64 covariance C(xi) of the latent Gaussian Z on ``n`` sites."""
        return spectral.covariance(self.xi, n)

    def _sample(self, key, num, shape, dtype, method):
        return self.transform(spectral.correlated_normals(key, num, shape, self.xi, dtype, method))


@pytree_dataclass
class Gaussian(CopulaModel):
    """X ~ N(0, C(xi)) with C the periodised squared-exponential kernel."""

    xi: float = static_field()

    @property
    def marginal(self) -> GaussianMarginal:
        """Return the coordinate law N(0, 1)."""
        return GaussianMarginal()

    def transform(self, z: ArrayLike) -> jax.Array | np.ndarray:
        """Return T(z) = z (NumPy input as float64)."""
        return z if takes_jax_path(z) else np.asarray(z, np.float64)

    @property
    def smoothed_transform(self) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """Return (mu, s) -> E[mu + s U] = mu."""
        return lambda mu, s: mu

    def _covariance(self, shape):
        return spectral.covariance_matrix(self.xi, shape)


@pytree_dataclass
class NLGP(CopulaModel):
    """Nonlinear Gaussian process (paper Eq. (3)): X_i = erf(g Z_i)/𝒵(g), Z ~ N(0, C(xi)).

    𝒵(g)^2 = (2/pi) arcsin(2g^2/(1+2g^2)) gives unit variance. Exact covariance
    E[X_i X_j] = (2/pi) arcsin(2 g^2 C_ij / (1 + 2 g^2)) / 𝒵(g)^2.
    (Ingrosso & Goldt's gain is sqrt(2) times this g.)
    """

    xi: float = static_field()
    gain: float

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "gain", family_parameter("gain", self.gain, v.positive))

    @property
    def marginal(self) -> NLGPMarginal:
        """Return the coordinate law of erf(g Z)/𝒵(g)."""
        return NLGPMarginal(concrete("gain", self.gain))

    def transform(self, z: ArrayLike) -> jax.Array | np.ndarray:
        """Return T(z) = erf(g z)/𝒵(g) (paper Eq. (3); :func:`nlgp_transform`)."""
        return nlgp_transform(z, self.gain)

    @property
    def smoothed_transform(self) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """Return (mu, s) -> E[T(mu + s U)] = erf(g mu/sqrt(1 + 2 g² s²))/𝒵(g)."""
        g = concrete("gain", self.gain)
        zn = float(nlgp_normaliser(g))
        # E[erf(g (mu + s U))] = erf(g mu / sqrt(1 + 2 g^2 s^2))
        return lambda mu, s: sp.erf(g * mu / np.sqrt(1 + 2 * g * g * s * s)) / zn

    def _covariance(self, shape):
        g = concrete("gain", self.gain)
        C = spectral.covariance_matrix(self.xi, shape)
        g2 = g * g
        num = np.arcsin(np.clip(2 * g2 * C / (1 + 2 * g2), -1, 1))
        return num / np.arcsin(2 * g2 / (1 + 2 * g2))


@functools.lru_cache(maxsize=4096)
def _kur_pair(k: float, c: float) -> float:
    """E[X_i X_j] of Kur(k) for latent correlation c (exact 2-D quadrature, cached)."""
    return copula_covariance(lambda z: kur_transform(z, k), c, variance=1.0)


@pytree_dataclass
class Kur(CopulaModel):
    """Gaussian copula with algebraic-sigmoid marginals (paper Eq. (4), App. A.2).

    X_i = q_k(Phi(Z_i)) / 𝒵_k with Z ~ N(0, C(xi)) (unit diagonal, so sigma~ = 1), q_k the inverse of
    F_k(y) = (1 + y/(1+|y|^k)^(1/k))/2, and the exact 𝒵_k^2 = E[Y^2] = B(3/k, 1-2/k)/k (k > 2).
    Excess kurtosis k B(5/k, 1-4/k)/B(3/k, 1-2/k)^2 - 3 (inf for 2 < k <= 4).
    """

    xi: float = static_field()
    k: float

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "k", family_parameter("k", self.k, v.kur_exponent))

    @property
    def marginal(self) -> KurMarginal:
        """Return the coordinate law Kur(k)."""
        return KurMarginal(concrete("k", self.k))

    def transform(self, z: ArrayLike) -> jax.Array | np.ndarray:
        """Return T(z), the Kur(k) copula map (:func:`kur_transform`), in ``z``'s dtype on the JAX path."""
        # the sampler's path computes in z's dtype (as NLGP's map does with its gain)
        return kur_transform(z, jnp.asarray(self.k, z.dtype) if takes_jax_path(z) else concrete("k", self.k))

    def _covariance(self, shape):
        k = concrete("k", self.k)
        C = spectral.covariance_matrix(self.xi, shape)
        vals, inv = np.unique(np.round(C, 15), return_inverse=True)
        cov = np.array([_kur_pair(k, float(np.clip(c, -1, 1))) for c in vals])
        return cov[inv].reshape(C.shape)


@pytree_dataclass
class RootedKur(DataModel):
    """Kur(k) with the latent covariance given by its spectral amplitudes (an array) instead of ξ.

    ``RootedKur.of(xi, k, n)`` samples exactly what ``Kur(xi, k)`` samples for the same key (the latent
    Gaussian is ``(G * amplitudes) @ Q^T`` with ``G = spectral.standard_normals(key, (num, N))``, ``Q``
    the real Fourier basis and ``amplitudes`` the square roots of the covariance's eigenvalues; then
    the copula map of paper Eq. (4)). ``amplitudes``, ``k`` and ``xi`` are pytree leaves, so a stack of
    these models with different length-scales can be trained in one ``vmap``
    (:func:`localization.train.train_sweep`). 1-D inputs only.

    Attributes
    ----------
    amplitudes : (N,) non-negative spectral amplitudes (the covariance is ``Q diag(amplitudes**2) Q^T``).
    k : Kur exponent (> 2).
    xi : the length-scale the root was built from (NaN if unknown; used by ``covariance``).
    """

    lengthscale_name = "xi"

    amplitudes: Any
    k: Any
    xi: Any = math.nan

    @classmethod
    def of(cls, xi: float, k: float, n: int) -> RootedKur:
        """Return the rooted version of ``Kur(xi, k)`` on ``n`` sites."""
        xi = v.positive("xi", xi)
        n = v.integer("n", n, 2)
        k = v.kur_exponent("k", k)
        return cls(amplitudes=np.asarray(spectral.grid_amplitudes(xi, (n,)), dtype=np.float64), k=k, xi=xi)

    @property
    def marginal(self) -> KurMarginal:
        """Return the coordinate law Kur(k)."""
        return KurMarginal(concrete("k", self.k))

    def check_shape(self, shape: tuple[int, ...]) -> None:
        """Raise ``ValueError`` unless ``shape`` is (N,), N the size of ``amplitudes``."""
        N = int(np.shape(self.amplitudes)[-1])
        if shape != (N,):
            raise ValueError(f"n must be {N} (the size of amplitudes) for RootedKur, got {shape}")

    def _sample(self, key, num, shape, dtype, method):
        g = spectral.standard_normals(key, (num, shape[0]), dtype)  # the same draws as Kur
        z = spectral.to_sites(g * jnp.asarray(self.amplitudes, dtype), shape, method)
        return kur_transform(z, jnp.asarray(self.k, dtype))

    def _covariance(self, shape):
        xi = float(self.xi)
        if not math.isfinite(xi):
            raise ValueError("covariance needs the length-scale xi of a RootedKur built with RootedKur.of")
        return Kur(xi=xi, k=float(self.k)).covariance(shape[0])
