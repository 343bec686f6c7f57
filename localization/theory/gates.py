r"""Gating structures of the gated deep linear network (GDLN; Saxe, Sodhani & Lewallen 2022).

A gating is a fixed map from an input :math:`x\in\mathbb R^N` to :math:`P` gate values
:math:`g_p(x)\in\{0,1\}`. The GDLN model of the ReLU neuron (notes 001 §4, notes 003 §1) replaces the
neuron's own gate :math:`\mathbb 1(\langle w, x\rangle>0)` by gates that do not depend on the weights.
Every gating of this module is a set of half-spaces,

.. math::

    g_p(x) = \mathbb 1\bigl(\langle n_p, x\rangle > 0\bigr),\qquad p = 1,\dots,P,

with normals :math:`n_p` (the rows of ``normals``, shape (P, N)):

* :class:`CoordinateGate`: :math:`n_p = e_{i_p}`, the gate :math:`\mathbb 1(x_i>0)` of notes 001
  §5 (one chosen coordinate, or every coordinate);
* :class:`BumpGates`: localized bumps :math:`n_p(j) = \exp(-d_N(j, c_p)^2/(2 s^2))` centred at
  :math:`c_p` with width :math:`s` (:math:`d_N` the distance on the ring of :math:`N` sites); as
  :math:`s\to0` a bump gate becomes the coordinate gate of its centre;
* :class:`HalfSpaceGates`: any normals, e.g. random ones
  (``localization.experiments.gdln.random_half_space_gates``, explicit key).

The protocol :class:`Gating` is what the GDLN functions (:mod:`localization.theory.gdln`) need: a
pytree with ``num_gates`` (P), ``num_dims`` (N) and ``__call__(x)`` mapping (..., N) to (..., P)
gate values 0.0 or 1.0 (dtype of ``x`` when floating, else float64). The ReLU network's own gates
frozen at a training time are one more such gating (same module).

Two Gaussian closed forms describe how a half-space gate moves with its normal: for
:math:`X\sim\mathcal N(0,\Sigma)` the probability that the gates of :math:`w` and :math:`v` agree,

.. math::

   \mathbb P\bigl(\operatorname{sign}\langle w, X\rangle = \operatorname{sign}\langle v, X\rangle\bigr)
   = 1 - \theta_\Sigma(w, v)/\pi,

.. math::

   \cos\theta_\Sigma(w, v) = \frac{w^\top\Sigma v}{\sqrt{w^\top\Sigma w\;v^\top\Sigma v}}

(:func:`gaussian_agreement`), and, for the balanced mixture of :math:`\mathcal N(0,\Sigma_0)` and
:math:`\mathcal N(0,\Sigma_1)`, the excess kurtosis of the preactivation
:math:`\kappa(w) = 3\,(s_0^2 - s_1^2)^2/(s_0^2 + s_1^2)^2`, :math:`s_y^2 = w^\top\Sigma_y w`
(:func:`gaussian_mixture_kurtosis`): the preactivation of Gaussian data is heavy-tailed as soon as the two
classes give it different variances. ``localization.experiments.gdln.gate_flips`` estimates both on a
training run.

A concrete input is validated (an array with last axis N, finite entries); traced inputs (inside
``jit``/``vmap``) are not checked.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.data.base import is_traced
from localization.pytree import pytree_dataclass, static_field

__all__ = [
    "Gating",
    "CoordinateGate",
    "BumpGates",
    "HalfSpaceGates",
    "FrozenReLUGates",
    "gaussian_agreement",
    "gaussian_mixture_kurtosis",
]


@runtime_checkable
class Gating(Protocol):
    """A gating structure: ``num_gates`` (P), ``num_dims`` (N) and ``gating(x)``.

    ``gating(x)`` maps inputs (..., N) to gate values (..., P) in {0, 1}. Implementations are frozen
    pytrees (``localization.pytree``).
    """

    @property
    def num_gates(self) -> int:
        """Number of gates P."""
        ...

    @property
    def num_dims(self) -> int:
        """Input dimension N."""
        ...

    def __call__(self, x: ArrayLike) -> jax.Array:
        """Return the gate values (..., P) in {0, 1}, in the dtype of ``x`` (..., N)."""
        ...


def _check_input(x: ArrayLike, num_dims: int) -> jax.Array:
    """Return ``x`` as a JAX array with last axis ``num_dims``; concrete inputs must be finite.

    Integer inputs are converted to float64.

    Parameters
    ----------
    x : ArrayLike
        Inputs, shape (..., ``num_dims``); may be traced.
    num_dims : int
        Required length N of the last axis.

    Returns
    -------
    jax.Array
        ``x``, floating point, shape (..., N).

    Raises
    ------
    TypeError, ValueError
        Naming ``x``: not a real array, wrong last axis, or non-finite entries.
    """
    x = v.float_array("x", x, ndim_min=1, last_dim=num_dims)
    if not is_traced(x):
        arr = np.asarray(x)
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"x must be finite, got non-finite entries (shape {arr.shape})")
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(jnp.float64)
    return x


def _half_space_gates(normals: jax.Array, x: jax.Array) -> jax.Array:
    r"""Return the gate values :math:`\mathbb 1(\langle n_p, x\rangle > 0)`; no validation (jit-safe).

    Parameters
    ----------
    normals : jax.Array
        (P, N) normals :math:`n_p`.
    x : jax.Array
        (..., N) inputs.

    Returns
    -------
    jax.Array
        (..., P) gate values in {0, 1}, in the dtype of ``x``.
    """
    return (x @ jnp.asarray(normals, dtype=x.dtype).T > 0).astype(x.dtype)


def _check_num_dims(num_dims: Any) -> int:
    return v.integer("num_dims", num_dims, 1)


@pytree_dataclass
class CoordinateGate:
    r"""The coordinate gate :math:`g_p(x) = \mathbb 1(x_{i_p} > 0)` (notes 001 §5).

    ``coordinates`` (a tuple of indices in [0, N), or ``None`` for every coordinate, in order) gives
    :math:`i_1,\dots,i_P`. ``CoordinateGate(N, (i,))`` is the single gate of notes 001 Eq. (64).
    """

    num_dims: int = static_field()
    coordinates: tuple[int, ...] | None = static_field(default=None)

    def __post_init__(self):
        n = _check_num_dims(self.num_dims)
        object.__setattr__(self, "num_dims", n)
        coords = self.coordinates
        if coords is None:
            coords = tuple(range(n))
        elif isinstance(coords, (int, np.integer)) and not isinstance(coords, bool):
            coords = (coords,)
        if not isinstance(coords, (tuple, list)) or len(coords) == 0:
            raise TypeError(f"coordinates must be None or a non-empty tuple of integers, got {self.coordinates!r}")
        checked = []
        for k, i in enumerate(coords):
            i = v.integer(f"coordinates[{k}]", i, 0)
            if i >= n:
                raise ValueError(f"coordinates[{k}] must lie in [0, {n - 1}] (num_dims = {n}), got {i}")
            checked.append(i)
        object.__setattr__(self, "coordinates", tuple(checked))

    @property
    def num_gates(self) -> int:
        """Number of gates P (one per coordinate)."""
        return len(self.coordinates)

    @property
    def normals(self) -> np.ndarray:
        """(P, N) float64: the unit vectors :math:`e_{i_p}`."""
        return np.eye(self.num_dims)[list(self.coordinates)]

    def __call__(self, x: ArrayLike) -> jax.Array:
        r"""Return :math:`\mathbb 1(x_{i_p} > 0)`, shape (..., P), for inputs ``x`` (..., N)."""
        x = _check_input(x, self.num_dims)
        return (x[..., jnp.asarray(self.coordinates)] > 0).astype(x.dtype)


def _ring_distance(num_dims: int, centre: float) -> np.ndarray:
    """(N,) float64: the distance on the ring of ``num_dims`` sites from every site to ``centre``."""
    d = np.abs(np.arange(num_dims) - centre) % num_dims
    return np.minimum(d, num_dims - d)


@pytree_dataclass
class BumpGates:
    r"""Localized bump gates :math:`g_p(x) = \mathbb 1(\langle b_p, x\rangle > 0)`.

    The bumps are :math:`b_p(j) = \exp\bigl(-d_N(j, c_p)^2 / (2 s^2)\bigr)`.

    ``centres``: a tuple of positions :math:`c_p` in [0, N) (real numbers allowed), ``width``
    :math:`s > 0` in sites. ``BumpGates.tiling(N, P, width)`` spaces P centres evenly.
    """

    num_dims: int = static_field()
    centres: tuple[float, ...] = static_field()
    width: float = static_field()

    def __post_init__(self):
        n = _check_num_dims(self.num_dims)
        object.__setattr__(self, "num_dims", n)
        if not isinstance(self.centres, (tuple, list)) or len(self.centres) == 0:
            raise TypeError(f"centres must be a non-empty tuple of positions, got {self.centres!r}")
        centres = tuple(v.in_range(f"centres[{k}]", c, 0.0, n, high_open=True) for k, c in enumerate(self.centres))
        object.__setattr__(self, "centres", centres)
        object.__setattr__(self, "width", v.positive("width", self.width))

    @classmethod
    def tiling(cls, num_dims: int, num_gates: int, width: float) -> BumpGates:
        """``num_gates`` bumps with centres ``k * num_dims / num_gates``, k = 0, ..., P - 1."""
        n = _check_num_dims(num_dims)
        p = v.integer("num_gates", num_gates, 1)
        return cls(n, tuple(k * n / p for k in range(p)), width)

    @property
    def num_gates(self) -> int:
        """Number of gates P (one per centre)."""
        return len(self.centres)

    @property
    def normals(self) -> np.ndarray:
        """(P, N) float64: the bumps :math:`b_p` (peak value 1 at an integer centre)."""
        return np.stack([np.exp(-(_ring_distance(self.num_dims, c) ** 2) / (2 * self.width**2)) for c in self.centres])

    def __call__(self, x: ArrayLike) -> jax.Array:
        """Return the gate values (..., P) of inputs ``x`` (..., N)."""
        x = _check_input(x, self.num_dims)
        return _half_space_gates(self.normals, x)


@pytree_dataclass(eq=False)
class HalfSpaceGates:
    r"""Half-space gates :math:`g_p(x) = \mathbb 1(\langle n_p, x\rangle > 0)` with given normals.

    ``normals``: (P, N) real array (a leaf), every row non-zero and finite.
    :meth:`random` draws P unit normals uniformly on the sphere from an explicit key.
    """

    normals: jax.Array

    def __post_init__(self):
        w = v.float_array("normals", self.normals, ndim_min=2)
        if w.ndim != 2:
            raise ValueError(f"normals must be a (P, N) array, got shape {tuple(w.shape)}")
        if not is_traced(w):
            arr = np.asarray(w, dtype=np.float64)
            if not np.all(np.isfinite(arr)):
                raise ValueError("normals must be finite, got non-finite entries")
            norms = np.linalg.norm(arr, axis=1)
            if np.any(norms == 0):
                raise ValueError(f"every row of normals must be non-zero, got zero rows {np.flatnonzero(norms == 0)}")
            w = jnp.asarray(arr)
        object.__setattr__(self, "normals", w)

    @property
    def num_gates(self) -> int:
        """Number of gates P (rows of ``normals``)."""
        return int(self.normals.shape[0])

    @property
    def num_dims(self) -> int:
        """Input dimension N (columns of ``normals``)."""
        return int(self.normals.shape[1])

    def __call__(self, x: ArrayLike) -> jax.Array:
        """Return the gate values (..., P) of inputs ``x`` (..., N)."""
        x = _check_input(x, self.num_dims)
        return _half_space_gates(self.normals, x)


@pytree_dataclass(eq=False)
class FrozenReLUGates:
    r"""The ReLU units' own gates frozen at a training time :math:`t` (notes 001 Eq. (44)).

    :math:`g_p(x) = \mathbb 1(\langle w_p(t), x\rangle > 0)`.

    ``weights``: (P, N) real array (a leaf), the P units' weights at time ``time``; every row non-zero
    and finite. ``time`` (static, finite, >= 0) records when they were frozen, on the book's time axis
    (steps × learning rate). :meth:`at` takes them from a recorded run
    (``localization.trajectory.Trajectory``; see ``localization.experiments.gdln.gate_flips`` for how much they move).
    """

    weights: jax.Array
    time: float = static_field(default=0.0)

    def __post_init__(self):
        object.__setattr__(self, "weights", HalfSpaceGates(self.weights).normals)
        object.__setattr__(self, "time", v.nonnegative("time", self.time))

    @classmethod
    def at(cls, times: ArrayLike, weights: ArrayLike, index: int) -> FrozenReLUGates:
        """Return the gates of checkpoint ``index`` of a run.

        Parameters
        ----------
        times : ArrayLike
            (C,) checkpoint times, e.g. a ``Trajectory``'s ``times``.
        weights : ArrayLike
            (C, P, N), or (C, N) for a single neuron (P = 1), e.g. one seed's ``weights``.
        index : int
            Checkpoint, in [-C, C - 1].

        Returns
        -------
        FrozenReLUGates
            The gates of ``weights[index]`` at time ``times[index]``.
        """
        t = np.asarray(v.float_array("times", times, ndim_min=1), dtype=np.float64)
        w = v.float_array("weights", weights, ndim_min=2)
        if t.ndim != 1 or w.ndim not in (2, 3) or w.shape[0] != t.shape[0]:
            raise ValueError(
                f"times must be (C,) and weights (C, P, N) or (C, N) with the same C, got shapes {t.shape} "
                f"and {tuple(w.shape)}"
            )
        i = v.integer("index", index, -t.shape[0])
        if i >= t.shape[0]:
            raise ValueError(f"index must lie in [-{t.shape[0]}, {t.shape[0] - 1}], got {index}")
        wi = w[i] if w.ndim == 3 else w[i][None]
        return cls(wi, float(t[i]))

    @property
    def num_gates(self) -> int:
        """Number of gates P (units)."""
        return int(self.weights.shape[0])

    @property
    def num_dims(self) -> int:
        """Input dimension N."""
        return int(self.weights.shape[1])

    def __call__(self, x: ArrayLike) -> jax.Array:
        """Return the gate values (..., P) of inputs ``x`` (..., N)."""
        x = _check_input(x, self.num_dims)
        return _half_space_gates(self.weights, x)


# -------------------------------------------------------------------------------------------------
# Gaussian closed forms of half-space gates
# -------------------------------------------------------------------------------------------------
def _finite(name: str, value: Any, ndim_min: int) -> np.ndarray:
    arr = np.asarray(v.float_array(name, value, ndim_min=ndim_min), dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got non-finite entries (shape {arr.shape})")
    return arr


def _covariance(name: str, cov: ArrayLike, n: int) -> np.ndarray:
    c = _finite(name, cov, 2)
    if c.shape != (n, n):
        raise ValueError(f"{name} must be an (N, N) = ({n}, {n}) matrix, got shape {c.shape}")
    if not np.allclose(c, c.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.abs(c).max()))):
        raise ValueError(f"{name} must be symmetric")
    if np.linalg.eigvalsh(c).min() < -1e-10 * max(1.0, float(np.abs(c).max())):
        raise ValueError(f"{name} must be positive semi-definite (smallest eigenvalue < 0)")
    return c


def _quadratic(name: str, w: np.ndarray, c: np.ndarray) -> np.ndarray:
    q = np.einsum("...i,ij,...j->...", w, c, w)
    if np.any(q <= 0):
        raise ValueError(
            f"{name} must have w^T cov w > 0 for every vector (the preactivation must not be constant), "
            f"got {int(np.sum(q <= 0))} vector(s) with w^T cov w = 0"
        )
    return q


def gaussian_agreement(w: ArrayLike, v: ArrayLike, cov: ArrayLike) -> np.ndarray:
    r"""Return the probability that the half-space gates of ``w`` and ``v`` agree on :math:`X\sim\mathcal N(0,\Sigma)`.

    .. math:: &\mathbb P\bigl(\mathbb 1(\langle w, X\rangle > 0) = \mathbb 1(\langle v, X\rangle > 0)\bigr)\\
       &\quad= 1 - \frac{1}{\pi}\arccos\frac{w^\top\Sigma v}{\sqrt{w^\top\Sigma w\;v^\top\Sigma v}}

    (the two preactivations are a bivariate normal pair; Sheppard's formula). Notes 001 Eq. (45)
    for Gaussian inputs.

    Parameters
    ----------
    w, v : (..., N) real arrays, broadcast against each other; finite, with :math:`w^\top\Sigma w>0`.
    cov : (N, N) symmetric positive semi-definite covariance :math:`\Sigma`.

    Returns
    -------
    (...) float64 NumPy array in [0, 1].

    Raises
    ------
    TypeError if an argument is not a real array; ValueError for non-finite entries, a wrong shape,
    a covariance that is not symmetric PSD, or a vector with ``w^T cov w = 0``.
    """
    w = _finite("w", w, 1)
    v = _finite("v", v, 1)
    if w.shape[-1] != v.shape[-1]:
        raise ValueError(f"w and v must have the same last axis N, got shapes {w.shape} and {v.shape}")
    c = _covariance("cov", cov, w.shape[-1])
    w, v = np.broadcast_arrays(w, v)
    cross = np.einsum("...i,ij,...j->...", w, c, v)
    rho = cross / np.sqrt(_quadratic("w", w, c) * _quadratic("v", v, c))
    return 1.0 - np.arccos(np.clip(rho, -1.0, 1.0)) / np.pi


def gaussian_mixture_kurtosis(w: ArrayLike, cov0: ArrayLike, cov1: ArrayLike) -> np.ndarray:
    r"""Return the excess kurtosis of :math:`\langle w, X\rangle` for a balanced Gaussian mixture.

    The mixture is the balanced one of :math:`\mathcal N(0,\Sigma_0)` and :math:`\mathcal N(0,\Sigma_1)`:

    .. math:: \kappa(w) &= \frac{\tfrac32(s_0^4+s_1^4)}{\bigl(\tfrac12(s_0^2+s_1^2)\bigr)^2} - 3\\
       &= \frac{3\,(s_0^2-s_1^2)^2}{(s_0^2+s_1^2)^2},\qquad s_y^2 = w^\top\Sigma_y w.

    It lies in [0, 3); it is 0 only when both classes give the preactivation the same variance.

    Parameters
    ----------
    w : (..., N) real array, finite, with :math:`s_0^2 + s_1^2 > 0`.
    cov0, cov1 : (N, N) symmetric positive semi-definite class covariances.

    Returns
    -------
    (...) float64 NumPy array.

    Raises
    ------
    TypeError/ValueError as :func:`gaussian_agreement` (for ``w^T (cov0 + cov1) w = 0``).
    """
    w = _finite("w", w, 1)
    n = w.shape[-1]
    c0 = _covariance("cov0", cov0, n)
    c1 = _covariance("cov1", cov1, n)
    s2 = _quadratic("w", w, c0 + c1)
    s0 = np.einsum("...i,ij,...j->...", w, c0, w)
    s1 = s2 - s0
    return 3.0 * (s0 - s1) ** 2 / s2**2
