"""The book's infrastructure, and its conventions for randomness and for numbers shown in the text.

This subpackage is everything that serves the pages rather than the science: what a cell shows
(:mod:`.page`), measured claims and their recorded sweep (:mod:`.claims`, :mod:`.claims_sweep`),
executing chapters (:mod:`.notebooks`), the scorecard and the explorers. The model core
(``localization.models``, ``sgd``, ``train``, ...) and the ``data``, ``theory``, ``experiments`` packages
never import it; ``figures`` and the command line do.

Every chapter opens with one call, ``CH = book.start("<chapter>")`` (:func:`start`: float64, the
book's figure style), and makes every random key with ``book.key(CH, label, ...)``. Two rules make
every chapter portable between machines and robust to the choice of seed:

* **One book seed.** Every random key a chapter uses comes from :func:`key`, which folds the
  chapter's labels into the book seed read from the environment variable ``LOCALIZATION_SEED``
  (default 0, the seed of the committed nbval references). A reader re-runs a chapter with
  another seed by setting the variable; every check cell must still pass.
* **Exact values are compared, measured values are asserted.** A number that comes from sampling
  or SGD differs between seeds, and its last bits differ between machines (float32 SGD near the
  localization onset carries a last-bit difference into the second decimal). Such numbers are glued
  with :func:`glue_measured` and shown with :func:`show_measured`; both mark their output so that
  the nbval references never store it and nbval never compares it
  (:data:`MEASURED_METADATA_KEY`). Deterministic values (float64 theory, integers, strings) are glued
  with :func:`glue_exact`, which refuses float32-derived numbers, and are compared as text.

``make test`` runs nbval under a second seed, so a compared output that depends on the seed fails
the test suite rather than a later CI run on another machine.
"""

from __future__ import annotations

import numbers
import re
import zlib
from typing import Any

import numpy as np

from localization.book.claims import claim  # the one way a chapter states a measured claim
from localization.book.page import (  # what a chapter's cells show; here so a chapter needs one import
    ACCURACY_METADATA_KEY,
    BOOK_DIR,
    MEASURED_METADATA_KEY,
    SEED_ENV,
    glue_exact,
    glue_figure,
    glue_measured,
    is_measured_output,
    looks_float32,
    passed,
    seed,
    show_measured,
    with_references,
)

#: The modules of the book's infrastructure (imported on first access, ``book.explorer``): what a cell
#: shows (:mod:`.page`), measured claims and their recorded sweep (:mod:`.claims`,
#: :mod:`.claim_revisions`, :mod:`.claims_sweep`), executing chapters (:mod:`.notebooks`), the paper's
#: scorecard (:mod:`.scorecard`) and the explorers (:mod:`.explorer`, :mod:`.explorer_controls`,
#: :mod:`.explorer_page`, :mod:`.rasterise`).
MODULES = (
    "page",
    "claims",
    "claim_revisions",
    "claims_sweep",
    "notebooks",
    "scorecard",
    "explorer",
    "explorer_controls",
    "explorer_page",
    "rasterise",
)

__all__ = [
    "start",
    "SEED_ENV",
    "MEASURED_METADATA_KEY",
    "ACCURACY_METADATA_KEY",
    "seed",
    "key",
    "glue_exact",
    "glue_measured",
    "glue_figure",
    "show_measured",
    "is_measured_output",
    "looks_float32",
    "claim",
    "passed",
    "with_references",
    *MODULES,
]

#: A chapter's name: the stem of its file ``book/<name>.md`` (lower-case letters, digits, underscores).
_CHAPTER_NAME = re.compile(r"[a-z][a-z0-9_]*")


