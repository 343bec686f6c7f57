"""Shared figure helpers, so that figures look alike across the book (Matplotlib only).

* :func:`use_book_style` — the book's rcParams (the only global state this module touches, and only
  when called).
* :func:`plot_field_evolution` — receptive field at each checkpoint, lines coloured by time from
  light green (early) to dark purple (late, :data:`TIME_CMAP`), with an optional colour bar (paper
  Figs. 3, 8 style).
* :func:`plot_receptive_field` — one field: a line for 1-D inputs, an image for a grid.
* :func:`plot_marginal` — law of one coordinate ``X_i`` (atoms as stems, densities as curves),
  optionally with a histogram of samples and the standard-normal reference.
* :func:`plot_samples` — a few input vectors, coloured by class.
* :func:`axes_grid` — check the array of axes a drawing function is given.

A chapter's figures (settings, computation and drawing: one builder per figure) live in
:mod:`localization.figures`; this module holds what they share: the style and the panels above.

Every plotting helper draws on an ``ax`` passed in and returns what it drew; none creates or shows
figures.
"""

from __future__ import annotations

from typing import Any

import matplotlib.colors
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.models import Params
from localization.trajectory import Trajectory

__all__ = [
    "BOOK_STYLE",
    "COLUMN_WIDTH",
    "FONT_SIZE",
    "FIGURE_DPI",
    "CAPTION_PX",
    "CLASS_COLORS",
    "TIME_CMAP",
    "SIGNED_CMAP",
    "use_book_style",
    "plot_field_evolution",
    "time_colorbar",
    "plot_receptive_field",
    "plot_marginal",
    "plot_samples",
    "axes_grid",
]

#: Colour of time: viridis (perceptually uniform, safe for common colour-vision deficiencies) cut at
#: 0.85 and reversed, so lightness L* falls steadily from 80 (t = 0, light green) to 15 (last
#: checkpoint, dark purple): no near-white curve, and the final field is the darkest, drawn on top.
TIME_CMAP = matplotlib.colors.ListedColormap(matplotlib.colormaps["viridis"](np.linspace(0.85, 0, 256)), "book_time")
#: Colour of a signed ordered quantity drawn as curves (e.g. the excess kurtosis of each curve's data,
#: centred at 0 with ``TwoSlopeNorm`` or symmetric limits): Matplotlib's diverging "berlin", whose
#: middle is near-black (L* 4) and whose ends are light blue (L* 73) and light red (L* 79). Unlike
#: coolwarm or RdBu (near-white middle, L* 88), a curve at the centre stays visible on the white page;
#: of the dark-middle maps ("managua", "vanimo") it has the lowest maximum lightness (79 against 87
#: and 93), so the extreme curves stay visible too. Signed *images* (covariances, 2-D fields) keep
#: RdBu_r, where white is a zero background.
SIGNED_CMAP = matplotlib.colormaps["berlin"]
CLASS_COLORS = ("#1f77b4", "#d62728")  # y = 0 (short length scale), y = 1 (long length scale)

#: Figure geometry, measured on the built site in a 1280 px window: a cell's figure output is 672 px
#: wide and captions are 16 px. At 96 dpi a figure inch is a CSS inch, so a figure up to COLUMN_WIDTH
#: wide is shown at its natural size and FONT_SIZE points are 16 px, the caption's size.
FIGURE_DPI = 96
COLUMN_WIDTH = 6.8  # inches: 653 px, 672 px with the 0.1 in margins the notebook's PNG export adds
FONT_SIZE = 12  # points: 16 px at FIGURE_DPI, the caption's size
CAPTION_PX = 16  # caption font size on the built pages (CSS px)

BOOK_STYLE = {
    "figure.figsize": (COLUMN_WIDTH, 0.55 * COLUMN_WIDTH),
    "figure.dpi": FIGURE_DPI,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "font.size": FONT_SIZE,
    "axes.titlesize": FONT_SIZE,
    "axes.labelsize": FONT_SIZE,
    "legend.fontsize": FONT_SIZE,
    "legend.title_fontsize": FONT_SIZE,
    "legend.frameon": False,
    "xtick.labelsize": FONT_SIZE,
    "ytick.labelsize": FONT_SIZE,
    "figure.titlesize": FONT_SIZE,
    "figure.labelsize": FONT_SIZE,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "grid.linewidth": 0.6,
    "lines.linewidth": 1.5,
    "image.cmap": "RdBu_r",
    "figure.constrained_layout.use": True,
}


