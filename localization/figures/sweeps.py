r"""Drawing of IPR sweeps (the simulation chapter's figures, :mod:`localization.figures.simulation`).

Each function draws results of :mod:`localization.experiments` on axes it is given and returns what
a caller may need afterwards; none computes anything.

* :func:`draw_field_grid` — receptive fields during training, one panel per task (paper Fig. 3 style);
* :func:`draw_ipr_during_training` — mean ± std of the IPR against time, one curve per task;
* :func:`draw_ipr_vs_kurtosis` — paper Fig. 5: final IPR against the exact excess kurtosis;
* :func:`draw_phase_diagram` — final IPR over Kur(k) × length-scale ratio.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from localization import plotting
from localization import validation as v
from localization.experiments import Fig5Result, IPRSweep, PhaseDiagram

__all__ = ["draw_field_grid", "draw_ipr_during_training", "draw_ipr_vs_kurtosis", "draw_phase_diagram"]


def draw_field_grid(axes: Any, runs: Mapping[str, IPRSweep]) -> Any:
    """Draw the receptive field of the first initialisation during training, one panel per run.

    Each panel is titled with the excess kurtosis and the final IPR; axis labels on the outer panels
    and one colour bar for time, below the grid.

    Parameters
    ----------
    axes : 2-D array of matplotlib Axes
        One panel per run.
    runs : mapping of str to IPRSweep
        Label → a single-task sweep computed with ``keep_weights=True``.

    Returns
    -------
    matplotlib.colorbar.Colorbar
        The time colour bar.
    """
    grid = np.asarray(axes, dtype=object)
    if grid.ndim != 2 or grid.size != len(runs):
        raise ValueError(f"axes must be a 2-D grid with one panel per run ({len(runs)}), got shape {grid.shape}")
    for label, res in runs.items():
        if not isinstance(res, IPRSweep) or res.path is None:
            raise TypeError(f"runs[{label!r}] must be an IPRSweep computed with keep_weights=True")
    for ax, (label, res) in zip(grid.flat, runs.items(), strict=True):
        plotting.plot_field_evolution(ax, res.path[0, 0], res.times, every=4, colorbar=False, xlabel="", ylabel="")
        ax.set_title(f"{label}\n$\\kappa - 3 = {res.excess_kurtosis[0]:+.2g}$, IPR {res.final_ipr[0, 0]:.2f}")
    for ax in grid[-1]:
        ax.set_xlabel("position $i$")
    for ax in grid[:, 0]:
        ax.set_ylabel("weight $w_i$")
    return plotting.time_colorbar(grid, res.times, location="bottom", shrink=0.6)


def draw_ipr_during_training(ax: Any, runs: Mapping[str, IPRSweep], n: int) -> Any:
    """Draw the IPR during training of single-task sweeps: mean ± std over initialisations, log scale.

    Dotted: the random-vector level 3/(n+2); dashed: the sinusoid level 3/(2n); one legend below the
    figure.

    Parameters
    ----------
    ax : matplotlib Axes
        The panel.
    runs : mapping of str to IPRSweep
        Label → a single-task sweep (``ipr`` of shape (1, inits, checkpoints)).
    n : int
        Input size (sets the two reference levels).

    Returns
    -------
    matplotlib Axes
        ``ax``.
    """
    n = v.integer("n", n, 2)
    for label, res in runs.items():
        if not isinstance(res, IPRSweep):
            raise TypeError(f"runs[{label!r}] must be an IPRSweep, got {type(res).__name__}")
        m, s = res.ipr[0].mean(axis=0), res.ipr[0].std(axis=0)
        (line,) = ax.plot(res.times, m, label=label)
        ax.fill_between(res.times, m - s, m + s, color=line.get_color(), alpha=0.2, lw=0)
    ax.axhline(3 / (n + 2), color="0.4", ls=":", lw=1)
    ax.axhline(3 / (2 * n), color="0.4", ls="--", lw=1)
    ax.text(20, 3 / (n + 2), "random vector $3/(N+2)$", va="bottom", ha="left", color="0.3")
    ax.text(1, 3 / (2 * n), "sinusoid $3/(2N)$", va="top", ha="left", color="0.3")
    ax.set_yscale("log")
    ax.set_xlabel("time $t$ = steps × learning rate")
    ax.set_ylabel("IPR")
    ax.figure.legend(loc="outside lower center", ncol=2)
    return ax


def draw_ipr_vs_kurtosis(ax: Any, result: Fig5Result, *, linthresh: float, annotate: bool = True) -> Any:
    """Draw paper Fig. 5: mean ± std over initialisations of the final IPR against the excess kurtosis.

    NLGP (circles) and Kur (open squares); dotted: random-vector IPR 3/(N+2); dashed: sinusoid
    3/(2N); solid grey: excess kurtosis 0 (all three in the legend). The horizontal axis is linear
    on [-linthresh, linthresh] and logarithmic outside; the vertical axis leaves room above 1 for
    the labels of the points near it.

    Parameters
    ----------
    ax : matplotlib Axes
        The panel.
    result : Fig5Result
        From ``experiments.fig5``.
    linthresh : float
        Half-width of the linear part of the horizontal axis (> 0).
    annotate : bool
        Label Kur(4.1, 5, 6.1, 7.7, 50) right of their points and three NLGP gains left of theirs.

    Returns
    -------
    matplotlib Axes
        ``ax``.
    """
    if not isinstance(result, Fig5Result):
        raise TypeError(f"result must be a Fig5Result, got {type(result).__name__}")
    linthresh = v.positive("linthresh", linthresh)
    n = result.settings.n
    for sweep, label, marker in [(result.nlgp, "NLGP($g$)", "o"), (result.kur, "Kur($k$)", "s")]:
        ax.errorbar(
            sweep.excess_kurtosis,
            sweep.mean,
            yerr=sweep.std,
            fmt=marker,
            ms=5,
            capsize=3,
            label=label,
            mfc="none" if marker == "s" else None,
        )
    ax.axvline(0, color="0.3", lw=1, label="excess kurtosis 0")
    ax.axhline(3 / (n + 2), color="0.4", ls=":", lw=1.2, label="random vector $3/(N+2)$")
    ax.axhline(3 / (2 * n), color="0.4", ls="--", lw=1.2, label="sinusoid $3/(2N)$")
    ax.set_xscale("symlog", linthresh=linthresh, linscale=2.5)
    ax.set_xlim(-2.2, 40)
    ticks = [-2, -1, 0, 1, 2, 5, 10, 20]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_ylim(0, 1.1)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_xlabel("excess kurtosis of the marginals (exact)")
    ax.set_ylabel("final IPR")
    handles, names = ax.get_legend_handles_labels()
    # the two data series first, then the three reference lines
    order = [*range(3, len(handles)), 0, 1, 2]
    ax.legend([handles[i] for i in order], [names[i] for i in order], loc="upper right")
    if annotate:
        nlgp_values = result.nlgp.params[[2, 3, -1]] if result.nlgp.params.size > 3 else result.nlgp.params
        labels = [(result.kur, [4.1, 5.0, 6.1, 7.7, 50.0], "k={:g}"), (result.nlgp, nlgp_values, "g={:.2g}")]
        for sweep, values, fmt in labels:
            for p in values:
                i = int(np.argmin(np.abs(sweep.params - p)))
                # NLGP labels left of their points (Kur's are right of theirs), unless at the left
                # edge; a point near the right edge is labelled above, centred, so that its label
                # stays inside the axes
                left = sweep is result.nlgp and sweep.excess_kurtosis[i] > -1.5
                above = sweep.excess_kurtosis[i] > 10
                ax.annotate(
                    fmt.format(sweep.params[i]),
                    (sweep.excess_kurtosis[i], sweep.mean[i]),
                    textcoords="offset points",
                    xytext=(0, 9) if above else (-7 if left else 7, 4),
                    ha="center" if above else "right" if left else "left",
                    va="bottom",
                )
    return ax


def draw_phase_diagram(ax: Any, pd: PhaseDiagram, n: int) -> Any:
    """Draw the mean final IPR of a phase diagram over excess kurtosis × length-scale ratio.

    Columns ordered by excess kurtosis, rows by length-scale ratio, logarithmic colours from the
    sinusoid level 3/(2N) to 1, each cell's value printed, and a red line at zero excess kurtosis
    (placed linearly in kurtosis between the last negative and the first positive column).

    Parameters
    ----------
    ax : matplotlib Axes
        The panel.
    pd : PhaseDiagram
        From ``experiments.phase_diagram``.
    n : int
        Input size (sets the lower colour limit 3/(2n)).

    Returns
    -------
    matplotlib.colorbar.Colorbar
        The colour bar.
    """
    from matplotlib.colors import LogNorm

    if not isinstance(pd, PhaseDiagram):
        raise TypeError(f"pd must be a PhaseDiagram, got {type(pd).__name__}")
    order = np.argsort(pd.excess_kurtosis)
    cols = np.arange(len(order))
    im = ax.imshow(
        pd.mean[:, order], origin="lower", aspect="auto", cmap="viridis", norm=LogNorm(vmin=3 / (2 * n), vmax=1.0)
    )
    for r in range(len(pd.ratios)):
        for c, j in enumerate(order):
            value = pd.mean[r, j]
            ax.text(c, r, f"{value:.2f}", ha="center", va="center", color="w" if value < 0.3 else "k")
    e_sorted = pd.excess_kurtosis[order]
    negative = np.flatnonzero(e_sorted < 0)
    if negative.size and negative.max() + 1 < len(e_sorted):
        c0 = int(negative.max())
        x0 = c0 + (0 - e_sorted[c0]) / (e_sorted[c0 + 1] - e_sorted[c0])
        ax.axvline(x0, color="r", lw=2)
        ax.text(x0, len(pd.ratios) - 0.45, " excess kurtosis 0", color="r", va="bottom")
    ax.set_xticks(cols, [f"{e:+.2f}\nk={k:g}" for e, k in zip(e_sorted, pd.ks[order], strict=True)])
    ax.set_yticks(range(len(pd.ratios)), [f"{r:g}" for r in pd.ratios])
    ax.grid(False)
    ax.set_xlabel("excess kurtosis of Kur(k)")
    ax.set_ylabel(r"length-scale ratio $\xi_1/\xi_0$")
    cbar = ax.figure.colorbar(im, ax=ax, label="final IPR (mean)")
    cbar.set_ticks([0.04, 0.07, 0.1, 0.2, 0.5, 1.0], labels=["0.04", "0.07", "0.1", "0.2", "0.5", "1"])
    return cbar
