r"""Drawing code of the many-neuron figures (paper Figs. 6, 7 and 1 right), shared by the chapter and by
``python -m localization figures``.

Like :mod:`localization.figures.draw`, each function draws results computed by the caller (with
:func:`localization.experiments.train_population` and :func:`localization.experiments.ica.fit_ica`) on axes it is
given, in the book style, and returns what it drew.

* :func:`draw_fields` — one receptive field per panel: a curve for a ring, an image for a grid (the
  same call for both: the input shape decides);
* :func:`draw_share_histograms` — the distribution of the window share
  (:func:`localization.population.window_share`) of several populations, with the localization
  threshold;
* :func:`draw_fig6`, :func:`draw_fig7` — the chapter's versions of paper Figs. 6 (left, centre) and 7
  on a figure they are given (subfigures);
* :func:`draw_filter_gallery` — ICA filters (or any fields) in rows of panels with a title (paper
  Fig. 6 right and the ICA panel of Fig. 1 right, the ICA chapter).

The registered builders (``fig6_committee``, ``fig7_two_layer``, ``fig6_ica``, ``fig1_ica_grid``,
``fig1_committee``) train or fit with the chapter's keys and settings
(:mod:`localization.experiments.many_neurons`, :mod:`localization.experiments.ica`) and call the same drawing
functions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from localization import validation as v
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = ["draw_fields", "draw_share_histograms", "draw_fig6", "draw_fig7", "draw_filter_gallery"]

#: colour of each data family in the many-neuron figures
FAMILY_COLORS = {"Kur(10)": "C0", "Kur(4)": "C3", "Kur(30)": "C2"}


def _axes_list(name: str, axes: Any) -> list[Any]:
    from matplotlib.axes import Axes

    flat = list(np.asarray(axes, dtype=object).flat)
    if not flat or not all(isinstance(ax, Axes) for ax in flat):
        raise TypeError(f"{name} must be a Matplotlib Axes or an array of them, got {type(axes).__name__}")
    return flat


def draw_fields(axes: Any, fields: Any, n: int | tuple[int, ...], *, color: str = "C0") -> list[Any]:
    """Draw ``fields`` (F, prod(n)) one per panel of ``axes`` (at least F panels; extra panels are hidden).

    A ring (``n`` an int or ``(N,)``) gives a curve over the sites with the zero line; a 2-D grid gives an
    image on a symmetric diverging colour scale (zero is the middle colour). Each field is scaled by its
    largest absolute entry, so the panels compare shapes, not sizes. Returns the drawn axes.
    """
    shape = v.shape("n", n, minimum=2)
    if len(shape) > 2:
        raise ValueError(f"n must be a ring (N,) or a 2-D grid (rows, cols) to be drawn, got {shape}")
    fields = np.asarray(v.float_array("fields", fields, ndim_min=2), np.float64)
    if fields.ndim != 2 or fields.shape[1] != math.prod(shape):
        raise ValueError(f"fields must have shape (F, prod(n)) = (F, {math.prod(shape)}), got {fields.shape}")
    if not np.all(np.isfinite(fields)):
        raise ValueError("fields must be finite (drop diverged initialisations first)")
    panels = _axes_list("axes", axes)
    if len(panels) < fields.shape[0]:
        raise ValueError(f"axes must have at least {fields.shape[0]} panels (one per field), got {len(panels)}")
    from localization import plotting

    drawn = []
    for ax, w in zip(panels, fields, strict=False):
        scale = np.max(np.abs(w))
        w = w / scale if scale > 0 else w
        if len(shape) == 1:
            ax.axhline(0.0, color="0.7", lw=0.6)
            ax.plot(np.arange(shape[0]), w, color=color, lw=1.2)
            ax.set_ylim(-1.1, 1.1)
        else:
            ax.imshow(w.reshape(shape), cmap=plotting.SIGNED_CMAP, vmin=-1.0, vmax=1.0, interpolation="nearest")
        ax.set_xticks([])
        ax.set_yticks([])
        drawn.append(ax)
    for ax in panels[fields.shape[0] :]:
        ax.set_visible(False)
    return drawn


def draw_share_histograms(
    ax: Any, shares: Mapping[str, Any], threshold: float, *, bins: int = 20, colors: Mapping[str, Any] | None = None
) -> Any:
    """Histograms (as step curves, shares in [0, 1]) of the window share of each population in ``shares``
    (name → array of shares, any shape), with the localization ``threshold`` dashed. Returns ``ax``."""
    (ax,) = _axes_list("ax", ax)
    if not isinstance(shares, Mapping) or not shares:
        raise TypeError(f"shares must be a non-empty mapping name -> array of shares, got {shares!r}")
    threshold = v.real_scalar("threshold", threshold)
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must be in (0, 1), got {threshold}")
    bins = v.integer("bins", bins, 2)
    colors = {} if colors is None else dict(colors)
    edges = np.linspace(0.0, 1.0, bins + 1)
    for i, (name, s) in enumerate(shares.items()):
        s = np.ravel(np.asarray(s, np.float64))
        if s.size == 0 or not np.all((s >= 0.0) & (s <= 1.0 + 1e-12)):
            raise ValueError(f"shares[{name!r}] must be a non-empty array of values in [0, 1]")
        ax.hist(s, bins=edges, histtype="step", lw=1.6, color=colors.get(name, f"C{i}"), label=name, density=True)
    ax.axvline(threshold, color="0.3", ls="--", lw=1.0)
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("window share $s_W$")
    ax.set_ylabel("density")
    return ax


def draw_fig6(fig: Any, shares: Mapping[str, Any], fields: Mapping[str, Any], n: int, threshold: float) -> Any:
    """Paper Fig. 6 (left, centre) on ``fig``: for each dataset (name → (K, N) fields of one network, K ≤ 10)
    a 2 × 5 block of fields, and below, the window-share histograms of ``shares`` (name → shares of all
    fields). Returns the histogram axes."""
    if set(shares) != set(fields):
        raise ValueError(f"shares and fields must name the same datasets, got {sorted(shares)} and {sorted(fields)}")
    top, bottom = fig.subfigures(2, 1, height_ratios=[2.1, 1])
    rows = np.atleast_1d(top.subfigures(len(fields), 1))
    for sub, (name, w) in zip(rows, fields.items(), strict=True):
        draw_fields(sub.subplots(2, 5), w, n, color=FAMILY_COLORS.get(name, "C0"))
        sub.suptitle(f"SCM on {name}: the fields of one network", fontsize="medium")
    ax = bottom.subplots()
    draw_share_histograms(ax, shares, threshold, colors=FAMILY_COLORS)
    ax.legend(loc="upper left")
    return ax


def draw_fig7(fig: Any, panels: Mapping[str, Any], n: int, *, per_row: int = 4) -> list[Any]:
    """Paper Fig. 7 on ``fig``: one row per entry of ``panels`` (title → (F, N) fields, the first
    ``per_row`` drawn), coloured by the data family named in the title. Returns the rows' subfigures."""
    if not isinstance(panels, Mapping) or not panels:
        raise TypeError(f"panels must be a non-empty mapping title -> fields, got {panels!r}")
    per_row = v.integer("per_row", per_row, 1)
    rows = np.atleast_1d(fig.subfigures(len(panels), 1))
    for sub, (title, w) in zip(rows, panels.items(), strict=True):
        color = next((c for name, c in FAMILY_COLORS.items() if name in title), "C0")
        draw_fields(sub.subplots(1, per_row), np.asarray(w)[:per_row], n, color=color)
        sub.suptitle(title, fontsize="medium")
    return list(rows)


