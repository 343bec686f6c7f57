"""Gaussian clone of a data model: the same covariance, Gaussian marginals.

Research notes 001 (Sec. 2, "Conclusion") recall that a network trained on a *Gaussian* with the
covariance of the non-Gaussian data does not localize: second-order statistics
alone cannot explain localization (Ingrosso & Goldt, PNAS 2022). ``GaussianClone(model)`` is that control,

    X ~ N(0, Σ),   Σ = model.covariance(n)   (the source's exact covariance, float64),

so it has exactly the source's second-order statistics (and unit marginal variance, because every
source model has it) but standard normal marginals (excess kurtosis 0). It follows the data-model
interface of :mod:`localization.data.base` (a ``DataModel``: ``sample``, ``marginal``,
``covariance``, ``lengthscale``), so it can be used in ``LengthscaleTask`` and passed through ``jit``.
"""

from __future__ import annotations

import functools
from typing import Any

import jax.numpy as jnp
import numpy as np

from localization.data import spectral
from localization.data.base import DataModel
from localization.data.marginals import GaussianMarginal
from localization.pytree import pytree_dataclass, static_field

__all__ = ["GaussianClone"]


@functools.lru_cache(maxsize=64)
def _root(source, shape: tuple[int, ...]) -> np.ndarray:
    """Symmetric PSD square root of the source covariance (eigenvalues clipped at 0), float64."""
    cov = np.asarray(source.covariance(shape if len(shape) > 1 else shape[0]), dtype=np.float64)
    cov = 0.5 * (cov + cov.T)
    lam, vec = np.linalg.eigh(cov)
    root = (vec * np.sqrt(np.clip(lam, 0.0, None))) @ vec.T
    root = 0.5 * (root + root.T)
    root.setflags(write=False)
    return root


@pytree_dataclass
class GaussianClone(DataModel):
    """Centred Gaussian with the exact covariance of ``source`` (a data model).

    Attributes
    ----------
        source: a data model (``data.DataModel``, e.g. ``data.NLGP(xi, gain)``) whose exact
            ``covariance(n)`` the clone copies. It must be hashable with concrete parameters
            (frozen dataclasses are); the clone is a JAX pytree with ``source`` as static data.
    """

    source: DataModel = static_field()

    def __post_init__(self):
        if not isinstance(self.source, DataModel):
            raise TypeError(f"source must be a data model (e.g. data.NLGP(xi, gain)), got {type(self.source).__name__}")
        try:
            hash(self.source)
        except TypeError:
            raise TypeError(f"source must be hashable (concrete parameters), got {self.source!r}") from None

    @property
    def name(self) -> str:
        """Return the model's name, ``GaussianClone(<source name>)``."""
        return f"GaussianClone({self.source.name})"

    @property
    def lengthscale_name(self) -> str:
        """Return the name of the source's length-scale parameter."""
        return self.source.lengthscale_name

    @property
    def lengthscale(self) -> Any:
        """The source's length-scale (so ``LengthscaleTask`` can check the order of two clones)."""
        return self.source.lengthscale

    @property
    def marginal(self) -> GaussianMarginal:
        """Standard normal: the clone has the source's unit marginal variance but Gaussian marginals."""
        return GaussianMarginal()

    def check_shape(self, shape: tuple[int, ...]) -> None:
        """Raise ``ValueError`` unless the source accepts ``shape``."""
        self.source.check_shape(shape)

    def _covariance(self, shape) -> np.ndarray:
        """Return the source's exact covariance, float64 (N, N), N = prod(n)."""
        return np.array(self.source.covariance(shape if len(shape) > 1 else shape[0]), dtype=np.float64)

    def _sample(self, key, num, shape, dtype, method):
        """``num`` draws, shape (num, N): ``G @ Σ^{1/2}`` with G standard normal (Σ^{1/2} symmetric)."""
        root = _root(self.source, shape)
        g = spectral.standard_normals(key, (num, root.shape[0]), dtype)
        return g @ jnp.asarray(root, dtype)
