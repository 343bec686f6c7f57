"""The data-model protocol: what every distribution of the book offers.

A data model is the law of one input X in R^N (N = prod(n); ``n`` an int or a periodic grid shape).
Every model of the paper is sign-symmetric (S3), translation-invariant on the periodic index set (S2)
and has unit marginal variance. A model is a frozen dataclass registered as a JAX pytree with
:func:`localization.pytree.pytree_dataclass` and offers

- ``sample(key, num, n, dtype=jnp.float64, method="auto")`` -> ``(num, N)``: pure and jittable with
  ``num``, ``n``, ``dtype``, ``method`` static; any typed PRNG key (threefry, rbg, unsafe_rbg) or raw
  ``uint32[2]`` key; ``method`` picks how the latent Gaussian reaches the sites (dense basis product
  or FFT, :data:`localization.data.spectral.METHODS`; same samples up to rounding);
- ``marginal``: the law of one coordinate, a :class:`localization.data.marginals.Marginal` with exact
  moments and quadrature rules;
- ``covariance(n)``: the exact (N, N) float64 covariance of X;
- ``lengthscale``: the parameter that orders the two classes of the length-scale task, named by the
  class attribute ``lengthscale_name`` (``"xi"`` for the Gaussian-process models, ``"J"`` for the
  Ising chain, ...), larger meaning longer correlations.

Family parameters (NLGP gain, Kur exponent, Ising coupling, Student-t degrees of freedom) are pytree
leaves, so they can be traced and vmapped; validation is skipped for traced values. Length-scales
and dimensions are static fields (a new value recompiles; the covariance spectrum is a compile-time
constant).

A new data model is one module defining a subclass (``_sample``, ``_covariance``, ``marginal``,
``lengthscale_name``) plus one line in ``localization/data/__init__.py``; the shared protocol test
(``tests/test_data_protocol.py``) then checks it once it is added to its list.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike, DTypeLike

from localization import validation as v
from localization.data import spectral
from localization.data.marginals import Marginal

__all__ = ["DataModel", "sample_arguments", "family_parameter", "concrete", "is_traced"]


def is_traced(x: ArrayLike) -> bool:
    """Tell whether ``x`` is a JAX tracer (inside ``jit``/``vmap``/``grad``): such values are not validated."""
    return isinstance(x, jax.core.Tracer)


def family_parameter(name: str, value: Any, check: Callable[[str, Any], float]) -> Any:
    """Validate a family parameter unless it is traced; arrays are validated elementwise (float64)."""
    if is_traced(value):
        return value
    if getattr(value, "shape", ()) != ():
        arr = np.asarray(value)
        if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
            raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
        for x in arr.ravel():
            check(name, float(x))
        return jnp.asarray(arr, dtype=jnp.float64)
    return check(name, value)


def concrete(name: str, value: Any) -> float:
    """``value`` as a float, or a ``TypeError`` when it is traced or not a scalar (exact statistics use SciPy)."""
    if is_traced(value) or np.ndim(value) != 0:
        raise TypeError(f"{name} must be a concrete scalar here (exact statistics use scipy), got {value!r}")
    return float(value)


def sample_arguments(
    key: jax.Array, num: Any, n: Any, dtype: DTypeLike
) -> tuple[jax.Array, int, tuple[int, ...], np.dtype]:
    """Return the validated ``(key, num, shape, dtype)`` of a ``sample`` call (raise naming the bad one)."""
    key = v.key("key", key)
    num = v.integer("num", num, 1)
    shape = v.shape("n", n)
    dtype = v.floating_dtype("dtype", dtype)
    return key, num, shape, dtype


class DataModel(abc.ABC):
    """Abstract base of the data models (see the module docstring for the protocol)."""

    #: Name of the parameter that ``lengthscale`` returns (what orders the two classes of a task).
    lengthscale_name: ClassVar[str]

    def sample(
        self, key: jax.Array, num: int, n: int | tuple[int, ...], dtype: DTypeLike = jnp.float64, method: str = "auto"
    ) -> jax.Array:
        """Draw ``num`` samples of the model on input size ``n``.

        Parameters
        ----------
        key : jax.Array
            A JAX PRNG key.
        num : int
            Number of samples, >= 1.
        n : int or tuple[int, ...]
            Input size: a ring of n sites or a periodic grid shape; N = prod(n).
        dtype : DTypeLike
            Floating dtype of the samples (float64 needs ``localization.enable_float64()``).
        method : str
            ``"auto"``, ``"dense"`` or ``"fft"``, the map of the spectral samplers to the sites
            (:func:`localization.data.spectral.to_sites`; default ``"auto"``). Models without a latent
            spectral Gaussian ignore it.

        Returns
        -------
        jax.Array
            (num, N) samples of ``dtype``, flattened in row-major order on grids.
        """
        key, num, shape, dtype = sample_arguments(key, num, n, dtype)
        method = spectral.check_method("method", method)
        self.check_shape(shape)
        return self._sample(key, num, shape, dtype, method)

    def covariance(self, n: int | tuple[int, ...]) -> np.ndarray:
        """Return the exact covariance of X on input size ``n``.

        Parameters
        ----------
        n : int or tuple[int, ...]
            Input size; N = prod(n).

        Returns
        -------
        np.ndarray
            (N, N) float64.
        """
        shape = v.shape("n", n)
        self.check_shape(shape)
        return self._covariance(shape)

    def check_shape(self, shape: tuple[int, ...]) -> None:  # noqa: B027 (a default: every shape is valid)
        """Raise ``ValueError`` when the model is not defined on input shape ``shape`` (default: any)."""

    @property
    def lengthscale(self) -> Any:
        """Return the value of the field ``lengthscale_name`` (larger: longer correlations)."""
        return getattr(self, self.lengthscale_name)

    @property
    @abc.abstractmethod
    def marginal(self) -> Marginal:
        """Return the law of one coordinate (exact statistics)."""

    @property
    def name(self) -> str:
        """Return the model's name (its repr, e.g. ``NLGP(xi=3.0, gain=100.0)``)."""
        return repr(self)

    @abc.abstractmethod
    def _sample(self, key: jax.Array, num: int, shape: tuple[int, ...], dtype: DTypeLike, method: str) -> jax.Array:
        """(num, N) samples; arguments already validated (``method``: the spectral map, :data:`spectral.METHODS`)."""

    @abc.abstractmethod
    def _covariance(self, shape: tuple[int, ...]) -> np.ndarray:
        """(N, N) exact covariance; ``shape`` already validated."""