def draw_filter_gallery(fig: Any, filters: Any, n: int | tuple[int, ...], title: str, *, cols: int = 5) -> list[Any]:
    """The first ``rows × cols`` of ``filters`` (F, prod(n)) on ``fig`` (as many full rows as F allows, at
    most two), black curves on a ring, images on a grid, under ``title``. Returns the drawn axes."""
    cols = v.integer("cols", cols, 1)
    filters = np.asarray(filters)
    rows = max(1, min(2, filters.shape[0] // cols))
    drawn = draw_fields(fig.subplots(rows, cols), filters[: rows * cols], n, color="k")
    fig.suptitle(title, fontsize="medium")
    return drawn


# -------------------------------------------------------------------------------------------------
# the figures of `python -m localization figures`
# -------------------------------------------------------------------------------------------------
WINDOW, LOCALIZED = 10, 0.8  # the chapter's window (a quarter of the ring) and localization threshold


@register("fig6_committee", "many_neurons")
def _fig6_committee(scale: str) -> Any:
    """Paper Fig. 6 (left, centre): the soft committee machine (sigmoid, K = 10, N = 40, lr 100, batch
    1000, 5000 steps, ξ = (1, 3)) on Kur(10) and Kur(4): the fields of one network and the window shares
    of all fields (8 initialisations at both scales: the paper's settings are cheap)."""
    from localization import book, population
    from localization.experiments import many_neurons as mn

    check_scale(scale)
    runs = mn.fig6_populations(book.key("many_neurons", "fig6"))
    fig = new_figure((6.8, 5.2), layout="constrained")
    draw_fig6(
        fig,
        {name: population.window_share(r.final, WINDOW) for name, r in runs.items()},
        {name: r.final[0] for name, r in runs.items()},
        40,
        LOCALIZED,
    )
    return Built(fig, None)


@register("fig7_two_layer", "many_neurons")
def _fig7_two_layer(scale: str) -> Any:
    """Paper Fig. 7: two-layer networks with trainable readout — sigmoid on Kur(4) and on Kur(10) (lr 20;
    the paper's 80 diverges), ReLU with K = 100 on Kur(30) (the paper's settings); four fields of one
    network per row. Chapter: 2 ReLU initialisations; paper: 1."""
    from localization import book
    from localization.experiments import many_neurons as mn

    inits = 1 if check_scale(scale) == "paper" else 2
    runs = mn.fig7_populations(book.key("many_neurons", "fig7"), inits_bottom=inits)
    fig = new_figure((6.8, 3.9), layout="constrained")
    draw_fig7(fig, {title: runs[name].final[0] for name, title in FIG7_TITLES.items()}, 40)
    return Built(fig, None)


#: row titles of the chapter's Fig. 7
FIG7_TITLES = {
    "Kur(4)": "two-layer network, sigmoid, Kur(4)",
    "Kur(10)": "two-layer network, sigmoid, Kur(10)",
    "Kur(30)": "two-layer network, ReLU, K = 100, Kur(30)",
}


@register("fig6_ica", "ica")
def _fig6_ica(scale: str) -> Any:
    """Paper Fig. 6 (right): the first 10 of 40 FastICA filters of Kur(3), ξ = (1, 3), N = 40, from 100 000
    examples (the paper's call, at both scales)."""
    from localization import book, data
    from localization.experiments import ica

    check_scale(scale)
    fit = ica.fit_ica(book.key("ica", "Kur(3)"), data.family_task("Kur", 3.0, (1.0, 3.0)), 40)
    fig = new_figure((6.8, 2.6), layout="constrained")
    draw_filter_gallery(fig, fit.filters, 40, "FastICA on Kur(3): the first 10 of 40 filters")
    return Built(fig, None)


@register("fig1_ica_grid", "ica")
def _fig1_ica_grid(scale: str) -> Any:
    """Paper Fig. 1 (right), ICA panel: 12 of 64 FastICA filters of NLGP(100) on a 12 × 12 torus, length-scales
    (0.1, 0.7), 100 000 examples (the paper's call, at both scales)."""
    from localization import book, data
    from localization.experiments import ica

    check_scale(scale)
    grid = (12, 12)
    fit = ica.fit_ica(book.key("ica", "grid"), data.family_task("NLGP", 100.0, (0.1, 0.7)), 64, n=grid)
    fig = new_figure((6.8, 3.0), layout="constrained")
    draw_filter_gallery(fig, fit.filters, grid, "FastICA on NLGP(100), 12 × 12 torus: 12 of 64 filters", cols=6)
    return Built(fig, None)


@register("fig1_committee", "two_dimensions")
def _fig1_committee(scale: str) -> Any:
    """Paper Fig. 1 (right), committee panel: the 20 fields of a soft committee machine (ReLU, no bias) trained
    on NLGP(100) over a torus. Chapter: 20 × 20, batch 1000, 5000 steps, with the NLGP(0.01) control below;
    paper: 30 × 30, batch 10 000, 10 000 steps (about 12 minutes on two cores)."""
    from localization import book
    from localization.experiments import many_neurons as mn

    key = book.key("two_dimensions", "fig1")
    if check_scale(scale) == "paper":
        runs = {"NLGP(100)": mn.train_population(key, mn.FIG1_GRID)}
    else:
        runs = mn.fig1_populations(key)
    fig = new_figure((6.8, 1.45 * len(runs) + 0.5), layout="constrained")
    for sub, (name, run) in zip(np.atleast_1d(fig.subfigures(len(runs), 1)), runs.items(), strict=True):
        s = run.settings
        title = f"committee machine, K = {s.K}, ReLU, {name}, {s.shape[0]} × {s.shape[1]} torus"
        draw_filter_gallery(sub, run.final[0], s.shape, title, cols=10)
    return Built(fig, None)
