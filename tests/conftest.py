"""Strict test configuration: float64 everywhere, CPU only; nbval compares text, not pictures, and
never a measured (seed- or machine-dependent) value; numbers in compared text are compared with a
tolerance (tests/tolerant_compare.py), since rounding is not portable between machines."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import localization  # (fails collection early if the package does not import)

localization.enable_float64()  # the one call that turns on JAX's 64-bit mode (importing changes nothing)

# Payloads nbval must not compare (figures and widget views): the list the reference notebooks are
# stripped of. Everything else a chapter prints or returns as text is compared with its reference,
# except the outputs of localization.book.glue_measured / show_measured, which the references do
# not store (strip_reference drops them) and which are dropped from the executed outputs below.
from strip_reference import UNCOMPARED as _UNCOMPARED  # noqa: E402  (tests/ is on sys.path)
from tolerant_compare import align_outputs  # noqa: E402

from localization.book import is_measured_output  # noqa: E402


def _without_measured(outputs):
    return [out for out in outputs if not is_measured_output(out)]


def pytest_collection_modifyitems(session, config, items):
    try:
        from nbval.plugin import IPyNbCell, IPyNbFile
    except ImportError:  # nbval not in use for this run
        return
    if not getattr(IPyNbCell, "_book_measured_filter", False):
        compare = IPyNbCell.compare_outputs

        def compare_outputs(self, test, ref, skip_compare=None):
            ref = _without_measured(ref)
            test = align_outputs(_without_measured(test), ref)
            return compare(self, test, ref, skip_compare)

        IPyNbCell.compare_outputs = compare_outputs
        IPyNbCell._book_measured_filter = True
    for item in items:
        parent = item.parent
        if isinstance(parent, IPyNbFile) and not getattr(parent, "_book_skips", False):
            parent.skip_compare = tuple(parent.skip_compare) + _UNCOMPARED
            parent._book_skips = True
