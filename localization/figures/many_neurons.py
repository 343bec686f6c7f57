r"""Drawing code of the many-neuron figures (paper Figs. 6, 7 and 1 right), shared by the chapter and by
``python -m localization figures`` (``fig6_populations``, ``fig7_two_layer``, ``fig1_grid``).

Like :mod:`localization.figures.draw`, each function draws results computed by the caller (with
:func:`localization.experiments.train_population` and :func:`localization.ica.fit_ica`) on axes it is
given, in the book style, and returns what it drew.

* :func:`draw_fields` — one receptive field per panel: a curve for a ring, an image for a grid (the
  same call for both: the input shape decides);
* :func:`draw_share_histograms` — the distribution of the window share
  (:func:`localization.population.window_share`) of several populations, with the localization
  threshold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from localization import validation as v

__all__ = ["draw_fields", "draw_share_histograms"]


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
            ax.set_xticks([])
            ax.set_yticks([])
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
