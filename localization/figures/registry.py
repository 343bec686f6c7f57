r"""The machinery of the book's figures: :func:`register`, :data:`FIGURES`, :func:`render`, :class:`Built`.

These serve ``python -m localization figures`` and the chapters (``--data``, the numbers behind
each figure, is :mod:`localization.figures.export`). Each figure has one builder, in
the module of its chapter (``localization/figures/<chapter>.py``): a public function
``name(scale="chapter") -> Built`` registered with ``@register(name, chapter)``: it chooses the
settings of the scale, derives the chapter's random keys (:func:`localization.book.key`, so the book
seed ``LOCALIZATION_SEED`` applies), calls the experiment that computes (``localization.experiments``,
explicit keys) and draws the result. The chapter calls the same function
and reads ``Built.data`` in its checks, so no figure's code exists twice. Figures the paper has carry
its numbering in their names (``fig5_...``); the others name their chapter's figure.

Two scales:

* ``chapter`` — the chapter's settings, so the file is the chapter's figure (up to the last bits of
  float32 arithmetic, see the reproducibility page);
* ``paper`` — the paper's settings where the chapter uses smaller ones (each builder's docstring
  says which); a figure whose chapter already uses the paper's settings is the same at both scales.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "SCALES",
    "Built",
    "FigureEntry",
    "FIGURES",
    "register",
    "describe",
    "resolve_names",
    "check_scale",
    "new_figure",
]

#: The scales a figure can be computed at (see the module docstring).
SCALES = ("chapter", "paper")


class Built(NamedTuple):
    """What a figure builder returns: the figure and the computed results its chapter reads.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
        The drawn figure (created with :func:`new_figure`, outside pyplot).
    data : Any
        The results the figure shows, for the chapter's checks and prose (each builder's docstring
        says what; ``None`` when the chapter reads nothing).
    """

    figure: Any
    data: Any


@dataclass(frozen=True)
class FigureEntry:
    """One registered figure.

    Attributes
    ----------
    name : str
        File stem of the PNG (paper numbering where the paper has the figure).
    chapter : str
        The book chapter (``book/<chapter>.md``) that shows it.
    description : str
        The ``--help`` text: the builder's docstring before its first section, on one line.
    build : callable
        ``build(scale)`` → a :class:`Built` (figure and data).
    """

    name: str
    chapter: str
    description: str
    build: Callable[[str], Any]


#: name → :class:`FigureEntry`, in the order of ``--help``.
FIGURES: dict[str, FigureEntry] = {}


def register(name: str, chapter: str) -> Callable[[Callable[[str], Built]], Callable[[str], Built]]:
    """Register a figure builder ``build(scale="chapter") -> Built`` under ``name`` (a decorator).

    The builder is the public function of its chapter's figures module that the chapter calls; its
    docstring before the first section (``Parameters``) is the description ``--help`` shows.

    Parameters
    ----------
    name : str
        A new identifier-like figure name (the PNG's file stem), the builder's own name.
    chapter : str
        The chapter that shows the figure (``book/<chapter>.md``).

    Returns
    -------
    callable
        The decorator, which records the builder in :data:`FIGURES` and returns it unchanged.

    Raises
    ------
    ValueError
        If ``name`` is taken or not identifier-like, or the builder is not named ``name`` or has no
        docstring.
    """
    if not isinstance(name, str) or not name.replace("_", "").isalnum() or name in FIGURES:
        raise ValueError(f"name must be a new identifier-like figure name, got {name!r}")

    def decorate(build: Callable[[str], Built]) -> Callable[[str], Built]:
        if getattr(build, "__name__", None) != name:
            raise ValueError(f"the builder of figure {name!r} must be the function named {name!r} (one per figure)")
        doc = inspect.getdoc(build)
        if not doc:
            raise ValueError(f"the builder of figure {name!r} needs a docstring (its --help description)")
        description = " ".join(re.split(r"\n(?:Parameters|Returns)\n-+\n", doc)[0].split())
        FIGURES[name] = FigureEntry(name=name, chapter=chapter, description=description, build=build)
        return build

    return decorate


def describe(width: int = 100) -> str:
    """Return the figure list of ``--help``: one entry per figure, name, chapter and description.

    Parameters
    ----------
    width : int
        Line width of the wrapped descriptions.

    Returns
    -------
    str
        The list, one name line and the indented description per figure.
    """
    import textwrap

    lines = []
    for entry in FIGURES.values():
        lines.append(f"  {entry.name}  (book/{entry.chapter}.md)")
        lines.extend(textwrap.wrap(entry.description, width, initial_indent="      ", subsequent_indent="      "))
    return "\n".join(lines)


def resolve_names(only: Iterable[str] | None) -> list[str]:
    """Return the figures to write, in registry order: all of them, or those named in ``only``.

    Parameters
    ----------
    only : iterable of str, str or None
        Figure names (each item may hold several, comma-separated); ``None`` for all.

    Returns
    -------
    list of str
        The names, in the order of :data:`FIGURES`, each once.

    Raises
    ------
    ValueError
        Naming an unknown name and the valid names, or if ``only`` names none.
    """
    if only is None:
        return list(FIGURES)
    if isinstance(only, str):
        only = [only]
    wanted = [name.strip() for item in only for name in str(item).split(",") if name.strip()]
    if not wanted:
        raise ValueError(f"only must name at least one figure; valid names: {', '.join(FIGURES)}")
    unknown = [name for name in wanted if name not in FIGURES]
    if unknown:
        raise ValueError(f"unknown figure name(s) {', '.join(map(repr, unknown))}; valid names: {', '.join(FIGURES)}")
    return [name for name in FIGURES if name in wanted]


def check_scale(scale: str) -> str:
    """Return ``scale`` if it is one of :data:`SCALES`.

    Parameters
    ----------
    scale : str
        ``"chapter"`` or ``"paper"``.

    Returns
    -------
    str
        ``scale``.

    Raises
    ------
    ValueError
        Naming ``scale`` and the valid scales.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    return scale


def new_figure(figsize: tuple[float, float], **kwargs: Any) -> Any:
    """Create a Matplotlib Figure outside pyplot (nothing global is created or kept).

    Parameters
    ----------
    figsize : (float, float)
        Width and height in inches; the width is at most ``plotting.COLUMN_WIDTH`` (the page column).
    **kwargs
        Passed to ``matplotlib.figure.Figure`` (e.g. ``layout="constrained"``).

    Returns
    -------
    matplotlib.figure.Figure
        The figure.

    Raises
    ------
    ValueError
        If the width is not positive or exceeds the column.
    """
    from matplotlib.figure import Figure

    from localization import plotting

    width, height = (float(x) for x in figsize)
    if not 0 < width <= plotting.COLUMN_WIDTH or not height > 0:
        raise ValueError(
            f"figsize must be (width, height) with 0 < width <= plotting.COLUMN_WIDTH = {plotting.COLUMN_WIDTH} "
            f"and height > 0, got {tuple(figsize)}"
        )
    return Figure(figsize=(width, height), **kwargs)
