r"""Drawing code of the effective-dynamics chapter's figures (paper Figs. 3 and 8).

Shared by the chapter and by ``python -m localization figures``.

Each function draws computed results on axes it is given and returns what a caller may need
afterwards. None of them computes a simulation: the results come from
:mod:`localization.experiments` and :mod:`localization.train`.

* :func:`draw_sgd_vs_flow` — paper Fig. 3: SGD, exact-φ flow and Taylor-φ flow from the same
  initial weights;
* :func:`draw_breakdown`, :func:`draw_breakdown_snapshots` — paper Fig. 8: where the effective flow
  and SGD part.

The other chapters' drawing functions live in their figure modules (:mod:`localization.figures.data`,
:mod:`localization.figures.simulation`, ...); the shared panels and the book style in
:mod:`localization.plotting`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from localization import plotting
from localization.experiments import Comparison

__all__ = ["draw_sgd_vs_flow", "draw_breakdown", "draw_breakdown_snapshots"]


def draw_sgd_vs_flow(axes: Any, comparisons: Mapping[str, Comparison]) -> np.ndarray:
    """Paper Fig. 3 on a (rows, 3) grid of ``axes``: for each data model (name → a
    :class:`localization.experiments.Comparison` of one initialisation; one row, its name on the
    left), the SGD field, the exact-φ flow and the Taylor-φ flow (one column each, titled on top),
    coloured by time (every second checkpoint). One time colour bar below the grid when every run
    has the same times, else one per row. Create ``axes`` with ``sharey="row"`` to compare the
    three panels of a row. Returns the axes."""
    import matplotlib as mpl

    grid = plotting.axes_grid("axes", axes, (len(comparisons), 3))
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
    grid = plotting.axes_grid("axes", axes, (inits + 1, 3))
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
    grid = plotting.axes_grid("axes", grid.ravel(), (4,)) if grid.size == 4 else plotting.axes_grid("axes", grid, (4,))
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
