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
* :class:`HalfSpaceGates`: any normals, e.g. random ones (:meth:`HalfSpaceGates.random`, explicit key).

The protocol :class:`Gating` is what the GDLN functions (:mod:`localization.theory.gdln`) need: a
pytree with ``num_gates`` (P), ``num_dims`` (N) and ``__call__(x)`` mapping (..., N) to (..., P)
gate values 0.0 or 1.0 (dtype of ``x`` when floating, else float64). The ReLU network's own gates
frozen at a training time are one more such gating (same module).

A concrete input is validated (an array with last axis N, finite entries); traced inputs (inside
``jit``/``vmap``) are not checked.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np

from localization import validation as V
from localization.data.base import is_traced
from localization.pytree import pytree_dataclass, static_field

__all__ = ["Gating", "half_space_gates", "CoordinateGate", "BumpGates", "HalfSpaceGates", "FrozenReLUGates"]


@runtime_checkable
class Gating(Protocol):
    """A gating structure: ``num_gates`` (P), ``num_dims`` (N) and ``gating(x)``: (..., N) -> (..., P)
    gate values in {0, 1}. Implementations are frozen pytrees (``localization.pytree``)."""

    @property
    def num_gates(self) -> int: ...

    @property
    def num_dims(self) -> int: ...

    def __call__(self, x: Any) -> jax.Array: ...


def check_input(x: Any, num_dims: int) -> jax.Array:
    """``x`` as a JAX array with last axis ``num_dims``; concrete inputs must be finite.

    Integer inputs are converted to float64. Raises ``TypeError``/``ValueError`` naming ``x``.
    """
    x = V.float_array("x", x, ndim_min=1, last_dim=num_dims)
    if not is_traced(x):
        arr = np.asarray(x)
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"x must be finite, got non-finite entries (shape {arr.shape})")
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(jnp.float64)
    return x


def half_space_gates(normals: jax.Array, x: jax.Array) -> jax.Array:
    r"""Gate values :math:`\mathbb 1(\langle n_p, x\rangle > 0)`: ``normals`` (P, N), ``x`` (..., N)
    -> (..., P) in the dtype of ``x``. No validation (jit-safe)."""
    return (x @ jnp.asarray(normals, dtype=x.dtype).T > 0).astype(x.dtype)


def _check_num_dims(num_dims: Any) -> int:
    return V.integer("num_dims", num_dims, 1)


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
            i = V.integer(f"coordinates[{k}]", i, 0)
            if i >= n:
                raise ValueError(f"coordinates[{k}] must lie in [0, {n - 1}] (num_dims = {n}), got {i}")
            checked.append(i)
        object.__setattr__(self, "coordinates", tuple(checked))

    @property
    def num_gates(self) -> int:
        return len(self.coordinates)

    @property
    def normals(self) -> np.ndarray:
        """(P, N) float64: the unit vectors :math:`e_{i_p}`."""
        return np.eye(self.num_dims)[list(self.coordinates)]

    def __call__(self, x: Any) -> jax.Array:
        x = check_input(x, self.num_dims)
        return (x[..., jnp.asarray(self.coordinates)] > 0).astype(x.dtype)


def ring_distance(num_dims: int, centre: float) -> np.ndarray:
    """(N,) float64: the distance on the ring of ``num_dims`` sites from every site to ``centre``."""
    d = np.abs(np.arange(num_dims) - centre) % num_dims
    return np.minimum(d, num_dims - d)


