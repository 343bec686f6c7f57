r"""Drawing code of the figures the book reproduces from the paper, shared by the chapters and by
``python -m localization figures``.

Each function draws computed results on axes it is given (the chapter or the command line creates
the figure, so the chapter keeps its figure size) and returns what a caller may need afterwards
(an image for a colour bar, the axes). None of them computes a simulation: the results come from
:mod:`localization.experiments`, :mod:`localization.data` and :mod:`localization.train`.

* :func:`draw_data_models` — the data chapter's redraw of paper Fig. 2 (:data:`FIG2_MODELS`);
* :func:`draw_field_grid` — receptive fields during training, one panel per task (the simulation
  chapter's six data models, in the style of paper Fig. 3);
* :func:`draw_sgd_vs_flow` — paper Fig. 3: SGD, exact-φ flow and Taylor-φ flow from the same
  initial weights (the effective-dynamics chapter);
* :func:`draw_ipr_vs_kurtosis` — paper Fig. 5: final IPR against the exact excess kurtosis;
* :func:`draw_phase_diagram` — beyond the paper: final IPR over Kur(k) × length-scale ratio;
* :func:`draw_breakdown`, :func:`draw_breakdown_snapshots` — paper Fig. 8: where the effective flow
  and SGD part (the effective-dynamics chapter).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jax
import numpy as np

from localization import data, plotting
from localization import validation as v
from localization.experiments import Comparison, Fig5Result, IPRSweep, PhaseDiagram

__all__ = [
    "FIG2_MODELS",
    "draw_data_models",
    "draw_field_grid",
    "draw_sgd_vs_flow",
    "draw_ipr_vs_kurtosis",
    "draw_phase_diagram",
    "draw_breakdown",
    "draw_breakdown_snapshots",
]

#: Rows of the paper's Fig. 2 as redrawn by the data chapter: (label, long-lengthscale model,
#: short-lengthscale model) for the models of the paper's Fig. 3 (Ising J = 1.2 / 0.3, NLGP(0.01) and
#: Kur(5) with ξ = 5 / 1).
FIG2_MODELS = (
    ("Ising", data.Ising(J=1.2), data.Ising(J=0.3)),
    ("NLGP(0.01)", data.NLGP(xi=5.0, gain=0.01), data.NLGP(xi=1.0, gain=0.01)),
    ("Kur(5)", data.Kur(xi=5.0, k=5.0), data.Kur(xi=1.0, k=5.0)),
)


def _axes_grid(name: str, axes: Any, shape: tuple[int, ...]) -> np.ndarray:
    from matplotlib.axes import Axes

    grid = np.asarray(axes, dtype=object)
    if grid.shape != shape or not all(isinstance(ax, Axes) for ax in grid.flat):
        raise ValueError(f"{name} must be a {shape} array of Matplotlib Axes, got shape {grid.shape}")
    return grid


def draw_data_models(axes: Any, key: jax.Array, n: int = 100, num_marginal: int = 20_000) -> Any:
    """Paper Fig. 2 on a (4, 3) grid of ``axes`` (it fits the page column): one column per model of
    :data:`FIG2_MODELS`, drawn by :func:`localization.plotting.plot_model_row` (column ``i`` with
    ``jax.random.fold_in(key, i)``); rows: a long- and a short-lengthscale sample, the
    long-lengthscale covariance, the marginal (titled with its excess kurtosis). One colour bar for
    the covariances, right of the covariance row. Returns that colour bar."""
    grid = _axes_grid("axes", axes, (4, len(FIG2_MODELS)))
    im = None
    for i, (label, long_model, short_model) in enumerate(FIG2_MODELS):
        im = plotting.plot_model_row(grid[:, i], long_model, short_model, n, jax.random.fold_in(key, i), num_marginal)
        grid[0, i].set_title(f"{label}\nlong, $y = 1$")
        grid[1, i].set_title("short, $y = 0$")
        grid[2, i].set_title("covariance, $y = 1$")
        grid[3, i].set_title(f"$\\kappa - 3 = {long_model.marginal.excess_kurtosis:.2g}$")
        if i:
            grid[0, i].set_ylabel("")
    for ax in grid[:2].flat:
        ax.set_xlabel("")
    grid[1, 0].set_ylabel("$x_i$")
    return grid[0, 0].figure.colorbar(im, ax=grid[2, :], shrink=0.9, label="covariance")


def draw_field_grid(axes: Any, runs: Mapping[str, IPRSweep]) -> Any:
    """Receptive field of the first initialisation during training, one panel per entry of ``runs``
    (label → a single-task :class:`localization.experiments.IPRSweep` with ``path``), titled with the
    excess kurtosis and the final IPR; axis labels on the outer panels and one colour bar for time.
    ``axes`` is a 2-D grid with one panel per run; the colour bar goes below it. Returns the colour bar."""
    import matplotlib as mpl

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
    time_colors = mpl.cm.ScalarMappable(norm=mpl.colors.Normalize(0, res.times[-1]), cmap=plotting.TIME_CMAP)
    return grid[0, 0].figure.colorbar(time_colors, ax=grid, label="time $t$", location="bottom", shrink=0.6)


def draw_sgd_vs_flow(axes: Any, comparisons: Mapping[str, Comparison]) -> np.ndarray:
    """Paper Fig. 3 on a (rows, 3) grid of ``axes``: for each data model (name → a
    :class:`localization.experiments.Comparison` of one initialisation; one row, its name on the
    left), the SGD field, the exact-φ flow and the Taylor-φ flow (one column each, titled on top),
    coloured by time (every second checkpoint). One time colour bar below the grid when every run
    has the same times, else one per row. Create ``axes`` with ``sharey="row"`` to compare the
    three panels of a row. Returns the axes."""
    import matplotlib as mpl

    grid = _axes_grid("axes", axes, (len(comparisons), 3))
    titles = ("SGD", "flow, exact φ", "flow, Taylor φ")
    times = []
    for row, (name, c) in zip(grid, comparisons.items(), strict=True):
        if not isinstance(c, Comparison) or c.taylor is None:
            raise TypeError(f"comparisons[{name!r}] must be a Comparison with a Taylor flow")
        for ax, run in zip(row, (c.sgd, c.flow, c.taylor), strict=True):
            plotting.plot_field_evolution(ax, run, every=2, colorbar=False, xlabel="", ylabel="")
            times.append(np.asarray(run.times, dtype=np.float64))
        row[0].set_ylabel(f"{name}\n$w_i$")
    for ax, title in zip(grid[0], titles, strict=True):
        ax.set_title(title)
    for ax in grid[-1]:
        ax.set_xlabel("input position $i$")
    same = all(t.shape == times[0].shape and np.array_equal(t, times[0]) for t in times)
    fig = grid[0, 0].figure
    for ax_or_grid, t in [(grid, times[0])] if same else [(row, times[3 * r]) for r, row in enumerate(grid)]:
        norm = mpl.colors.Normalize(vmin=float(t.min()), vmax=float(t.max()))
        fig.colorbar(
            mpl.cm.ScalarMappable(norm=norm, cmap=plotting.TIME_CMAP),
            ax=list(np.ravel(ax_or_grid)),
            label="time $t$",
            location="bottom" if same else "right",
            shrink=0.6 if same else 1.0,
        )
    return grid


def draw_ipr_vs_kurtosis(ax: Any, result: Fig5Result, *, linthresh: float = 2.0, annotate: bool = True) -> Any:
    """Paper Fig. 5 on ``ax``: mean ± std over initialisations of the final IPR against the exact
    excess kurtosis, NLGP (circles) and Kur (open squares); dotted: random-vector IPR 3/(N+2); dashed:
    sinusoid 3/(2N). The horizontal axis is linear on [-linthresh, linthresh] and logarithmic
    outside. ``annotate`` labels Kur(4.1, 5, 6.1, 7.7, 50) on the right of their points and three NLGP
    gains on the left. Returns ``ax``."""
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
    ax.axvline(0, color="0.3", lw=1)
    ax.axhline(3 / (n + 2), color="0.4", ls=":", lw=1)
    ax.axhline(3 / (2 * n), color="0.4", ls="--", lw=1)
    ax.set_xscale("symlog", linthresh=linthresh, linscale=2.5)
    ax.set_xlim(-2.2, 40)
    ticks = [-2, -1, 0, 1, 2, 5, 10, 20]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("excess kurtosis of the marginals (exact)")
    ax.set_ylabel("final IPR")
    ax.legend(loc="upper right")
    if annotate:
        nlgp_values = result.nlgp.params[[2, 3, -1]] if result.nlgp.params.size > 3 else result.nlgp.params
        labels = [(result.kur, [4.1, 5.0, 6.1, 7.7, 50.0], "k={:g}"), (result.nlgp, nlgp_values, "g={:.2g}")]
        for sweep, values, fmt in labels:
            for p in values:
                i = int(np.argmin(np.abs(sweep.params - p)))
                # NLGP labels left of their points (Kur's are right of theirs), unless at the left edge
                left = sweep is result.nlgp and sweep.excess_kurtosis[i] > -1.5
                ax.annotate(
                    fmt.format(sweep.params[i]),
                    (sweep.excess_kurtosis[i], sweep.mean[i]),
                    textcoords="offset points",
                    xytext=(-7 if left else 7, 4),
                    ha="right" if left else "left",
                    va="bottom",
                )
    return ax


def draw_phase_diagram(ax: Any, pd: PhaseDiagram, n: int) -> Any:
    """Mean final IPR of a :class:`localization.experiments.PhaseDiagram` on ``ax``: columns ordered
    by excess kurtosis, rows by length-scale ratio, logarithmic colours from the sinusoid level 3/(2N)
    to 1, each cell's value printed, and a red line at zero excess kurtosis (placed linearly in
    kurtosis between the last negative and the first positive column). Returns the colour bar."""
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


def draw_breakdown(
    axes: Any,
    times: Any,
    ipr: Mapping[str, Any],
    distance: Any,
    distance_replica: Any,
    lindeberg: Mapping[str, Any],
    t_break: Any,
    level: float,
    labels: tuple[str, str] = ("NLGP(100)", "NLGP(0.01)"),
) -> np.ndarray:
    r"""Paper Fig. 8 (left columns) on a (I + 1, 3) grid of ``axes``: rows 1..I the I initialisations
    on the first task, the last row the first initialisation on the second task (``labels`` name the
    tasks). Columns: IPR of SGD and of the flow; the shape distance SGD vs flow (and, in the last row,
    SGD vs an independent SGD run) with the level ``level`` dotted; the Lindeberg ratio of both. A
    green line marks ``t_break[i]`` where finite. One legend, below the grid.

    ``ipr`` and ``lindeberg`` map "sgd" and "flow" to (2, I, C) arrays, ``distance`` is (2, I, C),
    ``distance_replica`` (I, C), ``t_break`` (I,), ``times`` (C,). Returns the axes.
    """
    import matplotlib as mpl

    inits = np.shape(distance)[1]
    grid = _axes_grid("axes", axes, (inits + 1, 3))
    rows = [(0, i, f"{labels[0]}\ninit {i}") for i in range(inits)] + [(1, 0, f"{labels[1]}\ninit 0")]
    for ax_row, (p, i, label) in zip(grid, rows, strict=True):
        ax_row[0].plot(times, ipr["sgd"][p, i], color="k", lw=1.2, label="SGD")
        ax_row[0].plot(times, ipr["flow"][p, i], color="C3", lw=1.2, ls="--", label="flow (exact φ)")
        ax_row[1].plot(times, distance[p, i], color="C0", lw=1.2, label="SGD vs flow")
        if p == 1:
            ax_row[1].plot(times, distance_replica[i], color="0.5", lw=1.0, label="SGD vs SGD")
        ax_row[1].axhline(level, color="0.5", lw=0.8, ls=":")
        ax_row[2].semilogy(times, lindeberg["sgd"][p, i], color="k", lw=1.2)
        ax_row[2].semilogy(times, lindeberg["flow"][p, i], color="C3", lw=1.2, ls="--")
        if p == 0 and np.isfinite(t_break[i]):
            for ax in ax_row:
                ax.axvline(t_break[i], color="C2", lw=0.8)
        ax_row[0].set_ylabel(label)
        ax_row[0].set_ylim(0, 1.02)
        ax_row[1].set_ylim(0, 2)
    grid[0, 0].set_title("IPR")
    for ax in grid[:, 2]:  # the minor ticks of a log axis spanning less than a decade: unlabelled
        ax.yaxis.set_minor_formatter(mpl.ticker.NullFormatter())
    grid[0, 1].set_title("shape distance\n$d(t)$")
    grid[0, 2].set_title("Lindeberg ratio\n" + r"$\max_j w_j^2/w^\top\Sigma_1w$")
    handles = grid[0, 0].get_legend_handles_labels()[0] + grid[-1, 1].get_legend_handles_labels()[0]
    grid[0, 0].figure.legend(handles=handles, loc="outside lower center", ncol=2)
    for ax in grid[-1]:
        ax.set_xlabel("time $t$")
    return grid


def draw_breakdown_snapshots(axes: Any, times: Any, sgd: Any, flow: Any, t_break: float) -> np.ndarray:
    r"""Paper Fig. 8 (right columns) on 4 ``axes`` (any shape, e.g. 2 × 2, read row by row): unit-norm
    fields of SGD (black) and flow (red dashes) of the first initialisation, 10 checkpoints before
    and 4 after the break-down time ``t_break`` (the middle checkpoint if it is not finite), at the
    end, and at the end of the second task. ``sgd`` and ``flow`` are trajectories with weights
    (2, I, C, N). Returns the axes."""
    grid = np.asarray(axes, dtype=object)
    grid = _axes_grid("axes", grid.ravel(), (4,)) if grid.size == 4 else _axes_grid("axes", grid, (4,))
    times = np.asarray(times)
    i_b = int(np.argmax(times > t_break)) if np.isfinite(t_break) else len(times) // 2
    snaps = [
        ("before", max(i_b - 10, 0), 0),
        ("just after", min(i_b + 4, len(times) - 1), 0),
        ("end", -1, 0),
        ("end, g = 0.01", -1, 1),
    ]
    for ax, (label, c, p) in zip(grid, snaps, strict=True):
        for run, color, ls, name in ((sgd, "k", "-", "SGD"), (flow, "C3", "--", "flow")):
            w = np.asarray(run.weights[p, 0, c], dtype=np.float64)
            plotting.plot_receptive_field(ax, w / np.linalg.norm(w), color=color, ls=ls, label=name)
        ax.set_title(f"{label} (t = {times[c]:.1f})")
        ax.set_ylabel("")
        ax.set_xlabel("")
    shape = np.shape(axes)
    columns = shape[-1] if len(shape) > 1 else 4
    for ax in grid[::columns]:
        ax.set_ylabel(r"$w/\Vert w\Vert$")
    for ax in grid[-columns:]:
        ax.set_xlabel("position $i$")
    grid[0].legend(frameon=False)
    return grid
