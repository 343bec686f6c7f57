r"""The two-dimensions chapter's figures (``book/two_dimensions.md``: paper Fig. 1 right, committee panel).

Each figure is one registered builder, called by the chapter and by ``python -m localization figures``:
it takes the chapter's key, calls the runs of :mod:`localization.experiments.two_dimensions` and draws
them (the fields with :func:`localization.figures.many_neurons.draw_filter_gallery`):

* :func:`fig1_committee` — the fields of a soft committee machine trained on a torus (and the
  near-Gaussian control), with the box share of every field along training
  (:class:`localization.experiments.two_dimensions.Fig1Runs`): the share of the book's definition of a
  localized field, :func:`localization.field_analysis.localization_share` (a box holding a quarter of
  the sites);
* :func:`fig1_share_time` — that box share along training (:func:`draw_share_time`);
* :func:`fig1_committee_record` — the fields of the recorded full-scale run (the paper's settings,
  ``book/data/fig1_full_scale.npz``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from jax.typing import ArrayLike

from localization import book, field_analysis, plotting
from localization.experiments import many_neurons as mn
from localization.experiments import two_dimensions as experiment
from localization.figures.many_neurons import draw_filter_gallery
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = [
    "SETTINGS",
    "BOX",
    "fig1_committee",
    "draw_committee_fields",
    "draw_share_time",
    "fig1_share_time",
    "fig1_committee_record",
]

#: The chapter's settings: 20 × 20 torus, NLGP(100), ξ = (1, 2), SCM K = 20, ReLU, no bias, 11 checkpoints.
SETTINGS = mn.FIG1_CHAPTER


#: Side of the box of the share on the chapter's torus (10 sites): the book's definition,
#: :func:`localization.field_analysis.localization_window` (a box holding a quarter of the sites: half the
#: side on a 2-torus), not a setting of this module.
BOX = field_analysis.localization_window(SETTINGS.shape)


@register("fig1_committee", "two_dimensions")
def fig1_committee(scale: str = "chapter") -> Built:
    """Draw paper Fig. 1 (right), committee panel: the 20 fields of a soft committee machine on a torus.

    ReLU, no bias, trained on NLGP(100), book key ``("two_dimensions", "fig1")``. Chapter: 20 × 20, batch
    1000, 5000 steps (:data:`SETTINGS`), with the NLGP(0.01) control below; paper: 30 × 30, batch
    10 000, 10 000 steps (about 12 minutes on two cores).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The settings.

    Returns
    -------
    Built
        The figure and a :class:`localization.experiments.two_dimensions.Fig1Runs`.
    """
    paper = check_scale(scale) == "paper"
    result = experiment.fig1_committee_runs(book.key("two_dimensions", "fig1"), paper=paper)
    fig = new_figure((plotting.COLUMN_WIDTH, 1.7 * len(result.runs) + 0.5), layout="constrained")
    draw_committee_fields(fig, result.runs, paper=paper)
    return Built(fig, result)


def draw_committee_fields(fig: Any, runs: Mapping[str, mn.PopulationRun], *, paper: bool = False) -> Any:
    """Draw the final fields of the first network of each run, one gallery (10 columns) per run.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        An empty figure.
    runs : mapping of str to PopulationRun
        Run name (the gallery's title) → the run.
    paper : bool
        Say in the titles that the runs have the paper's settings (and their torus).

    Returns
    -------
    numpy.ndarray of SubFigure
        The galleries, one per run.
    """
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError(f"runs must be a non-empty mapping of run name to PopulationRun, got {runs!r}")
    subs = np.atleast_1d(fig.subfigures(len(runs), 1))
    for sub, (name, run) in zip(subs, runs.items(), strict=True):
        s = run.settings
        where = f", {s.shape[0]} × {s.shape[1]} torus, the paper's settings" if paper else ""
        draw_filter_gallery(sub, run.final[0], s.shape, f"{name}{where}: the {s.K} fields of one network", cols=10)
    return subs


def draw_share_time(ax: Any, steps: ArrayLike, share: Mapping[str, ArrayLike], box: int) -> Any:
    """Draw the box share of every field along training: the median, the range shaded, and the threshold.

    The threshold of a localized field (:data:`localization.field_analysis.LOCALIZED_SHARE`) is drawn dashed.

    Parameters
    ----------
    ax : Axes
        The panel.
    steps : array_like, shape (C,)
        The checkpoints' SGD steps.
    share : mapping of str to array_like, each (C, K)
        Run name → the box share of each of its K fields at every checkpoint (colours C0, C3, ...).
    box : int
        The box's side (the y label).

    Returns
    -------
    Axes
        ``ax``, with a legend.
    """
    (ax,) = plotting.axes_grid("ax", [ax], (1,))
    steps = np.asarray(steps)
    for i, (name, s) in enumerate(share.items()):
        s = np.asarray(s, dtype=np.float64)
        if s.ndim != 2 or s.shape[0] != steps.shape[0]:
            raise ValueError(f"share[{name!r}] must have shape (C, K) with C = {steps.shape[0]}, got {s.shape}")
        color = ("C0", "C3")[i] if i < 2 else f"C{i}"
        ax.fill_between(steps, s.min(axis=1), s.max(axis=1), color=color, alpha=0.2, lw=0)
        ax.plot(steps, np.median(s, axis=1), color=color, lw=1.8, label=name)
    ax.axhline(field_analysis.LOCALIZED_SHARE, color="0.3", ls="--", lw=1.0, label="localized above")
    ax.set_xlabel("SGD step")
    ax.set_ylabel(f"box share $s_{{{box}}}$")
    ax.set_ylim(0, 1)
    ax.legend(loc="upper left")
    return ax


@register("fig1_share_time", "two_dimensions")
def fig1_share_time(scale: str = "chapter", *, runs: experiment.Fig1Runs | None = None) -> Built:
    """Draw the box share of the 20 fields of ``fig1_committee`` along training (median and range).

    The runs of :func:`fig1_committee`, at the same scales.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The settings (ignored when ``runs`` is given).
    runs : localization.experiments.two_dimensions.Fig1Runs, optional
        The runs of :func:`fig1_committee` (``fig1_committee().data``); computed when not given.

    Returns
    -------
    Built
        The figure and the :class:`localization.experiments.two_dimensions.Fig1Runs` it draws.
    """
    check_scale(scale)
    if runs is None:
        runs = fig1_committee(scale).data
    elif not isinstance(runs, experiment.Fig1Runs):
        raise TypeError(f"runs must be a Fig1Runs (fig1_committee().data), got {type(runs).__name__}")
    fig = new_figure((plotting.COLUMN_WIDTH, 3.0), layout="constrained")
    box = field_analysis.localization_window(next(iter(runs.runs.values())).settings.shape)
    draw_share_time(fig.subplots(), runs.steps, runs.share, box)
    return Built(fig, runs)


@register("fig1_committee_record", "two_dimensions")
def fig1_committee_record(scale: str = "chapter") -> Built:
    """Draw the 20 fields of the recorded full-scale run: NLGP(100), 30 × 30 torus, the paper's settings.

    Read from ``book/data/fig1_full_scale.npz`` (written by ``benchmarks/record_fig1.py``; the same at
    both scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same figure at both scales.

    Returns
    -------
    Built
        The figure and the record (:class:`localization.experiments.many_neurons.Fig1Record`).
    """
    check_scale(scale)
    record = mn.read_fig1_record()
    fig = new_figure((plotting.COLUMN_WIDTH, 2.2), layout="constrained")
    title = "NLGP(100), 30 × 30 torus, the paper's settings: the 20 fields"
    draw_filter_gallery(fig, record.fields, mn.FIG1_GRID.shape, title, cols=10)
    return Built(fig, record)
