"""The helpers of ``localization.experiments.gabor`` that the Gabor chapter (book/gabor.md) calls."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from localization.experiments import gabor
from localization.figures import gabor as gabor_fig

N = 24


def _fields():
    bump = gabor.wrapped_gaussian(N, 7.0, 2.0)
    member = gabor.periodic_gabor(N, 15.0, 3.0, 2.0, 0.5, 2.0)
    return np.stack([bump, member])


def test_fit_families_and_table():
    fits = gabor.fit_families(_fields())
    fg, fb, fs = fits
    assert fg.residual.shape == (2,) and np.all(fg.residual < 1e-10)
    assert np.all(fg.residual <= fb.residual) and np.all(fg.residual <= fs.residual + 1e-6)
    table = gabor.fit_table({"toy": fits})
    lines = table.splitlines()
    assert len(lines) == 3 and lines[2].startswith("| toy | 0.000 |")
    with pytest.raises(TypeError, match="fits"):
        gabor.fit_table([fits])


def test_draw_field_fits_draws_the_largest_field():
    w = _fields()
    fg, fb, _ = gabor.fit_families(w)
    fig, ax = plt.subplots()
    try:
        i = gabor_fig.draw_field_fits(ax, w, fg, fb, title="toy")
        assert i == 1  # the member has amplitude 2
        assert len(ax.lines) == 3 and ax.get_title() == "toy"
        with pytest.raises(ValueError, match="w must"):
            gabor_fig.draw_field_fits(ax, w[:1], fg, fb)
    finally:
        plt.close(fig)
