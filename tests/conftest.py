"""Strict test configuration: float64 everywhere, CPU only; nbval compares text, not pictures."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import localization  # noqa: E402,F401  (fails collection early if the package does not import)

# Payloads nbval must not compare (figures and widget views): the list the reference notebooks are
# stripped of. Everything a chapter prints or returns as text is compared with its reference.
from strip_reference import UNCOMPARED as _UNCOMPARED  # noqa: E402  (tests/ is on sys.path)


def pytest_collection_modifyitems(session, config, items):
    try:
        from nbval.plugin import IPyNbFile
    except ImportError:  # nbval not in use for this run
        return
    for item in items:
        parent = item.parent
        if isinstance(parent, IPyNbFile) and not getattr(parent, "_book_skips", False):
            parent.skip_compare = tuple(parent.skip_compare) + _UNCOMPARED
            parent._book_skips = True