def start(chapter: str) -> str:
    """Open a chapter: the one call of every chapter's first cell, ``CH = book.start("gaussian")``.

    Turns on JAX's 64-bit mode (``localization.enable_float64``: the theory needs float64; simulations
    ask for float32 through their ``dtype`` arguments) and applies the book's figure style
    (``localization.plotting.use_book_style``), and loads Matplotlib's backend (so that a figure made
    outside pyplot, as the figure builders make them, is shown as an image), drawn at twice its pixels
    under IPython (:func:`_retina_figures`). Every random key of the chapter is then
    ``book.key(CH, label, ...)``: the book seed with the chapter's name and the labels folded in.

    Parameters
    ----------
    chapter : str
        The chapter's name, the stem of ``book/<chapter>.md`` (e.g. ``"gaussian"``); checked against
        the book's files when the book directory is next to the package (a source checkout).

    Returns
    -------
    str
        ``chapter``, the first label of the chapter's keys.

    Raises
    ------
    TypeError
        ``chapter`` is not a str.
    ValueError
        ``chapter`` is not a lower-case name, or no ``book/<chapter>.md`` exists in a source checkout.
    """
    import localization
    from localization import plotting

    if not isinstance(chapter, str):
        raise TypeError(f"chapter must be a str (the stem of book/<chapter>.md), got {type(chapter).__name__}")
    if not _CHAPTER_NAME.fullmatch(chapter):
        raise ValueError(f"chapter must be lower-case letters, digits and underscores (a file stem), got {chapter!r}")
    if BOOK_DIR.is_dir() and not (BOOK_DIR / f"{chapter}.md").is_file():
        known = ", ".join(sorted(p.stem for p in BOOK_DIR.glob("*.md")))
        raise ValueError(f"chapter must name a file book/<chapter>.md, got {chapter!r} (chapters: {known})")
    localization.enable_float64()
    plotting.use_book_style()
    # Load Matplotlib's backend now: the inline backend registers IPython's PNG formatter when it is
    # loaded, so that a figure made outside pyplot (every figure builder's) is shown and glued as an image.
    import matplotlib
    from matplotlib.backends import backend_registry

    backend_registry.load_backend_module(matplotlib.get_backend())
    _retina_figures()
    return chapter


def _retina_figures() -> None:
    """Under IPython (a notebook, the book's build), show figures as PNGs of twice their pixels.

    The inline backend's "retina" format draws at twice the figure's dpi and records the figure's
    size at 1x as the image's width and height (metadata that MyST-NB writes as the ``<img>``'s
    width and height), so a figure keeps its layout and is crisp on high-density screens. Outside
    IPython (a script, the tests) nothing changes.
    """
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # no IPython: nothing displays figures inline
        return
    if get_ipython() is None:
        return
    set_matplotlib_formats("retina")


def _label_word(index: int, label: Any) -> int:
    if isinstance(label, str):
        return zlib.crc32(label.encode("utf-8"))  # stable across Python processes, unlike hash()
    if isinstance(label, bool) or not isinstance(label, (numbers.Integral, np.integer)):
        raise TypeError(
            f"labels[{index}] must be a str or a non-negative int, got {label!r} of type {type(label).__name__}"
        )
    if not 0 <= int(label) < 2**32:
        raise ValueError(f"labels[{index}] must satisfy 0 <= label < 2**32, got {int(label)}")
    return int(label)


def key(*labels: str | int) -> Any:
    """Return a JAX key for one use in a chapter: the book seed with each label folded in, in order.

    A chapter calls ``book.key(CH, label, ...)`` with ``CH = book.start("<chapter>")``.
    ``key("simulation", "fig5")`` and ``key("simulation", "fig5", 3)`` are independent streams;
    the same labels give the same key for the same book seed, in every process.

    Parameters
    ----------
    *labels : str or int
        At least one label; strings (hashed with CRC-32) or integers in [0, 2**32).

    Returns
    -------
    jax.Array
        A typed JAX key (``jax.random.key``), shape ().

    Raises
    ------
    ValueError
        No label, or an integer label outside [0, 2**32).
    TypeError
        A label that is neither a str nor an int.
    """
    import jax

    if not labels:
        raise ValueError("key needs at least one label (the chapter's name), got none")
    words = [_label_word(i, label) for i, label in enumerate(labels)]
    k = jax.random.key(seed())
    for word in words:
        k = jax.random.fold_in(k, word)
    return k


def __getattr__(name: str):
    """Import a module of :data:`MODULES` on first access (PEP 562): ``import`` of the book stays light."""
    if name in MODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
