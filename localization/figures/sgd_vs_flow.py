r"""Drawing SGD against the effective flow: the effective-dynamics chapter's figures (paper Figs. 3, 8).

Shared by the chapter and by ``python -m localization figures``.

Each function draws computed results on axes it is given and returns what a caller may need
afterwards. None of them computes a simulation: the results come from
:mod:`localization.experiments` and :mod:`localization.train`.

* :func:`draw_sgd_vs_flow` — paper Fig. 3: SGD, exact-φ flow and Taylor-φ flow from the same
  initial weights;
* :func:`draw_breakdown`, :func:`draw_breakdown_snapshots` — paper Fig. 8: where the effective flow
  and SGD part.
* :func:`draw_peak_failures` — the initialisations whose SGD and flow peaks differ by more than one
  position (with :func:`peak_failures_of`, :func:`peak_failure_rows`);
* :func:`draw_kurtosis_threshold` — Claim 3.2 in simulation: final IPR along the NLGP and Kur sweeps.
* :func:`draw_comparison` — one SGD run beside its flow (the chapter's widget).

The other chapters' drawing functions live in their figure modules (:mod:`localization.figures.data`,
:mod:`localization.figures.simulation`, ...); the shared panels and the book style in
:mod:`localization.plotting`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from jax.typing import ArrayLike

from localization import metrics, plotting
from localization.experiments import Comparison
from localization.trajectory import Trajectory

__all__ = [
    "draw_sgd_vs_flow",
    "draw_breakdown",
    "draw_breakdown_snapshots",
    "draw_peak_failures",
    "peak_failures_of",
    "peak_failure_rows",
    "draw_kurtosis_threshold",
    "draw_comparison",
]


def draw_sgd_vs_flow(axes: Any, comparisons: Mapping[str, Comparison]) -> np.ndarray:
    """Draw paper Fig. 3: SGD, the exact-φ flow and the Taylor-φ flow of each data model, one row each.

    One row per data model (its name on the left), one column each for the SGD field, the exact-φ
    flow and the Taylor-φ flow (titled on top), coloured by time (every second checkpoint). One time
    colour bar below the grid when every run has the same times, else one per row. Create ``axes``
    with ``sharey="row"`` to compare the three panels of a row.

    Parameters
    ----------
    axes : array of Axes, shape (rows, 3)
        The panels.
    comparisons : mapping of str to Comparison
        Data model name → a :class:`localization.experiments.Comparison` of one initialisation
        (weights (C, N)), with a Taylor flow.

    Returns
    -------
    numpy.ndarray of Axes
        ``axes`` as a (rows, 3) array.
    """
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
    for ax_or_grid, t in [(grid, times[0])] if same else [(row, times[3 * r]) for r, row in enumerate(grid)]:
        plotting.time_colorbar(
            list(np.ravel(ax_or_grid)), t, location="bottom" if same else "right", shrink=0.6 if same else 1.0
        )
    return grid


def draw_breakdown(
    axes: Any,
    times: ArrayLike,
    ipr: Mapping[str, ArrayLike],
    distance: ArrayLike,
    distance_replica: ArrayLike,
    lindeberg: Mapping[str, ArrayLike],
    t_break: ArrayLike,
    level: float,
    labels: tuple[str, str] = ("NLGP(100)", "NLGP(0.01)"),
) -> np.ndarray:
    r"""Draw paper Fig. 8 (left columns): IPR, shape distance and Lindeberg ratio of SGD and the flow.

    Rows 1..I: the I initialisations on the first task; the last row: the first initialisation on
    the second task. Columns: IPR of SGD and of the flow; the shape distance SGD vs flow (and, in the
    last row, SGD vs an independent SGD run) with ``level`` dotted; the Lindeberg ratio of both. A
    green line marks ``t_break[i]`` where finite. One legend, below the grid.

    Parameters
    ----------
    axes : array of Axes, shape (I + 1, 3)
        The panels.
    times : array_like, shape (C,)
        The checkpoint times.
    ipr, lindeberg : mapping of str to array_like, each (2, I, C)
        "sgd" and "flow" → IPR and Lindeberg ratio along the runs (task, initialisation, time).
    distance : array_like, shape (2, I, C)
        Shape distance SGD vs flow.
    distance_replica : array_like, shape (I, C)
        Shape distance SGD vs an independent SGD run, second task.
    t_break : array_like, shape (I,)
        Break-down times on the first task (NaN: none).
    level : float
        The break-down level (three noise floors).
    labels : (str, str)
        The two tasks' names.

    Returns
    -------
    numpy.ndarray of Axes
        ``axes`` as an (I + 1, 3) array.
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


