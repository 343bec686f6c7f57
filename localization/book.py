"""The book's conventions for randomness and for numbers shown in the text.

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

import math
import numbers
import os
import re
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from localization import validation
from localization.claims import claim  # the one way a chapter states a measured claim

if TYPE_CHECKING:
    from matplotlib.figure import Figure

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
]

#: Environment variable holding the book seed (an integer; unset or empty means 0).
SEED_ENV = "LOCALIZATION_SEED"

#: Output-metadata key that marks a glued or displayed value as measured (seed- and
#: machine-dependent). nbval skips such outputs and the references do not store them.
MEASURED_METADATA_KEY = "localization-measured"

#: Output-metadata key of a value glued exactly whose accuracy is coarser than its float64 digits (a
#: residual of cancellation near zero): nbval compares it with this absolute tolerance, and the
#: references keep the key (tests/tolerant_compare.py).
ACCURACY_METADATA_KEY = "localization-accuracy"

_GLUE_PREFIX = "application/papermill.record/"


#: A chapter's name: the stem of its file ``book/<name>.md`` (lower-case letters, digits, underscores).
_CHAPTER_NAME = re.compile(r"[a-z][a-z0-9_]*")

#: The book's chapters, next to the package in a source checkout (absent from an installed package).
_BOOK_DIR = Path(__file__).resolve().parent.parent / "book"


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
    if _BOOK_DIR.is_dir() and not (_BOOK_DIR / f"{chapter}.md").is_file():
        known = ", ".join(sorted(p.stem for p in _BOOK_DIR.glob("*.md")))
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


def seed() -> int:
    """Return the book seed: ``LOCALIZATION_SEED`` as a non-negative integer (0 when unset or empty).

    Returns
    -------
    int
        The seed, in [0, 2**32).

    Raises
    ------
    ValueError
        The variable is set to something that is not an integer in [0, 2**32).
    """
    text = os.environ.get(SEED_ENV, "").strip()
    if not text:
        return 0
    try:
        value = int(text, 10)
    except ValueError:
        raise ValueError(
            f"{SEED_ENV} must be a non-negative integer (valid range: 0 <= seed < 2**32), got {text!r}"
        ) from None
    if not 0 <= value < 2**32:
        raise ValueError(f"{SEED_ENV} must satisfy 0 <= seed < 2**32, got {value}")
    return value


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


def looks_float32(value: Any) -> bool:
    """Tell whether a number carries float32 arithmetic.

    True for a float32/float16 array or scalar, and for a Python float that is exactly a float32
    value yet has no short decimal form (the signature of ``float(x)`` on a float32 result, e.g.
    0.5555020570755005).

    Parameters
    ----------
    value : Any
        A number, a NumPy/JAX scalar or array, or anything else (then False).

    Returns
    -------
    bool
        Whether ``value`` looks float32-derived.
    """
    dtype = getattr(value, "dtype", None)
    if dtype is not None and np.issubdtype(np.dtype(dtype), np.floating):
        if np.dtype(dtype).itemsize < 8:
            return True
        value = np.asarray(value)
        if value.shape != ():
            return any(looks_float32(float(v)) for v in value.ravel())
        value = float(value)
    if isinstance(value, float) and math.isfinite(value) and value != 0.0:
        if float(np.float32(value)) != value:
            return False
        digits = repr(value).lower().split("e")[0].replace("-", "").replace(".", "").strip("0")
        return len(digits) > 8
    return False


def _glue(name: str, value: Any, *, measured: bool, accuracy: float | None = None) -> None:
    from IPython.core.formatters import format_display_data
    from IPython.display import display

    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str, got {name!r}")
    bundle, metadata = format_display_data(value)
    metadata["scrapbook"] = {"name": name, "mime_prefix": _GLUE_PREFIX}
    if measured:
        metadata[MEASURED_METADATA_KEY] = True
    if accuracy is not None:
        metadata[ACCURACY_METADATA_KEY] = accuracy
    display({_GLUE_PREFIX + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)


def _python_number(name: str, value: Any):
    if isinstance(value, (str, bool)):
        return value
    if isinstance(value, (numbers.Integral, np.integer)):
        return int(value)
    if np.ndim(value) != 0 or isinstance(value, (list, tuple, dict)):
        raise TypeError(f"{name}: glue a number or a string, got {type(value).__name__}")
    return validation.real_scalar(f"{name}: a glued number", value)


def glue_exact(name: str, value: Any, significant: int = 10, *, accuracy: float | None = None) -> None:
    """Glue a deterministic value (float64 theory, an integer count, a string) for ``{glue:text}``.

    The value is stored in the nbval references and compared on every machine and seed, so it must
    not depend on either. Numbers are compared with a tolerance, never as text (rounding is not
    portable: a value whose machine error straddles a rounding boundary flips its last digit):
    relative 1e-7 with an absolute floor of 1e-13 (``tests/tolerant_compare.py``). A float is
    rounded to ``significant`` significant digits (default 10, in 1..15) for display.

    Parameters
    ----------
    name : str
        The glue name.
    value : float, int or str
        A float64 or integer number, or a string.
    significant : int
        Significant digits kept (1..15); the one rounding of the value (chapters pass the digits
        their text shows, e.g. ``book.glue_exact("gauss-r0", r0, 4)``).
    accuracy : float, optional
        The absolute accuracy the value really has, where cancellation limits it (a residual near
        zero): compared absolutely at this accuracy instead of relatively. A positive finite float,
        at least ``abs(value) * 1e-15``.

    Returns
    -------
    None

    Raises
    ------
    TypeError
        ``value`` is float32-derived (see :func:`looks_float32`) or not a number/string; glue such
        values with :func:`glue_measured`.
    ValueError
        ``value`` is NaN or infinite, or ``significant`` or ``accuracy`` is out of range.
    """
    if looks_float32(value):
        raise TypeError(
            f"{name}: value {value!r} carries float32 arithmetic, whose last bits differ between "
            "machines; glue it with glue_measured (asserted in a check cell, never compared as text)"
        )
    if isinstance(significant, bool) or not isinstance(significant, numbers.Integral) or not 1 <= significant <= 15:
        raise ValueError(f"significant must be an integer in [1, 15], got {significant!r}")
    number = _python_number(name, value)
    if accuracy is not None:
        if isinstance(accuracy, bool) or not isinstance(accuracy, (numbers.Real, np.floating)):
            raise TypeError(f"{name}: accuracy must be a positive float, got {type(accuracy).__name__}")
        accuracy = float(accuracy)
        if not (math.isfinite(accuracy) and accuracy > 0):
            raise ValueError(f"{name}: accuracy must be positive and finite, got {accuracy}")
        if not isinstance(number, float):
            raise TypeError(f"{name}: accuracy applies to a float, got {type(number).__name__}")
    if isinstance(number, float):
        number = float(f"{number:.{int(significant)}g}")
    _glue(name, number, measured=False, accuracy=accuracy)


def glue_measured(name: str, value: Any) -> None:
    """Glue a number that comes from sampling or SGD: shown in the text, never compared by nbval.

    The claim the number supports must be asserted in a check cell with a tolerance taken from
    its spread over seeds.

    Parameters
    ----------
    name : str
        The glue name.
    value : float, int or str
        The measured value.

    Returns
    -------
    None
    """
    _glue(name, _python_number(name, value), measured=True)


def glue_figure(name: str, fig: Figure) -> None:
    """Glue a Matplotlib figure for ``{glue:figure}`` and close it (figures are never compared).

    Parameters
    ----------
    name : str
        The glue name.
    fig : matplotlib.figure.Figure
        The figure.

    Returns
    -------
    None
    """
    import matplotlib.pyplot as plt
    from myst_nb import glue

    glue(name, fig, display=False)
    plt.close(fig)


def show_measured(text: str, markdown: bool = False) -> None:
    """Show measured numbers without nbval comparing them.

    Parameters
    ----------
    text : str
        A line below a check's verdict, or a Markdown table when ``markdown``.
    markdown : bool
        Also display ``text`` as Markdown.

    Returns
    -------
    None
    """
    from IPython.display import display

    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    bundle = {"text/plain": text}
    if markdown:
        bundle["text/markdown"] = text
    display(bundle, raw=True, metadata={MEASURED_METADATA_KEY: True})


def is_measured_output(output: dict) -> bool:
    """Tell whether a notebook output was written by :func:`glue_measured` or :func:`show_measured`.

    Parameters
    ----------
    output : dict
        A notebook output (nbformat).

    Returns
    -------
    bool
        Whether it carries :data:`MEASURED_METADATA_KEY`.
    """
    return bool(output.get("metadata", {}).get(MEASURED_METADATA_KEY, False))
