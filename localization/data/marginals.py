"""Marginal laws of one coordinate X_i of the data models, with exact statistics.

Every marginal is symmetric (sign-symmetry S3) and standardised to unit variance. Each object
offers

- ``variance``, ``fourth_moment``, ``excess_kurtosis``: exact (closed forms, or scipy adaptive
  quadrature to ~1e-13 relative; never sampling); ``math.inf`` where the moment diverges;
- ``quadrature(order)``: float64 numpy ``(nodes, weights)`` with ``sum(weights * f(nodes)) ~ E[f(X)]``
  to ~1e-12 for smooth ``f`` of at most linear growth (the amplifier of paper Eq. (6) needs
  ``f(x) = x erf(c x)``). Continuous laws use double-exponential (tanh-sinh) quadrature in
  *upper-tail probability* ``p = P(X > x) in (0, 1/2)`` with an upper quantile ``Q(p)`` that is
  accurate in the tails, plus symmetry (nodes come in pairs ``+-Q(p)``); NLGP adds breakpoints at
  ``z = c/g``; the sphere marginal uses Gauss-Jacobi. Discrete laws return their atoms exactly.
- ``expect(f, order=None)``, ``sample(key, num, dtype)``, ``pdf(x)`` (where a density exists),
  ``is_discrete``.
"""

from __future__ import annotations

import abc
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special as sp
from jax.typing import ArrayLike, DTypeLike

from localization import prng
from localization import validation as v
from localization.data.quadrature import DEFAULT_ORDER, adaptive_quad, symmetric_from_upper

__all__ = [
    "Marginal",
    "GaussianMarginal",
    "NLGPMarginal",
    "KurMarginal",
    "RademacherMarginal",
    "StudentTMarginal",
    "takes_jax_path",
    "nlgp_normaliser",
    "nlgp_transform",
    "nlgp_excess_kurtosis",
    "kur_normaliser",
    "kur_transform",
    "kur_excess_kurtosis",
    "kur_excess_kurtosis_zero",
]


