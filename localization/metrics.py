r"""Scalar summaries of runs, curves and samples, shared by simulation and theory.

* :func:`ipr` — inverse participation ratio, paper App. A.3:
  :math:`\mathrm{IPR}(w)=\sum_i w_i^4/(\sum_i w_i^2)^2`, in :math:`[1/N, 1]`.
* :func:`normalized_distance` — the shape distance
  :math:`\lVert w_a/\lVert w_a\rVert-w_b/\lVert w_b\rVert\rVert` between receptive fields (paper Fig. 8).
* :func:`first_crossing`, :func:`settling_step` — where a sampled curve first crosses a level
  (interpolated), and from which checkpoint it stays near its final value.
* :func:`sample_excess_kurtosis` — plug-in estimate :math:`m_4/m_2^2-3` along an axis.
* :func:`circular_autocorr` — per-sample circular autocovariance of periodic signals.
* :func:`mean_and_se` — mean over independent samples and its standard error.

The split with :mod:`localization.field_analysis`: a function that maps a field (or a sample) to a number
summarising a run, a curve or a statistic lives here; the geometry of fields on a ring or a torus
(peaks, frequencies, periodic distances, correlations over translations, fits of a field's shape) lives
in :mod:`localization.field_analysis` (:func:`circular_autocorr` uses its FFT correlation).

:func:`ipr` and :func:`sample_excess_kurtosis` are JAX (traceable under ``jit``, acting along the last
axis of a whole ``Trajectory.weights`` array at once); the others are NumPy (float64) post-processing
of concrete arrays, not traceable.
"""

from __future__ import annotations

import functools
import math
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import field_analysis
from localization import validation as v
from localization.data.base import is_traced

__all__ = [
    "ipr",
    "normalized_distance",
    "first_crossing",
    "settling_step",
    "sample_excess_kurtosis",
    "circular_autocorr",
    "mean_and_se",
]


def _weights(name, w):
    w = v.float_array(name, w, ndim_min=1)
    if w.shape[-1] == 0:
        raise ValueError(f"{name} must have a non-empty last axis, got shape {tuple(w.shape)}")
    return jnp.asarray(w)


def ipr(w: ArrayLike) -> jax.Array:
    r"""Inverse participation ratio along the last axis (paper App. A.3, as in Ingrosso & Goldt).

    .. math:: \mathrm{IPR}(w) = \frac{\sum_{i=1}^N w_i^4}{\bigl(\sum_{i=1}^N w_i^2\bigr)^2}

    Scale invariant; equals 1 for a one-hot vector (fully localised) and :math:`1/N` for a vector
    of equal magnitudes (fully delocalised). Computed after dividing by :math:`\max_i|w_i|`, so it
    neither underflows for tiny weights (e.g. at an ``init_scale = 1e-3`` initialisation in float32)
    nor overflows for large ones.

    Parameters
    ----------
    w : (..., N) weights (for a grid receptive field, flatten the grid into the last axis).

    Returns
    -------
    (...) IPR values, in the dtype of ``w`` (float64 for integer input).

    Raises
    ------
    ValueError if any weight vector is entirely zero or non-finite (the IPR is undefined there). Under
    ``jit``/``vmap`` (traced input) the check cannot run; such vectors then give NaN.
    """
    w = _weights("w", w)
    if not jnp.issubdtype(w.dtype, jnp.floating):
        w = w.astype(jnp.float64)
    if not is_traced(w):
        wn = np.asarray(w)
        if not np.all(np.isfinite(wn)):
            raise ValueError("w must be finite for ipr (got inf or NaN entries)")
        zero = ~np.any(wn != 0, axis=-1)
        if np.any(zero):
            where = np.argwhere(np.atleast_1d(zero))[0].tolist()
            raise ValueError(
                f"ipr is undefined for the zero vector: w[{', '.join(map(str, where))}] is all zeros "
                "(valid input: at least one non-zero entry per vector)"
            )
    return _ipr_core(w)


