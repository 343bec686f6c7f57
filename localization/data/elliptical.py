"""Elliptical data models (paper Section 3.3, Section 4.3): X = R Lambda U, U uniform on the sphere.

An elliptical law cannot localize the single neuron (paper Proposition 3.3); these models are the
book's test cases. All have the covariance C(xi) of :mod:`localization.data.spectral` (unit marginal
variance): the multivariate Student t, the surface of an ellipse (R constant) and the radial law
R = 2 + artanh(V).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from localization import validation as V
from localization.data import spectral
from localization.data.base import DataModel, concrete, family_parameter
from localization.data.marginals import RadialEllipticalMarginal, SphereMarginal, StudentTMarginal, radial_moments
from localization.pytree import pytree_dataclass, static_field

__all__ = ["EllipticalModel", "StudentT", "EllipseSurface", "RadialElliptical"]


class EllipticalModel(DataModel):
    """An elliptical law with covariance C(xi): the length-scale ``xi`` is a static field."""

    lengthscale_name = "xi"

    def __post_init__(self):
        object.__setattr__(self, "xi", V.positive("xi", self.xi))

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
        object.__setattr__(self, "nu", family_parameter("nu", self.nu, V.student_dof))

    @property
    def marginal(self) -> StudentTMarginal:
        return StudentTMarginal(concrete("nu", self.nu))

    def _sample(self, key, num, shape, dtype):
        k1, k2 = jax.random.split(key)
        z = spectral.correlated_normals(k1, num, shape, self.xi, dtype)
        nu = jnp.asarray(self.nu, dtype)
        g = jax.random.gamma(k2, nu / 2, (num, 1), dtype)
        return z * jnp.sqrt((nu - 2.0) / (2.0 * g))



class FixedDimensionModel(EllipticalModel):
    """An elliptical law whose marginal depends on the dimension ``dim`` (= prod(n), checked)."""

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "dim", V.integer("dim", self.dim, 2))

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
        return SphereMarginal(self.dim)

    def _sample(self, key, num, shape, dtype):
        return spectral.unit_sphere_rows(key, num, shape, self.xi, dtype)


@pytree_dataclass
class RadialElliptical(FixedDimensionModel):
    """Elliptical law with R = 2 + artanh(V), V ~ Unif(0,1) (density 4e^{2r+4}/(e^{2r}+e^4)^2, r >= 2).

    X = R / sqrt(E[R^2]) * sqrt(N) Lambda U; covariance C(xi); ``dim`` = N fixes the marginal.
    """

    xi: float = static_field()
    dim: int = static_field(default=40)

    @property
    def marginal(self) -> RadialEllipticalMarginal:
        return RadialEllipticalMarginal(self.dim)

    def _sample(self, key, num, shape, dtype):
        k1, k2 = jax.random.split(key)
        r2, _ = radial_moments()
        u = jax.random.uniform(k1, (num, 1), dtype)
        r = (2.0 + jnp.arctanh(u)) / math.sqrt(r2)
        return r * spectral.unit_sphere_rows(k2, num, shape, self.xi, dtype)
