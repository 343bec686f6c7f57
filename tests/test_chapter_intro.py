"""Plumbing of the intro chapter (``book/intro.md``) moved into ``figures.intro``, as unit tests."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

from localization.figures import intro


def test_gain_stops_hold_the_figure_gains():
    assert set(intro.GAINS.values()) <= set(intro.GAIN_STOPS)
    assert list(intro.GAIN_STOPS) == sorted(intro.GAIN_STOPS)


@pytest.mark.parametrize("name", ["batch", "steps", "checkpoints"])
def test_explore_gain_validates_settings(name):
    with pytest.raises(ValueError, match=name):
        intro.explore_gain(None, jnp.zeros(intro.N), **{name: 0})


def test_explore_gain_validates_w0():
    with pytest.raises(ValueError, match="w0"):
        intro.explore_gain(None, jnp.zeros(intro.N + 1))
