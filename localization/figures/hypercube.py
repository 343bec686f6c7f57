"""Figures of the hypercube chapter.

Drawing only (the numbers come from
:mod:`localization.experiments.hypercube`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jax.typing import ArrayLike

from localization import validation as v

__all__ = ["draw_argmax_fractions", "centre_peak", "draw_flow_fields"]


def draw_argmax_fractions(ns: ArrayLike, fractions: dict[str, ArrayLike]) -> Any:
    """Draw the hypercube chapter's figure "Does f pick out the largest weight?".

    Parameters
    ----------
    ns : (K,) the numbers of coordinates n.
    fractions : name -> (K,) fractions of random weights; the key ``"dominance"`` is drawn as
        "dominance holds", every other as "argmax agrees: <name>" (at most 4 curves).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    ns = np.asarray(v.float_array("ns", ns), np.float64)
    if not 1 <= len(fractions) <= 4:
        raise ValueError(f"fractions must have 1 to 4 curves, got {len(fractions)}")
    fig, ax = plt.subplots(figsize=(5.5, 3.8), layout="constrained")
    for (name, frac), marker in zip(fractions.items(), "osD^", strict=False):
        frac = np.asarray(v.float_array(f"fractions[{name!r}]", frac), np.float64)
        if frac.shape != ns.shape:
            raise ValueError(f"fractions[{name!r}] must have the shape of ns {ns.shape}, got {frac.shape}")
        label = "dominance holds" if name == "dominance" else f"argmax agrees: {name}"
        ax.plot(ns, frac, marker=marker, label=label)
    ax.set(xlabel="number of coordinates $n$", ylabel="fraction of random $w$", ylim=(-0.03, 1.03))
    # below the axes: inside, the legend covered the curves (they span the whole height)
    fig.legend(loc="outside lower center", ncol=2, frameon=False)
    return fig


def centre_peak(w: ArrayLike) -> np.ndarray:
    """Sign ``w`` (n,) so that its largest entry is positive and roll that entry to site n // 2."""
    w = np.asarray(v.float_array("w", w), np.float64)
    if w.ndim != 1:
        raise ValueError(f"w must be one field (n,), got shape {w.shape}")
    k = int(np.argmax(np.abs(w)))
    return np.roll(w * np.sign(w[k]), w.size // 2 - k)


def draw_flow_fields(fields: dict[str, tuple[ArrayLike, ArrayLike, ArrayLike]], t_end: float) -> Any:
    r"""Draw the hypercube chapter's figure of the reduced flow against SGD, one panel per task.

    Parameters
    ----------
    fields : task name -> (SGD endpoints (R, n), flow endpoints (R, n), :math:`w_{\mathrm{loc}}` (n,)),
        each field drawn by :func:`centre_peak`.
    t_end : the time of the endpoints, for the axis label.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    from localization import plotting

    t_end = v.positive("t_end", t_end)
    if not fields:
        raise ValueError("fields must name at least one task")
    fig, axes = plt.subplots(1, len(fields), figsize=(plotting.COLUMN_WIDTH, 3.0), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (name, (ws, wf, w_loc)) in zip(axes, fields.items(), strict=True):
        sites = np.arange(np.shape(w_loc)[-1]) - np.shape(w_loc)[-1] // 2
        for w in np.asarray(ws):
            ax.plot(sites, centre_peak(w), color="C1", alpha=0.5, lw=1)
        for w in np.asarray(wf):
            ax.plot(sites, centre_peak(w), "o", color="C0", ms=3, alpha=0.6)
        ax.plot(sites, centre_peak(w_loc), "k--", lw=1.2)
        ax.set(title=name, xlabel="site (peak at 0)", xticks=range(-6, 6, 3))
    axes[0].set_ylabel(f"$w_i$ at $t={t_end:.0f}$")
    axes[-1].plot([], [], color="C1", label="SGD")
    axes[-1].plot([], [], "o", color="C0", ms=3, label="reduced flow")
    axes[-1].plot([], [], "k--", label=r"$w_{\mathrm{loc}}$")
    axes[-1].legend(loc="upper left")
    return fig
