"""Figures of the Gabor chapter.

Drawing only: the fits come from :mod:`localization.experiments.gabor`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from localization.experiments.gabor import Fit, periodic_gabor, wrapped_gaussian

__all__ = ["draw_field_fits"]


def draw_field_fits(ax: Any, w: Any, gabor_fit: Fit, bump_fit: Fit, *, title: str = "") -> int:
    """Draw the field with the largest peak among ``w`` with its Gabor and bump fits, centred on the Gabor.

    Sites are shown relative to the fitted Gabor centre (rounded to a site), from −N/2 to N/2 − 1.

    Parameters
    ----------
    ax : a Matplotlib Axes.
    w : (F, N) fields.
    gabor_fit, bump_fit : their :func:`fit_gabor` and :func:`fit_bump` fits (shape (F,)).
    title : the panel's title.

    Returns
    -------
    int
        The index of the field drawn.
    """
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != np.shape(gabor_fit.residual)[0]:
        raise ValueError(f"w must have shape (F, N) with F fits, got {w.shape}")
    N = w.shape[1]
    fg, fb = gabor_fit, bump_fit
    i = int(np.argmax(np.abs(w).max(axis=1)))
    shift = N // 2 - int(round(fg.center[i]))
    sites = np.arange(N) - N // 2
    gabor_i = periodic_gabor(N, fg.center[i], fg.width[i], fg.frequency[i], fg.phase[i], fg.amplitude[i])
    bump_i = fb.amplitude[i] * np.cos(fb.phase[i]) * wrapped_gaussian(N, fb.center[i], fb.width[i])
    ax.plot(sites, np.roll(w[i], shift), "k.", label="field")
    ax.plot(sites, np.roll(gabor_i, shift), label="Gabor")
    ax.plot(sites, np.roll(bump_i, shift), "--", label="bump")
    ax.set_title(title)
    ax.set_xlabel("site − centre")
    ax.set_xticks([-N // 2, -N // 4, 0, N // 4])
    return i