def use_book_style() -> None:
    """Apply the book's Matplotlib rcParams (:data:`BOOK_STYLE`).

    Returns nothing, so that calling it as the last line of a notebook cell prints nothing.
    """
    import matplotlib as mpl

    mpl.rcParams.update(BOOK_STYLE)


def axes_grid(name: str, axes: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Check that ``axes`` is an array of Matplotlib Axes of the given shape (the figures' helper).

    Parameters
    ----------
    name : str
        The argument's name, for the error message.
    axes : array_like of matplotlib Axes
        The panels a drawing function was given.
    shape : tuple of int
        The shape the drawing function needs.

    Returns
    -------
    np.ndarray
        ``axes`` as an object array of that shape.

    Raises
    ------
    ValueError
        If the shape differs or an entry is not an Axes.
    """
    from matplotlib.axes import Axes

    grid = np.asarray(axes, dtype=object)
    if grid.shape != tuple(shape) or not all(isinstance(ax, Axes) for ax in grid.flat):
        raise ValueError(f"{name} must be a {tuple(shape)} array of Matplotlib Axes, got shape {grid.shape}")
    return grid


def _check_ax(ax):
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a Matplotlib Axes, got {type(ax).__name__}")
    return ax


def _weights_and_times(traj_or_weights, times, index, unit):
    """→ (C, N) float array of weights and (C,) times."""
    w = traj_or_weights
    t = times
    if isinstance(w, Trajectory):
        if times is None:
            t = w.times
        w = w.weights
    if isinstance(w, Params):  # first-layer weights (..., C, K, N)
        w = np.asarray(w.w)
        if unit is None:
            if w.shape[-2] != 1:
                raise ValueError(f"unit must select one of the K = {w.shape[-2]} hidden units")
            unit = 0
        unit = v.integer("unit", unit, 0)
        if unit >= w.shape[-2]:
            raise ValueError(f"unit must lie in [0, {w.shape[-2]}), got {unit}")
        w = w[..., unit, :]
    elif unit is not None:
        raise ValueError("unit is only meaningful for many-neuron Params weights")
    w = np.asarray(v.float_array("weights", w, ndim_min=2), dtype=np.float64)
    if index is not None:
        idx = (index,) if isinstance(index, (int, np.integer)) else tuple(index)
        try:
            w = w[idx]
        except (IndexError, TypeError):
            raise ValueError(
                f"index {index!r} does not select an initialisation of weights with shape {w.shape}"
            ) from None
    if w.ndim != 2:
        raise ValueError(
            f"weights must be (C, N) for one initialisation, got shape {w.shape}; pass index=... to select one"
        )
    if t is None:
        raise ValueError("times must be given (or pass a Trajectory)")
    t = np.asarray(v.float_array("times", t, ndim_min=1), dtype=np.float64)
    if t.shape != (w.shape[0],):
        raise ValueError(f"times must have shape (C,) = ({w.shape[0]},), got {t.shape}")
    return w, t


def plot_field_evolution(
    ax: Any,
    trajectory_or_weights: Trajectory | Params | ArrayLike,
    times: ArrayLike | None = None,
    *,
    index: int | tuple[int, ...] | None = None,
    unit: int | None = None,
    cmap: str | matplotlib.colors.Colormap = TIME_CMAP,
    colorbar: bool = True,
    every: int = 1,
    linewidth: float = 1.2,
    alpha: float = 0.9,
    xlabel: str = "position $i$",
    ylabel: str = "weight $w_i$",
) -> tuple[list[Any], Any]:
    """Receptive field at every checkpoint, coloured by time (light green early → dark purple late).

    Parameters
    ----------
    ax : Matplotlib Axes.
    trajectory_or_weights : a ``Trajectory`` (``times`` taken from it) or a (C, N) weight array
        (then ``times`` (C,) is required). Weights with leading axes (initialisations, sweep values)
        need ``index`` to select one; many-neuron ``Params`` need ``unit``.
    times : (C,) times, overriding the trajectory's.
    index : int or tuple selecting one initialisation from the leading axes.
    unit : hidden unit for many-neuron ``Params`` weights.
    cmap : Matplotlib colormap or colormap name (default :data:`TIME_CMAP`).
    colorbar : add a colour bar labelled "time $t$" to the figure.
    every : plot every ``every``-th checkpoint (the last one is always drawn).
    linewidth, alpha, xlabel, ylabel : styling.

    Returns
    -------
    (lines, colorbar) — the list of Line2D and the Colorbar (or None).
    """
    import matplotlib as mpl

    _check_ax(ax)
    every = v.integer("every", every, 1)
    if not isinstance(colorbar, bool):
        raise TypeError(f"colorbar must be a bool, got {colorbar!r}")
    w, t = _weights_and_times(trajectory_or_weights, times, index, unit)
    try:
        cm = cmap if isinstance(cmap, mpl.colors.Colormap) else mpl.colormaps[cmap]
    except (KeyError, TypeError):
        raise ValueError(f"cmap must be a Matplotlib colormap name, got {cmap!r}") from None
    norm = _time_norm(t)
    rows = list(range(0, w.shape[0], every))
    if rows[-1] != w.shape[0] - 1:
        rows.append(w.shape[0] - 1)
    pos = np.arange(w.shape[1])
    lines = [ax.plot(pos, w[r], color=cm(norm(t[r])), lw=linewidth, alpha=alpha)[0] for r in rows]
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_xlim(0, w.shape[1] - 1)
    cb = time_colorbar(ax, t, cmap=cm) if colorbar else None
    return lines, cb


def _time_norm(times: np.ndarray) -> Any:
    """Return the colour scale of time: from the first to the last time (a unit span if they are equal)."""
    lo, hi = float(np.min(times)), float(np.max(times))
    return matplotlib.colors.Normalize(vmin=lo, vmax=hi if hi > lo else lo + 1.0)


def time_colorbar(axes: Any, times: ArrayLike, *, cmap: Any = TIME_CMAP, **kwargs: Any) -> Any:
    """Add one colour bar of time t for ``axes``, on the scale :func:`plot_field_evolution` colours by.

    Parameters
    ----------
    axes : matplotlib.axes.Axes or sequence of them
        The panels the bar serves (the figure is the first one's).
    times : array_like
        The times the curves are coloured by, (T,).
    cmap : Matplotlib colormap
        The colour map (default :data:`TIME_CMAP`).
    **kwargs
        Passed to ``Figure.colorbar`` (``location``, ``shrink``, ...).

    Returns
    -------
    matplotlib.colorbar.Colorbar
        The bar, labelled "time $t$".
    """
    t = np.asarray(times, dtype=float)
    if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)):
        raise ValueError(f"times must be a non-empty finite 1-D array, got shape {t.shape}")
    import matplotlib.cm

    first = np.ravel(np.asarray(axes, dtype=object))[0]
    mappable = matplotlib.cm.ScalarMappable(norm=_time_norm(t), cmap=cmap)
    return first.figure.colorbar(mappable, ax=axes, label="time $t$", **kwargs)


def plot_receptive_field(
    ax: Any,
    w: ArrayLike,
    n: int | tuple[int, ...] | None = None,
    *,
    color: Any = None,
    label: str | None = None,
    vmax: float | None = None,
    **kwargs: Any,
) -> Any:
    """Draw one receptive field: a line over positions, or a centred diverging image for a grid.

    Parameters
    ----------
    ax : matplotlib Axes
        The panel.
    w : array_like, shape (N,)
        The field.
    n : int or tuple of int, optional
        Input shape; a grid ``(n1, n2)`` (``w`` of length n1·n2, row-major) is drawn as an image.
    color, label : optional
        Line colour and legend label (1-D inputs).
    vmax : float, optional
        Half-range of the image's colour scale (default: the largest ``|w|``).
    **kwargs
        Passed to ``ax.plot`` or ``ax.imshow``.

    Returns
    -------
    matplotlib Line2D or AxesImage
        What was drawn.
    """
    _check_ax(ax)
    w = np.asarray(v.float_array("w", w, ndim_min=1), dtype=np.float64)
    if w.ndim != 1:
        raise ValueError(f"w must be a single (N,) field, got shape {w.shape}")
    shape = (w.size,) if n is None else v.shape("n", n, minimum=1)
    if int(np.prod(shape)) != w.size:
        raise ValueError(f"n = {n!r} does not match len(w) = {w.size}")
    if len(shape) == 1:
        (line,) = ax.plot(np.arange(w.size), w, color=color, label=label, **kwargs)
        ax.set_xlabel("position $i$")
        ax.set_ylabel("weight $w_i$")
        return line
    if len(shape) != 2:
        raise ValueError(f"n must be an int or a 2-D grid (n1, n2), got {n!r}")
    m = float(np.max(np.abs(w))) if vmax is None else v.positive("vmax", vmax)
    m = m if m > 0 else 1.0
    img = ax.imshow(w.reshape(shape), cmap=kwargs.pop("cmap", "RdBu_r"), vmin=-m, vmax=m, **kwargs)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    return img


def plot_marginal(
    ax: Any,
    marginal: Any,
    *,
    xlim: tuple[float, float] | None = None,
    samples: ArrayLike | None = None,
    bins: int = 80,
    color: str = "k",
    label: str | None = None,
    gaussian_reference: bool = False,
    num_points: int = 801,
    ymax: float | None = None,
) -> list[Any]:
    """Law of one coordinate :math:`X_i` of a data model (``model.marginal``).

    Discrete laws (``marginal.is_discrete``) are drawn as stems at their atoms (heights = masses,
    from ``marginal.quadrature()``); continuous ones as the density ``marginal.pdf`` on a grid over
    ``xlim`` (default: the central 99.8 % of the law, from its quadrature, padded by 10 %).

    Parameters
    ----------
    ax : Matplotlib Axes.
    marginal : object with ``quadrature()`` and ``pdf`` (continuous) or ``is_discrete = True``.
    xlim : (lo, hi) plotting range.
    samples : optional 1-D samples drawn as a density histogram behind the curve.
    bins : histogram bins.
    color, label : curve styling.
    gaussian_reference : also draw the standard normal density (dashed grey).
    num_points : grid size for the density.
    ymax : upper y-limit; default clips integrable spikes (e.g. NLGP at large gain) at 1.5× the 95th
        percentile of the density on the grid.

    Returns
    -------
    list of the artists drawn.
    """
    _check_ax(ax)
    if not callable(getattr(marginal, "quadrature", None)):
        raise TypeError(f"marginal must be a data-model marginal with quadrature(), got {type(marginal).__name__}")
    bins = v.integer("bins", bins, 1)
    num_points = v.integer("num_points", num_points, 2)
    if not isinstance(gaussian_reference, bool):
        raise TypeError(f"gaussian_reference must be a bool, got {gaussian_reference!r}")
    nodes, weights = (np.asarray(a, dtype=np.float64) for a in marginal.quadrature())
    if xlim is None:
        order = np.argsort(nodes)
        cdf = np.cumsum(weights[order]) / np.sum(weights)
        lo = nodes[order][min(np.searchsorted(cdf, 0.001), nodes.size - 1)]
        hi = nodes[order][min(np.searchsorted(cdf, 0.999), nodes.size - 1)]
        pad = 0.1 * max(hi - lo, 1e-12)
        xlim = (lo - pad, hi + pad)
    else:
        if len(xlim) != 2:
            raise ValueError(f"xlim must be (lo, hi), got {xlim!r}")
        lo, hi = v.real_scalar("xlim[0]", xlim[0]), v.real_scalar("xlim[1]", xlim[1])
        if not lo < hi:
            raise ValueError(f"xlim must satisfy lo < hi, got {xlim!r}")
        xlim = (lo, hi)
    artists = []
    if samples is not None:
        s = np.asarray(v.float_array("samples", samples, ndim_min=1), dtype=np.float64).ravel()
        artists.append(
            ax.hist(
                s,
                bins=bins,
                range=xlim,
                density=not getattr(marginal, "is_discrete", False),
                weights=np.full(s.size, 1.0 / s.size) if getattr(marginal, "is_discrete", False) else None,
                color="0.8",
                edgecolor="none",
                histtype="stepfilled",  # one polygon, not one patch per bin: 5x faster to draw
            )[2]
        )
    if getattr(marginal, "is_discrete", False):
        keep = weights > 0
        artists.append(ax.vlines(nodes[keep], 0.0, weights[keep], color=color, lw=2, label=label))
        artists.append(ax.plot(nodes[keep], weights[keep], "o", color=color)[0])
        ax.set_ylabel("probability")
        top = float(weights.max()) * 1.15
    else:
        if not callable(getattr(marginal, "pdf", None)):
            raise TypeError(f"a continuous marginal needs a pdf(x) method, got {type(marginal).__name__}")
        x = np.linspace(xlim[0], xlim[1], num_points)
        p = np.asarray(marginal.pdf(x), dtype=np.float64)
        artists.append(ax.plot(x, p, color=color, label=label)[0])
        ax.set_ylabel("density")
        finite = p[np.isfinite(p)]
        top = 1.5 * float(np.percentile(finite, 95)) if finite.size else 1.0
        top = max(top, 1e-12)
    if gaussian_reference:
        x = np.linspace(xlim[0], xlim[1], num_points)
        artists.append(ax.plot(x, np.exp(-x * x / 2) / np.sqrt(2 * np.pi), "--", color="0.5", lw=1, label="N(0, 1)")[0])
    ax.set_xlim(*xlim)
    ax.set_ylim(0, top if ymax is None else v.positive("ymax", ymax))
    ax.set_xlabel("$x_i$")
    return artists


def plot_samples(
    ax: Any,
    x: ArrayLike,
    y: ArrayLike | None = None,
    *,
    num: int = 2,
    n: int | None = None,
    offset: float = 0.0,
    alpha: float = 0.9,
) -> list[Any]:
    """Draw the first ``num`` input vectors as lines over positions, coloured by class.

    Parameters
    ----------
    ax : matplotlib Axes
        The panel.
    x : array_like, shape (M, N)
        Input vectors.
    y : array_like, shape (M,), optional
        Labels: colours :data:`CLASS_COLORS`; black without labels.
    num : int
        How many vectors (>= 1).
    n : int, optional
        Input shape, checked to be 1-D (grids: :func:`plot_receptive_field`).
    offset : float
        Vertical shift per sample.
    alpha : float
        Line opacity.

    Returns
    -------
    list of matplotlib Line2D
        The lines.
    """
    _check_ax(ax)
    x = np.asarray(v.float_array("x", x, ndim_min=2), dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x must be a (M, N) batch, got shape {x.shape}")
    num = v.integer("num", num, 1)
    offset = v.real_scalar("offset", offset)
    if y is not None:
        y = np.asarray(y)
        if y.shape != (x.shape[0],):
            raise ValueError(f"y must have shape (M,) = ({x.shape[0]},), got {y.shape}")
    if n is not None and len(v.shape("n", n, minimum=1)) != 1:
        raise ValueError("plot_samples draws 1-D signals; use plot_receptive_field for grids")
    lines = []
    pos = np.arange(x.shape[1])
    for m in range(min(num, x.shape[0])):
        c = "k" if y is None else CLASS_COLORS[int(y[m] > 0.5)]
        lab = None if y is None else f"y = {int(y[m] > 0.5)}"
        lines.append(ax.plot(pos, x[m] + m * offset, color=c, alpha=alpha, label=lab, drawstyle="steps-mid")[0])
    ax.set_xlabel("position $i$")
    ax.set_ylabel("$x_i$")
    return lines
