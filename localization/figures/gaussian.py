r"""The Gaussian chapter's figure (``book/gaussian.md``) and the frames of its explorer.

* :func:`gaussian_clone_sgd` — the registered builder: SGD on the Gaussian clone of NLGP against the
  exact flow's constant fixed point (:func:`localization.experiments.gaussian.clone_sgd`, drawn by
  :func:`localization.figures.flows.draw_mode_shares`);
* :func:`draw_mode_explorer` — one frame of the chapter's explorer (which mode is stable, how fast, and
  one SGD run; :func:`localization.experiments.gaussian.mode_summary`).

The computations the chapter's checks call (the run's statistics, the proposition's Jacobians) are in
:mod:`localization.experiments.gaussian`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from localization import book, plotting
from localization.experiments import gaussian as experiment
from localization.figures.flows import draw_mode_shares
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = ["gaussian_clone_sgd", "draw_mode_explorer"]


@register("gaussian_clone_sgd", "gaussian")
def gaussian_clone_sgd(scale: str = "chapter") -> Built:
    """Draw SGD on the Gaussian clone of NLGP against the exact flow's constant fixed point.

    32 initialisations trained by online SGD (learning rate 0.05, batch 1000 balanced, to t = 400)
    at N = 40, ξ = (1, 3), book keys ("gaussian", "sgd-w0") and ("gaussian", "sgd"); the flow of
    Eq. (gauss-flow) integrated from the same weights (the same at both scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same figure at both scales.

    Returns
    -------
    Built
        The figure and the :class:`localization.experiments.gaussian.CloneRun` (the chapter's checks
        read the runs and the flow).
    """
    check_scale(scale)
    run = experiment.clone_sgd(book.key("gaussian", "sgd"), book.key("gaussian", "sgd-w0"))
    fig = new_figure((plotting.COLUMN_WIDTH, 3.0), layout="constrained")
    w_end = np.asarray(run.sgd.weights, dtype=np.float64)[:, -1]
    draw_mode_shares(fig.subplots(1, 2), np.asarray(run.sgd.times), run.shares_sgd, w_end, run.fixed_point.amplitude)
    return Built(fig, run)


def draw_mode_explorer(fig: Any, cov0: Any, cov1: Any, path: Any, times: Any) -> dict[str, Any]:
    r"""Draw one frame of the chapter's explorer: which mode is stable, how fast, and one SGD run.

    Top left: the ratio :math:`r(k)=\lambda_0/\lambda_1` against frequency (log scale), the stable
    fixed point of :func:`localization.theory.gaussian.fixed_points` marked red; top right: the rates
    :math:`-\gamma_k` at it; bottom: the SGD run ``path`` (one curve per checkpoint), titled with the
    frequency holding the largest share of its final :math:`\|w\|^2` and the predicted one (all from
    :func:`localization.experiments.gaussian.mode_summary`).
    Fixed margins instead of a constrained layout: the frames draw in about half the time.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        An empty figure (no layout engine).
    cov0, cov1 : array_like
        (N, N) circulant class covariances.
    path : array_like
        (checkpoints, N) weights of one SGD run.
    times : array_like
        (checkpoints,) their times.

    Returns
    -------
    dict
        The axes, by name (``"ratio"``, ``"rates"``, ``"sgd"``).
    """
    path = np.asarray(path)
    if path.ndim != 2 or path.shape[1] != np.shape(cov0)[0]:
        raise ValueError(f"path must be (checkpoints, N) with N = {np.shape(cov0)[0]}, got {path.shape}")
    modes = experiment.mode_summary(cov0, cov1, path[-1])
    win = modes.stable
    axes = fig.subplot_mosaic(
        [["ratio", "rates"], ["sgd", "sgd"]],
        gridspec_kw=dict(left=0.17, right=0.9, bottom=0.09, top=0.93, hspace=0.55, wspace=0.4),
    )
    axes["ratio"].semilogy([p.freq for p in modes.points], [p.ratio for p in modes.points], "o-", ms=3, color="0.4")
    axes["ratio"].semilogy([win.freq], [win.ratio], "o", ms=8, color="C3")
    axes["ratio"].set(
        xlabel="frequency $k$",
        ylabel=r"$r(k)=\lambda_0/\lambda_1$",
        title=f"stable: $k$ = {win.freq}, $|u|$ = {win.amplitude:.3f}",
    )
    axes["rates"].semilogy(modes.freqs, -modes.rates, "o", ms=3, color="C0")
    axes["rates"].set(xlabel="frequency $k$", ylabel=r"$-\gamma_k$", title=f"slowest rate {modes.rates.max():.2g}")
    plotting.plot_field_evolution(axes["sgd"], path, times)
    axes["sgd"].set_title(
        f"SGD: largest share at $k$ = {modes.dominant} "
        f"({modes.dominant_share:.0%} of "
        f"$\\|w\\|^2$); predicted $k$ = {win.freq}"
    )
    return axes
