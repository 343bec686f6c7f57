r"""Measurements of receptive fields and samples, shared by simulation and theory.

* :func:`ipr` — inverse participation ratio, paper App. A.3:
  :math:`\mathrm{IPR}(w)=\sum_i w_i^4/(\sum_i w_i^2)^2`, in :math:`[1/N, 1]`.
* :func:`peak_position` — index of the largest entry of :math:`|w|` (see its docstring for why the
  absolute value).
* :func:`circular_distance`, :func:`peaks_agree` — periodic distance between positions, and the
  paper's "peaks match" criterion of Section 4.2 (within ±``tolerance`` positions).
* :func:`sample_excess_kurtosis` — plug-in estimate :math:`m_4/m_2^2-3` along an axis.
* :func:`circular_autocorr` — per-sample circular autocovariance of periodic signals (via the FFT).
* :func:`mean_and_se` — mean over independent samples and its standard error.

The receptive-field functions act along the last axis of the weights (``(..., N)`` → ``(...)``) so
they apply to a whole ``Trajectory.weights`` array at once. :func:`circular_autocorr` and
:func:`mean_and_se` are NumPy (float64) helpers for Monte Carlo checks on samples; they are not
traceable under ``jit``.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from localization import _validation as v

__all__ = [
    "ipr",
    "peak_position",
    "circular_distance",
    "peaks_agree",
    "sample_excess_kurtosis",
    "circular_autocorr",
    "mean_and_se",
]


def _is_traced(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def _weights(name, w):
    w = v.float_array(name, w, ndim_min=1)
    if w.shape[-1] == 0:
        raise ValueError(f"{name} must have a non-empty last axis, got shape {tuple(w.shape)}")
    return jnp.asarray(w)


def ipr(w):
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
    if not _is_traced(w):
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
    m = jnp.max(jnp.abs(w), axis=-1, keepdims=True)
    u = w / m
    u2 = u * u
    return jnp.sum(u2 * u2, axis=-1) / jnp.sum(u2, axis=-1) ** 2


def peak_position(w, *, signed: bool = False):
    r"""Position of the receptive-field peak along the last axis.

    Default: :math:`\arg\max_i |w_i|`. Reason: with sign-symmetric data (S3) the single-neuron loss
    satisfies :math:`\mathcal L(w)=\mathcal L(-w)` (paper Eq. (9): both terms are even in ``w`` because
    :math:`\langle -w, X\rangle \overset{d}{=} \langle w, X\rangle` given ``Y``), so gradient descent
    from :math:`-w_0` gives exactly :math:`-w(t)`: a localised field is equally likely to be a
    positive or a negative bump, and the bump is the largest entry of :math:`|w|` in both cases.
    With ``signed=True`` return :math:`\arg\max_i w_i` (the positive lobe, the region that drives the
    ReLU). Ties resolve to the first index. For a grid field the result is the flat index (use
    :func:`numpy.unravel_index`).

    Parameters
    ----------
    w : (..., N) weights.
    signed : bool, use ``w`` instead of ``|w|``.

    Returns
    -------
    (...) integer positions in ``[0, N)``.
    """
    w = _weights("w", w)
    if not isinstance(signed, bool):
        raise TypeError(f"signed must be a bool, got {signed!r}")
    return jnp.argmax(w if signed else jnp.abs(w), axis=-1)


def circular_distance(i, j, n: int):
    r"""Distance between positions ``i`` and ``j`` on a ring of ``n`` sites:
    :math:`\min(|i-j| \bmod n,\ n-|i-j| \bmod n)` (broadcasts; integer arrays)."""
    n = v.integer("n", n, 1)
    i = jnp.asarray(i)
    j = jnp.asarray(j)
    for name, a in (("i", i), ("j", j)):
        if not jnp.issubdtype(a.dtype, jnp.integer):
            raise TypeError(f"{name} must be integer positions, got dtype {a.dtype}")
        if not _is_traced(a) and (np.any(np.asarray(a) < 0) or np.any(np.asarray(a) >= n)):
            raise ValueError(f"{name} must lie in [0, n={n}), got {np.asarray(a).tolist()}")
    d = jnp.abs(i - j) % n
    return jnp.minimum(d, n - d)


def peaks_agree(w1, w2, *, tolerance: int = 1, signed: bool = False):
    """True where the peaks (:func:`peak_position`) of ``w1`` and ``w2`` (both (..., N)) lie within
    ``tolerance`` positions of each other on the ring (paper Section 4.2 counts a match within ±1)."""
    w1 = _weights("w1", w1)
    w2 = _weights("w2", w2)
    if w1.shape[-1] != w2.shape[-1]:
        raise ValueError(f"w1 and w2 must have the same last axis, got {tuple(w1.shape)} and {tuple(w2.shape)}")
    tolerance = v.integer("tolerance", tolerance, 0)
    n = w1.shape[-1]
    d = circular_distance(peak_position(w1, signed=signed), peak_position(w2, signed=signed), n)
    return d <= tolerance


def sample_excess_kurtosis(x, axis: int = 0):
    r"""Plug-in excess kurtosis :math:`m_4/m_2^2 - 3` along ``axis``, with central sample moments
    :math:`m_k = \frac1M\sum (x - \bar x)^k` (the biased "g2" estimator; bias O(1/M)).

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
    d = x - jnp.mean(x, axis=axis, keepdims=True)
    d2 = d * d
    m2 = jnp.mean(d2, axis=axis)
    m4 = jnp.mean(d2 * d2, axis=axis)
    if not _is_traced(m2) and np.any(np.asarray(m2) == 0):
        raise ValueError("x is constant along the sample axis: excess kurtosis undefined (m_2 = 0)")
    return m4 / (m2 * m2) - 3.0


def _finite_float64(name, x, ndim_min):
    x = v.float_array(name, x, ndim_min=ndim_min)
    x = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite (got inf or NaN entries)")
    return x


def circular_autocorr(x):
    r"""Circular autocovariance of each periodic signal along the last axis.

    .. math:: s_{\dots,d} = \frac1N \sum_{i=0}^{N-1} x_{\dots,i}\, x_{\dots,(i+d) \bmod N},
       \qquad d = 0, \dots, N-1,

    computed as :math:`\mathrm{irfft}(|\mathrm{rfft}(x)|^2)/N`. No mean is subtracted: for centred
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
    f = np.fft.rfft(x, axis=-1)
    return np.fft.irfft(np.abs(f) ** 2, n=n, axis=-1) / n


def mean_and_se(s, ddof: int = 1):
    r"""Mean over independent samples (axis 0) and its standard error.

    .. math:: \bar s = \frac1M\sum_{m=1}^M s_m, \qquad
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
