r"""Measurements of receptive fields and samples, shared by simulation and theory.

* :func:`ipr` — inverse participation ratio, paper App. A.3:
  :math:`\mathrm{IPR}(w)=\sum_i w_i^4/(\sum_i w_i^2)^2`, in :math:`[1/N, 1]`.
* :func:`peak_position` — index of the largest entry of :math:`|w|` (see its docstring for why the
  absolute value).
* :func:`circular_distance`, :func:`peaks_agree` — periodic distance between positions, and the
  paper's "peaks match" criterion of Section 4.2 (within ±``tolerance`` positions).
* :func:`sample_excess_kurtosis` — plug-in estimate :math:`m_4/m_2^2-3` along an axis.

All functions act along the last axis of the weights (``(..., N)`` → ``(...)``) so they apply to a
whole ``Trajectory.weights`` array at once.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from localization import _validation as v

__all__ = ["ipr", "peak_position", "circular_distance", "peaks_agree", "sample_excess_kurtosis"]


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
