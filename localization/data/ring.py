r"""Real samples made translation invariant: every row (patch) cyclically shifted by a random shift.

The theory assumes a law invariant under the translations of a periodic index set (S2). Rows cut
from a photograph are neither periodic nor exactly stationary. :class:`RingModel` makes S2 exact at
sampling time: a sample is a stored row rolled by a uniform random shift of its ring (torus). Its
covariance is the shift average of the data's (:func:`ring_average`, circulant), whose spectrum
:func:`torus_eigenvalues` reads off by a discrete Fourier transform; its marginal is the data's.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from localization import validation as v
from localization.data.base import DataModel
from localization.data.empirical import EmpiricalModel, device_values
from localization.data.spectral import circulant_eigenvalues
from localization.pytree import pytree_dataclass, static_field

__all__ = ["RingModel", "ring_average", "torus_eigenvalues"]


def _shift_permutations(shape: tuple[int, ...]) -> np.ndarray:
    """(prod(shape), N) index arrays: row s is the flat permutation of the s-th cyclic shift of the grid."""
    sites = np.arange(math.prod(shape)).reshape(shape)
    axes = tuple(range(len(shape)))
    shifts = np.stack(np.meshgrid(*[np.arange(length) for length in shape], indexing="ij"), -1).reshape(-1, len(shape))
    return np.stack([np.roll(sites, tuple(int(s) for s in shift), axis=axes).ravel() for shift in shifts])


def _square(name: str, cov: Any, grid: tuple[int, ...]) -> np.ndarray:
    cov = v.finite_real_array(name, cov)
    N = math.prod(grid)
    if cov.shape != (N, N):
        raise ValueError(f"{name} must have shape ({N}, {N}) for shape {grid}, got {cov.shape}")
    return cov


def ring_average(cov: Any, shape: int | tuple[int, ...]) -> np.ndarray:
    r"""Return the average of :math:`P_s\Sigma P_s^\top` over every cyclic shift :math:`P_s` of the ring (torus).

    It is the covariance of the data after a uniform random cyclic shift (:class:`RingModel`):
    circulant (block-circulant with circulant blocks on a torus), positive semi-definite, with the
    diagonal's mean on its diagonal (unit for z-scored data).

    Parameters
    ----------
    cov : array_like
        (N, N) symmetric real matrix, N = prod(shape).
    shape : int or tuple of int
        The ring size N or the torus shape (h, w).

    Returns
    -------
    np.ndarray
        (N, N) float64.
    """
    grid = v.shape("shape", shape, minimum=1)
    cov = _square("cov", cov, grid)
    perms = _shift_permutations(grid)
    out = np.zeros(cov.shape)
    for p in perms:
        out += cov[np.ix_(p, p)]
    out /= len(perms)
    return 0.5 * (out + out.T)


def torus_eigenvalues(cov: Any, shape: int | tuple[int, ...], *, atol: float = 1e-9) -> np.ndarray:
    r"""Return the eigenvalues of a circulant covariance on a ring or torus, indexed by frequency.

    They are the discrete Fourier transform of its first row laid out on the grid,
    :math:`\lambda(k)=\sum_d\Sigma_{0d}\,e^{-2\pi\mathrm i\,k\cdot d/n}` (real for a symmetric Σ;
    on a ring, :func:`localization.data.spectral.circulant_eigenvalues`); entry ``[0]`` (``[0, 0]``)
    is the constant's, :math:`\mathbf 1^\top\Sigma\mathbf 1/N`.

    Parameters
    ----------
    cov : array_like
        (N, N) symmetric circulant (on the grid) matrix, e.g. from :func:`ring_average`.
    shape : int or tuple of int
        The ring size N or the torus shape (h, w).
    atol : float
        ``ValueError`` when ``cov`` differs from the circulant of its first row by more than ``atol``
        times its largest entry.

    Returns
    -------
    np.ndarray
        ``shape``-shaped float64 eigenvalues.
    """
    grid = v.shape("shape", shape, minimum=1)
    cov = _square("cov", cov, grid)
    atol = v.positive("atol", atol)
    perms = _shift_permutations(grid)
    # circulant: row of site p[0] (the image of site 0 under shift s) equals the first row shifted by s
    first = cov[0]
    gap = max(float(np.max(np.abs(cov[p[0], p] - first))) for p in perms)
    scale = max(float(np.max(np.abs(cov))), 1e-300)
    if gap > atol * scale:
        raise ValueError(f"cov must be circulant on a grid of shape {grid}: it differs by {gap:.3g} (> atol * max)")
    if len(grid) == 1:
        return circulant_eigenvalues(0.5 * (first + np.roll(first[::-1], 1)))
    return np.real(np.fft.fftn(first.reshape(grid)))


@functools.partial(jax.jit, static_argnames=("num", "grid"))
def _draw_shifted(key: jax.Array, rows: jax.Array, num: int, grid: tuple[int, ...]) -> jax.Array:
    """``num`` rows drawn uniformly with replacement, each cyclically shifted by a uniform shift of ``grid``."""
    k_rows, k_shift = jax.random.split(key)
    x = rows[jax.random.randint(k_rows, (num,), 0, rows.shape[0])].reshape((num, *grid))
    for axis, (k, length) in enumerate(zip(jax.random.split(k_shift, len(grid)), grid, strict=True)):
        shift = jax.random.randint(k, (num,), 0, length)
        index = (jnp.arange(length)[None, :] + shift[:, None]) % length
        index = index.reshape((num,) + tuple(length if a == axis else 1 for a in range(len(grid))))
        x = jnp.take_along_axis(x, jnp.broadcast_to(index, x.shape), axis=axis + 1)
    return x.reshape(num, -1)


@pytree_dataclass
class RingModel(DataModel):
    """The rows (patches) of an empirical model, each cyclically shifted by a uniform random shift.

    A sample is a stored row drawn uniformly with replacement and rolled by an independent uniform
    shift along every axis of its grid: the law is translation invariant on the ring (torus) (S2
    holds exactly), its marginal is the source's, its covariance :func:`ring_average` of the source's.
    The price is a seam: the two ends of the row become neighbours.

    Attributes
    ----------
    source : EmpiricalModel
        The data (static pytree data; hashable by content).
    """

    source: EmpiricalModel = static_field()

    lengthscale_name = "neighbour_correlation"

    def __post_init__(self):
        if not isinstance(self.source, EmpiricalModel):
            raise TypeError(f"source must be a data.empirical.EmpiricalModel, got {type(self.source).__name__}")

    @property
    def grid(self) -> tuple[int, ...]:
        """The shape of one sample, the source's."""
        return self.source.grid

    @property
    def marginal(self):
        """Return the source's marginal (a shift moves values, it does not change them)."""
        return self.source.marginal

    @property
    def neighbour_correlation(self) -> float:
        """Return the correlation of neighbouring sites along the last axis, periodic (the pair (N-1, 0) included)."""
        return float(self._covariance(self.grid)[0, 1])  # flat site 1 is site 0's neighbour along the last axis

    def check_shape(self, shape: tuple[int, ...]) -> None:
        """Raise ``ValueError`` unless ``shape`` is the data's shape."""
        self.source.check_shape(shape)

    def _covariance(self, shape) -> np.ndarray:
        return _ring_covariance(self.source)

    def _sample(self, key, num, shape, dtype, method):
        return _draw_shifted(key, device_values(self.source.table, jnp.dtype(dtype).name), num, self.source.grid)


@functools.lru_cache(maxsize=16)
def _ring_covariance(source: EmpiricalModel) -> np.ndarray:
    grid = source.grid
    out = ring_average(source.covariance(grid[0] if len(grid) == 1 else grid), grid)
    np.fill_diagonal(out, 1.0)  # the mean of a unit diagonal, up to rounding
    out.setflags(write=False)
    return out
