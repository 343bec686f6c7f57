"""Data models of paper Section 2.3 (and notes 001's single pulse), with exact statistics.

Every model is sign-symmetric (S3), translation-invariant on the periodic index set (S2) and has
unit marginal variance. Each model is a frozen dataclass registered as a JAX pytree:

- ``.sample(key, num, n, dtype=jnp.float64)`` -> ``(num, N)``, ``N = prod(n)``; ``n`` is an int or
  a tuple (periodic grid, flattened in row-major order). Pure and jittable with ``num``, ``n``,
  ``dtype`` static; any typed PRNG key (threefry, rbg, unsafe_rbg) or raw ``uint32[2]`` key.
- ``.marginal``: law of one coordinate (exact moments, quadrature; see ``_marginals``).
- ``.covariance(n)``: exact (N, N) float64 covariance of X (closed forms, the transfer matrix, or
  converged 2-D quadrature for the Kur copula).

Pytree layout: the length-scale ``xi`` (and ``dim``, pulse bounds) are *static* (hashable aux data:
a new value recompiles, and the covariance spectrum is a compile-time constant); the family parameters
``gain`` (NLGP), ``k`` (Kur), ``J`` (Ising) and ``nu`` (StudentT) are *leaves*, so they can be traced
and vmapped (e.g. a sweep over gains). Validation is skipped for traced values.

Covariance of the underlying Gaussian: the periodised squared-exponential kernel (see
``_covariance``), which is PSD for every xi > 0, unlike the paper's wrapped kernel
exp(-d^2/xi^2) (available as ``min_distance_covariance`` for comparison).

Speed: samplers draw standard normals once (``_std_normal``), scale them by the covariance's
spectral amplitudes and map them to the sites with one product by the fixed real Fourier basis
(per axis for grids); see ``_covariance``. The cost is dominated by the random bits
and the normal transform; see ``benchmarks/data_sampling.py`` and ``benchmarks/bench.py``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.special as _sp

import jax
import jax.numpy as jnp

from . import _covariance as _cov
from . import _prng
from . import _marginals as _m
from . import _validation as V
from ._copula import copula_covariance
from ._marginals import (
    GaussianMarginal,
    KurMarginal,
    Marginal,
    NLGPMarginal,
    RadialEllipticalMarginal,
    RademacherMarginal,
    SphereMarginal,
    StudentTMarginal,
    kur_excess_kurtosis,
    kur_excess_kurtosis_zero,
    kur_normaliser,
    kur_transform,
    nlgp_excess_kurtosis,
    nlgp_normaliser,
)

__all__ = [
    "covariance",
    "covariance_sqrt",
    "fourier_basis",
    "spectral_amplitudes",
    "min_distance_covariance",
    "Gaussian",
    "NLGP",
    "Kur",
    "Ising",
    "StudentT",
    "EllipseSurface",
    "RadialElliptical",
    "SinglePulse",
    "LengthscaleTask",
    "Marginal",
    "GaussianMarginal",
    "NLGPMarginal",
    "KurMarginal",
    "RademacherMarginal",
    "StudentTMarginal",
    "SphereMarginal",
    "RadialEllipticalMarginal",
    "nlgp_normaliser",
    "nlgp_excess_kurtosis",
    "kur_normaliser",
    "kur_excess_kurtosis",
    "kur_excess_kurtosis_zero",
    "ising_correlation",
]


# --------------------------------------------------------------------------------------------
# covariance of the underlying Gaussian
# --------------------------------------------------------------------------------------------
def covariance(xi, n) -> np.ndarray:
    """(N, N) float64 covariance of the underlying Gaussian (unit diagonal, PSD for every xi > 0).

    Periodised kernel k(d) = sum_m exp(-(d + mL)^2/xi^2) / sum_m exp(-(mL)^2/xi^2) (circulant;
    Kronecker product over axes for a grid). Replaces the paper's wrapped kernel of Section 2.3,
    which is not PSD for xi comparable to L.
    """
    xi = V.positive("xi", xi)
    shape = V.shape("n", n)
    return _cov.covariance_matrix(xi, shape)


def covariance_sqrt(xi, n) -> np.ndarray:
    """(N, N) float64 symmetric square root R of ``covariance(xi, n)`` (R @ R = C; eigenvalues clipped at 0)."""
    xi = V.positive("xi", xi)
    shape = V.shape("n", n)
    return _cov.sqrt_matrix(xi, shape)


def fourier_basis(n) -> np.ndarray:
    """(N, N) float64 orthonormal real Fourier basis Q in which every covariance of this module is
    diagonal (the constant, cosine/sine pairs, the alternating column; Kronecker product over axes
    for a grid): ``covariance(xi, n) == Q @ diag(spectral_amplitudes(xi, n)**2) @ Q.T``."""
    return _cov.fourier_matrix(V.shape("n", n))


def spectral_amplitudes(xi, n) -> np.ndarray:
    """(N,) float64 amplitudes ``a >= 0``: the samplers draw the latent Gaussian as
    ``(G * a) @ fourier_basis(n).T`` with G iid N(0, 1), whose covariance is ``covariance(xi, n)``."""
    xi = V.positive("xi", xi)
    shape = V.shape("n", n)
    return np.array(_cov.spectral_amplitudes(xi, shape))


def min_distance_covariance(xi, n) -> np.ndarray:
    """The paper's wrapped kernel ``exp(-d**2 / xi**2)``, ``d = min(|i-j|, L-|i-j|)``. NOT PSD in general."""
    xi = V.positive("xi", xi)
    shape = V.shape("n", n)
    return _cov.min_distance_kernel(xi, shape)


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def _is_tracer(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def _param(name, value, check):
    """Validate a family parameter unless it is traced; arrays are validated elementwise."""
    if _is_tracer(value):
        return value
    if hasattr(value, "shape") and getattr(value, "shape", ()) != ():
        arr = np.asarray(value)
        if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
            raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
        for v in arr.ravel():
            check(name, float(v))
        return jnp.asarray(arr, dtype=jnp.float64)
    return check(name, value)


def _check_k(name, value):
    k = V.real_scalar(name, value)
    if k <= 2:
        raise ValueError(
            f"{name} must be > 2 (the variance of Kur(k) diverges for k <= 2; valid range: 2 < k < inf), got {k}"
        )
    return k


def _check_nu(name, value):
    nu = V.real_scalar(name, value)
    if nu <= 2:
        raise ValueError(f"{name} must be > 2 (unit variance needs a finite variance; valid range: 2 < nu < inf), got {nu}")
    return nu


def _sample_args(key, num, n, dtype):
    key = V.key("key", key)
    num = V.integer("num", num, 1)
    shape = V.shape("n", n)
    dtype = _m._check_dtype(dtype)
    return key, num, shape, dtype


def _amplitudes(xi: float, shape: tuple[int, ...], dtype):
    """(N,) spectral amplitudes sqrt(lambda) of ``covariance(xi, shape)`` (see ``_covariance``)."""
    return jnp.asarray(_cov.spectral_amplitudes(xi, shape), dtype)


def _to_sites(h, shape: tuple[int, ...]):
    """Rows of ``h`` (num, N), coefficients in the real Fourier basis, mapped to the sites: h @ Q^T
    (per axis on grids). With h = G * amplitudes, G iid N(0, 1), the rows have the covariance."""
    num, N = h.shape
    if len(shape) == 1:
        return h @ jnp.asarray(_cov.real_fourier_basis(shape[0])[0].T, h.dtype)
    z = h.reshape((num,) + shape)
    for ax, L in enumerate(shape):
        QT = jnp.asarray(_cov.real_fourier_basis(L)[0].T, h.dtype)
        z = jnp.moveaxis(jnp.tensordot(z, QT, axes=([ax + 1], [0])), -1, ax + 1)
    return z.reshape(num, N)


def _correlate(g, shape: tuple[int, ...], xi: float):
    """Rows of ``g`` (num, N), iid N(0, 1), made Gaussian with covariance ``covariance(xi, shape)``.

    Spectral form (one product with the fixed real Fourier basis); in law the same as ``g @ R`` with
    the symmetric root R, since an orthogonal map of iid normals is iid normal.
    """
    return _to_sites(g * _amplitudes(xi, shape, g.dtype), shape)


def _std_normal(key, shape, dtype):
    """iid N(0, 1) draws for the Gaussian(-copula) samplers.

    float32: ``localization._prng.normal`` (Box–Muller on one angle folded to [0, pi/2], one 64-bit
    SplitMix64/threefry word per draw; 2.6x faster on CPU than ``jax.random.normal``, whose XLA
    ``erf_inv`` dominates the sampling cost). Its law is symmetric with support |z| <= 5.77 and
    Kolmogorov distance to N(0, 1) at most 2^-23 before float32 rounding (max |z - ideal| 5e-7);
    see ``tests/test_prng.py``. Other dtypes (float64): ``jax.random.normal``.
    """
    return _prng.normal(key, shape, dtype)


def _correlated_normals(key, num: int, shape: tuple[int, ...], xi: float, dtype):
    """(num, N) Gaussian rows with covariance ``covariance(xi, shape)``: G @ R (per axis on grids)."""
    g = _std_normal(key, (num, math.prod(shape)), dtype)
    return _correlate(g, shape, xi)


def _unit_sphere_rows(key, num, shape, xi, dtype):
    """sqrt(N) * (G/|G|) @ R: elliptical direction with covariance C (rows of length N)."""
    N = math.prod(shape)
    g = jax.random.normal(key, (num, N), dtype)
    g = g * (math.sqrt(N) / jnp.linalg.norm(g, axis=1, keepdims=True))
    return _correlate(g, shape, xi)


def _register(cls, leaves: tuple[str, ...], static: tuple[str, ...]):
    """Register a frozen dataclass as a pytree; unflatten bypasses __init__ (tracers allowed)."""

    def flatten(obj):
        return tuple(getattr(obj, f) for f in leaves), tuple(getattr(obj, f) for f in static)

    def unflatten(aux, children):
        obj = object.__new__(cls)
        for f, v in zip(leaves, children):
            object.__setattr__(obj, f, v)
        for f, v in zip(static, aux):
            object.__setattr__(obj, f, v)
        return obj

    jax.tree_util.register_pytree_node(cls, flatten, unflatten)
    cls._leaf_fields = leaves
    cls._static_fields = static
    return cls


def _concrete(name, value) -> float:
    if _is_tracer(value) or np.ndim(value) != 0:
        raise TypeError(f"{name} must be a concrete scalar here (exact statistics use scipy), got {value!r}")
    return float(value)


class DataModel:
    """Base class of the data models (see module docstring)."""

    def sample(self, key, num, n, dtype=jnp.float64):
        """Draw ``num`` samples of the model on input size ``n``: array (num, prod(n)) of ``dtype``."""
        key, num, shape, dtype = _sample_args(key, num, n, dtype)
        self._check_shape(shape)
        return self._sample(key, num, shape, dtype)

    def _check_shape(self, shape):
        pass

    def covariance(self, n) -> np.ndarray:
        """Exact (N, N) float64 covariance of X."""
        shape = V.shape("n", n)
        self._check_shape(shape)
        return self._covariance(shape)

    @property
    def name(self) -> str:
        return repr(self)


class _XiModel(DataModel):
    def _check_xi(self):
        object.__setattr__(self, "xi", V.positive("xi", self.xi))

    @property
    def lengthscale(self) -> float:
        return self.xi


# --------------------------------------------------------------------------------------------
# Gaussian, NLGP, Kur
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Gaussian(_XiModel):
    """X ~ N(0, C(xi)) with C the periodised squared-exponential kernel."""

    xi: float

    def __post_init__(self):
        self._check_xi()

    @property
    def marginal(self):
        return GaussianMarginal()

    def _sample(self, key, num, shape, dtype):
        return _correlated_normals(key, num, shape, self.xi, dtype)

    def _transform(self, z):
        return z

    def _covariance(self, shape):
        return _cov.covariance_matrix(self.xi, shape)


@dataclass(frozen=True)
class NLGP(_XiModel):
    """Nonlinear Gaussian process (paper Eq. (3)): X_i = erf(g Z_i)/𝒵(g), Z ~ N(0, C(xi)).

    𝒵(g)^2 = (2/pi) arcsin(2g^2/(1+2g^2)) gives unit variance. Exact covariance
    E[X_i X_j] = (2/pi) arcsin(2 g^2 C_ij / (1 + 2 g^2)) / 𝒵(g)^2.
    (Ingrosso & Goldt's gain is sqrt(2) times this g.)
    """

    xi: float
    gain: float

    def __post_init__(self):
        self._check_xi()
        object.__setattr__(self, "gain", _param("gain", self.gain, V.positive))

    @property
    def marginal(self):
        return NLGPMarginal(_concrete("gain", self.gain))

    def _sample(self, key, num, shape, dtype):
        return self._transform(_correlated_normals(key, num, shape, self.xi, dtype))

    def _transform(self, z):
        g = jnp.asarray(self.gain, z.dtype)
        return jax.lax.erf(g * z) * (1.0 / nlgp_normaliser(g)).astype(z.dtype)

    def _covariance(self, shape):
        g = _concrete("gain", self.gain)
        C = _cov.covariance_matrix(self.xi, shape)
        g2 = g * g
        num = np.arcsin(np.clip(2 * g2 * C / (1 + 2 * g2), -1, 1))
        return num / np.arcsin(2 * g2 / (1 + 2 * g2))


@functools.lru_cache(maxsize=4096)
def _kur_pair(k: float, c: float) -> float:
    Zn = math.sqrt(_m._kur_raw_moment(k, 2))

    def h(z):
        e = _sp.erfc(np.abs(z) / math.sqrt(2.0))
        with np.errstate(divide="ignore"):
            om = -np.expm1(k * np.log1p(-e))
        return np.sign(z) * (1.0 - e) * om ** (-1.0 / k) / Zn

    return copula_covariance(h, c, variance=1.0)



@dataclass(frozen=True)
class Kur(_XiModel):
    """Gaussian copula with algebraic-sigmoid marginals (paper Eq. (4), App. A.2).

    X_i = q_k(Phi(Z_i)) / 𝒵_k with Z ~ N(0, C(xi)) (unit diagonal, so sigma~ = 1), q_k the inverse of
    F_k(y) = (1 + y/(1+|y|^k)^(1/k))/2, and the exact 𝒵_k^2 = E[Y^2] = B(3/k, 1-2/k)/k (k > 2).
    Excess kurtosis k B(5/k, 1-4/k)/B(3/k, 1-2/k)^2 - 3 (inf for 2 < k <= 4).
    """

    xi: float
    k: float

    def __post_init__(self):
        self._check_xi()
        object.__setattr__(self, "k", _param("k", self.k, _check_k))

    @property
    def marginal(self):
        return KurMarginal(_concrete("k", self.k))

    def _sample(self, key, num, shape, dtype):
        return self._transform(_correlated_normals(key, num, shape, self.xi, dtype))

    def _transform(self, z):
        return kur_transform(z, jnp.asarray(self.k, z.dtype))

    def _covariance(self, shape):
        k = _concrete("k", self.k)
        C = _cov.covariance_matrix(self.xi, shape)
        vals, inv = np.unique(np.round(C, 15), return_inverse=True)
        cov = np.array([_kur_pair(k, float(np.clip(c, -1, 1))) for c in vals])
        return cov[inv].reshape(C.shape)


# --------------------------------------------------------------------------------------------
# Ising
# --------------------------------------------------------------------------------------------
def ising_correlation(J, N: int, d):
    """E[x_0 x_d] = (t^d + t^(N-d)) / (1 + t^N), t = tanh J, for the periodic ferromagnetic chain."""
    J = V.nonnegative("J", J)
    N = V.integer("N", N, 2)
    t = math.tanh(J)
    d = np.asarray(d, dtype=np.float64)
    return (np.power(t, d) + np.power(t, N - d)) / (1.0 + t**N)


def _ising_thresholds(J, N: int):
    """uint32 thresholds (N-1, 2) of P(x_{i+1} = x_i | u_i = x_i x_1 = +1 / -1), i = 1..N-1.

    P(x_{i+1} = s | x_i, x_1) ∝ T(x_i, s) [T^m](s, x_1), m = N - i, with [T^m](a, b) ∝ 1 + a b t^m:
    P(same | u) = (1 + t)(1 + u t^m) / (2 (1 + u t^(m+1))). For u = -1 we use
    1 - t^m = -expm1(m log t) and log t = log1p(-2 sigmoid(-2J)) (no cancellation as t -> 1).
    """
    J = jnp.asarray(J, jnp.float64)
    one_minus_t = 2.0 * jax.nn.sigmoid(-2.0 * J)
    t = 1.0 - one_minus_t
    logt = jnp.minimum(jnp.log1p(-one_minus_t), -1e-300)
    m = jnp.arange(N - 1, 0, -1, dtype=jnp.float64)  # m = N - i for i = 1..N-1
    tm = jnp.exp(m * logt)
    tm1 = jnp.exp((m + 1) * logt)
    p_plus = (1 + t) * (1 + tm) / (2 * (1 + tm1))
    p_minus = (1 + t) * jnp.expm1(m * logt) / (2 * jnp.expm1((m + 1) * logt))
    p = jnp.stack([p_plus, p_minus], axis=1)
    thr = jnp.floor(jnp.clip(p, 0.0, 1.0) * 2.0**32)
    return jnp.minimum(thr, 2.0**32 - 1).astype(jnp.uint32)


@dataclass(frozen=True)
class Ising(DataModel):
    """Periodic 1-D ferromagnetic Ising chain, p(x) ∝ exp(+J sum_i x_i x_{i+1}), x_{N+1} = x_1, J >= 0.

    (The paper's Eq. (2) has exp(-J sum x_i x_{i+1}), antiferromagnetic for J > 0; its text and
    code are ferromagnetic: longer correlations for larger J.)

    Exact sampler: x_1 uniform on {+-1}; then x_{i+1} given (x_i, x_1) from the transfer-matrix
    conditional (see ``_ising_thresholds``), a lax.scan over the chain. Probabilities are
    discretised to 2^-32. Exact covariance: ``ising_correlation``. Only 1-D ``n``.
    """

    J: float

    def __post_init__(self):
        object.__setattr__(self, "J", _param("J", self.J, V.nonnegative))

    @property
    def lengthscale(self):
        return self.J

    @property
    def marginal(self):
        return RademacherMarginal()

    def _check_shape(self, shape):
        if len(shape) != 1:
            raise ValueError(f"n must be an int (1-D chain) for Ising, got shape {shape}")

    def _sample(self, key, num, shape, dtype):
        N = shape[0]
        thr = _ising_thresholds(self.J, N)
        k1, k2 = jax.random.split(key)
        x1 = jnp.where(jax.random.bernoulli(k1, 0.5, (num,)), 1, -1).astype(jnp.int8)
        bits = jax.random.bits(k2, (N - 1, num), jnp.uint32)

        def step(u, inp):
            th, b = inp
            same = b < jnp.where(u > 0, th[0], th[1])
            u = jnp.where(same, u, -u)
            return u, u

        _, us = jax.lax.scan(step, jnp.ones((num,), jnp.int8), (thr, bits))
        u = jnp.concatenate([jnp.ones((1, num), jnp.int8), us], axis=0)  # (N, num)
        return (u * x1[None, :]).T.astype(dtype)

    def _covariance(self, shape):
        N = shape[0]
        J = _concrete("J", self.J)
        d = (np.arange(N)[None, :] - np.arange(N)[:, None]) % N
        return ising_correlation(J, N, d)


# --------------------------------------------------------------------------------------------
# elliptical models
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StudentT(_XiModel):
    """Multivariate t: X = sqrt((nu-2)/nu) Lambda Z / sqrt(W/nu), W ~ chi2_nu, Lambda Lambda^T = C(xi).

    Covariance C (unit marginal variance, nu > 2); marginal sqrt((nu-2)/nu) t(nu) for every dimension.
    """

    xi: float
    nu: float

    def __post_init__(self):
        self._check_xi()
        object.__setattr__(self, "nu", _param("nu", self.nu, _check_nu))

    @property
    def marginal(self):
        return StudentTMarginal(_concrete("nu", self.nu))

    def _sample(self, key, num, shape, dtype):
        k1, k2 = jax.random.split(key)
        z = _correlated_normals(k1, num, shape, self.xi, dtype)
        nu = jnp.asarray(self.nu, dtype)
        g = jax.random.gamma(k2, nu / 2, (num, 1), dtype)
        return z * jnp.sqrt((nu - 2.0) / (2.0 * g))

    def _covariance(self, shape):
        return _cov.covariance_matrix(self.xi, shape)


class _Elliptical(_XiModel):
    """Shared by the elliptical laws: a length-scale ``xi`` and the dimension ``dim`` of the marginal."""

    def __post_init__(self):
        self._check_xi()
        object.__setattr__(self, "dim", V.integer("dim", self.dim, 2))

    def _check_shape(self, shape):
        if math.prod(shape) != self.dim:
            raise ValueError(
                f"n must have prod(n) == dim = {self.dim} for {type(self).__name__} "
                f"(its marginal depends on the dimension), got n = {shape}"
            )

    def _covariance(self, shape):
        return _cov.covariance_matrix(self.xi, shape)


@dataclass(frozen=True)
class EllipseSurface(_Elliptical):
    """Surface of an ellipse (R ≡ 1): X = sqrt(N) Lambda U, U uniform on the unit sphere of R^N.

    Covariance C(xi). ``dim`` (= N, checked at sampling) fixes the marginal sqrt(N) <e, U>.
    """

    xi: float
    dim: int = 40

    @property
    def marginal(self):
        return SphereMarginal(self.dim)

    def _sample(self, key, num, shape, dtype):
        return _unit_sphere_rows(key, num, shape, self.xi, dtype)


@dataclass(frozen=True)
class RadialElliptical(_Elliptical):
    """Elliptical law with R = 2 + artanh(V), V ~ Unif(0,1) (density 4e^{2r+4}/(e^{2r}+e^4)^2, r >= 2).

    X = R / sqrt(E[R^2]) * sqrt(N) Lambda U; covariance C(xi); ``dim`` = N fixes the marginal.
    """

    xi: float
    dim: int = 40

    @property
    def marginal(self):
        return RadialEllipticalMarginal(self.dim)

    def _sample(self, key, num, shape, dtype):
        k1, k2 = jax.random.split(key)
        r2, _ = _m._radial_moments()
        u = jax.random.uniform(k1, (num, 1), dtype)
        r = (2.0 + jnp.arctanh(u)) / math.sqrt(r2)
        return r * _unit_sphere_rows(k2, num, shape, self.xi, dtype)


# --------------------------------------------------------------------------------------------
# single pulse (notes 001)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SinglePulse(DataModel):
    """Binary pulse on the circle (notes 001, Sec. 1; unused in the paper), centred to +-1.

    Length l uniform on the integers in [ceil(low N), floor(high N)] (fractions of N, 0 < low <= high
    <= 1), start uniform on {0..N-1}, wrapping around; x_i = +1 on the pulse, -1 elsewhere; then
    x -> -x with probability 1/2 (the {0,1} pulse with flip 1-x, mapped by 2x-1). Marginal: +-1.
    Only 1-D ``n``.
    """

    low: float
    high: float

    def __post_init__(self):
        low = V.in_range("low", self.low, 0.0, 1.0, low_open=True)
        high = V.in_range("high", self.high, 0.0, 1.0, low_open=True)
        if high < low:
            raise ValueError(f"high must be >= low = {low} (valid range: low <= high <= 1), got {high}")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    @property
    def lengthscale(self):
        return 0.5 * (self.low + self.high)

    @property
    def marginal(self):
        return RademacherMarginal()

    def lengths(self, N: int) -> tuple[int, int]:
        lo = max(1, math.ceil(self.low * N - 1e-9))
        hi = min(N, math.floor(self.high * N + 1e-9))
        if hi < lo:
            raise ValueError(
                f"n = {N} admits no integer pulse length in [{self.low} n, {self.high} n]; widen low/high or grow n"
            )
        return lo, hi

    def _check_shape(self, shape):
        if len(shape) != 1:
            raise ValueError(f"n must be an int (1-D signal) for SinglePulse, got shape {shape}")
        self.lengths(shape[0])

    def _sample(self, key, num, shape, dtype):
        N = shape[0]
        lo, hi = self.lengths(N)
        k1, k2, k3 = jax.random.split(key, 3)
        length = jax.random.randint(k1, (num, 1), lo, hi + 1)
        start = jax.random.randint(k2, (num, 1), 0, N)
        sign = jnp.where(jax.random.bernoulli(k3, 0.5, (num, 1)), 1.0, -1.0)
        inside = ((jnp.arange(N)[None, :] - start) % N) < length
        return (jnp.where(inside, 1.0, -1.0) * sign).astype(dtype)

    def _covariance(self, shape):
        N = shape[0]
        lo, hi = self.lengths(N)
        row = np.zeros(N)
        for length in range(lo, hi + 1):
            x = np.where(np.arange(N) < length, 1.0, -1.0)
            # average over the N starts of x_0 x_d: circular autocorrelation / N
            row += np.array([np.dot(x, np.roll(x, -d)) for d in range(N)]) / N
        row /= hi - lo + 1
        return _cov.circulant(row)


for _cls, _leaves, _static in [
    (Gaussian, (), ("xi",)),
    (NLGP, ("gain",), ("xi",)),
    (Kur, ("k",), ("xi",)),
    (Ising, ("J",), ()),
    (StudentT, ("nu",), ("xi",)),
    (EllipseSurface, (), ("xi", "dim")),
    (RadialElliptical, (), ("xi", "dim")),
    (SinglePulse, (), ("low", "high")),
]:
    _register(_cls, _leaves, _static)


# --------------------------------------------------------------------------------------------
# the task
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LengthscaleTask:
    """Two-class length-scale discrimination (paper Eq. (1)): y ~ Bernoulli(1/2), X | y ~ model_y.

    ``model1`` (label y = 1) must have the longer length-scale (xi1 > xi0; J1 > J0 for Ising).
    """

    model0: DataModel
    model1: DataModel

    def __post_init__(self):
        for name in ("model0", "model1"):
            m = getattr(self, name)
            if not isinstance(m, DataModel):
                raise TypeError(f"{name} must be a data model (e.g. data.NLGP(xi, gain)), got {m!r}")
        m0, m1 = self.model0, self.model1
        if type(m0) is type(m1) and hasattr(m0, "lengthscale"):
            l0, l1 = m0.lengthscale, m1.lengthscale
            if not (_is_tracer(l0) or _is_tracer(l1)) and np.ndim(l0) == 0 and np.ndim(l1) == 0:
                if not float(l1) > float(l0):
                    raise ValueError(
                        "model1 (label y = 1) must have the longer length-scale: need "
                        f"lengthscale1 > lengthscale0, got {float(l1)} <= {float(l0)}"
                    )

    @classmethod
    def of(cls, model_cls, **params):
        """Build from one model class; 2-tuples are split per class (y=0, y=1), scalars shared.

        Example: ``LengthscaleTask.of(NLGP, xi=(1.0, 3.0), gain=100.0)``;
        ``LengthscaleTask.of(Ising, J=(0.3, 0.7))``.
        """
        if not (isinstance(model_cls, type) and issubclass(model_cls, DataModel)):
            raise TypeError(f"model_cls must be a data model class (e.g. data.NLGP), got {model_cls!r}")
        p0, p1 = {}, {}
        for name, v in params.items():
            if isinstance(v, tuple):
                if len(v) != 2:
                    raise ValueError(f"{name} must be a scalar or a 2-tuple (value for y=0, value for y=1), got {v!r}")
                p0[name], p1[name] = v
            else:
                p0[name] = p1[name] = v
        return cls(model_cls(**p0), model_cls(**p1))

    def sample(self, key, num, n, dtype=jnp.float64):
        """(x (num, N), y (num,)): y ~ Bernoulli(1/2) iid (balanced in expectation), x | y ~ model_y."""
        key, num, shape, dtype = _sample_args(key, num, n, dtype)
        self.model0._check_shape(shape)
        self.model1._check_shape(shape)
        ky, k0, k1 = jax.random.split(key, 3)
        y = jax.random.bernoulli(ky, 0.5, (num,))
        m0, m1 = self.model0, self.model1
        if type(m0) is type(m1) and hasattr(m0, "_transform"):
            # same Gaussian-copula family: one normal draw G per example and one product with the
            # shared Fourier basis, Z = (G * a_y) Q^T, X = T_y(Z); given y the row has exactly
            # model_y's law, at the random-number and matmul cost of one class.
            g = _std_normal(k0, (num, math.prod(shape)), dtype)
            amps = jnp.where(y[:, None], _amplitudes(m1.xi, shape, dtype), _amplitudes(m0.xi, shape, dtype))
            z = _to_sites(g * amps, shape)
            if _same_leaves(m0, m1):
                x = m0._transform(z)
            else:
                x = jnp.where(y[:, None], m1._transform(z), m0._transform(z))
        else:
            x0 = m0._sample(k0, num, shape, dtype)
            x1 = m1._sample(k1, num, shape, dtype)
            x = jnp.where(y[:, None], x1, x0)
        return x, y.astype(dtype)

    def covariances(self, n):
        """(Sigma0, Sigma1): exact float64 covariances of X given y = 0 and y = 1."""
        return self.model0.covariance(n), self.model1.covariance(n)

    @property
    def marginals(self):
        return self.model0.marginal, self.model1.marginal


jax.tree_util.register_pytree_node(
    LengthscaleTask,
    lambda t: ((t.model0, t.model1), None),
    lambda aux, ch: _task_unflatten(ch),
)


def _same_leaves(m0, m1) -> bool:
    """True when both models have equal family parameters (so one transform suffices): equal
    concrete scalars, or the identical object (e.g. the same tracer, as ``train`` passes a
    parameter shared by both classes once under jit/vmap)."""
    for f in type(m0)._leaf_fields:
        a, b = getattr(m0, f), getattr(m1, f)
        if a is b:
            continue
        if _is_tracer(a) or _is_tracer(b) or np.ndim(a) != 0 or np.ndim(b) != 0:
            return False
        if float(a) != float(b):
            return False
    return True


def _task_unflatten(children):
    obj = object.__new__(LengthscaleTask)
    object.__setattr__(obj, "model0", children[0])
    object.__setattr__(obj, "model1", children[1])
    return obj
