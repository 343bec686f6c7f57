"""Shared argument handling of :mod:`localization.field_analysis`: fields ``(..., N)`` on a ring or torus."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v

__all__ = ["TIE_RTOL", "Shape", "array_module", "as_fields", "as_grid"]

TIE_RTOL = 1e-12  # shares within this relative distance of the largest are tied (FFT rounding)
Shape = int | tuple[int, ...] | None


def array_module(*arrays):
    """Return jax.numpy if any argument is a JAX array (concrete or traced), else numpy."""
    return jnp if any(isinstance(a, jax.Array) for a in arrays) else np


def as_fields(name: str, w: ArrayLike, n: Shape) -> tuple[np.ndarray, tuple[int, ...]]:
    """Return validated float64 fields (..., N) and the grid shape n (N = prod(n))."""
    w = np.asarray(v.float_array(name, w, ndim_min=1), np.float64)
    shape = (w.shape[-1],) if n is None else v.shape("n", n, minimum=1)
    if w.shape[-1] != math.prod(shape) or w.shape[-1] == 0:
        raise ValueError(
            f"{name} must have a non-empty last axis prod(n) = {math.prod(shape)} for n = {n!r}, got shape {w.shape}"
        )
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} must be finite (drop diverged initialisations first)")
    return w, shape


def as_grid(w: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Reshape flat fields ``(..., N)`` to ``(..., *shape)``."""
    return w.reshape(w.shape[:-1] + shape)