# One compiled program per input shape: called eagerly, the five operations below would each be
# compiled for every new shape (most of the time a chapter spends in this function).
@jax.jit
def _ipr_core(w: jax.Array) -> jax.Array:
    m = jnp.max(jnp.abs(w), axis=-1, keepdims=True)
    u = w / m
    u2 = u * u
    return jnp.sum(u2 * u2, axis=-1) / jnp.sum(u2, axis=-1) ** 2


def normalized_distance(w_a: ArrayLike, w_b: ArrayLike) -> np.ndarray:
    r"""Shape distance :math:`\lVert \hat w_a-\hat w_b\rVert_2`, :math:`\hat w=w/\lVert w\rVert_2`.

    Both fields are scaled to unit ℓ₂ norm before subtracting, so the distance compares shapes
    (and signs) only: 0 for proportional fields with the same sign, √2 for orthogonal ones, 2 for
    opposite ones (the measure of paper Fig. 8: the flow's scale is not the object of Lemma 3.1).

    Parameters
    ----------
    w_a, w_b : ArrayLike
        ``(..., n)`` finite fields with non-zero rows, broadcastable against each other.

    Returns
    -------
    numpy.ndarray
        ``(...)`` float64 distances in ``[0, 2]``.
    """
    a = np.asarray(v.float_array("w_a", w_a), dtype=np.float64)
    b = np.asarray(v.float_array("w_b", w_b), dtype=np.float64)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"w_a and w_b must have equal last axes, got shapes {a.shape} and {b.shape}")
    na = np.linalg.norm(a, axis=-1, keepdims=True)
    nb = np.linalg.norm(b, axis=-1, keepdims=True)
    for name, arr, nrm in (("w_a", a, na), ("w_b", b, nb)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite")
        if np.any(nrm == 0):
            raise ValueError(f"{name} must have non-zero rows (a zero field has no shape)")
    return np.linalg.norm(a / na - b / nb, axis=-1)


# -------------------------------------------------------------------------------------------------
# measurements on sampled curves
# -------------------------------------------------------------------------------------------------
def _crossing_row(x, u, row, level, direction, log):
    """Return the crossing of one sampled curve ``row`` over the grid ``x`` (see :func:`first_crossing`).

    ``u`` is the axis interpolated in (``x``, or ``log x`` when ``log``).
    """
    if direction == "up":
        reached = row >= level
        if reached[0]:
            return x[0]
    else:
        side = np.sign(row[0] - level)
        if side == 0:
            return x[0]
        reached = np.sign(row - level) != side
    hits = np.nonzero(reached)[0]
    if hits.size == 0:
        return math.nan
    j = hits[0]
    if direction == "either" and row[j] == level:
        return x[j]
    y0, y1 = row[j - 1], row[j]
    uc = u[j - 1] + (level - y0) / (y1 - y0) * (u[j] - u[j - 1])
    return float(np.exp(uc)) if log else float(uc)


def first_crossing(
    x: ArrayLike,
    values: ArrayLike,
    level: float,
    *,
    direction: Literal["up", "either"] = "up",
    log: bool = False,
) -> float | np.ndarray:
    r"""Where a sampled curve first crosses ``level``, by linear interpolation between samples.

    ``x`` (C,) strictly increasing (times, or a parameter grid); ``values`` (..., C), one curve per
    leading index.

    * ``direction="up"``: the first ``x`` at which the curve reaches ``level`` from below
      (``values >= level``); ``x[0]`` if it starts there. Used for break-down and localization
      times (the first time a distance or an IPR reaches a level).
    * ``direction="either"``: the first change of side of ``level`` in either direction (the exact
      grid point where a value equals ``level``). Used for the parameter (gain g, Kur k) where a
      final IPR crosses a level along a sweep (Claim 3.2 in simulation); the grid spacing bounds its
      accuracy.

    ``log=True`` interpolates in :math:`\log x` (``x`` positive; for gains on a log grid) and maps
    back.

    A root of a *function* that can be evaluated anywhere (Brent's method) is a different task:
    :func:`localization.theory.family_root`; :func:`settling_step` asks the opposite question (from
    when a curve stays near its end).

    Parameters
    ----------
    x : ArrayLike
        ``(C,)`` strictly increasing grid (times, or a parameter grid), positive when ``log``.
    values : ArrayLike
        ``(..., C)`` finite curves, one per leading index.
    level : float
        The level to cross.
    direction : {"up", "either"}
        Reach ``level`` from below, or change side in either direction.
    log : bool
        Interpolate in :math:`\log x`.

    Returns
    -------
    float or numpy.ndarray
        NaN where the curve never crosses; a float for a single curve (1-D ``values``), else a ``(...)``
        float64 array.
    """
    t = np.asarray(v.float_array("x", x), dtype=np.float64)
    y = np.asarray(v.float_array("values", values, ndim_min=1), dtype=np.float64)
    level = v.real_scalar("level", level)
    if direction not in ("up", "either"):
        raise ValueError(f"direction must be 'up' or 'either', got {direction!r}")
    if not isinstance(log, bool):
        raise TypeError(f"log must be a bool, got {log!r}")
    if t.ndim != 1 or t.size < 2:
        raise ValueError(f"x must be a 1-D array with at least 2 entries, got shape {t.shape}")
    if np.any(np.diff(t) <= 0):
        raise ValueError("x must be strictly increasing")
    if y.shape[-1] != t.size:
        raise ValueError(f"values must have last axis of length {t.size} (len(x)), got shape {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("values must be finite (no inf or NaN)")
    if log and np.any(t <= 0):
        raise ValueError("x must be positive when log=True")
    flat = y.reshape(-1, t.size)
    u = np.log(t) if log else t
    out = np.array([_crossing_row(t, u, row, level, direction, log) for row in flat], dtype=np.float64)
    if y.ndim == 1:
        return float(out[0])
    return out.reshape(y.shape[:-1])


def settling_step(curve: ArrayLike, tol: float) -> int:
    """Index of the first checkpoint from which ``curve`` (C,) stays within ``tol`` of its last value.

    The last exit from a band around the *final* value, not a crossing of a fixed level
    (:func:`first_crossing`): used to choose and justify the number of SGD steps.

    Parameters
    ----------
    curve : ArrayLike
        ``(C,)`` sampled values.
    tol : float
        Half-width of the band around ``curve[-1]``, > 0.

    Returns
    -------
    int
        The index; ``C - 1`` when only the last point qualifies (not settled before the end).
    """
    curve = np.asarray(v.float_array("curve", curve, ndim_min=1), dtype=np.float64)
    if curve.ndim != 1:
        raise ValueError(f"curve must be 1-D, got shape {curve.shape}")
    tol = v.positive("tol", tol)
    outside = np.abs(curve - curve[-1]) > tol
    idx = np.nonzero(outside)[0]
    return 0 if idx.size == 0 else int(idx[-1] + 1)


def sample_excess_kurtosis(x: ArrayLike, axis: int = 0) -> jax.Array:
    r"""Plug-in excess kurtosis :math:`m_4/m_2^2 - 3` along ``axis``.

    Central sample moments :math:`m_k = \frac1M\sum (x - \bar x)^k` (the biased "g2" estimator; bias
    O(1/M)).

    Parameters
    ----------
    x : samples; at least 2 along ``axis``.
    axis : int, the sample axis.

    Returns
    -------
    Array with ``axis`` removed.

    Raises
    ------
    ValueError if fewer than 2 samples, or if the samples are constant along ``axis`` (m_2 = 0).
    """
    x = v.float_array("x", x, ndim_min=1)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an int, got {axis!r}")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must lie in [-{x.ndim}, {x.ndim}) for x of shape {tuple(x.shape)}, got {axis}")
    if x.shape[axis] < 2:
        raise ValueError(f"x needs at least 2 samples along axis {axis}, got shape {tuple(x.shape)}")
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(jnp.float64)
    m2, m4 = _central_moments(x, axis)
    if not is_traced(m2) and np.any(np.asarray(m2) == 0):
        raise ValueError("x is constant along the sample axis: excess kurtosis undefined (m_2 = 0)")
    return m4 / (m2 * m2) - 3.0


@functools.partial(jax.jit, static_argnums=1)
def _central_moments(x: jax.Array, axis: int) -> tuple[jax.Array, jax.Array]:
    """(m_2, m_4) along ``axis``, one compiled program per shape and axis."""
    d = x - jnp.mean(x, axis=axis, keepdims=True)
    d2 = d * d
    return jnp.mean(d2, axis=axis), jnp.mean(d2 * d2, axis=axis)


def _finite_float64(name, x, ndim_min):
    x = v.float_array(name, x, ndim_min=ndim_min)
    x = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite (got inf or NaN entries)")
    return x


def circular_autocorr(x: ArrayLike) -> np.ndarray:
    r"""Circular autocovariance of each periodic signal along the last axis.

    .. math:: s_{\dots,d} = \frac1N \sum_{i=0}^{N-1} x_{\dots,i}\, x_{\dots,(i+d) \bmod N}

    for :math:`d = 0, \dots, N-1`, computed as :math:`\mathrm{irfft}(|\mathrm{rfft}(x)|^2)/N`.
    No mean is subtracted: for centred
    data (S3) it is the autocovariance averaged over the :math:`N` translations of one sample, so
    the mean of ``s`` over independent samples estimates the first row :math:`\Sigma_{0,d}` of a
    translation-invariant (circulant) covariance. ``s[..., 0]`` is the mean square of the sample,
    and ``s[..., d]`` equals ``s[..., N - d]`` (to rounding).

    Parameters
    ----------
    x : (..., N) real array, finite; e.g. (num, N) samples of a periodic signal of length N >= 1.

    Returns
    -------
    (..., N) float64 NumPy array (the input is converted to float64).

    Raises
    ------
    TypeError if ``x`` is not a real array; ValueError if it has no axis, an empty last axis, or
    non-finite entries.
    """
    x = _finite_float64("x", x, ndim_min=1)
    n = x.shape[-1]
    if n == 0:
        raise ValueError(f"x must have a non-empty last axis, got shape {tuple(x.shape)}")
    return field_analysis.cross_correlate(x, x) / n


def mean_and_se(s: ArrayLike, ddof: int = 1) -> tuple[np.ndarray, np.ndarray]:
    r"""Mean over independent samples (axis 0) and its standard error.

    .. math::

       \bar s = \frac1M\sum_{m=1}^M s_m,

       \mathrm{SE} = \frac{1}{\sqrt M}\Bigl(\frac{1}{M-\mathrm{ddof}}\sum_{m=1}^M (s_m-\bar s)^2\Bigr)^{1/2}

    Parameters
    ----------
    s : (M, ...) real array, finite; M >= 2 independent samples along axis 0.
    ddof : int, 0 <= ddof < M; delta degrees of freedom of the standard deviation (1: unbiased
        variance, the default; 0: plug-in).

    Returns
    -------
    (mean, se), each of shape ``s.shape[1:]``, float64 (NumPy scalars for 1-D ``s``).

    Raises
    ------
    TypeError if ``s`` is not a real array or ``ddof`` not an integer; ValueError if fewer than 2
    samples, non-finite entries, or ``ddof`` outside ``[0, M)``.
    """
    s = _finite_float64("s", s, ndim_min=1)
    ddof = v.integer("ddof", ddof, 0)
    m = s.shape[0]
    if m < 2:
        raise ValueError(f"s needs at least 2 samples along axis 0, got shape {tuple(s.shape)}")
    if ddof >= m:
        raise ValueError(f"ddof must lie in [0, {m}) for {m} samples, got {ddof}")
    return s.mean(axis=0), s.std(axis=0, ddof=ddof) / math.sqrt(m)