def draw_breakdown_snapshots(
    axes: Any, times: ArrayLike, sgd: Trajectory, flow: Trajectory, t_break: float
) -> np.ndarray:
    r"""Draw paper Fig. 8 (right columns): unit-norm fields of SGD and the flow around the break-down.

    SGD (black) and flow (red dashes) of the first initialisation, 10 checkpoints before and 4 after
    the break-down time ``t_break`` (the middle checkpoint if it is not finite), at the end, and at
    the end of the second task.

    Parameters
    ----------
    axes : array of 4 Axes
        Any shape (e.g. 2 × 2), read row by row.
    times : array_like, shape (C,)
        The checkpoint times.
    sgd, flow : localization.trajectory.Trajectory
        Weights (2, I, C, N): two tasks, I initialisations.
    t_break : float
        The first initialisation's break-down time (NaN: none).

    Returns
    -------
    numpy.ndarray of Axes
        The 4 panels, flat.
    """
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


def draw_peak_failures(fig: Any, final: Mapping[str, Any], agree: Mapping[str, Any]) -> np.ndarray:
    r"""Draw every initialisation whose SGD and flow peaks differ by more than one position.

    One panel per such initialisation (at most three per row; one hidden panel when there is none):
    the final unit-norm fields of SGD (black) and of the exact-φ flow (red dashes), titled with the
    two peak positions; one legend above (the positions' label is below).

    Parameters
    ----------
    fig : Figure
        The figure (its height should be 0.9 + 2.0 × rows inches, :func:`peak_failure_rows`).
    final : mapping of str to (array_like, array_like)
        Setting name → the final SGD and flow fields, each (I, N).
    agree : mapping of str to PeakAgreement
        Setting name → :func:`localization.field_analysis.peak_agreement` of those fields.

    Returns
    -------
    numpy.ndarray of Axes
        The panels, (rows, cols).
    """
    fails = peak_failures_of(agree)
    rows, cols = peak_failure_rows(len(fails))
    axes = fig.subplots(rows, cols, sharey=True, squeeze=False)
    for ax in axes.flat[len(fails) :]:
        ax.set_visible(False)
    for ax, (name, i) in zip(axes.flat, fails, strict=False):
        for w, color, ls, lab in ((final[name][0][i], "k", "-", "SGD"), (final[name][1][i], "C3", "--", "flow")):
            w = np.asarray(w, dtype=np.float64)
            plotting.plot_receptive_field(ax, w / np.linalg.norm(w), color=color, ls=ls, label=lab)
        ax.set_title(f"{name}, init {i}\npeaks {agree[name].peak1[i]} / {agree[name].peak2[i]}")
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.set_xticks([0, 20, 39])
    fig.supxlabel("position $i$")
    fig.supylabel(r"$w/\Vert w\Vert$")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside upper center", ncol=2)
    return axes


def peak_failures_of(agree: Mapping[str, Any]) -> list[tuple[str, int]]:
    """Return the (setting, initialisation) pairs whose two peaks differ by more than one position.

    Parameters
    ----------
    agree : mapping of str to PeakAgreement
        Setting name → peak agreement (``offset`` (I,)).

    Returns
    -------
    list of (str, int)
        In the order of ``agree``, then of the initialisations.
    """
    return [(name, int(i)) for name, a in agree.items() for i in np.nonzero(np.asarray(a.offset) > 1)[0]]


