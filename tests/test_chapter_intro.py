"""Plumbing of the intro chapter (``book/intro.md``): its runs (``experiments.intro``) and its figure
module (``figures.intro``), as unit tests."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from localization.experiments import intro as experiment
from localization.figures import intro


def test_gain_stops_hold_the_figure_gains():
    assert set(intro.GAINS.values()) <= set(intro.GAIN_STOPS)
    assert list(intro.GAIN_STOPS) == sorted(intro.GAIN_STOPS)


@pytest.mark.parametrize("name", ["batch", "steps", "checkpoints"])
def test_explore_gain_validates_settings(name):
    with pytest.raises(ValueError, match=name):
        intro.explore_gain(None, jnp.zeros(experiment.N), **{name: 0})


def test_explore_gain_validates_w0():
    with pytest.raises(ValueError, match="w0"):
        intro.explore_gain(None, jnp.zeros(experiment.N + 1))


def test_gain_sweep_validates_its_arguments():
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="w0"):
        experiment.gain_sweep(key, jnp.zeros(experiment.N + 1), [1.0])
    with pytest.raises(ValueError, match="gains"):
        experiment.gain_sweep(key, jnp.zeros(experiment.N), [])
    with pytest.raises(ValueError, match=r"gains\[1\]"):
        experiment.gain_sweep(key, jnp.zeros(experiment.N), [1.0, -2.0])
    with pytest.raises(TypeError, match="settings"):
        experiment.gain_sweep(key, jnp.zeros(experiment.N), [1.0], {"batch": 10})


def test_phenomenon_validates_its_gains():
    key = jax.random.key(0)
    with pytest.raises(TypeError, match="gains"):
        experiment.phenomenon(key, key, [100.0])
    with pytest.raises(ValueError, match="gains"):
        experiment.phenomenon(key, key, {})


def test_gain_sweep_trains_every_gain_from_the_same_start():
    w0 = jnp.full(experiment.N, 0.01)
    settings = experiment.GainSweepSettings(batch=8, steps=3, checkpoints=2)
    runs = experiment.gain_sweep(jax.random.key(1), w0, [0.1, 10.0], settings)
    assert runs.weights.shape == (2, 2, experiment.N)
    assert jnp.array_equal(runs.weights[0, 0], runs.weights[1, 0])
