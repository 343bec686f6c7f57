r"""The ICA chapter's figures (``book/ica.md``: paper Fig. 6 right, and the ICA panel of Fig. 1 right).

Each figure is one registered builder, called by the chapter and by ``python -m localization figures``:
it fits FastICA (:func:`localization.experiments.ica.fit_ica`, the paper's call: 100 000 examples)
with the chapter's key and draws the filters with
:func:`localization.figures.many_neurons.draw_filter_gallery`:

* :func:`fig6_ica` — the first 10 of 40 filters of Kur(3) on the ring;
* :func:`fig1_ica_grid` — 12 of 64 filters of NLGP(100) on a 12 × 12 torus.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from localization import book, data, field_analysis, metrics, plotting
from localization.experiments import ica
from localization.figures.many_neurons import N, draw_filter_gallery
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = ["N", "XI", "GRID", "XI_GRID", "fig6_ica", "fig1_ica_grid", "FilterOutputs", "filter_outputs"]

#: Length-scales of the ring task (Kur(3)); the ring size is :data:`N`.
XI = (1.0, 3.0)
#: The torus of the grid fit and its length-scales (NLGP(100)).
GRID, XI_GRID = (12, 12), (0.1, 0.7)


@register("fig6_ica", "ica")
def fig6_ica(scale: str = "chapter") -> Built:
    """Draw paper Fig. 6 (right): the first 10 of 40 FastICA filters of Kur(3) on the ring.

    ξ = (1, 3), N = 40, 100 000 examples, book key ``("ica", "Kur(3)")`` (the paper's call, at both
    scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same figure at both scales.

    Returns
    -------
    Built
        The figure and the fit (:class:`localization.experiments.ica.ICAResult`, 40 filters).
    """
    check_scale(scale)
    fit = ica.fit_ica(book.key("ica", "Kur(3)"), data.family_task("Kur", 3.0, XI), N)
    fig = new_figure((plotting.COLUMN_WIDTH, 3.0), layout="constrained")
    draw_filter_gallery(fig, fit.filters, N, "FastICA on Kur(3): the first 10 of 40 filters")
    return Built(fig, fit)


@register("fig1_ica_grid", "ica")
def fig1_ica_grid(scale: str = "chapter") -> Built:
    """Draw paper Fig. 1 (right), ICA panel: 12 of 64 FastICA filters of NLGP(100) on a 12 × 12 torus.

    Length-scales (0.1, 0.7), 100 000 examples, book key ``("ica", "grid")`` (the paper's call, at both
    scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same figure at both scales.

    Returns
    -------
    Built
        The figure and the fit (:class:`localization.experiments.ica.ICAResult`, 64 filters).
    """
    check_scale(scale)
    fit = ica.fit_ica(book.key("ica", "grid"), data.family_task("NLGP", 100.0, XI_GRID), 64, n=GRID)
    fig = new_figure((plotting.COLUMN_WIDTH, 3.1), layout="constrained")
    draw_filter_gallery(fig, fit.filters, GRID, "FastICA on NLGP(100), 12 × 12 torus: 12 of 64 filters", cols=6)
    return Built(fig, fit)


class FilterOutputs(NamedTuple):
    """The outputs of a fit's filters on fresh examples (:func:`filter_outputs`).

    Attributes
    ----------
    outputs : (num, C) ndarray
        ``(x - mean(x)) @ W^T`` for ``num`` fresh examples x of the task.
    labels : (num,) ndarray
        Their classes.
    kurtosis : (C,) ndarray
        The sample excess kurtosis of each filter's output (:func:`localization.metrics.sample_excess_kurtosis`).
    localized : (C,) bool ndarray
        :func:`localization.field_analysis.is_localized` of each filter.
    """

    outputs: np.ndarray
    labels: np.ndarray
    kurtosis: np.ndarray
    localized: np.ndarray


def filter_outputs(key: jax.Array, task: data.LengthscaleTask, fit: ica.ICAResult, num: int = 100_000) -> FilterOutputs:
    """Apply a fit's filters to ``num`` fresh float64 examples of ``task`` (both classes, centred).

    Parameters
    ----------
    key : jax.Array
        The examples' key.
    task : LengthscaleTask
        The fitted task.
    fit : ICAResult
        ``filters`` (C, n), n the ring size.
    num : int
        Examples, >= 2.

    Returns
    -------
    FilterOutputs
    """
    if not isinstance(fit, ica.ICAResult):
        raise TypeError(f"fit must be an ICAResult (ica.fit_ica), got {type(fit).__name__}")
    if not isinstance(num, int) or num < 2:
        raise ValueError(f"num must be an integer >= 2, got {num!r}")
    n = fit.filters.shape[-1]
    x, y = (np.asarray(a) for a in task.sample(key, num, n, jnp.float64))
    s = (x - x.mean(0)) @ fit.filters.T
    kurtosis = np.asarray(metrics.sample_excess_kurtosis(s, axis=0))
    return FilterOutputs(s, y, kurtosis, field_analysis.is_localized(fit.filters, n))
