"""localization: the JAX library behind the book *Localization in neural receptive fields*.

Importing the package changes no global JAX setting. The theory (the amplifier, quadratures,
closed forms) and the data models' default ``dtype`` need float64, which JAX provides only in its
64-bit mode: call :func:`enable_float64` once, before any computation (the chapters do it through
``localization.book.start``, the tests in ``tests/conftest.py``, the command line
``python -m localization`` and the benchmarks on start). Without it, asking for float64 raises a
``ValueError`` that says so (``localization.validation.floating_dtype``); simulations that ask for
float32 explicitly through their ``dtype`` arguments run either way.

The layout, readable off the tree (``tests/test_layout.py`` enforces it): four packages — ``data``
(distributions), ``theory`` (closed forms and flows: nothing there samples, fits or measures a run),
``experiments`` (one back-end per chapter that computes anything, named after the chapter) and
``figures`` (drawing, one module per chapter with figures) — the core they share (:data:`CORE`) and the
book's infrastructure (:data:`BOOK`). Every module is in :data:`__all__` and is imported on first access
(``localization.metrics``).
"""

__version__ = "0.1.0"


def enable_float64() -> None:
    """Switch JAX to 64-bit mode (``jax_enable_x64``), which the library's float64 computations need.

    The one call that does it for a chapter, a script or a session; call it before any JAX array is
    made (arrays made before keep their 32-bit dtype). Idempotent.

    Returns
    -------
    None
    """
    import jax

    jax.config.update("jax_enable_x64", True)


def float64_enabled() -> bool:
    """Whether JAX runs in 64-bit mode (:func:`enable_float64` called, or ``JAX_ENABLE_X64`` set).

    Returns
    -------
    bool
        ``jax.config.jax_enable_x64``.
    """
    import jax

    return bool(jax.config.jax_enable_x64)


# -------------------------------------------------------------------------------------------------
# The layout: every module of the package, by role (imported on first access, e.g.
# ``localization.metrics``, so that ``import localization`` stays light)
# -------------------------------------------------------------------------------------------------
#: The packages: ``data`` distributions, ``theory`` closed forms and flows, ``experiments`` the
#: chapters' back-ends (one module per chapter that computes anything), ``figures`` drawing.
PACKAGES = ("data", "theory", "experiments", "figures")
#: The core the packages share: networks, training, the analysis of fields and runs, the plumbing.
CORE = (
    "models",
    "initialisation",
    "sgd",
    "train",
    "trajectory",
    "field_analysis",
    "metrics",
    "prng",
    "pytree",
    "sharding",
    "traced_task",
    "validation",
    "records",
    "jobs",
)
#: The book's infrastructure (the subpackage ``book``: its conventions, measured claims, chapter
#: execution, explorers) and the figures' style (``plotting``).
BOOK = ("book", "plotting")

__all__ = ["enable_float64", "float64_enabled", *PACKAGES, *CORE, *BOOK]


def __getattr__(name: str):
    """Import a module of :data:`__all__` on first access (PEP 562)."""
    if name in PACKAGES or name in CORE or name in BOOK:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """List the module's names with the lazily imported modules (:data:`__all__`)."""
    return sorted(set(globals()) | set(__all__))