def peak_failure_rows(count: int) -> tuple[int, int]:
    """Return the (rows, cols) of :func:`draw_peak_failures` for ``count`` panels: at most three per row.

    Parameters
    ----------
    count : int
        Number of panels (0 gives one, hidden).

    Returns
    -------
    (int, int)
        Rows and columns.
    """
    cols = min(max(count, 1), 3)  # at most three panels per row: the figure fits the page column
    return -(-max(count, 1) // cols), cols


def draw_kurtosis_threshold(
    axes: Any, sweep: Mapping[str, Mapping[str, Any]], thresholds: Mapping[tuple[str, str, str], float], k_star: float
) -> np.ndarray:
    r"""Draw the final IPR of SGD and the flow along the NLGP and Kur sweeps, and against the excess kurtosis.

    Top: the NLGP gains (log scale) and the Kur exponents, the mean final IPR of SGD (black) and of
    the exact-φ flow (red dashes) with the range over initialisations shaded and the crossings of 0.5
    dotted, and :math:`k^*` (the sign change of Kur's excess kurtosis) in green. Bottom: the mean
    final IPR against the excess kurtosis of the marginal, both families.

    Parameters
    ----------
    axes : array of Axes, shape (3,)
        The panels.
    sweep : mapping of str to mapping
        "NLGP", "Kur" → ``params`` (P,), ``kurt`` (P,) and the final IPRs ``sgd``, ``flow`` (P, I).
    thresholds : mapping of (str, str, str) to float
        ``(family, "sgd" | "flow", "0.5")`` → the parameter where the mean IPR crosses 0.5 (NaN: none).
    k_star : float
        Kur's sign change of the excess kurtosis.

    Returns
    -------
    numpy.ndarray of Axes
        The three panels.
    """
    axes = plotting.axes_grid("axes", axes, (3,))
    for ax, fam in zip(axes[:2], ("NLGP", "Kur"), strict=True):
        r = sweep[fam]
        for which, color, ls, lab in (("sgd", "k", "-", "SGD"), ("flow", "C3", "--", "flow (exact φ)")):
            ax.plot(r["params"], r[which].mean(1), color=color, ls=ls, marker="o", ms=3, label=lab)
            ax.fill_between(r["params"], r[which].min(1), r[which].max(1), color=color, alpha=0.15, lw=0)
            thr = thresholds[fam, which, "0.5"]
            if np.isfinite(thr):
                ax.axvline(thr, color=color, ls=":", lw=1)
        ax.axhline(0.5, color="0.6", lw=0.6)
        ax.set_ylabel("final IPR")
        ax.set_ylim(0, 1)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("NLGP gain $g$ (excess kurtosis < 0 everywhere)")
    axes[1].axvline(k_star, color="C2", lw=1.2)
    axes[1].text(k_star, 0.92, r" $k^*$: kurtosis sign change", color="C2")
    axes[1].set_xscale("log")
    axes[1].set_xticks([5, 6, 8, 10, 15, 20], labels=["5", "6", "8", "10", "15", "20"])
    axes[1].minorticks_off()
    axes[1].set_xlabel("Kur exponent $k$")
    axes[0].legend(frameon=False)
    for fam, marker in (("NLGP", "o"), ("Kur", "s")):
        r = sweep[fam]
        axes[2].plot(r["kurt"], r["sgd"].mean(1), marker=marker, color="k", ms=4, lw=1, label=f"{fam}, SGD")
        axes[2].plot(r["kurt"], r["flow"].mean(1), marker=marker, color="C3", ms=4, lw=1, ls="--", label=f"{fam}, flow")
    axes[2].axvline(0, color="C2", lw=1.2)
    axes[2].set_xlabel("excess kurtosis of the marginal")
    axes[2].set_ylabel("final IPR")
    axes[2].set_ylim(0, 1)
    axes[2].legend(frameon=False, ncol=2)
    return axes


def draw_comparison(fig: Any, comparison: Comparison, title: str) -> dict[str, Any]:
    """Draw one SGD run beside its exact-φ flow: the two fields along training, and their IPRs (the chapter's widget).

    Parameters
    ----------
    fig : Figure
        The figure (a mosaic of three panels is made on it).
    comparison : Comparison
        SGD and flow of one task (:meth:`localization.experiments.Comparison.select`); the first
        initialisation is drawn.
    title : str
        The figure's title.

    Returns
    -------
    dict of str to Axes
        The panels "sgd", "flow" and "ipr".
    """
    if not isinstance(comparison, Comparison):
        raise TypeError(f"comparison must be a Comparison, got {type(comparison).__name__}")
    axes = fig.subplot_mosaic([["sgd", "flow"], ["ipr", "ipr"]])
    plotting.plot_field_evolution(axes["sgd"], comparison.sgd, index=0, colorbar=False)
    plotting.plot_field_evolution(axes["flow"], comparison.flow, index=0)
    axes["sgd"].set_title("SGD")
    axes["flow"].set_title("flow, exact φ")
    t = np.asarray(comparison.sgd.times)
    for run, color, ls, label in ((comparison.sgd, "k", "-", "SGD"), (comparison.flow, "C3", "--", "flow")):
        axes["ipr"].plot(t, np.asarray(metrics.ipr(run.weights[0])), color=color, ls=ls, label=label)
    axes["ipr"].set(xlabel="time $t$", ylabel="IPR", ylim=(0, 1))
    axes["ipr"].legend()
    fig.suptitle(title)
    return axes
