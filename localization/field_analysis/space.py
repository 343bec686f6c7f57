r"""Fields in position space: peaks, periodic distances, window shares, sign pairing and tiling.

Part of :mod:`localization.field_analysis` (its docstring states the rules on ties and the mean, and
which functions are JAX and which NumPy).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.data.base import is_traced
from localization.field_analysis.base import Shape, array_module, as_fields, as_grid

__all__ = [
    "peak_position",
    "peak_sites",
    "PeakAgreement",
    "peak_agreement",
    "circular_distance",
    "window_share",
    "wave_window_share",
    "Pairing",
    "sign_pairing",
    "pairing_null",
    "tiling_gaps",
    "gap_cv",
]


# -------------------------------------------------------------------------------------------------
# peaks
# -------------------------------------------------------------------------------------------------
def peak_position(w: ArrayLike, *, signed: bool = False) -> jax.Array | np.ndarray:
    r"""Flat index of the receptive-field peak along the last axis.

    Default: :math:`\arg\max_i |w_i|`. With sign-symmetric data (S3) the single-neuron loss satisfies
    :math:`\mathcal L(w)=\mathcal L(-w)` (paper Eq. (9)), so a localised field is equally likely to be a
    positive or a negative bump, and the bump is the largest entry of :math:`|w|` in both cases. With
    ``signed=True``: :math:`\arg\max_i w_i` (the positive lobe, which drives the ReLU). Ties go to the
    first index. On a grid the index is flat (:func:`peak_sites` gives coordinates).

    Parameters
    ----------
    w : ArrayLike
        ``(..., N)`` weights; JAX in, JAX out (jit-able), else NumPy.
    signed : bool
        Use ``w`` instead of ``|w|``.

    Returns
    -------
    jax.Array or numpy.ndarray
        ``(...)`` integer positions in ``[0, N)``.
    """
    w = v.float_array("w", w, ndim_min=1)
    if w.shape[-1] == 0:
        raise ValueError(f"w must have a non-empty last axis, got shape {tuple(w.shape)}")
    if not isinstance(signed, bool):
        raise TypeError(f"signed must be a bool, got {signed!r}")
    xp = array_module(w)
    return xp.argmax(w if signed else xp.abs(w), axis=-1)


def peak_sites(w: ArrayLike, n: Shape = None) -> tuple[np.ndarray, np.ndarray]:
    """Grid coordinates of each field's largest :math:`|w_i|` (:func:`peak_position`) and the sign there.

    Parameters
    ----------
    w : ArrayLike
        ``(..., N)`` finite fields, N = prod(n); an all-zero field has no peak (``ValueError``).
    n : int or tuple of int, optional
        Ring size or grid shape (default: a ring of N sites).

    Returns
    -------
    positions : numpy.ndarray
        ``(..., d)`` int64 coordinates (d = len(n); ``(..., 1)`` on a ring).
    signs : numpy.ndarray
        ``(...)`` float64, ±1.
    """
    w, shape = as_fields("w", w, n)
    best = peak_position(w)
    value = np.take_along_axis(w, best[..., None], axis=-1)[..., 0]
    if np.any(value == 0):
        raise ValueError("w must have no all-zero field (its peak is undefined)")
    positions = np.stack(np.unravel_index(best, shape), axis=-1).astype(np.int64)
    return positions, np.sign(value)


class PeakAgreement(NamedTuple):
    """Peak positions of two sets of receptive fields and how often they agree (paper §4.2).

    Attributes
    ----------
    peak1, peak2 : numpy.ndarray
        ``(...)`` int64, :func:`peak_position` of ``w1`` and ``w2``.
    offset : numpy.ndarray
        ``(...)`` int64, their :func:`circular_distance`.
    exact, within : numpy.ndarray
        ``(...)`` bool, ``offset == 0`` and ``offset <= tol`` (the paper's "peaks match").
    count_exact, count_within, total : int
        How many of the ``total`` pairs agree exactly and within ``tol``.
    tol : int
        The tolerance used.
    """

    peak1: np.ndarray
    peak2: np.ndarray
    offset: np.ndarray
    exact: np.ndarray
    within: np.ndarray
    count_exact: int
    count_within: int
    total: int
    tol: int


def peak_agreement(w1: ArrayLike, w2: ArrayLike, *, tol: int = 1, signed: bool = False) -> PeakAgreement:
    """Compare the peak positions of two sets of ring fields of equal shape ``(..., N)``.

    A *match* is a circular offset ≤ ``tol`` between the :func:`peak_position` of the two (the
    paper's code used ±1; ``tol=0`` is the exact match its text states).

    Parameters
    ----------
    w1, w2 : ArrayLike
        ``(..., N)`` fields of equal shape.
    tol : int
        Largest offset counted as a match, in ``[0, N // 2]``.
    signed : bool
        Passed to :func:`peak_position`.

    Returns
    -------
    PeakAgreement
        NumPy arrays and counts.
    """
    a = np.asarray(v.float_array("w1", w1, ndim_min=1), dtype=np.float64)
    b = np.asarray(v.float_array("w2", w2, ndim_min=1), dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"w1 and w2 must have equal shapes, got {a.shape} and {b.shape}")
    tol = v.integer("tol", tol, minimum=0)
    n = a.shape[-1]
    if tol > n // 2:
        raise ValueError(f"tol must lie in [0, n//2 = {n // 2}], got {tol}")
    pa = peak_position(a, signed=signed).astype(np.int64)
    pb = peak_position(b, signed=signed).astype(np.int64)
    off = np.asarray(circular_distance(pa, pb, n)).astype(np.int64)
    exact, within = off == 0, off <= tol
    return PeakAgreement(pa, pb, off, exact, within, int(exact.sum()), int(within.sum()), int(off.size), tol)


# -------------------------------------------------------------------------------------------------
# distances
# -------------------------------------------------------------------------------------------------
def circular_distance(i: ArrayLike, j: ArrayLike, n: int | tuple[int, ...]) -> jax.Array | np.ndarray:
    r"""Periodic distance between sites of a ring or a torus.

    Per axis :math:`d_a=\min(|i_a-j_a| \bmod L_a,\ L_a-|i_a-j_a| \bmod L_a)`; on a torus the Euclidean
    length :math:`\sqrt{\sum_a d_a^2}`.

    Parameters
    ----------
    i, j : ArrayLike
        Integer sites, broadcastable. Ring (``n`` an int): positions ``(...)`` in ``[0, n)``. Torus
        (``n`` a tuple of d sizes): coordinates ``(..., d)``. JAX in, JAX out (jit-able), else NumPy.
    n : int or tuple of int
        Ring size or grid shape.

    Returns
    -------
    jax.Array or numpy.ndarray
        ``(...)`` distances: integers on a ring, float64 (NumPy) on a torus.
    """
    ring = not isinstance(n, (tuple, list))
    shape = (v.integer("n", n, 1),) if ring else v.shape("n", n, minimum=1)
    xp = array_module(i, j)
    i, j = xp.asarray(i), xp.asarray(j)
    size = xp.asarray(shape)
    for name, a in (("i", i), ("j", j)):
        if not xp.issubdtype(a.dtype, xp.integer):
            raise TypeError(f"{name} must be integer positions, got dtype {a.dtype}")
        if not ring and (a.ndim < 1 or a.shape[-1] != len(shape)):
            raise ValueError(f"{name} must be coordinates (..., {len(shape)}) on n = {shape}, got shape {a.shape}")
        if not is_traced(a):
            c = np.asarray(a)
            if np.any(c < 0) or np.any(c >= (shape[0] if ring else np.asarray(shape))):
                raise ValueError(f"{name} must lie in [0, n={n}), got {c.tolist()}")
    if ring:
        d = xp.abs(i - j) % shape[0]
        return xp.minimum(d, shape[0] - d)
    d = xp.abs(i - j) % size
    d = xp.minimum(d, size - d).astype(xp.result_type(float))  # float64 for NumPy
    return xp.sqrt(xp.sum(d**2, axis=-1))


def window_share(w: ArrayLike, width: int, n: Shape = None) -> np.ndarray:
    r"""Largest share of the squared weight inside one periodic window of ``width`` sites.

    :math:`s_W(w)=\max_j \sum_{i\in B_j} w_i^2/\|w\|^2` with :math:`B_j` the ``width`` consecutive sites
    starting at j (a ``width``-sided box on a grid), computed with circular convolutions (FFT).

    Parameters
    ----------
    w : ArrayLike
        ``(..., N)`` finite fields, N = prod(n); an all-zero field has no share (``ValueError``).
    width : int
        Window side in sites, 1 ≤ width ≤ every axis length.
    n : int or tuple of int, optional
        Ring size or grid shape (default: a ring of N sites).

    Returns
    -------
    numpy.ndarray
        ``(...)`` float64 shares in ``[width^d/N, 1]`` (d = len(n)).
    """
    w, shape = as_fields("w", w, n)
    width = v.integer("width", width, 1)
    if width > min(shape):
        raise ValueError(f"width must be at most the shortest axis {min(shape)} of n = {shape}, got {width}")
    power = as_grid(w**2, shape)
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


def wave_window_share(m: ArrayLike, width: int, n: int) -> np.ndarray:
    r"""Return the largest window share (:func:`window_share`) of one wave of mode ``m`` on a ring, in closed form.

    For :math:`w_i=\cos(2\pi m i/n+\theta)` at the phase θ that gives the largest share (the
    many-neurons chapter's Eq. (eq-mn-share-sine); when :math:`\sin(2\pi mW/n)/\sin(2\pi m/n)>0`,
    the phase with a crest at the centre of a window),

    .. math:: s_W = \frac{W}{n} + \frac{\lvert\sin(2\pi m W/n)\rvert}{n\,\lvert\sin(2\pi m/n)\rvert}.

    Parameters
    ----------
    m : ArrayLike
        Mode(s), integers with :math:`2m \not\equiv 0 \bmod n` (the constant and alternating fields
        are not waves of this form).
    width : int
        Window length W, 1 ≤ W ≤ n.
    n : int
        Ring size, ≥ 3.

    Returns
    -------
    numpy.ndarray
        float64 shares, the shape of ``m``.
    """
    n = v.integer("n", n, 3)
    width = v.integer("width", width, 1)
    if width > n:
        raise ValueError(f"width must be at most n = {n}, got {width}")
    m = np.asarray(m)
    if not np.issubdtype(m.dtype, np.integer):
        raise TypeError(f"m must be an integer mode or array of modes, got dtype {m.dtype}")
    if np.any((2 * m) % n == 0):
        raise ValueError(f"every mode m must have 2m not divisible by n = {n}, got {m.ravel().tolist()}")
    return width / n + np.abs(np.sin(2 * np.pi * m * width / n)) / (n * np.abs(np.sin(2 * np.pi * m / n)))


def _nearest_opposite(
    positions: np.ndarray, signs: np.ndarray, shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Map positions (..., K, d), signs (..., K) to distance (..., K) (inf: no opposite sign), partner."""
    dist = circular_distance(positions[..., :, None, :], positions[..., None, :, :], shape)  # (..., K, K)
    opposite = signs[..., :, None] != signs[..., None, :]
    return np.where(opposite, dist, np.inf).min(axis=-1), opposite.any(axis=-1)


class Pairing(NamedTuple):
    """Nearest peak of opposite sign, per field.

    Attributes
    ----------
    distance : numpy.ndarray
        ``(..., K)`` float64 periodic (Euclidean on a torus) distance in sites from the field's peak to the
        nearest peak of a field of opposite sign; +inf where no field of opposite sign exists.
    partner : numpy.ndarray
        ``(..., K)`` bool, False exactly where ``distance`` is +inf.
    """

    distance: np.ndarray
    partner: np.ndarray


def sign_pairing(W: ArrayLike, n: Shape = None) -> Pairing:
    """For each field of a population, the distance from its peak to the nearest peak of opposite sign.

    Parameters
    ----------
    W : ArrayLike
        ``(..., K, N)`` populations of K ≥ 2 fields; peaks and signs by :func:`peak_sites`.
    n : int or tuple of int, optional
        Ring size or grid shape (default: a ring of N sites).

    Returns
    -------
    Pairing
        ``(..., K)`` distances and partner flags.
    """
    W, shape = as_fields("W", W, n)
    if W.ndim < 2 or W.shape[-2] < 2:
        raise ValueError(f"W must be a population (..., K, N) with K >= 2 fields, got shape {W.shape}")
    positions, signs = peak_sites(W, shape)
    return Pairing(*_nearest_opposite(positions, signs, shape))


def pairing_null(key: jax.Array, signs: ArrayLike, n: int | tuple[int, ...], num: int) -> np.ndarray:
    """Draw the :func:`sign_pairing` distances of K peaks placed independently and uniformly at random.

    Parameters
    ----------
    key : jax.Array
        PRNG key of the ``num`` Monte Carlo draws.
    signs : ArrayLike
        ``(K,)`` ±1, K ≥ 2: the signs of the fields.
    n : int or tuple of int
        Ring size or grid shape.
    num : int
        Number of draws, ≥ 1.

    Returns
    -------
    numpy.ndarray
        ``(num, K)`` float64 distances (+inf where no opposite sign exists, as in :class:`Pairing`).
    """
    key = v.key("key", key)
    signs = np.asarray(v.float_array("signs", signs, ndim_min=1), np.float64)
    if signs.ndim != 1 or signs.size < 2 or not np.all(np.abs(signs) == 1):
        raise ValueError(f"signs must be a (K,) vector of ±1 with K >= 2, got {signs!r}")
    shape = v.shape("n", n, minimum=1)
    num = v.integer("num", num, 1)
    sites = np.asarray(jax.random.randint(key, (num, signs.size), 0, math.prod(shape)))
    positions = np.stack(np.unravel_index(sites, shape), axis=-1)
    return _nearest_opposite(positions, np.broadcast_to(signs, (num, signs.size)), shape)[0]


def tiling_gaps(positions: ArrayLike, n: int) -> np.ndarray:
    """Circular gaps between peak ``positions`` on a ring of ``n`` sites, sorted ascending.

    Parameters
    ----------
    positions : ArrayLike
        ``(K,)`` integer sites in ``[0, n)``, K ≥ 2 (a shared site gives a gap of 0).
    n : int
        Ring size, ≥ 2.

    Returns
    -------
    numpy.ndarray
        ``(K,)`` int64 gaps adding up to n: evenly spaced peaks give K gaps of n/K; all peaks on one site
        give (0, …, 0, n).
    """
    n = v.integer("n", n, 2)
    p = np.asarray(positions)
    if p.ndim != 1 or p.size < 2 or not np.issubdtype(p.dtype, np.integer) or np.any((p < 0) | (p >= n)):
        raise ValueError(f"positions must be K >= 2 integer sites in [0, {n}), got {positions!r}")
    p = np.sort(p).astype(np.int64)
    return np.sort(np.diff(np.concatenate([p, [p[0] + n]])))


def gap_cv(positions: ArrayLike, n: int) -> float:
    """Coefficient of variation (std / mean, ddof = 0) of the :func:`tiling_gaps` of peak ``positions``.

    0 for evenly spaced peaks, about 1 for uniform random ones, sqrt(K − 1) when all K peaks share a site.

    Parameters
    ----------
    positions : ArrayLike
        ``(K,)`` integer sites in ``[0, n)``, K ≥ 2.
    n : int
        Ring size, ≥ 2.

    Returns
    -------
    float
        The coefficient of variation (the gaps add up to n, so their mean is n/K).
    """
    gaps = tiling_gaps(positions, n).astype(np.float64)
    return float(gaps.std() / gaps.mean())
