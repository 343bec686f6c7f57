"""Two zero-mean Gaussian classes with any given covariance matrices.

:class:`CovarianceTask` is the task of the exact Gaussian flow (``theory.gaussian.flow(w, cov0,
cov1)``): y ~ Bernoulli(1/2), X | y ~ N(0, Σ_y). Unlike :class:`localization.data.LengthscaleTask`
it takes the covariances themselves, in either order of length-scale (ξ₀ > ξ₁ included), and they
are pytree *leaves*: tasks with different covariances of one size train in one vmapped
``train.train_sweep`` call, compiled once.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import DTypeLike

from localization import validation as v
from localization.data.base import sample_arguments
from localization.data.marginals import GaussianMarginal, Marginal
from localization.data.spectral import covariance
from localization.pytree import pytree_dataclass

__all__ = ["CovarianceTask"]


def _symmetric_root(name: str, cov: np.ndarray) -> np.ndarray:
    """R with R Rᵀ = cov (the symmetric square root) of a positive semi-definite ``cov``.

    ``cov`` has passed :func:`localization.validation.covariance_pair` (symmetric, positive
    semi-definite up to rounding); the rounding's negative eigenvalues are set to 0. Raises if
    ``cov`` is zero.
    """
    lam, vec = np.linalg.eigh(cov)
    if lam.max() <= 0:
        raise ValueError(f"{name} must be non-zero, got largest eigenvalue {lam.max():.3g}")
    return (vec * np.sqrt(np.clip(lam, 0.0, None))) @ vec.T


@pytree_dataclass(eq=False)
class CovarianceTask:
    """The Gaussian task y ~ Bernoulli(1/2), X | y ~ N(0, Σ_y) on N sites (notes 001 §2).

    It is the Gaussian case of paper Eq. (1) with arbitrary class covariances.

    Parameters
    ----------
    cov0, cov1 : (N, N) symmetric positive semi-definite covariances of class y = 0 and y = 1.

    ``root0``, ``root1`` (N, N) are their symmetric square roots, derived on construction (not
    arguments); a sample is X = R_y Z with Z standard normal.
    """

    cov0: Any
    cov1: Any
    root0: Any = dataclasses.field(init=False, default=None)
    root1: Any = dataclasses.field(init=False, default=None)

    def __post_init__(self):
        cov0, cov1 = v.covariance_pair(("cov0", "cov1"), self.cov0, self.cov1)
        object.__setattr__(self, "cov0", cov0)
        object.__setattr__(self, "cov1", cov1)
        object.__setattr__(self, "root0", _symmetric_root("cov0", cov0))
        object.__setattr__(self, "root1", _symmetric_root("cov1", cov1))

    @property
    def size(self) -> int:
        """N, the input size the task is defined on."""
        return int(np.shape(self.cov0)[-1])

    def _arguments(self, key: jax.Array, num: Any, n: Any, dtype: DTypeLike) -> tuple[Any, int, Any]:
        key, num, shape, dtype = sample_arguments(key, num, n, dtype)
        if shape != (self.size,):
            raise ValueError(f"n must be the covariances' size N = {self.size}, got {n!r}")
        return key, num, dtype

    def sample(self, key: jax.Array, num: int, n: int, dtype: DTypeLike = jnp.float64) -> tuple[jax.Array, jax.Array]:
        """(x (num, N), y (num,)): y ~ Bernoulli(1/2) i.i.d., x = R_y z."""
        key, num, dtype = self._arguments(key, num, n, dtype)
        ky, kz = jax.random.split(key)
        y = jax.random.bernoulli(ky, 0.5, (num,))
        z = jax.random.normal(kz, (num, self.size), dtype)
        roots = [jnp.asarray(r, dtype) for r in (self.root0, self.root1)]
        x = jnp.where(y[:, None], z @ roots[1].T, z @ roots[0].T)
        return x, y.astype(dtype)

    def sample_balanced(
        self, key: jax.Array, num: int, n: int, dtype: DTypeLike = jnp.float64
    ) -> tuple[jax.Array, jax.Array]:
        """(x (num, N), y (num,)): ``num // 2`` examples of class 0 first, then the rest of class 1."""
        key, num, dtype = self._arguments(key, num, n, dtype)
        if num < 2:
            raise ValueError(f"num must be >= 2 for a balanced batch (one example per class at least), got {num}")
        half = num // 2
        z = jax.random.normal(key, (num, self.size), dtype)
        x = jnp.concatenate([z[:half] @ jnp.asarray(self.root0, dtype).T, z[half:] @ jnp.asarray(self.root1, dtype).T])
        y = jnp.concatenate([jnp.zeros((half,), dtype), jnp.ones((num - half,), dtype)])
        return x, y

    def covariances(self, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(Σ₀, Σ₁) as float64 arrays; ``n``, if given, must be N."""
        if n is not None and v.shape("n", n) != (self.size,):
            raise ValueError(f"n must be the covariances' size N = {self.size}, got {n!r}")
        return np.asarray(self.cov0, np.float64), np.asarray(self.cov1, np.float64)

    @property
    def marginals(self) -> tuple[Marginal, Marginal]:
        """The law of one coordinate in each class: standard normal (requires unit diagonals)."""
        for name in ("cov0", "cov1"):
            diag = np.diag(np.asarray(getattr(self, name)))
            if not np.allclose(diag, 1.0, rtol=0, atol=1e-8):
                raise ValueError(
                    f"the coordinates of class {name[-1]} have variances in [{diag.min():.6g}, {diag.max():.6g}], "
                    "not all 1: no single standard marginal describes them"
                )
        return GaussianMarginal(), GaussianMarginal()

    @classmethod
    def of_lengthscales(cls, xi0: float, xi1: float, n: int) -> CovarianceTask:
        """Return Gaussian classes with the book's kernel covariances, in either order.

        The covariances are ``data.covariance(xi0, n)`` and ``data.covariance(xi1, n)``.
        """
        return cls(covariance(xi0, n), covariance(xi1, n))
