"""The specialisation chapter's library helpers: tiling measures and its two figures."""

import jax
import matplotlib
import numpy as np
import pytest

from localization import field_analysis
from localization.experiments import specialisation as spec
from localization.figures import specialisation as spec_fig

matplotlib.use("Agg")

N = 40


def _measurements(fields):
    fields = np.asarray(fields, np.float64)
    share = field_analysis.localization_share(fields, N)
    localized = field_analysis.is_localized(fields, N)
    bias = np.where(localized, -1.0, 1.0)
    mode = field_analysis.dominant_frequency(fields, exclude_mean=True)
    return spec.Measurements(bias, share, localized, mode, None, fields)


def _bump(site, sign=1.0):
    i = np.arange(N)
    return sign * np.exp(-0.5 * (((i - site + N / 2) % N - N / 2) / 1.5) ** 2)


def _population():
    wave = np.cos(2 * np.pi * 9 * np.arange(N) / N)
    # network 0: four evenly spaced signed translates of one bump and a wave
    net0 = [_bump(0), _bump(10, -1), _bump(20), _bump(30, -1), wave]
    # network 1: two bumps of opposite sign at one site and three waves
    net1 = [_bump(5), _bump(5, -1), wave, wave, wave]
    return _measurements([net0, net1])


def test_tiling_of_signed_translates():
    m = _population()
    rows = spec.tiling(m)
    assert rows.shape == (2, 2)
    # signed translates of one bump: similarity 1; evenly spaced peaks: gap CV 0
    assert np.allclose(rows[:, 0], 1.0)
    assert abs(rows[0, 1]) < 1e-12
    # two peaks at one site: gaps 0 and N, CV 1
    assert abs(rows[1, 1] - 1.0) < 1e-12


def test_tiling_skips_networks_with_fewer_than_two_localized_fields():
    wave = np.cos(2 * np.pi * 9 * np.arange(N) / N)
    m = _measurements([[_bump(0), wave, wave], [_bump(0), _bump(20), wave]])
    assert spec.tiling(m).shape == (1, 2)
    with pytest.raises(TypeError, match="Measurements"):
        spec.tiling(np.zeros((2, 3, N)))


def test_null_gap_cv_is_the_mean_over_uniform_sites():
    key = jax.random.PRNGKey(3)
    sites = np.asarray(jax.random.randint(key, (200, 5), 0, N))
    expected = np.mean([field_analysis.gap_cv(row, N) for row in sites])
    assert spec.null_gap_cv(key, 5, N, 200) == pytest.approx(expected, abs=1e-15)
    # random sites are far from even: CV near 1 for several peaks
    assert 0.5 < spec.null_gap_cv(key, 8, N) < 1.2
    with pytest.raises(ValueError, match="m"):
        spec.null_gap_cv(key, 0, N)
    with pytest.raises(ValueError, match="draws"):
        spec.null_gap_cv(key, 3, N, 0)


def test_figures_draw_and_validate():
    m = _population()
    fig = spec_fig.draw_populations(m, network=1)
    assert len(fig.axes) == 2
    assert len(fig.axes[0].lines) == 5
    with pytest.raises(ValueError, match="network"):
        spec_fig.draw_populations(m, network=2)
    fig = spec_fig.draw_reduced(_bump(3, -1), np.cos(2 * np.pi * 9 * np.arange(N) / N), m, count=2)
    assert [len(ax.lines) for ax in fig.axes] == [3, 3]
    with pytest.raises(ValueError, match="w_plus"):
        spec_fig.draw_reduced(_bump(3), np.ones(N - 1), m)
    with pytest.raises(TypeError, match="Measurements"):
        spec_fig.draw_reduced(_bump(3), _bump(4), None)
