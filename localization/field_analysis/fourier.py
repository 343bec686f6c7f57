r"""Fields in Fourier space: frequency shares, the dominant frequency, FFT correlations, sinusoid fits.

Part of :mod:`localization.field_analysis` (its docstring states the rules on ties and the mean, and
which functions are JAX and which NumPy).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import numpy as np
import scipy.optimize
from jax.typing import ArrayLike

from localization import validation as v
from localization.field_analysis.base import TIE_RTOL, Shape, array_module, as_fields, as_grid

__all__ = [
    "frequency_power",
    "dominant_frequency",
    "cross_correlate",
    "shift_correlation",
    "Alignment",
    "aligned_correlation",
    "within_similarity",
    "SinusoidFit",
    "fit_sinusoid",
    "ContinuousSinusoidFit",
    "fit_continuous_sinusoid",
]


# -------------------------------------------------------------------------------------------------
# frequencies
# -------------------------------------------------------------------------------------------------
def frequency_power(w: ArrayLike, n: Shape = None) -> np.ndarray:
    r"""Share of :math:`\lVert w\rVert^2` carried by each real Fourier wave of the ring or torus.

    The waves are indexed by the ``numpy.fft.rfftn`` half-grid (last axis 0, …, ⌊L/2⌋, the other axes
    0, …, L−1). A wave and its conjugate (wave-vectors m and −m: a cosine and a sine of one frequency) are
    counted together, at the first of the two in that order, and the other entry is 0; so the result does
    not depend on the phase. By Parseval the shares sum to 1. On a ring: shares of k = 0, …, ⌊N/2⌋.

    Parameters
    ----------
    w : ArrayLike
        ``(..., N)`` finite fields, N = prod(n) ≥ 2, none all zero.
    n : int or tuple of int, optional
        Ring size or grid shape (default: a ring of N sites).

    Returns
    -------
    numpy.ndarray
        ``(..., L_1, …, L_{d-1}, ⌊L_d/2⌋ + 1)`` float64 shares (``(..., ⌊N/2⌋ + 1)`` on a ring).
    """
    w, shape = as_fields("w", w, n)
    if math.prod(shape) < 2:
        raise ValueError(f"w must have at least 2 sites, got shape {w.shape} for n = {shape}")
    total = np.sum(w * w, axis=-1)
    if np.any(total == 0):
        raise ValueError("frequency_power is undefined for the zero vector (valid input: a non-zero entry per vector)")
    axes = tuple(range(-len(shape), 0))
    power = np.abs(np.fft.rfftn(as_grid(w, shape), axes=axes)) ** 2
    last = shape[-1]
    power[..., 1 : (last + 1) // 2] *= 2  # the conjugate wave lies outside the half-grid
    if len(shape) > 1:  # on the slices last = 0 and last = L/2 both waves of a pair lie inside: fold
        lead = tuple(range(-(len(shape) - 1), 0))  # the other axes of one slice

        def mirror(a):  # a[..., -i mod L] on the other axes: the conjugate wave-vector's entry
            return np.roll(np.flip(a, lead), 1, lead)

        idx = np.arange(math.prod(shape[:-1])).reshape(shape[:-1])
        conj = mirror(idx)
        for j in (0, last // 2) if last % 2 == 0 else (0,):
            s = power[..., j]
            power[..., j] = np.where(idx < conj, s + mirror(s), np.where(idx == conj, s, 0.0))
    return power / (math.prod(shape) * total.reshape(total.shape + (1,) * len(shape)))


def dominant_frequency(w: ArrayLike, n: Shape = None, *, exclude_mean: bool = False) -> np.ndarray:
    r"""Frequency of the real Fourier wave with the largest share of :math:`\lVert w\rVert^2`.

    The shares are :func:`frequency_power`'s. Ties go to the first wave in its order (on a ring, the
    lowest frequency); shares within a relative ``1e-12`` of the largest are tied.

    Parameters
    ----------
    w : ArrayLike
        ``(..., N)`` finite fields, N = prod(n) ≥ 2, none all zero; with ``exclude_mean``, none constant.
    n : int or tuple of int, optional
        Ring size or grid shape (default: a ring of N sites).
    exclude_mean : bool
        Rank the non-constant waves only (frequency 0 never wins).

    Returns
    -------
    numpy.ndarray
        Ring: ``(...)`` int64 k in ``[0, N/2]``. Torus: ``(...)`` float64 length
        :math:`\sqrt{\sum_a m_a^2}` of the wave-vector with components :math:`|m_a| \le L_a/2`.
    """
    if not isinstance(exclude_mean, bool):
        raise TypeError(f"exclude_mean must be a bool, got {exclude_mean!r}")
    w, shape = as_fields("w", w, n)
    share = frequency_power(w, shape)
    half = share.shape[w.ndim - 1 :]
    share = share.reshape(w.shape[:-1] + (-1,))
    if exclude_mean:
        share[..., 0] = -1.0
        if np.any(share.max(axis=-1) <= 1e-24):  # no wave up to round-off: a constant (or zero) field
            raise ValueError("w must have no constant (or zero) field: without a wave there is no dominant mode")
    index = np.unravel_index(_strongest(share), half)
    comps = [np.minimum(i, L - i) for i, L in zip(index, shape, strict=True)]
    if len(shape) == 1:
        return comps[0].astype(np.int64)
    return np.sqrt(sum(c.astype(np.float64) ** 2 for c in comps))


def _strongest(share: np.ndarray) -> np.ndarray:
    """Index of the largest share along the last axis; shares within ``TIE_RTOL`` of it tie to the first."""
    return np.argmax(share >= share.max(axis=-1, keepdims=True) * (1 - TIE_RTOL), axis=-1)


# -------------------------------------------------------------------------------------------------
# correlations
# -------------------------------------------------------------------------------------------------
def cross_correlate(w: ArrayLike, x: ArrayLike, n: Shape = None) -> jax.Array | np.ndarray:
    r"""Inner products of every periodic translate of ``w`` with ``x``, by FFT.

    :math:`h_\tau=\langle T_\tau w, x\rangle=\sum_i w_{i-\tau}x_i` (indices modulo n per axis), i.e.
    ``h[τ] = (np.roll(w, τ) * x).sum()`` on a ring.

    Parameters
    ----------
    w, x : ArrayLike
        ``(..., N)`` broadcastable, N = prod(n). JAX in, JAX out (jit-able), else NumPy float64.
    n : int or tuple of int, optional
        Ring size or grid shape (default: a ring of N sites); static under ``jit``.

    Returns
    -------
    jax.Array or numpy.ndarray
        ``(..., N)``: entry τ (a flat shift on a grid) is :math:`h_\tau`.
    """
    xp = array_module(w, x)
    if xp is np:
        w = np.asarray(v.float_array("w", w, ndim_min=1), np.float64)
        x = np.asarray(v.float_array("x", x, ndim_min=1), np.float64)
    if w.ndim < 1 or x.ndim < 1 or w.shape[-1] != x.shape[-1]:
        raise ValueError(f"w and x must be fields (..., N) with the same N, got shapes {w.shape} and {x.shape}")
    shape = (w.shape[-1],) if n is None else v.shape("n", n, minimum=1)
    if math.prod(shape) != w.shape[-1]:
        raise ValueError(f"w and x must have last axis prod(n) = {math.prod(shape)} for n = {n!r}, got {w.shape[-1]}")
    axes = tuple(range(-len(shape), 0))
    fw = xp.fft.rfftn(w.reshape(w.shape[:-1] + shape), axes=axes)
    fx = xp.fft.rfftn(x.reshape(x.shape[:-1] + shape), axes=axes)
    h = xp.fft.irfftn(xp.conj(fw) * fx, s=shape, axes=axes)
    return h.reshape(h.shape[: h.ndim - len(shape)] + (-1,))


def shift_correlation(a: ArrayLike, b: ArrayLike, n: Shape = None) -> np.ndarray:
    r"""Cosine similarity of fields ``a`` with every periodic translate of ``b``.

    :math:`c_s=\langle a,T_s b\rangle/(\|a\|\|b\|)` (:func:`cross_correlate` of ``b`` with ``a``): on a
    ring, entry s is the correlation with ``np.roll(b, s, axis=-1)``.

    Parameters
    ----------
    a, b : ArrayLike
        ``(..., N)`` finite, non-zero, broadcastable.
    n : int or tuple of int, optional
        Ring size or grid shape (default: a ring of N sites).

    Returns
    -------
    numpy.ndarray
        ``(..., N)`` float64.
    """
    a = v.finite_real_array("a", a)
    b = v.finite_real_array("b", b)
    if a.ndim < 1 or b.ndim < 1 or a.shape[-1] != b.shape[-1]:
        raise ValueError(f"a and b must be fields (..., N) with the same N, got shapes {a.shape} and {b.shape}")
    norms = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    if np.any(norms == 0):
        raise ValueError("a and b must be non-zero fields (the correlation is undefined at 0)")
    return cross_correlate(b, a, n) / norms[..., None]


class Alignment(NamedTuple):
    """Best periodic translate of one field onto another.

    Attributes
    ----------
    correlation : numpy.ndarray
        ``(...)`` float64 cosine similarity at the best shift (its absolute value with ``up_to_sign``).
    shift : numpy.ndarray
        ``(...)`` int64 flat shift s: ``np.roll(b, s, axis=-1)`` is aligned with ``a`` on a ring.
    """

    correlation: np.ndarray
    shift: np.ndarray


def aligned_correlation(a: ArrayLike, b: ArrayLike, n: Shape = None, *, up_to_sign: bool = False) -> Alignment:
    r"""Largest cosine similarity of ``a`` with the periodic translates of ``b``, and the shift.

    :math:`\max_s\langle a,T_s b\rangle/(\|a\|\|b\|)` (:func:`shift_correlation`), or with
    ``up_to_sign`` :math:`\max_s|\cdot|`: 1 iff ``b`` is a positive (any nonzero) multiple of a
    translate of ``a``. Translations map every fixed point of a shift-invariant task to another, so this
    compares shapes wherever the peak sits. Clipped to [−1, 1] (round-off).

    Parameters
    ----------
    a, b : ArrayLike
        ``(..., N)`` finite, non-zero, broadcastable.
    n : int or tuple of int, optional
        Ring size or grid shape (default: a ring of N sites).
    up_to_sign : bool
        Compare up to sign as well as translation.

    Returns
    -------
    Alignment
        ``(...)`` correlations and shifts.
    """
    if not isinstance(up_to_sign, bool):
        raise TypeError(f"up_to_sign must be a bool, got {up_to_sign!r}")
    corr = shift_correlation(a, b, n)
    if up_to_sign:
        corr = np.abs(corr)
    shift = np.argmax(corr, axis=-1)
    best = np.take_along_axis(corr, shift[..., None], axis=-1)[..., 0]
    return Alignment(np.clip(best, 0.0 if up_to_sign else -1.0, 1.0), shift.astype(np.int64))


def within_similarity(W: ArrayLike, n: Shape = None) -> float:
    """Mean similarity up to translation and sign over the pairs of fields of a population.

    Parameters
    ----------
    W : ArrayLike
        ``(M, N)`` fields, M ≥ 2, finite and non-zero.
    n : int or tuple of int, optional
        Ring size or grid shape (default: a ring of N sites).

    Returns
    -------
    float
        Mean of :func:`aligned_correlation` (``up_to_sign=True``) over the M(M − 1)/2 pairs.
    """
    W = np.asarray(v.float_array("W", W, ndim_min=2), np.float64)
    if W.ndim != 2 or W.shape[0] < 2:
        raise ValueError(f"W must be (M, N) with M >= 2 fields, got shape {W.shape}")
    i, j = np.triu_indices(W.shape[0], 1)
    return float(aligned_correlation(W[j], W[i], n, up_to_sign=True).correlation.mean())


# -------------------------------------------------------------------------------------------------
# fits
# -------------------------------------------------------------------------------------------------
class SinusoidFit(NamedTuple):
    r"""The best single sinusoid :math:`R\cos(2\pi kj/N+\varphi)` of each field (:func:`fit_sinusoid`).

    Attributes
    ----------
    amplitude : numpy.ndarray
        ``(...)`` R ≥ 0.
    frequency : numpy.ndarray
        ``(...)`` int64 k in ``[0, N/2]`` (cycles per ring): :func:`dominant_frequency`.
    phase : numpy.ndarray
        ``(...)`` φ in (−π, π].
    residual : numpy.ndarray
        ``(...)`` relative residual :math:`\lVert w-\hat w\rVert^2/\lVert w\rVert^2` in [0, 1].
    """

    amplitude: np.ndarray
    frequency: np.ndarray
    phase: np.ndarray
    residual: np.ndarray


def fit_sinusoid(w: ArrayLike) -> SinusoidFit:
    r"""Least-squares fit of one sinusoid :math:`R\cos(2\pi kj/N+\varphi)`, integer k, to each ring field.

    Exact: the sinusoids of different k are orthogonal, so the best one is the real Fourier wave with
    the largest share of :math:`\lVert w\rVert^2` (:func:`dominant_frequency`, its rule on ties), R and
    φ are that wave's DFT coefficient :math:`F_k` (:math:`R=2|F_k|/N`, or :math:`|F_k|/N` at k = 0 and
    N/2; :math:`\varphi=\arg F_k`), and the relative residual is 1 − that share. The fit with a
    continuous frequency and an offset is :func:`fit_continuous_sinusoid`.

    Parameters
    ----------
    w : ArrayLike
        ``(..., N)`` real fields, N ≥ 4, finite, none all zero.

    Returns
    -------
    SinusoidFit
        ``(...)`` amplitudes, frequencies, phases and relative residuals.
    """
    w = v.real_fields("w", w)
    N = w.shape[-1]
    share = frequency_power(w)  # (..., N//2 + 1)
    k = _strongest(share)
    best = np.take_along_axis(share, k[..., None], axis=-1)[..., 0]
    Fk = np.take_along_axis(np.fft.rfft(w, axis=-1), k[..., None], axis=-1)[..., 0]
    weight = np.where((k == 0) | (2 * k == N), 1.0, 2.0)  # the waves k = 0 and N/2 have no conjugate
    return SinusoidFit(weight * np.abs(Fk) / N, k.astype(np.int64), np.angle(Fk), np.clip(1.0 - best, 0.0, 1.0))


class ContinuousSinusoidFit(NamedTuple):
    r"""A least-squares fit :math:`A\sin(2\pi f(x-x_0))+c` at x = 0, …, N−1.

    Attributes
    ----------
    amplitude : float
        A ≥ 0.
    frequency : float
        f in cycles per site (continuous).
    shift : float
        x₀.
    offset : float
        c.
    fit : numpy.ndarray
        ``(N,)`` fitted values.
    relative_error : float
        :math:`\lVert w-\mathrm{fit}\rVert/\lVert w\rVert`.
    """

    amplitude: float
    frequency: float
    shift: float
    offset: float
    fit: np.ndarray
    relative_error: float


def fit_continuous_sinusoid(w: ArrayLike, *, candidates: int = 3) -> ContinuousSinusoidFit:
    r"""Least-squares fit of :math:`A\sin(2\pi f(x-x_0))+c` to one ring field, with a continuous f.

    Levenberg–Marquardt, started from each of the ``candidates`` strongest DFT frequencies of
    :math:`w-\bar w`; the best fit is kept. (The exact fit with an integer frequency, batched, is
    :func:`fit_sinusoid`.)

    Parameters
    ----------
    w : ArrayLike
        ``(N,)`` finite, non-zero field, N ≥ 4.
    candidates : int
        Number of starting frequencies, ≥ 1.

    Returns
    -------
    ContinuousSinusoidFit
        Parameters (A ≥ 0), the fitted values and the relative error.
    """
    w = np.asarray(v.float_array("w", w), dtype=np.float64)
    if w.ndim != 1 or w.shape[0] < 4:
        raise ValueError(f"w must be one receptive field of shape (N,) with N >= 4, got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("w must be finite")
    norm = float(np.linalg.norm(w))
    if norm == 0:
        raise ValueError("w must be non-zero (the relative error ||w - fit|| / ||w|| is undefined at w = 0)")
    candidates = v.integer("candidates", candidates, minimum=1)
    size = w.shape[0]
    x = np.arange(size, dtype=np.float64)
    spectrum = np.fft.rfft(w - w.mean())
    order = np.argsort(-np.abs(spectrum[1:]))[:candidates] + 1  # frequency 0 is the offset's

    def model(p):
        a, f, x0, c = p
        return a * np.sin(2 * np.pi * f * (x - x0)) + c

    best = None
    for k in order:
        amp = 2 * np.abs(spectrum[k]) / size
        x0 = -(np.angle(spectrum[k]) + np.pi / 2) / (2 * np.pi * k / size)  # phase of the cosine series term
        start = np.array([amp, k / size, x0, w.mean()])
        res = scipy.optimize.least_squares(lambda p: model(p) - w, start, method="lm")
        if best is None or res.cost < best.cost:
            best = res
    a, f, x0, c = (float(t) for t in best.x)
    if a < 0:  # one sign convention: A ≥ 0 (shift by half a period)
        a, x0 = -a, x0 + 0.5 / f
    fit = model((a, f, x0, c))
    return ContinuousSinusoidFit(a, f, x0, c, fit, float(np.linalg.norm(w - fit)) / norm)
