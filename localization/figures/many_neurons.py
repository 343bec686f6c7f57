r"""The many-neuron chapter's figures (``book/many_neurons.md``: paper Figs. 6 left and centre, and 7).

Each figure is one registered builder, called by the chapter and by ``python -m localization figures``,
holding the chapter's settings and keys and calling the drawing functions below:

* :func:`fig6_committee` — the soft committee machine on Kur(10) and Kur(4) (paper Fig. 6);
* :func:`fig7_two_layer` — two-layer networks with trainable readout (paper Fig. 7);
* :func:`task_value` — held-out loss of localized and delocalized fields (section *What localization buys*).

The drawing functions draw results computed by the caller (with
:func:`localization.experiments.train_population` or :func:`localization.experiments.ica.fit_ica`) on
axes or a figure they are given, in the book style, and return what they drew; the ICA and
two-dimensions chapters' figures (:mod:`localization.figures.ica`,
:mod:`localization.figures.two_dimensions`) use them too:

* :func:`draw_fields` — one receptive field per panel: a curve for a ring, an image for a grid (the
  same call for both: the input shape decides);
* :func:`draw_share_histograms` — the distribution of the window share
  (:func:`localization.field_analysis.localization_share`) of several populations, with the book's
  threshold of a localized field (:data:`localization.field_analysis.LOCALIZED_SHARE`);
* :func:`draw_fig6`, :func:`draw_fig7` — the chapter's versions of paper Figs. 6 (left, centre) and 7
  on a figure they are given (subfigures);
* :func:`draw_filter_gallery` — filters (or any fields) in rows of panels with a title.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from jax.typing import ArrayLike

from localization import book, field_analysis, plotting
from localization import validation as v
from localization.experiments import many_neurons as mn
from localization.experiments import task_value as tv
from localization.experiments.many_neurons import Fig6Runs
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = [
    "N",
    "WINDOW",
    "LOCALIZED",
    "FAMILY_COLORS",
    "FIG7_TITLES",
    "FIELD_SCALE_LABEL",
    "Fig6Runs",
    "fig6_committee",
    "fig7_two_layer",
    "task_value",
    "draw_fields",
    "draw_share_histograms",
    "draw_fig6",
    "draw_fig7",
    "draw_filter_gallery",
]

#: The chapter's ring size.
N = 40
#: The window of the share on that ring, :func:`localization.field_analysis.localization_window` (10 sites, a
#: quarter of the ring): the book's definition, not a setting of this module.
WINDOW = field_analysis.localization_window(N)
#: Alias of :data:`localization.field_analysis.LOCALIZED_SHARE` (0.8), kept for the chapters that still import
#: it from here; a field is localized when :func:`localization.field_analysis.is_localized` says so.
LOCALIZED = field_analysis.LOCALIZED_SHARE
#: Colour of each data family in the many-neuron figures.
FAMILY_COLORS = {"Kur(10)": "C0", "Kur(4)": "C3", "Kur(30)": "C2"}
#: Row titles of the chapter's Fig. 7 (data family → title).
FIG7_TITLES = {
    "Kur(4)": "two-layer network, sigmoid, Kur(4)",
    "Kur(10)": "two-layer network, sigmoid, Kur(10)",
    "Kur(30)": "two-layer network, ReLU, K = 100, Kur(30)",
}


def _axes_list(name: str, axes: Any) -> list[Any]:
    from matplotlib.axes import Axes

    flat = list(np.asarray(axes, dtype=object).flat)
    if not flat or not all(isinstance(ax, Axes) for ax in flat):
        raise TypeError(f"{name} must be a Matplotlib Axes or an array of them, got {type(axes).__name__}")
    return flat


#: Label of the scale of a drawn field: each field is divided by its largest absolute entry.
FIELD_SCALE_LABEL = r"$w_i\,/\max|w|$"


def _outer(ax: Any) -> tuple[bool, bool]:
    """Return whether ``ax`` is in the last row and in the first column of its grid (True, True: no grid)."""
    spec = ax.get_subplotspec()
    if spec is None:
        return True, True
    return spec.is_last_row(), spec.is_first_col()


def _label_fields(fig: Any, shape: tuple[int, ...]) -> None:
    """Label the positions of a block of fields on ``fig``: the site on a ring, the grid an image spans."""
    if len(shape) == 1:
        fig.supxlabel(f"site $i$ on the ring of $N={shape[0]}$", fontsize="medium")
        fig.supylabel(FIELD_SCALE_LABEL, fontsize="medium")
    else:
        fig.supxlabel(f"each panel: the whole {shape[0]} × {shape[1]} torus", fontsize="medium")


def draw_fields(axes: Any, fields: ArrayLike, n: int | tuple[int, ...], *, color: str = "C0") -> list[Any]:
    """Draw ``fields`` one per panel of ``axes`` (extra panels are hidden).

    A ring (``n`` an int or ``(N,)``) gives a curve over the sites with the zero line; a 2-D grid gives an
    image on a symmetric diverging colour scale from -1 to 1 (zero is the middle colour). Each field is
    scaled by its largest absolute entry, so the panels compare shapes, not sizes. On a ring, ticks mark
    the sites 0 and N/2 and the scale -1, 0, 1, labelled on the outer panels only (the last row and the
    first column of a grid of panels); an image has no ticks (each panel is the whole grid).

    Parameters
    ----------
    axes : Axes or array of Axes
        At least F panels.
    fields : array_like, shape (F, prod(n))
        The fields, finite.
    n : int or tuple of int
        The ring size or the grid's shape (rows, cols).
    color : str
        The curves' colour (a ring).

    Returns
    -------
    list of Axes
        The drawn panels.
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
    drawn = []
    for ax, w in zip(panels, fields, strict=False):
        scale = np.max(np.abs(w))
        w = w / scale if scale > 0 else w
        if len(shape) == 1:
            ax.axhline(0.0, color="0.7", lw=0.6)
            ax.plot(np.arange(shape[0]), w, color=color, lw=1.2)
            ax.set_xlim(-0.5, shape[0] - 0.5)
            ax.set_ylim(-1.1, 1.1)
            ax.set_xticks([0, shape[0] // 2])
            ax.set_yticks([-1.0, 0.0, 1.0], ["−1", "0", "1"])
        else:
            ax.imshow(w.reshape(shape), cmap=plotting.SIGNED_CMAP, vmin=-1.0, vmax=1.0, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
        last_row, first_col = _outer(ax)
        ax.tick_params(labelbottom=last_row, labelleft=first_col, length=2.5, pad=1.5)
        drawn.append(ax)
    for ax in panels[fields.shape[0] :]:
        ax.set_visible(False)
    return drawn


def draw_share_histograms(
    ax: Any,
    shares: Mapping[str, ArrayLike],
    threshold: float = field_analysis.LOCALIZED_SHARE,
    *,
    bins: int = 20,
    colors: Mapping[str, Any] | None = None,
) -> Any:
    """Draw histograms (step curves) of the window share of each population, with the threshold dashed.

    Parameters
    ----------
    ax : Axes
        The panel.
    shares : mapping of str to array_like
        Population name → its shares (values in [0, 1], any shape).
    threshold : float
        The threshold drawn dashed, in (0, 1) (default: the book's, a localized field's share).
    bins : int
        Bins on [0, 1].
    colors : mapping of str to colour, optional
        Population name → colour (default: the colour cycle).

    Returns
    -------
    Axes
        ``ax``.
    """
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


def draw_fig6(fig: Any, shares: Mapping[str, ArrayLike], fields: Mapping[str, ArrayLike], n: int) -> Any:
    """Draw paper Fig. 6 (left, centre) on ``fig``: each dataset's fields of one network, and the shares.

    The fields' panels share their axes: the site on the ring and the field over its largest absolute entry.
    The histograms of the shares mark the book's threshold of a localized field
    (:data:`localization.field_analysis.LOCALIZED_SHARE`, dashed).

    Parameters
    ----------
    fig : Figure or SubFigure
        The figure (split into subfigures).
    shares : mapping of str to array_like
        Dataset name → the window shares of all fields (histograms, below).
    fields : mapping of str to array_like, each (K, n) with K ≤ 10
        Dataset name → the fields of one network (a 2 × 5 block each); the names of ``shares``.
    n : int
        The ring size.

    Returns
    -------
    Axes
        The histogram panel.
    """
    if set(shares) != set(fields):
        raise ValueError(f"shares and fields must name the same datasets, got {sorted(shares)} and {sorted(fields)}")
    top, bottom = fig.subfigures(2, 1, height_ratios=[2.1, 1])
    rows = np.atleast_1d(top.subfigures(len(fields), 1))
    for sub, (name, w) in zip(rows, fields.items(), strict=True):
        draw_fields(sub.subplots(2, 5, sharex=True, sharey=True), w, n, color=FAMILY_COLORS.get(name, "C0"))
        sub.suptitle(f"SCM on {name}: the fields of one network", fontsize="medium")
    _label_fields(top, (n,))
    ax = bottom.subplots()
    draw_share_histograms(ax, shares, colors=FAMILY_COLORS)
    ax.legend(loc="upper left")
    return ax


def draw_fig7(fig: Any, panels: Mapping[str, ArrayLike], n: int, *, per_row: int = 4) -> list[Any]:
    """Draw paper Fig. 7 on ``fig``: one row of fields per entry of ``panels``.

    Every panel has the same axes, labelled once: the site on the ring (x) and the field divided by its
    largest absolute entry (y, from -1 to 1).

    Parameters
    ----------
    fig : Figure or SubFigure
        The figure (one subfigure per row).
    panels : mapping of str to array_like, each (F, n)
        Row title → fields (the first ``per_row`` drawn), coloured by the data family the title names
        (:data:`FAMILY_COLORS`).
    n : int
        The ring size.
    per_row : int
        Fields per row.

    Returns
    -------
    list of SubFigure
        The rows.
    """
    if not isinstance(panels, Mapping) or not panels:
        raise TypeError(f"panels must be a non-empty mapping title -> fields, got {panels!r}")
    per_row = v.integer("per_row", per_row, 1)
    rows = np.atleast_1d(fig.subfigures(len(panels), 1))
    for sub, (title, w) in zip(rows, panels.items(), strict=True):
        color = next((c for name, c in FAMILY_COLORS.items() if name in title), "C0")
        draw_fields(sub.subplots(1, per_row, sharex=True, sharey=True), np.asarray(w)[:per_row], n, color=color)
        sub.suptitle(title, fontsize="medium")
    _label_fields(fig, v.shape("n", n, minimum=2))
    return list(rows)


def draw_filter_gallery(
    fig: Any, filters: ArrayLike, n: int | tuple[int, ...], title: str, *, cols: int = 5
) -> list[Any]:
    """Draw the first ``rows × cols`` of ``filters`` on ``fig`` under ``title``.

    As many full rows as F allows, at most two (at least one); black curves on a ring, images on a grid
    with a colour bar (the field over its largest absolute entry, -1 to 1). The positions are labelled
    (the site on a ring; on a grid, that each panel is the whole torus).

    Parameters
    ----------
    fig : Figure or SubFigure
        The figure.
    filters : array_like, shape (F, prod(n))
        The filters (or fields).
    n : int or tuple of int
        The ring size or the grid's shape.
    title : str
        The figure's title.
    cols : int
        Panels per row.

    Returns
    -------
    list of Axes
        The drawn panels.
    """
    cols = v.integer("cols", cols, 1)
    filters = np.asarray(filters)
    shape = v.shape("n", n, minimum=2)
    rows = max(1, min(2, filters.shape[0] // cols))
    drawn = draw_fields(fig.subplots(rows, cols, sharex=True, sharey=True), filters[: rows * cols], n, color="k")
    fig.suptitle(title, fontsize="medium")
    _label_fields(fig, shape)
    if len(shape) == 2:
        bar = fig.colorbar(drawn[0].images[0], ax=drawn, shrink=0.9, aspect=12, pad=0.02, ticks=[-1, 0, 1])
        bar.ax.set_yticklabels(["−1", "0", "1"])
        bar.set_label(r"$w\,/\max|w|$")
    return drawn


# -------------------------------------------------------------------------------------------------
# the chapter's figures (also written by `python -m localization figures`)
# -------------------------------------------------------------------------------------------------
@register("fig6_committee", "many_neurons")
def fig6_committee(scale: str = "chapter") -> Built:
    """Draw paper Fig. 6 (left, centre): the soft committee machine's fields on Kur(10) and Kur(4), and their shares.

    Sigmoid, K = 10, N = 40, lr 100, batch 1000, 5000 steps, ξ = (1, 3), 8 initialisations (book key
    ``("many_neurons", "fig6")``): the fields of one network and the window shares of all fields (the
    paper's settings at both scales: they are cheap).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same figure at both scales.

    Returns
    -------
    Built
        The figure and an ``experiments.many_neurons.Fig6Runs`` (the runs and their window shares).
    """
    check_scale(scale)
    result = mn.fig6_committee_runs(book.key("many_neurons", "fig6"))
    fig = new_figure((plotting.COLUMN_WIDTH, 5.9), layout="constrained")
    draw_fig6(fig, result.shares, {name: r.final[0] for name, r in result.runs.items()}, N)
    return Built(fig, result)


@register("fig7_two_layer", "many_neurons")
def fig7_two_layer(scale: str = "chapter") -> Built:
    """Draw paper Fig. 7: four fields of one two-layer network (trainable readout) per row.

    Sigmoid on Kur(4) and on Kur(10) (lr 20; at the paper's 80 many networks diverge), ReLU with K = 100 on Kur(30) (the
    paper's settings); book key ``("many_neurons", "fig7")``. Chapter: 2 ReLU initialisations; paper: 1.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The number of ReLU initialisations.

    Returns
    -------
    Built
        The figure and the runs (data family → PopulationRun,
        :func:`localization.experiments.many_neurons.fig7_populations`).
    """
    inits = 1 if check_scale(scale) == "paper" else 2
    runs = mn.fig7_populations(book.key("many_neurons", "fig7"), inits_bottom=inits)
    fig = new_figure((plotting.COLUMN_WIDTH, 4.6), layout="constrained")
    draw_fig7(fig, {title: runs[name].final[0] for name, title in FIG7_TITLES.items()}, N)
    return Built(fig, runs)


@register("task_value", "many_neurons")
def task_value(scale: str = "chapter", *, committees: Mapping[str, tuple[Any, Any]] | None = None) -> Built:
    """Draw the held-out loss of every field against its window share, on Kur(10) and on Kur(4) test data.

    :func:`localization.experiments.task_value.compare_fields` with book key ``("many_neurons", "task")``;
    the committee machines are the chapter's Fig. 6 runs (``committees``: model → (W, b)), trained here
    by :func:`fig6_committee` when not given (the same at both scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same figure at both scales.
    committees : Mapping or None
        Final fields and biases of the Fig. 6 committee machines, by data model.

    Returns
    -------
    Built
        The figure and a :class:`localization.experiments.task_value.FieldComparison`.
    """
    check_scale(scale)
    if committees is None:
        runs = fig6_committee().data.runs
        committees = {name: (r.final, r.bias[:, -1]) for name, r in runs.items()}
    result = tv.compare_fields(book.key("many_neurons", "task"), dict(committees))
    fig = new_figure((plotting.COLUMN_WIDTH, 3.6), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    fourier = result.kinds == "Fourier mode"
    for ax, name in zip(axes, tv.TASKS, strict=True):
        neuron, committee = result.scores[name, "neuron fitted"], result.scores[name, "committee"]
        for trained in tv.TASKS:
            color = FAMILY_COLORS[trained]
            mine = result.kinds == f"learned on {trained}"
            ax.plot(result.shares[mine], neuron.loss[mine], "o", color=color, ms=4, label=f"neuron, {trained}")
            for offset, fill in ((True, color), (False, "none")):
                c = (result.committee_kinds == f"learned on {trained}") & ((result.committee_offset > 0) == offset)
                ax.plot(result.committee_shares[c], committee.loss[c], "s", color=color, mfc=fill, ms=4)
        ax.plot(result.shares[fourier][0], neuron.loss[fourier][0], "k*", ms=7, label="constant field")
        ax.axhline(0.25, color="0.5", ls=":", lw=1)
        ax.axhline(float(result.scores[name, "detector"].loss[0]), color="k", ls="--", lw=1)
        ax.set_title(f"test data {name}")
        ax.set_xlabel("window share $s_W$")
    axes[0].set_ylabel("held-out loss (MSE)")
    proxies = [("ks", "k", "committee, offset units"), ("ks", "none", "committee, none")]
    for marker, fill, label in proxies:
        axes[0].plot([], [], marker, mfc=fill, ms=4, label=label)
    axes[0].plot([], [], "k--", lw=1, label="Gaussian detector")
    axes[0].plot([], [], ":", color="0.5", lw=1, label=r"$\hat y = 1/2$")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3, fontsize="x-small")
    return Built(fig, result)
