r"""The ICA chapter's figures (``book/ica.md``: paper Fig. 6 right, and the ICA panel of Fig. 1 right).

Each figure is one registered builder, called by the chapter and by ``python -m localization figures``:
it fits FastICA with the chapter's key (:func:`localization.experiments.ica.fig6_fit`,
:func:`localization.experiments.ica.fig1_grid_fit`: the paper's calls, 100 000 examples) and draws the
filters with :func:`localization.figures.many_neurons.draw_filter_gallery`:

* :func:`fig6_ica` — the first 10 of 40 filters of Kur(3) on the ring;
* :func:`fig1_ica_grid` — 12 of 64 filters of NLGP(100) on a 12 × 12 torus.
"""

from __future__ import annotations

from localization import book, plotting
from localization.experiments import ica
from localization.figures.many_neurons import draw_filter_gallery
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = ["fig6_ica", "fig1_ica_grid"]


@register("fig6_ica", "ica")
def fig6_ica(scale: str = "chapter") -> Built:
    """Draw paper Fig. 6 (right): the first 10 of 40 FastICA filters of Kur(3) on the ring.

    ξ = (1, 3), N = 40, 100 000 examples, book key ``("ica", "Kur(3)")`` (the paper's call, at both
    scales; :func:`localization.experiments.ica.fig6_fit`).

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
    fit = ica.fig6_fit(book.key("ica", "Kur(3)"))
    fig = new_figure((plotting.COLUMN_WIDTH, 3.0), layout="constrained")
    draw_filter_gallery(fig, fit.filters, ica.N, "FastICA on Kur(3): the first 10 of 40 filters")
    return Built(fig, fit)


@register("fig1_ica_grid", "ica")
def fig1_ica_grid(scale: str = "chapter") -> Built:
    """Draw paper Fig. 1 (right), ICA panel: 12 of 64 FastICA filters of NLGP(100) on a 12 × 12 torus.

    Length-scales (0.1, 0.7), 100 000 examples, book key ``("ica", "grid")`` (the paper's call, at both
    scales; :func:`localization.experiments.ica.fig1_grid_fit`).

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
    fit = ica.fig1_grid_fit(book.key("ica", "grid"))
    fig = new_figure((plotting.COLUMN_WIDTH, 3.1), layout="constrained")
    draw_filter_gallery(fig, fit.filters, ica.GRID, "FastICA on NLGP(100), 12 × 12 torus: 12 of 64 filters", cols=6)
    return Built(fig, fit)
