"""The figures the book reproduces from the paper, drawn by one library for the chapters and for
``python -m localization figures --out DIR [--only NAMES] [--scale chapter|paper]``.

* ``draw`` — the drawing code the chapters call (paper Figs. 2, 3, 5, 8 and the phase diagram);
* ``mechanism`` — the drawing code of the mechanism chapter's figures;
* ``many_neurons`` — the drawing code of the many-neuron figures (paper Figs. 6, 7, 1 right);
* ``registry`` — every figure the command writes (:data:`FIGURES`, paper numbering in the names),
  computed with its chapter's library calls and keys, at the chapter's or the paper's scale, and
  :func:`render`, which writes them as PNG files.

The names in ``__all__`` are re-exported here (``figures.draw_ipr_vs_kurtosis(ax, result)``).
"""

from localization.figures import draw, many_neurons, mechanism, registry
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
from localization.figures.registry import (
    FIGURES,
    SCALES,
    Built,
    FigureEntry,
    describe,
    register,
    render,
    resolve_names,
)

__all__ = [
    "draw",
    "many_neurons",
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
    "Built",
    "FigureEntry",
    "describe",
    "register",
    "render",
    "resolve_names",
]
