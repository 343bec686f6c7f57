"""The book's figures: one builder per figure, called by its chapter and by the command line.

The command is ``python -m localization figures --out DIR [--only NAMES] [--scale chapter|paper]``.

* ``registry`` — the machinery: :func:`register`, :data:`FIGURES` (every registered figure, paper
  numbering in the names), :func:`render` (writes them as PNG files) and :class:`Built` (what a
  builder returns: the figure and the data its chapter reads);
* ``export`` — the numbers behind each figure, written by ``figures --data`` beside its PNG (CSV for
  curves and tables, NPZ for fields, each with a header of settings, seed and commit);
* one module per chapter with figures, in book order — ``intro``, ``data``, ``simulation`` (and
  ``near_zero``, its figure of the fields just below zero excess kurtosis), ``many_neurons``,
  ``ica``, ``two_dimensions``, ``amplifier``, ``mechanism``, ``gaussian``, ``elliptical``, ``effective_dynamics``
  (and ``effective_dynamics_claims``, its other two figures) — each with the chapter's builders
  (``figures.simulation.fig5_ipr_vs_kurtosis()``) and its drawing functions (``draw_*``). A builder
  only composes: it derives the figure's random keys from the book seed (``book.key``), calls the
  chapter's experiment (``localization.experiments``, which computes, with explicit keys and
  settings) and draws the result;
* ``sgd_vs_flow`` — the effective-dynamics chapter's drawing of SGD against the effective flow (its
  figures: ``effective_dynamics`` and ``effective_dynamics_claims``);
* ``sweeps`` — the simulation chapter's drawing of IPR sweeps (its figures: ``simulation``);
* ``flows`` — drawing of the effective flow (its figures: ``mechanism`` and ``gaussian``).

Importing the package imports every chapter module, so that every figure is registered. The shared
panels and the book's style are :mod:`localization.plotting`.
"""

from localization.figures import registry  # noqa: I001  (the machinery first)
from localization.figures import intro, data, simulation, many_neurons, ica, two_dimensions, amplifier, mechanism
from localization.figures import near_zero
from localization.figures import gdln, hypercube, specialisation, gabor, sigmoid
from localization.figures import gaussian, elliptical, real_images
from localization.figures import effective_dynamics, effective_dynamics_claims, flows, sgd_vs_flow, sweeps
from localization.figures import export
from localization.figures.sgd_vs_flow import draw_breakdown, draw_breakdown_snapshots, draw_sgd_vs_flow
from localization.figures.registry import (
    FIGURES,
    SCALES,
    Built,
    FigureEntry,
    check_scale,
    describe,
    new_figure,
    register,
    resolve_names,
)
from localization.figures.export import render

__all__ = [
    "registry",
    "export",
    "intro",
    "data",
    "simulation",
    "near_zero",
    "gdln",
    "hypercube",
    "specialisation",
    "gabor",
    "sigmoid",
    "many_neurons",
    "ica",
    "two_dimensions",
    "amplifier",
    "mechanism",
    "effective_dynamics",
    "effective_dynamics_claims",
    "sweeps",
    "sgd_vs_flow",
    "flows",
    "gaussian",
    "real_images",
    "elliptical",
    "draw_breakdown",
    "draw_breakdown_snapshots",
    "draw_sgd_vs_flow",
    "FIGURES",
    "SCALES",
    "Built",
    "FigureEntry",
    "check_scale",
    "describe",
    "new_figure",
    "register",
    "render",
    "resolve_names",
]
