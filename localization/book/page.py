"""What a chapter's cells show on its page: glued numbers, measured lines, verdict sentences.

Three kinds of output, told apart by their metadata so that the nbval references keep exactly what is
portable (see :mod:`localization.book` for the rules):

* **Exact values** (:func:`glue_exact`): float64 theory, counts, strings; compared by nbval on every
  machine and seed, with a tolerance (:func:`localization.book.notebooks.numbers_agree`).
* **Measured values** (:func:`glue_measured`, :func:`show_measured`): from sampling or SGD; marked with
  :data:`MEASURED_METADATA_KEY`, never stored in the references nor compared.
* **Verdicts** (:func:`passed`, and :func:`localization.book.claims.claim` for a measured claim): one
  sentence per check, in the words of the text, with its equation references rendered as the site's
  numbers (:func:`with_references`: ``Eq. (gauss-flow)`` becomes "Eq. (56)" with a link).

The book seed (:func:`seed`) lives here too: a verdict names the seed it was measured under.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from localization import validation

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "SEED_ENV",
    "MEASURED_METADATA_KEY",
    "ACCURACY_METADATA_KEY",
    "seed",
    "looks_float32",
    "glue_exact",
    "glue_measured",
    "glue_figure",
    "show_measured",
    "is_measured_output",
    "with_references",
    "passed",
]

#: Environment variable holding the book seed (an integer; unset or empty means 0).
SEED_ENV = "LOCALIZATION_SEED"

#: Output-metadata key that marks a glued or displayed value as measured (seed- and
#: machine-dependent). nbval skips such outputs and the references do not store them.
MEASURED_METADATA_KEY = "localization-measured"

#: Output-metadata key of a value glued exactly whose accuracy is coarser than its float64 digits (a
#: residual of cancellation near zero): nbval compares it with this absolute tolerance, and the
#: references keep the key (localization.book.notebooks).
ACCURACY_METADATA_KEY = "localization-accuracy"

_GLUE_PREFIX = "application/papermill.record/"

#: The book's chapters, next to the package in a source checkout (absent from an installed package).
BOOK_DIR = Path(__file__).resolve().parents[2] / "book"


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
    relative 1e-7 with an absolute floor of 1e-13 (:func:`localization.book.notebooks.numbers_agree`).
    A float is rounded to ``significant`` significant digits (default 10, in 1..15) for display.

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


def show_measured(text: str, markdown: bool | str = False) -> None:
    """Show measured numbers without nbval comparing them.

    Parameters
    ----------
    text : str
        A line below a check's verdict, or a Markdown table when ``markdown`` is True.
    markdown : bool or str
        True: also display ``text`` as Markdown; a str: the Markdown form shown on the page, ``text``
        being the plain-text form.

    Returns
    -------
    None
    """
    from IPython.display import display

    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not isinstance(markdown, (bool, str)):
        raise TypeError(f"markdown must be a bool or a str, got {type(markdown).__name__}")
    bundle = {"text/plain": text}
    if markdown is True:
        bundle["text/markdown"] = text
    elif isinstance(markdown, str) and markdown:
        bundle["text/markdown"] = markdown
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


#: A numbered equation's label (the book's equation labels all start with ``eq-``): ``:label: eq-x`` of a
#: ``{math}`` block, or ``$$ (eq-x)`` after display math.
_MATH_LABEL = re.compile(r"^[ \t]*(?::label:[ \t]*|\$\$[ \t]*\()(eq-[A-Za-z0-9_\-]+)\)?[ \t]*$", re.MULTILINE)
#: "Eq. (label)" and "Eqs. (label) and (label)": the chapters' plain way of naming an equation.
_EQ_REFERENCE = re.compile(r"\b(Eqs?)\. \(([a-z][a-z0-9\-]*)\)((?:(?:,| and| or) \([a-z][a-z0-9\-]*\))*)")
_MORE = re.compile(r"(,| and| or) \(([a-z][a-z0-9\-]*)\)")


@lru_cache(maxsize=1)
def _equation_labels() -> frozenset[str]:
    """Return the labels of the book's numbered equations (``:label:`` of every ``{math}`` block)."""
    if not BOOK_DIR.is_dir():
        return frozenset()
    found: set[str] = set()
    for path in BOOK_DIR.glob("*.md"):
        found.update(_MATH_LABEL.findall(path.read_text(encoding="utf-8")))
    return frozenset(found)


def _equation_role(label: str, text: str) -> str:
    labels = _equation_labels()
    for candidate in (label, f"eq-{label}"):
        if candidate in labels:
            return f"{{eq}}`{candidate}`"
    raise ValueError(
        f"text names Eq. ({label}), which is no numbered equation of the book (no :label: {label} or "
        f"eq-{label} in book/*.md): {text!r}"
    )


def with_references(text: str) -> str:
    """Turn a sentence's plain equation references into MyST roles, numbered and linked on the site.

    ``Eq. (gauss-flow)`` becomes ``{eq}`eq-gauss-flow``` (the site writes "Eq. (56)", the format of
    ``math_eqref_format``); ``Eqs. (a) and (b)`` becomes two such roles. A label may be written with or
    without its ``eq-`` prefix. Outside a source checkout (no ``book/`` directory) the text is returned
    unchanged.

    Parameters
    ----------
    text : str
        A sentence in the text's words.

    Returns
    -------
    str
        The sentence as MyST Markdown.

    Raises
    ------
    TypeError
        ``text`` is not a str.
    ValueError
        A reference names no numbered equation of the book.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not BOOK_DIR.is_dir():
        return text

    def replace(match: re.Match) -> str:
        first = _equation_role(match.group(2), text)
        more = _MORE.sub(lambda m: f"{m.group(1)} {_equation_role(m.group(2), text)}", match.group(3))
        return first + more

    return _EQ_REFERENCE.sub(replace, text)


def passed(statement: str) -> None:
    """Show a check's verdict: one sentence saying what was checked, as the text states it.

    The page shows "✔ <statement>" with its equation references numbered (:func:`with_references`);
    the plain-text form, "check passed: <statement>", is what nbval compares, so a statement must not
    depend on the seed or the machine (measured numbers go to :func:`show_measured` or to a claim).
    Call it after the assertions it sums up: a check that fails raises before its verdict is shown.

    Parameters
    ----------
    statement : str
        What holds, in the words of the text (``"Eq. (gauss-fixed) is a zero of the flow"``).

    Returns
    -------
    None

    Raises
    ------
    TypeError
        ``statement`` is not a str.
    ValueError
        ``statement`` is blank, or names an equation the book does not number.
    """
    from IPython.display import display

    if not isinstance(statement, str):
        raise TypeError(f"statement must be a str, got {type(statement).__name__}")
    if not statement.strip():
        raise ValueError("statement must be a non-empty sentence, got a blank string")
    markdown = with_references(statement.strip())
    markdown = markdown[0].upper() + markdown[1:]
    bundle = {"text/plain": f"check passed: {statement}", "text/markdown": f"\u2714 {markdown}"}
    display(bundle, raw=True)
