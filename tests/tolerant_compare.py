"""Numbers in compared outputs are compared with a tolerance, everything else as text.

Rounding is never portable: a float64 value whose last-bit difference between two machines straddles
a rounding boundary prints differently however many digits are kept (``6.167698643e-09`` against
``6.16769864e-09`` on two machines of the same kind). So nbval's text comparison is preceded by
:func:`align_outputs`: where a newly computed output agrees with its reference *up to the numbers in
it* (the text between the numbers identical, integers identical, every other number within
``RTOL`` relative with an absolute floor), the new text is replaced by the reference's and nbval's
own comparison then passes; anything else is left for nbval to report as a mismatch.

The absolute floor is ``ATOL`` unless the reference output states its own accuracy: a value glued by
:func:`localization.book.glue_exact` with ``accuracy=`` (a residual of cancellation near zero, say)
carries it in its output metadata under :data:`localization.book.ACCURACY_METADATA_KEY`, which the
references keep.
"""

from __future__ import annotations

import copy
import math
import re
from collections import defaultdict

from localization.book import ACCURACY_METADATA_KEY

#: Relative tolerance: far above float64 noise between math libraries (~1e-15), far below any
#: difference a reader could see (a change in the 4th significant digit is 1e-4 or more).
RTOL = 1e-7
#: Absolute floor for numbers near zero whose reference states no accuracy of its own.
ATOL = 1e-13

# A decimal number: optional sign, digits with an optional fraction (or a bare fraction), optional
# exponent. "nan"/"inf" are words and so must match as text.
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _split(text: str) -> tuple[list[str], list[str]]:
    """The text between numbers, and the numbers, of ``text``."""
    return _NUMBER.split(text), _NUMBER.findall(text)


def _is_integer(token: str) -> bool:
    return not any(c in token for c in ".eE")


def numbers_agree(reference: str, test: str, *, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """Whether ``test`` reads as ``reference`` up to its numbers' last digits.

    The text between numbers must match exactly; two integers must be equal; any other pair of
    numbers must satisfy ``|test - reference| <= atol + rtol * |reference|``.
    """
    if not (isinstance(reference, str) and isinstance(test, str)):
        return reference == test
    if reference == test:
        return True
    ref_text, ref_numbers = _split(reference)
    test_text, test_numbers = _split(test)
    if ref_text != test_text or len(ref_numbers) != len(test_numbers):
        return False
    for r, t in zip(ref_numbers, test_numbers, strict=True):
        if r == t:
            continue
        if _is_integer(r) and _is_integer(t):
            return False
        a, b = float(r), float(t)
        if not (math.isfinite(a) and math.isfinite(b)) or abs(a - b) > atol + rtol * abs(a):
            return False
    return True


def output_accuracy(output: dict) -> float:
    value = output.get("metadata", {}).get(ACCURACY_METADATA_KEY)
    return ATOL if value is None else max(ATOL, float(value))


def compared_fields(output: dict):
    """(key, value) of every compared text field of an output, in nbval's flattening: the stream
    text under the stream's name, each MIME type of the data under its own name."""
    if output.get("output_type") == "stream":
        yield output.get("name", "stdout"), "text"
    for mime in output.get("data", {}):
        yield mime, ("data", mime)


def field_value(output: dict, where):
    return output[where] if isinstance(where, str) else output[where[0]][where[1]]


def _set(output: dict, where, value) -> None:
    if isinstance(where, str):
        output[where] = value
    else:
        output[where[0]][where[1]] = value


def align_outputs(test: list, ref: list, *, rtol: float = RTOL) -> list:
    """A copy of ``test`` in which every text field that agrees with its reference counterpart up to
    its numbers (:func:`numbers_agree`) is replaced by the reference's text.

    Outputs are paired as nbval pairs them: the i-th value of each key (stream name or MIME type) of
    the test with the i-th value of the same key of the reference.
    """
    reference_values = defaultdict(list)
    for output in ref:
        for key, where in compared_fields(output):
            reference_values[key].append((field_value(output, where), output_accuracy(output)))
    aligned = copy.deepcopy(test)
    seen = defaultdict(int)
    for output in aligned:
        for key, where in compared_fields(output):
            index = seen[key]
            seen[key] += 1
            if index >= len(reference_values[key]):
                continue
            expected, atol = reference_values[key][index]
            value = field_value(output, where)
            if isinstance(value, str) and numbers_agree(expected, value, rtol=rtol, atol=atol):
                _set(output, where, expected)
    return aligned
