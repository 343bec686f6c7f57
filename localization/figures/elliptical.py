r"""The elliptical chapter's figures (``book/elliptical.md``): drawing only.

The computations are :mod:`localization.experiments.elliptical`; these functions draw their results.

* :func:`draw_fig4` — the paper's Fig. 4 redone: one SGD field per law through training, the sinusoid
  fitted to its final state and the flow's constant fixed point;
* :func:`draw_window_shares` — the window shares of the committee's final fields, one column per task;
* :func:`draw_t3_counts` — the number of Student-t fields dominated by frequency 1 against time, for
  SGD and the flow, along the paper's protocols continued past t = 100.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from localization import plotting

__all__ = ["draw_fig4", "draw_window_shares", "draw_t3_counts"]


def draw_fig4(
    sgd: Mapping[str, Any],
    summaries: Mapping[str, Mapping[str, Any]],
    amplitudes: Mapping[str, float],
    *,
    snapshots: int = 6,
):
    r"""Draw the paper's Fig. 4 redone, one panel per law.

    Each panel shows SGD field 0 at ``snapshots`` checkpoints (light to dark), its final fit (red
    dashes) and the constant :math:`\pm\lvert u_0\rvert/\sqrt N` (dotted) with the sign of the
    averaged field's mean.

    Parameters
    ----------
    sgd : mapping name -> array (I, C, N)
        SGD weights per law.
    summaries : mapping name -> dict
        :func:`localization.experiments.elliptical.sgd_summary` of each law: its ``fits`` (the final
        fields' sinusoid fits) and ``average`` (the time-averaged fields, whose sign picks the
        constant's).
    amplitudes : mapping name -> float
        :math:`\lvert u_0\rvert` of the stable fixed point.
    snapshots : int
        Number of checkpoints drawn.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not sgd:
        raise ValueError("sgd must hold at least one law, got none")
    if snapshots < 2:
        raise ValueError(f"snapshots must be >= 2, got {snapshots}")
    fig, axes = plt.subplots(1, len(sgd), figsize=(plotting.COLUMN_WIDTH, 2.6), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (name, w) in zip(axes, sgd.items(), strict=False):
        w = np.asarray(w)
        n, last = w.shape[-1], w.shape[1] - 1
        x_pos = np.arange(n)
        colours = plotting.TIME_CMAP(np.linspace(0, 1, snapshots))
        for c, idx in zip(colours, np.linspace(0, last, snapshots).astype(int), strict=True):
            ax.plot(x_pos, w[0, idx], color=c, lw=0.9)
        ax.plot(x_pos, summaries[name]["fits"][0].fit, "--", color="C3", lw=1.2)
        sign = np.sign(np.asarray(summaries[name]["average"])[0].mean())
        ax.axhline(amplitudes[name] / math.sqrt(n) * sign, color="k", lw=0.8, ls=":")
        ax.set(title=name, xlabel="position i")
    axes[0].set_ylabel("$w_i$")
    return fig


def draw_window_shares(shares: Mapping[str, Any], threshold: float, *, control: str | None = None):
    """Draw the window shares of each task's fields, spread sideways in its column.

    ``control`` is drawn in red, a dashed line at ``threshold``. Returns the figure.
    """
    if not shares:
        raise ValueError("shares must hold at least one task, got none")
    fig, ax = plt.subplots(figsize=(plotting.COLUMN_WIDTH, 2.4))
    for j, (name, s) in enumerate(shares.items()):
        s = np.asarray(s)
        offsets = np.linspace(-0.25, 0.25, s.shape[0])
        ax.plot(j + offsets, s, ".", ms=3, color="C3" if name == control else "C0")
    ax.axhline(threshold, color="k", lw=0.8, ls="--")
    ax.set_xticks(range(len(shares)), list(shares))
    ax.set(ylabel="window share $s_W$", ylim=(0, 1.02))
    return fig


def draw_t3_counts(panels: Mapping[str, Mapping[str, Any]], reference: float):
    """Draw the number of fields dominated by frequency 1 against time, one panel per protocol.

    Parameters
    ----------
    panels : mapping title -> dict
        ``times`` (C,); ``sgd`` (S, C) counts of SGD fields, one line per row (a seed, or the seeds
        pooled); ``flow`` (S, C) the same for the flow from the same initial weights (dashed);
        ``fields`` the number of fields behind each row (the axis' top); optionally ``escape``, the
        time after ``reference`` by which the flow has taken every frequency-1 field to the constant
        (shaded).
    reference : float
        The time at which the paper's run stops (dotted line).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not panels:
        raise ValueError("panels must hold at least one protocol, got none")
    fig, axes = plt.subplots(1, len(panels), figsize=(plotting.COLUMN_WIDTH, 2.6))
    axes = np.atleast_1d(axes)
    for ax, (title, p) in zip(axes, panels.items(), strict=True):
        times = np.asarray(p["times"], dtype=np.float64)
        sgd, flow = np.atleast_2d(p["sgd"]), np.atleast_2d(p["flow"])
        if sgd.shape[-1] != times.shape[0] or flow.shape[-1] != times.shape[0]:
            raise ValueError(f"panel {title!r}: sgd and flow must have one count per time ({times.shape[0]})")
        if "escape" in p:
            ax.axvspan(reference, reference + float(p["escape"]), color="0.9", lw=0)
        for j, row in enumerate(sgd):
            ax.plot(times, row, "-", color=f"C{j}", lw=1.0, label="SGD" if j == 0 else None)
        for j, row in enumerate(flow):
            ax.plot(times, row, "--", color="0.4", lw=0.9, label="flow" if j == 0 else None)
        ax.axvline(reference, color="k", lw=0.8, ls=":")
        ax.set(title=title, xlabel="time t", ylim=(-0.3, p["fields"] + 0.3))
    axes[0].set_ylabel("fields at frequency 1")
    axes[0].legend(frameon=False)  # the base size: the figure is drawn at 0.6 scale on phones
    return fig
