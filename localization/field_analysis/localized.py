r"""What "localized" means in this book: one definition, and the bump's width as a separate measure.

Part of :mod:`localization.field_analysis`. Every chapter, figure and claim that calls a field
*localized* uses :func:`is_localized`; nothing else (an IPR threshold, a look at the figure) stands in
for it.

**Definition.** A field w on a ring of N sites (or a torus) is *localized* when one periodic window
holding a quarter of the sites holds more than :data:`LOCALIZED_SHARE` = 0.8 of :math:`\|w\|^2`: on a
ring the window is :math:`W = \lfloor N/4\rfloor` consecutive sites; on a d-torus a :math:`W^d` box with
:math:`W=\lfloor n_{\min}/4^{1/d}\rfloor` (half the shortest side on a 2-torus: a quarter of its area, the
same fraction of the sites as on the ring):

.. math:: s(w) = \max_j \sum_{i\in B_j} w_i^2 \big/ \|w\|^2 > 0.8 .

Why these numbers: one Fourier wave holds at most :math:`W/N + |\sin(2\pi mW/N)|/(N|\sin(2\pi m/N)|)`
(0.41 for m = 1, N = 40; :func:`~localization.field_analysis.wave_window_share`), and a Gaussian random
vector at N = 40 has median share 0.42 and is localized a few times in a million draws (2 of 2·10⁶
in one measurement); a bump holds more than
0.8 as long as 80 % of its mass lies within a quarter of the ring, however broad it is inside that
quarter (a Gaussian bump of standard deviation 5 sites does, at an IPR of 0.08, close to a random
vector's 3/(N+2) = 0.071). The share is therefore a test of *whether* there is a bump;
:func:`bump_width` says *how wide* it is; the IPR (:func:`localization.metrics.ipr`, the paper's
measure) mixes the two, and a low IPR alone is a wide bump as often as no bump.
"""

from __future__ import annotations

import math

import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.field_analysis.base import Shape, as_fields
from localization.field_analysis.space import window_share

__all__ = [
    "LOCALIZED_SHARE",
    "localization_window",
    "localization_share",
    "is_localized",
    "bump_width",
    "sites_holding",
]

#: A field is localized when one window of :func:`localization_window` sites holds more than this share of ‖w‖².
LOCALIZED_SHARE = 0.8


def localization_window(n: int | tuple[int, ...]) -> int:
    r"""Return the window side of the definition: a box holding a quarter of the sites (at least one site).

    Parameters
    ----------
    n : int or tuple of int
        Ring size or grid shape (d axes), with :math:`\min(n) \ge 4^{1/d}`.

    Returns
    -------
    int
        :math:`\lfloor \min(n)/4^{1/d}\rfloor`: ``n // 4`` on a ring, half the shortest side on a 2-torus.
    """
    shape = v.shape("n", n, minimum=1)
    side = math.floor(min(shape) / 4 ** (1 / len(shape)) + 1e-9)  # 1e-9: exact halves and quarters
    if side < 1:
        raise ValueError(f"n must have its shortest axis at least 4^(1/d) (a window of >= 1 site), got {n!r}")
    return side


def localization_share(w: ArrayLike, n: Shape = None) -> np.ndarray:
    r"""Return the share of :math:`\|w\|^2` in the best quarter-ring window, the measure of :func:`is_localized`.

    Parameters
    ----------
    w : ArrayLike
        ``(..., N)`` finite, non-zero fields, N = prod(n).
    n : int or tuple of int, optional
        Ring size or grid shape (default: a ring of N sites).

    Returns
    -------
    numpy.ndarray
        ``(...)`` float64 shares in ``[W^d/N, 1]``.
    """
    w, shape = as_fields("w", w, n)
    return window_share(w, localization_window(shape), shape)


def is_localized(w: ArrayLike, n: Shape = None) -> np.ndarray:
    """Return whether each field is localized: :func:`localization_share` above :data:`LOCALIZED_SHARE`.

    Parameters
    ----------
    w : ArrayLike
        ``(..., N)`` finite, non-zero fields.
    n : int or tuple of int, optional
        Ring size or grid shape (default: a ring of N sites).

    Returns
    -------
    numpy.ndarray
        ``(...)`` booleans.
    """
    return localization_share(w, n) > LOCALIZED_SHARE


def bump_width(w: ArrayLike, n: Shape = None, *, mass: float = LOCALIZED_SHARE) -> np.ndarray:
    r"""Return the side of the smallest periodic window holding at least ``mass`` of :math:`\|w\|^2`.

    The width of a field's bump in sites, independent of whether it counts as localized: a one-hot field
    has width 1; a bump :math:`w_i\propto e^{-(i-c)^2/2\sigma^2}` about :math:`1.8\,\sigma` sites for
    ``mass = 0.8`` (the 80 % interval of :math:`w^2`, whose deviation is :math:`\sigma/\sqrt2`); a field
    spread over the ring a width near ``mass`` × N. On a torus the window is a
    square box and the width its side.

    Parameters
    ----------
    w : ArrayLike
        ``(..., N)`` finite, non-zero fields.
    n : int or tuple of int, optional
        Ring size or grid shape (default: a ring of N sites).
    mass : float
        Share of the squared weight the window must hold, in (0, 1].

    Returns
    -------
    numpy.ndarray
        ``(...)`` integer widths in ``[1, min(n)]``.
    """
    w, shape = as_fields("w", w, n)
    mass = v.real_scalar("mass", mass)
    if not 0.0 < mass <= 1.0:
        raise ValueError(f"mass must be in (0, 1], got {mass}")
    width = np.full(w.shape[:-1], min(shape), dtype=np.int64)
    found = np.zeros(w.shape[:-1], dtype=bool)
    for side in range(1, min(shape) + 1):
        # the share grows with the side; 1e-12 absorbs the FFT's rounding of a share that is exactly `mass`
        holds = ~found & (window_share(w, side, shape) >= mass - 1e-12)
        width[holds] = side
        found |= holds
        if found.all():
            break
    return width


def sites_holding(w: ArrayLike, fraction: float = 0.9) -> np.ndarray:
    r"""Smallest number of sites holding ``fraction`` of :math:`\|w\|^2` (a width of the field).

    Sort :math:`w_i^2` in decreasing order; return the least :math:`m` with
    :math:`\sum_{i\le m} w_{(i)}^2 \ge \text{fraction}\,\|w\|^2`. A one-hot field gives 1, a constant
    field :math:`\lceil \text{fraction}\cdot N\rceil`.

    Parameters
    ----------
    w : ArrayLike
        ``(..., N)`` weights, not all zero along the last axis.
    fraction : float
        In (0, 1].

    Returns
    -------
    numpy.ndarray
        ``(...)`` integers in ``[1, N]``.
    """
    w = np.asarray(v.float_array("w", w, ndim_min=1), dtype=np.float64)
    fraction = v.real_scalar("fraction", fraction)
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    p = np.sort(w**2, axis=-1)[..., ::-1]
    total = p.sum(axis=-1, keepdims=True)
    if np.any(total <= 0):
        raise ValueError("w must not be all zero along its last axis")
    cum = np.cumsum(p, axis=-1) / total
    # tolerance for rounding at fraction = 1
    return (cum < fraction * (1 - 1e-12)).sum(axis=-1) + 1
