"""localization: the JAX library behind the book *Localization in neural receptive fields*.

Importing the package changes no global JAX setting. The theory (the amplifier, quadratures,
closed forms) and the data models' default ``dtype`` need float64, which JAX provides only in its
64-bit mode: call :func:`enable_float64` once, before any computation (the chapters do it through
``localization.book.start``, the tests in ``tests/conftest.py``, the command line
``python -m localization`` and the benchmarks on start). Without it, asking for float64 raises a
``ValueError`` that says so (``localization.validation.floating_dtype``); simulations that ask for
float32 explicitly through their ``dtype`` arguments run either way.
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
