r"""Populations of receptive fields: how many localize, which frequencies the others carry, where the
peaks sit and how they pair by sign (the many-neuron chapter, paper §4.4).

Fields are always flattened, ``(..., N)`` with ``N = prod(n)``, in the data models' row-major layout;
``n`` is the input size as everywhere in the library — an int (a ring of N sites) or a grid shape such
as ``(30, 30)`` (a torus) — and defaults to a ring of N sites. Leading axes are kept.

* :func:`window_share` — the largest share of :math:`\|w\|^2` inside one periodic window of ``width``
  sites (a ``width`` × ``width`` box on a 2-D torus), the chapter's measure of localization;
* :func:`dominant_mode` — the Fourier frequency carrying the most power, the mean excluded;
* :func:`peak_sites` — the site of the largest :math:`|w_i|` and the sign there;
* :func:`sign_pairing` — for each field of a population, the periodic distance to the nearest peak of
  opposite sign; :func:`pairing_null` — the same for peaks placed uniformly at random;
* :func:`tiling_gaps`, :func:`gap_cv` — how evenly peaks tile a ring: the sorted circular gaps between
  them and their coefficient of variation.

These are post-processing functions on NumPy arrays (float64), not traced by JAX, except
:func:`pairing_null`, whose Monte Carlo draws use an explicit JAX ``key``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import numpy as np
from numpy.typing import ArrayLike

from localization import validation as v

__all__ = [
    "window_share",
    "dominant_mode",
    "peak_sites",
    "Pairing",
    "sign_pairing",
    "pairing_null",
    "tiling_gaps",
    "gap_cv",
    "shift_correlation",
]


def _fields(name: str, w: ArrayLike, n: Any) -> tuple[np.ndarray, tuple[int, ...]]:
    """Validated float64 fields (..., N) and the input shape n (N = prod(n))."""
    w = np.asarray(v.float_array(name, w, ndim_min=1), np.float64)
    shape = (w.shape[-1],) if n is None else v.shape("n", n, minimum=1)
    if w.shape[-1] != math.prod(shape):
        raise ValueError(f"{name} must have last axis prod(n) = {math.prod(shape)} for n = {n!r}, got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} must be finite (drop diverged initialisations first)")
    return w, shape


def _grid(w: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return w.reshape(w.shape[:-1] + shape)


def window_share(w: ArrayLike, width: int, n: int | tuple[int, ...] | None = None) -> np.ndarray:
    r"""Largest share of the squared weight inside one periodic window,
    :math:`s_W(w)=\max_j \sum_{i\in B_j} w_i^2/\|w\|^2` with :math:`B_j` the ``width`` consecutive sites
    starting at j (a ``width``-sided box on a grid, per axis).

    Parameters
    ----------
    w : (..., N) fields, N = prod(n). A zero field has no share: ``ValueError``.
    width : window side in sites, 1 ≤ width ≤ every axis length.
    n : ring size or grid shape (default: a ring of N sites).

    Returns
    -------
    (...) shares in [width^d/N, 1] (d = len(n)); computed with circular convolutions (FFT), O(N log N).
    """
    w, shape = _fields("w", w, n)
    width = v.integer("width", width, 1)
    if width > min(shape):
        raise ValueError(f"width must be at most the shortest axis {min(shape)} of n = {shape}, got {width}")
    power = _grid(w**2, shape)
    total = power.reshape(w.shape[:-1] + (-1,)).sum(-1)
    if np.any(total == 0):
        raise ValueError("w must have no all-zero field (its window share is undefined)")
    axes = tuple(range(-len(shape), 0))
    box = np.zeros(shape)
    box[tuple(slice(0, width) for _ in shape)] = 1.0
    # window sum starting at j = sum_i power[j + i] box[i]: a circular cross-correlation
    sums = np.fft.irfftn(np.fft.rfftn(power, axes=axes) * np.conj(np.fft.rfftn(box)), s=shape, axes=axes)
    best = sums.reshape(w.shape[:-1] + (-1,)).max(-1)
    return np.clip(best / total, 0.0, 1.0)


def dominant_mode(w: ArrayLike, n: int | tuple[int, ...] | None = None) -> np.ndarray:
    r"""Frequency of the Fourier component with the most power, the mean (frequency 0) excluded.

    Ring: the integer mode m ∈ {1, …, ⌊N/2⌋} (m and N − m are the same real wave). Grid: the length
    :math:`\sqrt{\sum_a m_a^2}` of the wave-vector with signed components :math:`|m_a|\le L_a/2` (float).

    Parameters
    ----------
    w : (..., N) fields, N = prod(n) ≥ 2; a constant (or zero) field has no mode: ``ValueError``.
    n : ring size or grid shape (default: a ring of N sites).

    Returns
    -------
    (...) int64 (ring) or float64 (grid). Ties go to the first mode in FFT order.
    """
    w, shape = _fields("w", w, n)
    if math.prod(shape) < 2:
        raise ValueError(f"n must have at least 2 sites, got {shape}")
    axes = tuple(range(-len(shape), 0))
    power = np.abs(np.fft.fftn(_grid(w, shape), axes=axes)) ** 2
    power = power.reshape(w.shape[:-1] + (-1,))
    total = power.sum(axis=-1)
    power[..., 0] = -1.0  # the mean is not a wave
    if np.any(power.max(axis=-1) <= 1e-24 * total):  # zero up to round-off: constant or zero field
        raise ValueError("w must have no constant (or zero) field: without a wave there is no dominant mode")
    best = np.argmax(power, axis=-1)
    index = np.unravel_index(best, shape)
    signed = [np.minimum(i, L - i) for i, L in zip(index, shape, strict=True)]
    if len(shape) == 1:
        return signed[0].astype(np.int64)
    return np.sqrt(sum(s.astype(np.float64) ** 2 for s in signed))


def peak_sites(w: ArrayLike, n: int | tuple[int, ...] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Site of each field's largest absolute entry and the sign of w there.

    Returns
    -------
    positions : (..., d) int64 grid coordinates (d = len(n); (..., 1) on a ring).
    signs : (...) float64, ±1 (a zero field: ``ValueError``).
    """
    w, shape = _fields("w", w, n)
    best = np.argmax(np.abs(w), axis=-1)
    value = np.take_along_axis(w, best[..., None], axis=-1)[..., 0]
    if np.any(value == 0):
        raise ValueError("w must have no all-zero field (its peak is undefined)")
    positions = np.stack(np.unravel_index(best, shape), axis=-1).astype(np.int64)
    return positions, np.sign(value)


