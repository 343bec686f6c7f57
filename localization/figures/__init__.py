"""The figures the book reproduces from the paper, drawn by one library for the chapters and for
``python -m localization figures --out DIR [--only NAMES] [--scale chapter|paper]``.

* ``draw`` — the drawing code the chapters call (paper Figs. 2, 3, 5, 8 and the phase diagram);
* ``mechanism`` — the drawing code of the mechanism chapter's figures;
* ``registry`` — every figure the command writes (:data:`FIGURES`, paper numbering in the names),
  computed with its chapter's library calls and keys, at the chapter's or the paper's scale, and
  :func:`render`, which writes them as PNG files.

The names in ``__all__`` are re-exported here (``figures.draw_ipr_vs_kurtosis(ax, result)``).
"""

from localization.figures import draw, mechanism, registry
from localization.figures.draw import (
    FIG2_MODELS,
    draw_breakdown,
    draw_breakdown_snapshots,
    draw_data_models,
    draw_field_grid,
    draw_ipr_vs_kurtosis,
    draw_phase_diagram,
    draw_sgd_vs_flow,
)
from localization.figures.registry import FIGURES, SCALES, FigureEntry, describe, register, render, resolve_names

__all__ = [
    "draw",
    "mechanism",
    "registry",
    "FIG2_MODELS",
    "draw_breakdown",
    "draw_breakdown_snapshots",
    "draw_data_models",
    "draw_field_grid",
    "draw_ipr_vs_kurtosis",
    "draw_phase_diagram",
    "draw_sgd_vs_flow",
    "FIGURES",
    "SCALES",
    "FigureEntry",
    "describe",
    "register",
    "render",
    "resolve_names",
]