@pytree_dataclass
class BumpGates:
    r"""Localized bump gates :math:`g_p(x) = \mathbb 1(\langle b_p, x\rangle > 0)`,
    :math:`b_p(j) = \exp\bigl(-d_N(j, c_p)^2 / (2 s^2)\bigr)`.

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
        centres = tuple(V.in_range(f"centres[{k}]", c, 0.0, n, high_open=True) for k, c in enumerate(self.centres))
        object.__setattr__(self, "centres", centres)
        object.__setattr__(self, "width", V.positive("width", self.width))

    @classmethod
    def tiling(cls, num_dims: int, num_gates: int, width: float) -> BumpGates:
        """``num_gates`` bumps with centres ``k * num_dims / num_gates``, k = 0, ..., P - 1."""
        n = _check_num_dims(num_dims)
        p = V.integer("num_gates", num_gates, 1)
        return cls(n, tuple(k * n / p for k in range(p)), width)

    @property
    def num_gates(self) -> int:
        return len(self.centres)

    @property
    def normals(self) -> np.ndarray:
        """(P, N) float64: the bumps :math:`b_p` (peak value 1 at an integer centre)."""
        return np.stack([np.exp(-(ring_distance(self.num_dims, c) ** 2) / (2 * self.width**2)) for c in self.centres])

    def __call__(self, x: Any) -> jax.Array:
        x = check_input(x, self.num_dims)
        return half_space_gates(self.normals, x)


@pytree_dataclass(eq=False)
class HalfSpaceGates:
    r"""Half-space gates :math:`g_p(x) = \mathbb 1(\langle n_p, x\rangle > 0)` with given normals.

    ``normals``: (P, N) real array (a leaf), every row non-zero and finite.
    :meth:`random` draws P unit normals uniformly on the sphere from an explicit key.
    """

    normals: jax.Array

    def __post_init__(self):
        w = V.float_array("normals", self.normals, ndim_min=2)
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

    @classmethod
    def random(cls, key: Any, num_dims: int, num_gates: int) -> HalfSpaceGates:
        """``num_gates`` independent normals, uniform on the unit sphere of R^``num_dims`` (float64)."""
        key = V.key("key", key)
        n = _check_num_dims(num_dims)
        p = V.integer("num_gates", num_gates, 1)
        z = jax.random.normal(key, (p, n), dtype=jnp.float64)
        return cls(z / jnp.linalg.norm(z, axis=1, keepdims=True))

    @property
    def num_gates(self) -> int:
        return int(self.normals.shape[0])

    @property
    def num_dims(self) -> int:
        return int(self.normals.shape[1])

    def __call__(self, x: Any) -> jax.Array:
        x = check_input(x, self.num_dims)
        return half_space_gates(self.normals, x)


@pytree_dataclass(eq=False)
class FrozenReLUGates:
    r"""The ReLU units' own gates frozen at a training time :math:`t` (notes 001 Eq. (44)):
    :math:`g_p(x) = \mathbb 1(\langle w_p(t), x\rangle > 0)`.

    ``weights``: (P, N) real array (a leaf), the P units' weights at time ``time``; every row non-zero
    and finite. ``time`` (static, finite, >= 0) records when they were frozen, on the book's time axis
    (steps × learning rate). :meth:`at` takes them from a recorded run
    (``localization.trajectory.Trajectory``; see ``theory.gate_flips`` for how much they move).
    """

    weights: jax.Array
    time: float = static_field(default=0.0)

    def __post_init__(self):
        object.__setattr__(self, "weights", HalfSpaceGates(self.weights).normals)
        object.__setattr__(self, "time", V.nonnegative("time", self.time))

    @classmethod
    def at(cls, times: Any, weights: Any, index: int) -> FrozenReLUGates:
        """The gates of checkpoint ``index`` of a run: ``times`` (C,) and ``weights`` (C, P, N) or (C, N)
        (a single neuron, P = 1), e.g. a ``Trajectory``'s ``times`` and one seed's ``weights``."""
        t = np.asarray(V.float_array("times", times, ndim_min=1), dtype=np.float64)
        w = V.float_array("weights", weights, ndim_min=2)
        if t.ndim != 1 or w.ndim not in (2, 3) or w.shape[0] != t.shape[0]:
            raise ValueError(
                f"times must be (C,) and weights (C, P, N) or (C, N) with the same C, got shapes {t.shape} "
                f"and {tuple(w.shape)}"
            )
        i = V.integer("index", index, -t.shape[0])
        if i >= t.shape[0]:
            raise ValueError(f"index must lie in [-{t.shape[0]}, {t.shape[0] - 1}], got {index}")
        wi = w[i] if w.ndim == 3 else w[i][None]
        return cls(wi, float(t[i]))

    @property
    def num_gates(self) -> int:
        return int(self.weights.shape[0])

    @property
    def num_dims(self) -> int:
        return int(self.weights.shape[1])

    def __call__(self, x: Any) -> jax.Array:
        x = check_input(x, self.num_dims)
        return half_space_gates(self.weights, x)
