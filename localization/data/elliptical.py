"""Elliptical data models (paper Section 3.3, Section 4.3): X = R Lambda U, U uniform on the sphere.

An elliptical law cannot localize the single neuron (paper Proposition 3.3); these models are the
book's test cases. All have the covariance C(xi) of :mod:`localization.data.spectral` (unit marginal
variance): the multivariate Student t, the surface of an ellipse (R constant) and the radial law
R = 2 + artanh(V). The marginals of the last two depend on the dimension and are defined here
(the Student-t marginal, which does not, is in :mod:`localization.data.marginals`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special as sp
from jax.typing import ArrayLike

from localization import prng
from localization import validation as v
from localization.data import spectral
from localization.data.base import DataModel, concrete, family_parameter
from localization.data.marginals import Marginal, StudentTMarginal
from localization.data.quadrature import tanh_sinh
from localization.pytree import pytree_dataclass, static_field

__all__ = [
    "EllipticalModel",
    "StudentT",
    "EllipseSurface",
    "RadialElliptical",
    "SphereMarginal",
    "RadialEllipticalMarginal",
    "ARTANH_MOMENTS",
]


class EllipticalModel(DataModel):
    """An elliptical law with covariance C(xi): the length-scale ``xi`` is a static field."""

    lengthscale_name = "xi"

    def __post_init__(self):
        object.__setattr__(self, "xi", v.positive("xi", self.xi))

    def _covariance(self, shape):
        return spectral.covariance_matrix(self.xi, shape)


@pytree_dataclass
class StudentT(EllipticalModel):
    """Multivariate t: X = sqrt((nu-2)/nu) Lambda Z / sqrt(W/nu), W ~ chi2_nu, Lambda Lambda^T = C(xi).

    Covariance C (unit marginal variance, nu > 2); marginal sqrt((nu-2)/nu) t(nu) for every dimension.
    """

    xi: float = static_field()
    nu: float

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "nu", family_parameter("nu", self.nu, v.student_dof))

    @property
    def marginal(self) -> StudentTMarginal:
        """Return the coordinate law: the unit-variance Student t with ``nu`` degrees of freedom."""
        return StudentTMarginal(concrete("nu", self.nu))

    def _sample(self, key, num, shape, dtype, method):
        k1, k2 = jax.random.split(key)
        z = spectral.correlated_normals(k1, num, shape, self.xi, dtype, method)
        nu = jnp.asarray(self.nu, dtype)
        g = prng.gamma(k2, nu / 2, (num, 1), dtype)
        return z * jnp.sqrt((nu - 2.0) / (2.0 * g))


class FixedDimensionModel(EllipticalModel):
    """An elliptical law whose marginal depends on the dimension ``dim`` (= prod(n), checked)."""

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "dim", v.integer("dim", self.dim, 2))

    def check_shape(self, shape: tuple[int, ...]) -> None:
        if math.prod(shape) != self.dim:
            raise ValueError(
                f"n must have prod(n) == dim = {self.dim} for {type(self).__name__} "
                f"(its marginal depends on the dimension), got n = {shape}"
            )


@pytree_dataclass
class EllipseSurface(FixedDimensionModel):
    """Surface of an ellipse (R ≡ 1): X = sqrt(N) Lambda U, U uniform on the unit sphere of R^N.

    Covariance C(xi). ``dim`` (= N, checked at sampling) fixes the marginal sqrt(N) <e, U>.
    """

    xi: float = static_field()
    dim: int = static_field(default=40)

    @property
    def marginal(self) -> SphereMarginal:
        """Return the coordinate law of the scaled uniform law on the sphere of dimension ``dim``."""
        return SphereMarginal(self.dim)

    def _sample(self, key, num, shape, dtype, method):
        return spectral.unit_sphere_rows(key, num, shape, self.xi, dtype, method)


@pytree_dataclass
class RadialElliptical(FixedDimensionModel):
    """Elliptical law with R = 2 + artanh(V), V ~ Unif(0,1) (density 4e^{2r+4}/(e^{2r}+e^4)^2, r >= 2).

    X = R / sqrt(E[R^2]) * sqrt(N) Lambda U; covariance C(xi); ``dim`` = N fixes the marginal.
    """

    xi: float = static_field()
    dim: int = static_field(default=40)

    @property
    def marginal(self) -> RadialEllipticalMarginal:
        """Return the coordinate law of the radial elliptical law (dimension ``dim``)."""
        return RadialEllipticalMarginal(self.dim)

    def _sample(self, key, num, shape, dtype, method):
        k1, k2 = jax.random.split(key)
        r2, _ = _radial_moments()
        u = jax.random.uniform(k1, (num, 1), dtype)
        r = (2.0 + jnp.arctanh(u)) / math.sqrt(r2)
        return r * spectral.unit_sphere_rows(k2, num, shape, self.xi, dtype, method)


# --------------------------------------------------------------------------------------------
# the marginals: sphere surface and the radial law R = 2 + artanh(U)
# --------------------------------------------------------------------------------------------
def _mean_abs_sphere(dim: int) -> float:
    """``E|T|`` for T the first coordinate of a uniform point on the unit sphere of R^dim."""
    return math.exp(math.lgamma(dim / 2) - math.lgamma((dim + 1) / 2)) / math.sqrt(math.pi)


@dataclass(frozen=True)
class SphereMarginal(Marginal):
    """X = sqrt(D) <e, U>, U uniform on the unit sphere of R^D (elliptical data with R = 1).

    T = <e, U> has density prop. to (1 - t^2)^((D-3)/2) on [-1, 1] ((T+1)/2 ~ Beta((D-1)/2, (D-1)/2));
    E[T^2] = 1/D, E[T^4] = 3/(D(D+2)) => variance 1, excess kurtosis -6/(D+2).
    """

    dim: int = 40

    def __post_init__(self):
        object.__setattr__(self, "dim", v.integer("dim", self.dim, 2))

    second_moment = property(lambda self: 1.0)
    fourth_moment = property(lambda self: 3.0 * self.dim / (self.dim + 2.0))

    @property
    def mean_absolute(self) -> float:
        """``sqrt(D) E|T|`` = sqrt(D) Gamma(D/2) / (sqrt(pi) Gamma((D+1)/2)) (closed form)."""
        return math.sqrt(self.dim) * _mean_abs_sphere(self.dim)

    def pdf(self, x: ArrayLike) -> np.ndarray:
        """Return the density of sqrt(D) T at ``x``, T a coordinate of a uniform unit vector (float64)."""
        D = self.dim
        t = np.asarray(x, dtype=np.float64) / math.sqrt(D)
        a = (D - 1) / 2
        inside = np.abs(t) < 1
        logc = -sp.betaln(a, a) - (D - 2) * math.log(2.0)
        dens = np.exp(logc + (a - 1) * np.log1p(-np.where(inside, t * t, 0.0))) / math.sqrt(D)
        return np.where(inside, dens, 0.0)

    def _t_rule(self, order):
        """Return a symmetric rule for T, split at 0, mirrored to [-1, 0].

        Gauss-Jacobi on [0, 1] for the weight (1 - t)^a (``order`` nodes; the smooth factor (1 + t)^a
        is multiplied into the weights), mirrored to [-1, 0].

        A Gauss-Jacobi rule on all of [-1, 1] has a node interval across 0, where the integrands of
        the book have a kink (``abs``) or a layer of width ~1/c (``x erf(c x)``, c -> inf as a -> 1):
        it missed E|X| by 4e-4 at D = 40. On each half these are smooth (``abs`` is linear).
        """
        a = (self.dim - 3) / 2
        s, w = sp.roots_jacobi(order, a, 0.0)  # weight (1 - s)^a on [-1, 1]
        t = (s + 1.0) / 2.0  # on [0, 1]: (1 - s)^a = 2^a (1 - t)^a, constants drop out on normalising
        w = w * (1.0 + t) ** a
        t = np.concatenate([-t[::-1], t])
        w = np.concatenate([w[::-1], w])
        return t, w / w.sum()

    def _quadrature(self, order):
        t, w = self._t_rule(order)
        return math.sqrt(self.dim) * t, w

    def _sample(self, key, num, dtype):
        # first coordinate of a uniform point on the sphere: g_1 / |g|, g ~ N(0, I_D)
        g = prng.flat_normal(key, (num, self.dim), dtype)
        t = g[:, 0] / jnp.linalg.norm(g, axis=1)
        return (math.sqrt(self.dim) * t).astype(dtype)


#: E[V^n], n = 0..4, for V = artanh(U), U ~ Unif(0, 1), U ~ Unif(0, 1) (density sech^2 v on v >= 0)
ARTANH_MOMENTS = (1.0, math.log(2.0), math.pi**2 / 12, 9 * float(sp.zeta(3)) / 8, 7 * math.pi**4 / 240)


def _radial_moments() -> tuple[float, float]:
    """E[R^2], E[R^4] for R = 2 + V."""
    m = ARTANH_MOMENTS
    r2 = 4 + 4 * m[1] + m[2]
    r4 = 16 + 32 * m[1] + 24 * m[2] + 8 * m[3] + m[4]
    return r2, r4


@dataclass(frozen=True)
class RadialEllipticalMarginal(Marginal):
    """X = R sqrt(D / E[R^2]) <e, U>, R = 2 + artanh(V), V ~ Unif(0,1) (paper Sec. 4.3 density on r >= 2).

    Excess kurtosis = 3 D E[R^4] / ((D + 2) E[R^2]^2) - 3 with E[R^2] = 4 + 4 ln 2 + pi^2/12 and
    E[R^4] = 16 + 32 ln 2 + 2 pi^2 + 9 zeta(3) + 7 pi^4/240.
    """

    dim: int = 40

    def __post_init__(self):
        object.__setattr__(self, "dim", v.integer("dim", self.dim, 2))

    second_moment = property(lambda self: 1.0)

    @property
    def fourth_moment(self) -> float:
        """Return E[X^4] = 3 D E[R^4]/((D + 2) E[R^2]^2)."""
        r2, r4 = _radial_moments()
        D = self.dim
        return 3.0 * D * r4 / ((D + 2.0) * r2**2)

    @property
    def mean_absolute(self) -> float:
        """``E[R] sqrt(D / E[R^2]) E|T|`` with E[R] = 2 + ln 2 (closed form, as for the sphere)."""
        r2, _ = _radial_moments()
        return (2.0 + ARTANH_MOMENTS[1]) * math.sqrt(self.dim / r2) * _mean_abs_sphere(self.dim)

    def _quadrature(self, order):
        # product rule: radial tanh-sinh in the tail probability of R, Gauss-Jacobi for T
        r2, _ = _radial_moments()
        dl, dr, wr = tanh_sinh(0.0, 1.0, order)
        # R = 2 + artanh(u) with 1 - u = dr: artanh(u) = 0.5 log((2 - dr)/dr)
        r = 2.0 + 0.5 * np.log((2.0 - dr) / dr)
        t, wt = SphereMarginal(self.dim)._t_rule(max(order // 2, 8))
        c = math.sqrt(self.dim / r2)
        nodes = (c * r[:, None] * t[None, :]).ravel()
        weights = (wr[:, None] * wt[None, :]).ravel()
        keep = weights > 0
        return nodes[keep], weights[keep]

    def _sample(self, key, num, dtype):
        k1, k2 = jax.random.split(key)
        r2, _ = _radial_moments()
        u = jax.random.uniform(k1, (num,), dtype)
        r = 2.0 + jnp.arctanh(u)
        t = SphereMarginal(self.dim)._sample(k2, num, dtype) / math.sqrt(self.dim)
        return (r * t * math.sqrt(self.dim / r2)).astype(dtype)