# --------------------------------------------------------------------------------------------
# base class
# --------------------------------------------------------------------------------------------
class Marginal(abc.ABC):
    """Base class: exact statistics of a symmetric unit-variance law (see module docstring).

    A subclass defines ``second_moment``, ``fourth_moment``, ``_quadrature(order)`` and
    ``_sample(key, num, dtype)``.
    """

    is_discrete = False

    @property
    @abc.abstractmethod
    def second_moment(self) -> float:
        """E[X^2]."""

    @property
    def variance(self) -> float:
        """E[X^2] (the mean is 0 by symmetry); equals 1 up to rounding for every model."""
        return self.second_moment

    @property
    @abc.abstractmethod
    def fourth_moment(self) -> float:
        """E[X^4] (math.inf where it diverges)."""

    @property
    def kurtosis(self) -> float:
        """Return the kurtosis E[X^4]/E[X^2]^2 (math.inf when the fourth moment diverges)."""
        m4 = self.fourth_moment
        return math.inf if math.isinf(m4) else m4 / self.variance**2

    @property
    def excess_kurtosis(self) -> float:
        """E[X^4]/E[X^2]^2 - 3 (exact; math.inf when the fourth moment diverges)."""
        k = self.kurtosis
        return math.inf if math.isinf(k) else k - 3.0

    @property
    def mean_absolute(self) -> float:
        """Return ``E|X|`` (half the radial constant of an elliptical law, ``theory.gaussian``).

        By default the quadrature of ``abs(x)``, accurate for rules built symmetric about 0 on each half-line; laws
        whose rule has a node interval across 0 override it with a closed form.
        """
        return self.expect(np.abs)

    def quadrature(self, order: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(nodes, weights): float64 numpy arrays with sum(w f(x)) ~ E[f(X)]."""
        order = DEFAULT_ORDER if order is None else v.integer("order", order, 8)
        nodes, weights = self._quadrature(order)
        nodes.setflags(write=False)
        weights.setflags(write=False)
        return nodes, weights

    def expect(self, f: Callable, order: int | None = None) -> float:
        """E[f(X)] via ``quadrature(order)`` (f vectorised over numpy arrays)."""
        x, w = self.quadrature(order)
        return float(np.sum(w * f(x)))

    def sample(self, key: jax.Array, num: int, dtype: DTypeLike = jnp.float64) -> jax.Array:
        """``num`` iid draws, shape (num,)."""
        key = v.key("key", key)
        num = v.integer("num", num, 1)
        dtype = v.floating_dtype("dtype", dtype)
        return self._sample(key, num, dtype)

    @abc.abstractmethod
    def _quadrature(self, order: int) -> tuple[np.ndarray, np.ndarray]:
        """(nodes, weights) of a rule with ``order`` nodes per panel."""

    @abc.abstractmethod
    def _sample(self, key, num: int, dtype):
        """(num,) iid draws (arguments already validated)."""


# --------------------------------------------------------------------------------------------
# Gaussian
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GaussianMarginal(Marginal):
    """Standard normal N(0, 1)."""

    second_moment = 1.0
    fourth_moment = 3.0
    mean_absolute = math.sqrt(2.0 / math.pi)

    def pdf(self, x: ArrayLike) -> np.ndarray:
        """Return the density exp(-x^2/2)/sqrt(2 pi) at ``x`` (float64, the shape of ``x``)."""
        return np.exp(-0.5 * np.asarray(x) ** 2) / math.sqrt(2 * math.pi)

    def upper_quantile(self, p: ArrayLike) -> np.ndarray:
        """Return the x with P(X > x) = ``p`` (``p`` in (0, 1); the shape of ``p``)."""
        return -sp.ndtri(p)

    def _quadrature(self, order):
        return symmetric_from_upper(self.upper_quantile, [sp.ndtr(-1.0), sp.ndtr(-3.0)], order)

    def _sample(self, key, num, dtype):
        return jax.random.normal(key, (num,), dtype)


# --------------------------------------------------------------------------------------------
# NLGP
# --------------------------------------------------------------------------------------------
def nlgp_normaliser(gain: ArrayLike) -> jax.Array:
    """Return 𝒵(g) = sqrt(E[erf(gZ)^2]) = sqrt((2/pi) arcsin(2 g^2 / (1 + 2 g^2))), Z ~ N(0, 1).

    jnp-traceable in ``gain`` (used inside jitted samplers). Paper Eq. (3).
    """
    g2 = jnp.asarray(gain) ** 2
    return jnp.sqrt((2.0 / jnp.pi) * jnp.arcsin(2.0 * g2 / (1.0 + 2.0 * g2)))


def takes_jax_path(z: ArrayLike, *params: ArrayLike) -> bool:
    """Tell whether a copula map runs in JAX (True) or in SciPy float64 (False).

    True when ``z`` is a JAX array or any parameter is traced: the map then runs in JAX (traceable, in
    ``z``'s dtype, the samplers' path); NumPy input runs in SciPy float64 (the quadratures' path).

    Parameters
    ----------
    z : ArrayLike
        Argument of the map.
    *params : ArrayLike
        The law's parameters (e.g. the gain).

    Returns
    -------
    bool
        Whether to take the JAX path.
    """
    return isinstance(z, (jax.Array, jax.core.Tracer)) or any(isinstance(p, jax.core.Tracer) for p in params)


def nlgp_transform(z: ArrayLike, gain: ArrayLike) -> jax.Array | np.ndarray:
    """Apply the NLGP copula map z -> erf(g z)/𝒵(g) (paper Eq. (3)).

    JAX arrays (traceable in ``gain``, the samplers' path) or NumPy arrays (SciPy, float64; the
    theory's quadratures) in, the same kind out.
    """
    if takes_jax_path(z, gain):
        g = jnp.asarray(gain, z.dtype)
        return _nlgp_transform_jax(z, g, (1.0 / nlgp_normaliser(g)).astype(z.dtype))
    g = float(gain)
    return sp.erf(g * np.asarray(z, np.float64)) / float(nlgp_normaliser(g))


# The JAX paths of the copula maps are compiled once per shape and dtype: called eagerly (a sample
# drawn outside a jitted loop), each of their operations would be compiled for every new shape.
@jax.jit
def _nlgp_transform_jax(z: jax.Array, g: jax.Array, scale: jax.Array) -> jax.Array:
    return jax.lax.erf(g * z) * scale


def _nlgp_raw_moment(gain: float, power: int) -> float:
    """E[erf(gZ)^power] by adaptive quadrature with breakpoints at z = c/g."""
    g = float(gain)
    zmax = 40.0
    pts = sorted({min(c / g, zmax / 2) for c in (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)} | {1.0, 3.0, 6.0})

    def f(z):
        return 2.0 * sp.erf(g * z) ** power * math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)

    # piecewise adaptive quadrature on [0, zmax]; the Gaussian weight is < 1e-340 beyond
    edges = [0.0] + [p for p in pts if 0 < p < zmax] + [zmax]
    return sum(adaptive_quad(f, a, b) for a, b in zip(edges[:-1], edges[1:], strict=True))


@functools.lru_cache(maxsize=256)
def _nlgp_moments(gain: float):
    m2 = _nlgp_raw_moment(gain, 2)
    m4 = _nlgp_raw_moment(gain, 4)
    Z2 = float(nlgp_normaliser(gain)) ** 2
    return m2 / Z2, m4 / Z2**2


def nlgp_excess_kurtosis(gain: float) -> float:
    """Return the excess kurtosis of erf(gZ): E[erf(gZ)^4]/E[erf(gZ)^2]^2 - 3 (adaptive quadrature, ~1e-13).

    E[erf(gZ)^4] is a 4-variate orthant probability with no elementary closed form; it is computed
    by scipy quadrature. Ranges from 0 (g -> 0, Gaussian) to -2 (g -> inf, Rademacher).
    """
    g = v.positive("gain", gain)
    m2, m4 = _nlgp_moments(g)
    return m4 / m2**2 - 3.0


@dataclass(frozen=True)
class NLGPMarginal(Marginal):
    """Law of X = erf(g Z)/𝒵(g), Z ~ N(0, 1) (paper Eq. (3)); support (-1/𝒵, 1/𝒵)."""

    gain: float

    def __post_init__(self):
        object.__setattr__(self, "gain", v.positive("gain", self.gain))

    @property
    def normaliser(self) -> float:
        """Return 𝒵(g) (:func:`nlgp_normaliser`)."""
        return float(nlgp_normaliser(self.gain))

    @property
    def second_moment(self) -> float:
        """Return E[X^2] by quadrature (1 up to rounding)."""
        return _nlgp_moments(self.gain)[0]

    @property
    def fourth_moment(self) -> float:
        """Return E[X^4] by quadrature."""
        return _nlgp_moments(self.gain)[1]

    def upper_quantile(self, p: ArrayLike) -> np.ndarray:
        """Return the x with P(X > x) = ``p``: erf(-g Φ^-1(p))/𝒵 (the shape of ``p``)."""
        return sp.erf(-self.gain * sp.ndtri(p)) / self.normaliser

    def pdf(self, x: ArrayLike) -> np.ndarray:
        """Density of X: with y = 𝒵 x = erf(g z), p(x) = 𝒵 phi(z) / (g * 2/sqrt(pi) exp(-g^2 z^2))."""
        x = np.asarray(x, dtype=np.float64)
        Zn = self.normaliser
        y = Zn * x
        inside = np.abs(y) < 1
        z = np.where(inside, sp.erfinv(np.where(inside, y, 0.0)) / self.gain, 0.0)
        dens = (
            Zn
            * np.exp(-0.5 * z * z + (self.gain * z) ** 2)
            * math.sqrt(math.pi)
            / (2 * self.gain * math.sqrt(2 * math.pi))
        )
        return np.where(inside, dens, 0.0)

    def _quadrature(self, order):
        g = self.gain
        zs = {c / g for c in (0.25, 0.5, 1.0, 2.0, 4.0)} | {1.0, 3.0}
        breaks = [sp.ndtr(-z) for z in zs if z < 8.0]
        return symmetric_from_upper(self.upper_quantile, breaks, order)

    def _sample(self, key, num, dtype):
        z = jax.random.normal(key, (num,), dtype)
        return nlgp_transform(z, self.gain)


# --------------------------------------------------------------------------------------------
# Kur(k): generalised algebraic sigmoid CDF  F_k(y) = (1 + y / (1 + |y|^k)^(1/k)) / 2
# --------------------------------------------------------------------------------------------
def _kur_raw_moment(k: float, m: int) -> float:
    """Return E[Y^m] (m even) for Y with CDF F_k: (1/k) B((m+1)/k, 1 - m/k); inf if m >= k.

    Derivation: Y = q_k(U); for u > 1/2 put s = 2u - 1, y = s / (1 - s^k)^(1/k); then t = s^k gives
    E[Y^m] = int_0^1 s^m (1 - s^k)^(-m/k) ds = (1/k) int_0^1 t^((m+1)/k - 1) (1-t)^(-m/k) dt.
    """
    if m >= k:
        return math.inf
    return math.exp(sp.betaln((m + 1) / k, 1 - m / k)) / k


def kur_excess_kurtosis(k: float) -> float:
    """Return the exact excess kurtosis of Kur(k): k B(5/k, 1-4/k) / B(3/k, 1-2/k)^2 - 3; inf for 2 < k <= 4."""
    k = v.kur_exponent("k", k)
    m2 = _kur_raw_moment(k, 2)
    m4 = _kur_raw_moment(k, 4)
    return math.inf if math.isinf(m4) else m4 / m2**2 - 3.0


@functools.lru_cache(maxsize=1)
def kur_excess_kurtosis_zero() -> float:
    """Return the k* where the excess kurtosis of Kur(k) changes sign (positive for 4 < k < k*), by brentq."""
    from scipy.optimize import brentq

    return brentq(kur_excess_kurtosis, 5.0, 7.0, xtol=1e-15, rtol=4 * np.finfo(float).eps)


def kur_normaliser(k: ArrayLike) -> jax.Array:
    """Return 𝒵_k = sqrt(E[Y^2]) = sqrt(B(3/k, 1 - 2/k) / k); jnp-traceable in k."""
    k = jnp.asarray(k)
    return jnp.sqrt(jnp.exp(jax.scipy.special.betaln(3.0 / k, 1.0 - 2.0 / k)) / k)


@jax.jit
def _kur_transform_jax(z: jax.Array, k: ArrayLike, normaliser: jax.Array) -> jax.Array:
    """:func:`kur_transform`'s JAX path (compiled once per shape and dtype, as :func:`_nlgp_transform_jax`)."""
    e = jax.lax.erfc(jnp.abs(z) * (1.0 / math.sqrt(2.0)))
    one_minus_sk = -jnp.expm1(k * jnp.log1p(-e))
    x = (1.0 - e) * jnp.exp(-jnp.log(one_minus_sk) / k)
    return (jnp.sign(z) * x / normaliser).astype(z.dtype)


def kur_transform(z: ArrayLike, k: ArrayLike) -> jax.Array | np.ndarray:
    """Apply the copula map z -> q_k(Phi(z)) / 𝒵_k (paper Eq. (4)), accurate in the tails and in float32.

    With ``e = erfc(|z|/sqrt 2) = 2 P(Z > |z|)``: ``s = 2 Phi(|z|) - 1 = 1 - e`` and
    ``1 - s^k = -expm1(k log1p(-e))``, so ``q = sign(z) (1 - e) (1 - s^k)^(-1/k)``. JAX arrays (traceable in
    ``k``, the samplers' path) or NumPy arrays (SciPy, float64; quadratures) in, the same kind out.
    """
    if takes_jax_path(z, k):
        return _kur_transform_jax(z, k, kur_normaliser(k))
    k = float(k)
    z = np.asarray(z, dtype=np.float64)
    e = sp.erfc(np.abs(z) / math.sqrt(2.0))
    with np.errstate(divide="ignore"):  # z = 0: log1p(-1) = -inf, and the result is exactly 0
        one_minus_sk = -np.expm1(k * np.log1p(-e))
        x = np.sign(z) * (1.0 - e) * one_minus_sk ** (-1.0 / k)
    return x / math.sqrt(_kur_raw_moment(k, 2))


@dataclass(frozen=True)
class KurMarginal(Marginal):
    """Law of X = q_k(U)/𝒵_k, U uniform; CDF of 𝒵_k X is F_k (paper Eq. (4), App. A.2).

    Density of ``Y = 𝒵_k X``: ``f_k(y) = (1/2) (1 + |y|**k)**(-(k+1)/k)``; tail ``~ |y|**(-k-1) / 2``, so
    ``E|Y|**m < inf`` iff ``m < k``: variance finite iff k > 2, fourth moment finite iff k > 4.
    """

    k: float

    def __post_init__(self):
        object.__setattr__(self, "k", v.kur_exponent("k", self.k))

    @property
    def normaliser(self) -> float:
        """Return 𝒵_k = sqrt(E[Y^2]), Y the unnormalised Kur(k) variable."""
        return math.sqrt(_kur_raw_moment(self.k, 2))

    @property
    def second_moment(self) -> float:
        """Return E[X^2] (1 up to rounding)."""
        return _kur_raw_moment(self.k, 2) / self.normaliser**2

    @property
    def fourth_moment(self) -> float:
        """Return E[X^4] (math.inf for k <= 4)."""
        m4 = _kur_raw_moment(self.k, 4)
        return math.inf if math.isinf(m4) else m4 / self.normaliser**4

    def upper_quantile(self, p: ArrayLike) -> np.ndarray:
        """Return the x with P(X > x) = ``p`` in closed form (the shape of ``p``)."""
        k = self.k
        p = np.asarray(p, dtype=np.float64)
        s = 1.0 - 2.0 * p
        with np.errstate(divide="ignore"):  # p = 1/2 gives log1p(-1) = -inf -> exactly 0
            one_minus_sk = -np.expm1(k * np.log1p(-2.0 * p))
        return s * one_minus_sk ** (-1.0 / k) / self.normaliser

    def cdf(self, x: ArrayLike) -> np.ndarray:
        """Return ``P(X <= x) = (1 + y/(1 + |y|**k)**(1/k))/2``, ``y = 𝒵_k x`` (the shape of ``x``)."""
        y = np.asarray(x, dtype=np.float64) * self.normaliser
        return 0.5 * (1.0 + y / (1.0 + np.abs(y) ** self.k) ** (1.0 / self.k))

    def pdf(self, x: ArrayLike) -> np.ndarray:
        """Return the density 𝒵_k f_k(𝒵_k x) at ``x`` (float64, the shape of ``x``)."""
        Zn = self.normaliser
        y = np.asarray(x, dtype=np.float64) * Zn
        return Zn * 0.5 * (1.0 + np.abs(y) ** self.k) ** (-(self.k + 1.0) / self.k)

    def _quadrature(self, order):
        # breakpoints where Y = 1 and Y = 4 (the bend of the quantile)
        k = self.k
        breaks = [0.5 * (1.0 - y / (1.0 + y**k) ** (1.0 / k)) for y in (1.0, 4.0)]
        return symmetric_from_upper(self.upper_quantile, breaks, order)

    def _sample(self, key, num, dtype):
        z = jax.random.normal(key, (num,), dtype)
        return kur_transform(z, self.k)


# --------------------------------------------------------------------------------------------
# +-1 (Ising, single pulse, NLGP g -> inf)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RademacherMarginal(Marginal):
    """Uniform law on {-1, +1}: variance 1, excess kurtosis -2 (the minimum possible)."""

    is_discrete = True
    second_moment = 1.0
    fourth_moment = 1.0

    def _quadrature(self, order):
        return np.array([-1.0, 1.0]), np.array([0.5, 0.5])

    def _sample(self, key, num, dtype):
        return jnp.where(jax.random.bernoulli(key, 0.5, (num,)), 1.0, -1.0).astype(dtype)


# --------------------------------------------------------------------------------------------
# Student t (marginal of the multivariate t; independent of the dimension)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StudentTMarginal(Marginal):
    """X = sqrt((nu-2)/nu) T, T ~ t(nu): unit variance (needs nu > 2); excess kurtosis 6/(nu-4) (nu > 4)."""

    nu: float

    def __post_init__(self):
        object.__setattr__(self, "nu", v.student_dof("nu", self.nu))

    @property
    def scale(self) -> float:
        """Return sqrt((nu-2)/nu), the factor that gives T unit variance."""
        return math.sqrt((self.nu - 2.0) / self.nu)

    second_moment = property(lambda self: 1.0)

    @property
    def fourth_moment(self) -> float:
        """Return E[X^4] = 3 (nu-2)/(nu-4) (math.inf for nu <= 4)."""
        nu = self.nu
        return math.inf if nu <= 4 else 3.0 * (nu - 2.0) / (nu - 4.0)

    def upper_quantile(self, p: ArrayLike) -> np.ndarray:
        """Return the x with P(X > x) = ``p`` via the inverse regularised beta function (the shape of ``p``)."""
        nu = self.nu
        p = np.asarray(p, dtype=np.float64)
        lo = p < 0.25
        w = np.where(lo, sp.betaincinv(nu / 2, 0.5, 2 * p), 0.0)  # accurate when small
        v = np.where(lo, 0.0, sp.betaincinv(0.5, nu / 2, 1 - 2 * p))
        w = np.where(lo, w, 1.0 - v)
        v = np.where(lo, 1.0 - w, v)
        return np.sqrt(nu * v / w) * self.scale

    def pdf(self, x: ArrayLike) -> np.ndarray:
        """Return the density of the scaled Student t at ``x`` (float64, the shape of ``x``)."""
        nu, c = self.nu, self.scale
        t = np.asarray(x, dtype=np.float64) / c
        logc = sp.gammaln((nu + 1) / 2) - sp.gammaln(nu / 2) - 0.5 * math.log(nu * math.pi)
        return np.exp(logc - (nu + 1) / 2 * np.log1p(t * t / nu)) / c

    def _quadrature(self, order):
        return symmetric_from_upper(self.upper_quantile, [0.1, 0.01], order)

    def _sample(self, key, num, dtype):
        k1, k2 = jax.random.split(key)
        z = jax.random.normal(k1, (num,), dtype)
        g = prng.gamma(k2, self.nu / 2, (num,), dtype)
        return z * jnp.sqrt((self.nu - 2.0) / (2.0 * g)).astype(dtype)
