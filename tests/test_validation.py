"""The shared argument checks of localization.validation: what they accept, and what they refuse with a
message naming the parameter, the value and the valid range."""

import jax.numpy as jnp
import numpy as np
import pytest

from localization import validation as v


def test_integer_range():
    assert v.integer("i", np.int64(3), minimum=0, maximum=3) == 3
    assert v.integer("steps", 7) == 7
    with pytest.raises(ValueError, match=r"i must be an integer in \[0, 3\], got 4"):
        v.integer("i", 4, minimum=0, maximum=3)
    with pytest.raises(ValueError, match=r"i must be an integer in \[0, 3\], got -1"):
        v.integer("i", -1, minimum=0, maximum=3)
    with pytest.raises(ValueError, match="steps must be an integer >= 1, got 0"):
        v.integer("steps", 0)
    with pytest.raises(TypeError, match="i must be an integer, got 1.0"):
        v.integer("i", 1.0, minimum=0, maximum=3)


def test_finite_weights():
    w = v.finite_weights("w", [[1, 2], [3, 4]])
    assert w.dtype == jnp.float64 and w.shape == (2, 2) and float(w[1, 0]) == 3.0
    with pytest.raises(ValueError, match="w must be finite"):
        v.finite_weights("w", np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="w must have at least 1 axes"):
        v.finite_weights("w", np.float64(1.0))
    with pytest.raises(TypeError, match="w must be an array"):
        v.finite_weights("w", "abc")
