r"""The effective-dynamics chapter's figures (``book/effective_dynamics.md``: the flow beside SGD).

Each figure is one registered builder, called by the chapter and by ``python -m localization figures``:
it derives the chapter's keys (:func:`localization.book.key`), runs the experiment and draws it,
returning a :class:`~localization.figures.registry.Built` whose data the chapter's checks read:

* :func:`fig3_sgd_vs_flow` — paper Fig. 3: SGD, the exact-φ flow and the Taylor-φ flow from the same
  initial weights (:func:`localization.experiments.flow_agreement.fig3_runs`; all 30
  initialisations, which the chapter's mode statistics and peak count use);
* :func:`fig8_breakdown`, :func:`fig8_snapshots` — paper Fig. 8: where the flow and SGD part
  (:func:`localization.experiments.flow_breakdown.breakdown`, computed once and passed to the second
  figure);
* :func:`lr_scale` — the recorded learning-rate x initial-scale sweep
  (:func:`localization.experiments.step_size.lr_scale_record`); :func:`record_lr_scale` writes it.

The chapter's two other figures, the peak count (paper §4.2) and Claim 3.2 in simulation, are in
:mod:`localization.figures.effective_dynamics_claims`. The drawing functions are those of
:mod:`localization.figures.sgd_vs_flow` and :func:`draw_lr_scale`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from localization import book, initialisation, plotting, records
from localization.experiments import flow_agreement, flow_breakdown, step_size
from localization.experiments.flow_breakdown import Breakdown
from localization.figures.registry import Built, check_scale, new_figure, register
from localization.figures.sgd_vs_flow import draw_breakdown, draw_breakdown_snapshots, draw_sgd_vs_flow

__all__ = [
    "CHAPTER",
    "fig3_sgd_vs_flow",
    "fig8_breakdown",
    "fig8_snapshots",
    "record_lr_scale",
    "draw_lr_scale",
    "lr_scale",
]

#: The chapter's name: the first label of its keys.
CHAPTER = "effective_dynamics"


@register("fig3_sgd_vs_flow", CHAPTER)
def fig3_sgd_vs_flow(scale: str = "chapter") -> Built:
    """Draw paper Fig. 3: SGD, the exact-φ flow and the Taylor-φ flow from the same initial weights.

    Ising J = (0.3, 0.7), NLGP(0.01) and Kur(5) (ξ = (1, 3), N = 40, lr 0.05, 2000 steps), from the
    first of 30 initialisations. Chapter: batch 2000 for Ising, 1000 otherwise; paper: 500 for
    Ising, 10 000 otherwise (:data:`localization.experiments.flow_agreement.FIG3_BATCH`).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The settings (the batch sizes differ).

    Returns
    -------
    Built
        The figure and a :class:`~localization.experiments.flow_agreement.Fig3Runs` (all 30
        initialisations).
    """
    batch = flow_agreement.FIG3_BATCH[check_scale(scale)]
    w0 = flow_agreement.initial_weights(book.key(CHAPTER, "peaks-w0"))
    runs = flow_agreement.fig3_runs(
        book.key(CHAPTER, "peaks-ising"), w0, batch, modes_key=book.key(CHAPTER, "modes-sgd")
    )
    fig = new_figure((plotting.COLUMN_WIDTH, 7.6), layout="constrained")
    draw_sgd_vs_flow(fig.subplots(3, 3, sharex=True, sharey="row"), runs.first)
    return Built(fig, runs)


def _breakdown(scale: str) -> Breakdown:
    return flow_breakdown.breakdown(
        book.key(CHAPTER, "fig8-sgd"),
        flow_breakdown.FIG8[check_scale(scale)],
        w0_key=book.key(CHAPTER, "fig8-w0"),
        replica_key=book.key(CHAPTER, "fig8-replica"),
    )


@register("fig8_breakdown", CHAPTER)
def fig8_breakdown(scale: str = "chapter") -> Built:
    """Draw paper Fig. 8 (left): IPR, shape distance and Lindeberg ratio of SGD and the flow along the runs.

    NLGP(g = 100) (4 initialisations, one row each) and NLGP(g = 0.01) (last row, with the SGD-vs-SGD
    noise level), ξ = (0.3, 0.7); a green line where the distance first exceeds three noise floors.
    Chapter: N = 40, batch 8000, lr 0.05, 1200 steps; paper: N = 100, batch 50 000, lr 0.01, 6000
    steps (:data:`localization.experiments.flow_breakdown.FIG8`; the same horizon t = 60).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The settings.

    Returns
    -------
    Built
        The figure and the :class:`~localization.experiments.flow_breakdown.Breakdown` (pass it to
        :func:`fig8_snapshots`).
    """
    b = _breakdown(scale)
    fig = new_figure((plotting.COLUMN_WIDTH, 10.5), layout="constrained")
    axes = fig.subplots(b.settings["inits"] + 1, 3, sharex=True)
    draw_breakdown(axes, b.times, b.ipr, b.distance, b.distance_replica, b.lindeberg, b.t_break, b.level)
    return Built(fig, b)


@register("fig8_snapshots", CHAPTER)
def fig8_snapshots(scale: str = "chapter", *, runs: Breakdown | None = None) -> Built:
    """Draw paper Fig. 8 (right): unit-norm fields of SGD and the flow around the break-down.

    The first NLGP(100) initialisation before and just after its break-down time and at the end, and
    the end on NLGP(0.01): the runs of :func:`fig8_breakdown`, at the same scales.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The settings (ignored when ``runs`` is given).
    runs : Breakdown, optional
        The runs of :func:`fig8_breakdown` (``fig8_breakdown().data``); computed when not given.

    Returns
    -------
    Built
        The figure and the :class:`~localization.experiments.flow_breakdown.Breakdown` it draws.
    """
    check_scale(scale)
    if runs is None:
        runs = _breakdown(scale)
    elif not isinstance(runs, Breakdown):
        raise TypeError(f"runs must be a Breakdown (fig8_breakdown().data), got {type(runs).__name__}")
    fig = new_figure((plotting.COLUMN_WIDTH, 5.0), layout="constrained")
    axes = fig.subplots(2, 2, sharex=True, sharey=True)
    draw_breakdown_snapshots(axes, runs.times, runs.sgd, runs.flow, float(runs.t_break[0]))
    return Built(fig, runs)


def record_lr_scale(path: str | None = None) -> dict:
    """Run and write the recorded sweep (:func:`localization.experiments.step_size.record_lr_scale_sweep`).

    The command of the record (:data:`localization.experiments.step_size.RECORD_COMMAND`): under the
    book seed (0 for the committed record), with the keys ``book.key(CHAPTER, "lr-scale-sgd")`` (the
    SGD stream) and ``book.key(CHAPTER, "lr-scale-w")`` (the unit-scale initial weights).

    Parameters
    ----------
    path : str or None
        Output file (default :data:`localization.experiments.step_size.LR_SCALE_RECORD_PATH` in the
        repository).

    Returns
    -------
    dict
        The record written.
    """
    book.start(CHAPTER)
    s = step_size.LR_SCALE_RECORD
    w_unit = initialisation.init_weights(book.key(CHAPTER, "lr-scale-w"), s["n"], 1.0, num=s["inits"])
    out = str(records.ROOT / step_size.LR_SCALE_RECORD_PATH) if path is None else path
    return step_size.record_lr_scale_sweep(book.key(CHAPTER, "lr-scale-sgd"), w_unit, out, seed=book.seed())


def _mean_ipr(values):
    a = np.array(values, dtype=np.float64)  # null -> nan
    none = np.isnan(a).all(-1)
    mean = np.where(none, np.nan, np.nansum(a, -1) / np.maximum((~np.isnan(a)).sum(-1), 1))
    return mean, none


def draw_lr_scale(axes: Any, d: step_size.LrScale) -> None:
    """Draw the final IPR against the learning rate, one panel per task of the recorded sweep.

    Per panel: SGD at the record's first batch for each initial scale (colours; crosses where every
    initialisation diverged), SGD at its last batch and the flow at the paper's scale 1e-3, and
    vertical lines at η_c of the task and (first panel) the flow fixed point's Euler limit.

    Parameters
    ----------
    axes : sequence of matplotlib Axes
        One per task of the record (P).
    d : LrScale
        :func:`localization.experiments.step_size.lr_scale_record`.
    """
    if not isinstance(d, step_size.LrScale):
        raise TypeError(f"d must be an LrScale (step_size.lr_scale_record()), got {type(d).__name__}")
    s = d.record["settings"]
    lrs, scales = np.array(s["lrs"]), np.array(s["scales"])
    runs = d.record["runs"]
    colours = plotting.TIME_CMAP(np.linspace(0.0, 1.0, len(scales)))
    paper = int(np.argmin(np.abs(np.log10(scales) + 3)))
    for p, ax in enumerate(axes):
        small, small_div = _mean_ipr(runs[str(s["batches"][0])]["sgd_ipr"][p])  # (L, S)
        for j, sc in enumerate(scales):
            ax.plot(lrs, small[:, j], "o-", ms=3, lw=1, color=colours[j], label=f"SGD, scale {sc:g}")
            div = small_div[:, j]
            ax.plot(lrs[div], np.full(div.sum(), 1.05 + 0.02 * j), "x", ms=4, color=colours[j])
        big, _ = _mean_ipr(runs[str(s["batches"][-1])]["sgd_ipr"][p])
        ax.plot(lrs, big[:, paper], "k:", lw=1.5, label=f"SGD, batch {s['batches'][-1]}, scale 1e-3")
        flow, _ = _mean_ipr(runs[str(s["batches"][0])]["flow_ipr"][p])
        ax.plot(lrs, flow[:, paper], "--", color="tab:red", lw=1.5, label="flow, scale 1e-3")
        ax.axvline(d.eta_c[p], color="0.4", lw=1)
        ax.text(d.eta_c[p], 0.5, r"$\eta_c$ ", color="0.3", fontsize=8, ha="right")
        if p == 0:
            ax.axvline(d.fixed_point.threshold, color="0.4", lw=1, ls="--")
            ax.text(d.fixed_point.threshold, 0.3, r" $\eta_{\rm fp}$", color="0.3", fontsize=8, ha="left")
        ax.set_xscale("log")
        ax.set_ylim(0, 1.2)
        ax.set_ylabel("final IPR (mean of 4)")
        xi = f"ξ = ({s['xi'][0]:g}, {s['xi'][1]:g})"
        ax.set_title(f"NLGP(g = {s['gains'][p]:g}), {xi}, N = {s['n']}, t = {s['t_end']:g}", fontsize=9)
    axes[-1].set_xlabel("learning rate η")
    handles, labels = axes[0].get_legend_handles_labels()
    axes[1].legend(handles, labels, fontsize=7, ncol=2, loc="center left")


@register("lr_scale", CHAPTER)
def lr_scale(scale: str = "chapter") -> Built:
    """Draw the final IPR against the learning rate for several initial scales, NLGP(100) and NLGP(0.01).

    From the recorded sweep (:data:`localization.experiments.step_size.LR_SCALE_RECORD_PATH`): SGD at
    batch 1000 for each initial scale (colours), SGD at batch 8000 and the effective flow at the
    paper's scale 1e-3; crosses where every initialisation diverged; vertical lines at the divergence
    threshold 4/λ_max(Σ₀+Σ₁) and (top) the Euler stability limit of the flow's localized fixed point.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        Only "chapter" (the record).

    Returns
    -------
    Built
        The figure and the :class:`~localization.experiments.step_size.LrScale`.
    """
    check_scale(scale)
    d = step_size.lr_scale_record()
    fig = new_figure((plotting.COLUMN_WIDTH, 0.95 * plotting.COLUMN_WIDTH), layout="constrained")
    draw_lr_scale(fig.subplots(2, 1, sharex=True), d)
    return Built(fig, d)