def _torus_distance(p: np.ndarray, q: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    d = np.abs(p - q) % np.asarray(shape)
    d = np.minimum(d, np.asarray(shape) - d)
    return np.sqrt(np.sum(d.astype(np.float64) ** 2, axis=-1))


def _nearest_opposite(positions: np.ndarray, signs: np.ndarray, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """positions (..., K, d), signs (..., K) -> distance (..., K) (inf where no opposite sign), partner."""
    dist = _torus_distance(positions[..., :, None, :], positions[..., None, :, :], shape)  # (..., K, K)
    opposite = signs[..., :, None] != signs[..., None, :]
    masked = np.where(opposite, dist, np.inf)
    return masked.min(axis=-1), opposite.any(axis=-1)


class Pairing(NamedTuple):
    """Nearest peak of opposite sign, per field.

    Attributes
    ----------
    distance : (..., K) float64 periodic (Euclidean on a torus) distance in sites from the field's peak
        to the nearest peak of a field of opposite sign; **+inf** where no field of opposite sign exists.
    partner : (..., K) bool, False exactly where ``distance`` is +inf.
    """

    distance: np.ndarray
    partner: np.ndarray


def sign_pairing(W: ArrayLike, n: int | tuple[int, ...] | None = None) -> Pairing:
    """For a population W (..., K, N) (K ≥ 2 fields), the distance from each field's peak
    (:func:`peak_sites`) to the nearest peak of a field of the opposite sign. See :class:`Pairing`."""
    W, shape = _fields("W", W, n)
    if W.ndim < 2 or W.shape[-2] < 2:
        raise ValueError(f"W must be a population (..., K, N) with K >= 2 fields, got shape {W.shape}")
    positions, signs = peak_sites(W, shape)
    return Pairing(*_nearest_opposite(positions, signs, shape))


def pairing_null(key: jax.Array, signs: ArrayLike, n: int | tuple[int, ...], num: int) -> np.ndarray:
    """The nearest-opposite-sign distance of :func:`sign_pairing` for K peaks with the given ``signs``
    (K,) (±1) placed independently and uniformly on the sites of ``n``, in ``num`` Monte Carlo draws
    (explicit JAX ``key``). Returns (num, K) float64 distances (+inf where no opposite sign exists, as in
    :class:`Pairing`)."""
    key = v.key("key", key)
    signs = np.asarray(v.float_array("signs", signs, ndim_min=1), np.float64)
    if signs.ndim != 1 or signs.size < 2 or not np.all(np.abs(signs) == 1):
        raise ValueError(f"signs must be a (K,) vector of ±1 with K >= 2, got {signs!r}")
    shape = v.shape("n", n, minimum=1)
    num = v.integer("num", num, 1)
    sites = np.asarray(jax.random.randint(key, (num, signs.size), 0, math.prod(shape)))
    positions = np.stack(np.unravel_index(sites, shape), axis=-1)
    return _nearest_opposite(positions, np.broadcast_to(signs, (num, signs.size)), shape)[0]


def tiling_gaps(positions: ArrayLike, N: int) -> np.ndarray:
    """Circular gaps between peak ``positions`` on a ring of ``N`` sites, sorted ascending.

    Parameters
    ----------
    positions : (K,) integer sites in [0, N), K ≥ 2 (repeats allowed: a shared site gives a gap of 0).
    N : ring size, N ≥ 2.

    Returns
    -------
    (K,) int64 gaps, sorted ascending, adding up to N: evenly spaced peaks give K gaps of N/K; all peaks
    on one site give (0, …, 0, N). Plain NumPy, not traced.
    """
    N = v.integer("N", N, 2)
    p = np.asarray(positions)
    if p.ndim != 1 or p.size < 2 or not np.issubdtype(p.dtype, np.integer) or np.any((p < 0) | (p >= N)):
        raise ValueError(f"positions must be K >= 2 integer sites in [0, {N}), got {positions!r}")
    p = np.sort(p).astype(np.int64)
    return np.sort(np.diff(np.concatenate([p, [p[0] + N]])))


def gap_cv(positions: ArrayLike, N: int) -> float:
    """Coefficient of variation (std / mean, ddof = 0) of the :func:`tiling_gaps` of peak ``positions``
    (K ≥ 2 integer sites on a ring of ``N``): 0 for evenly spaced peaks, about 1 for uniform random
    ones, and sqrt(K − 1) when all peaks share one site. The K gaps add up to N, so the mean is N/K."""
    gaps = tiling_gaps(positions, N).astype(np.float64)
    return float(gaps.std() / gaps.mean())


def shift_correlation(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    r"""Cosine similarity of ring fields ``a`` with every circular shift of ``b``, by FFT:
    :math:`c_s=\langle a,S^sb\rangle/(\|a\|\|b\|)` with ``np.roll(b, s)`` for :math:`S^sb`.

    ``a``, ``b`` : (..., N) finite, non-zero, broadcastable. Returns (..., N) float64: entry ``s`` is the
    correlation with ``np.roll(b, s, axis=-1)``.
    """
    a = v.finite_real_array("a", a)
    b = v.finite_real_array("b", b)
    if a.ndim < 1 or b.ndim < 1 or a.shape[-1] != b.shape[-1]:
        raise ValueError(f"a and b must be fields (..., N) with the same N, got shapes {a.shape} and {b.shape}")
    norms = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    if np.any(norms == 0):
        raise ValueError("a and b must be non-zero fields (the correlation is undefined at 0)")
    c = np.fft.irfft(np.fft.rfft(a) * np.conj(np.fft.rfft(b)), n=a.shape[-1])
    return c / norms[..., None]
