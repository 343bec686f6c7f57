r"""The effective-dynamics chapter's figures of the paper's claims: the peak count and Claim 3.2.

Each figure is one registered builder, called by the chapter (``book/effective_dynamics.md``) and
by ``python -m localization figures``: it derives the chapter's keys, runs the experiment and draws
it (:mod:`localization.figures.sgd_vs_flow`); the chapter's paper Figs. 3 and 8 are in
:mod:`localization.figures.effective_dynamics`, whose runs these start from:

* :func:`peak_failures` — the peak count's initialisations whose SGD and flow peaks differ by more
  than one position (:func:`localization.experiments.flow_agreement.peak_count`; paper §4.2's
  "26 of 28");
* :func:`kurtosis_threshold` — Claim 3.2 in simulation: the final IPR of SGD and the flow along the
  NLGP and Kur sweeps (:func:`localization.experiments.kurtosis_threshold.kurtosis_sweep`).
"""

from __future__ import annotations

from localization import book, plotting
from localization.experiments import flow_agreement
from localization.experiments import kurtosis_threshold as claim
from localization.experiments.flow_agreement import Fig3Runs
from localization.figures.effective_dynamics import CHAPTER, fig3_sgd_vs_flow
from localization.figures.registry import Built, check_scale, new_figure, register
from localization.figures.sgd_vs_flow import (
    draw_kurtosis_threshold,
    draw_peak_failures,
    peak_failure_rows,
    peak_failures_of,
)

__all__ = ["peak_failures", "kurtosis_threshold"]


@register("peak_failures", CHAPTER)
def peak_failures(scale: str = "chapter", *, fig3: Fig3Runs | None = None) -> Built:
    """Draw every initialisation of the peak count whose SGD and flow peaks differ by more than one position.

    The final unit-norm fields (SGD black, exact-φ flow red dashes) of the peak count (Ising J = (0.3,
    0.7) from Fig. 3's runs, NLGP(1.1) and NLGP(3) at ξ = (1, 2), 30 initialisations each).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The scale of Fig. 3's runs (ignored when ``fig3`` is given).
    fig3 : Fig3Runs, optional
        The runs of :func:`~localization.figures.effective_dynamics.fig3_sgd_vs_flow`
        (``fig3_sgd_vs_flow().data``); computed when not given.

    Returns
    -------
    Built
        The figure and the :class:`~localization.experiments.flow_agreement.PeakCount`.
    """
    check_scale(scale)
    if fig3 is None:
        fig3 = fig3_sgd_vs_flow(scale).data
    count = flow_agreement.peak_count(book.key(CHAPTER, "peaks-nlgp"), fig3)
    rows, _ = peak_failure_rows(len(peak_failures_of(count.agree)))
    fig = new_figure((plotting.COLUMN_WIDTH, 0.9 + 2.0 * rows), layout="constrained")
    draw_peak_failures(fig, count.final, count.agree)
    return Built(fig, count)


@register("kurtosis_threshold", CHAPTER)
def kurtosis_threshold(scale: str = "chapter") -> Built:
    """Draw Claim 3.2 in simulation: final IPR of SGD and the flow along NLGP(g) and Kur(k), and against the kurtosis.

    The sweeps of :func:`localization.experiments.kurtosis_threshold.kurtosis_sweep` (9 gains, 9
    exponents, ξ = (0.3, 0.7), the first 4 of Fig. 3's initialisations, batch 500, lr 0.1, 3000 steps;
    the same at both scales), with the crossings of 0.5 and k*.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same figure at both scales.

    Returns
    -------
    Built
        The figure and the :class:`~localization.experiments.kurtosis_threshold.KurtosisSweep`.
    """
    check_scale(scale)
    w0 = flow_agreement.initial_weights(book.key(CHAPTER, "peaks-w0"))[: claim.CLAIM_INITS]
    result = claim.kurtosis_sweep(book.key(CHAPTER, "claim-sweep"), w0)
    fig = new_figure((plotting.COLUMN_WIDTH, 9.6), layout="constrained")
    draw_kurtosis_threshold(fig.subplots(3, 1), result.sweep, result.thresholds, result.k_star)
    return Built(fig, result)
