"""Library identities behind book/sigmoid.md, moved out of the chapter's check cells.

The chapter keeps the checks of the notes' statements and of its own findings; here are the
identities of the library itself (one implementation against another, shapes, validation).
"""

import math

import matplotlib
import numpy as np
import pytest

from localization.data import family_task
from localization.experiments import sigmoid as sgx
from localization.figures import sigmoid as sig_fig
from localization.theory import sigmoid as sg

matplotlib.use("Agg")

N = 40
XI = (1.0, 3.0)


@pytest.fixture(scope="module")
def covariances():
    return family_task("Gaussian clone of NLGP", 0.01, xi=XI).covariances(N)


def test_linearisation_is_minus_the_jacobian_of_the_committee_flow(covariances):
    c0, c1 = covariances
    W = np.random.default_rng(3).standard_normal((10, N)) / math.sqrt(N)
    D, M = sg.committee_bias_linearisation(W, c0, c1)
    np.testing.assert_allclose(D, sg.committee_bias_drift(W, np.zeros(10), c0, c1), rtol=1e-14)
    eps = 1e-5
    for j in (0, 3, 9):
        e = np.zeros(10)
        e[j] = eps
        col = (sg.committee_bias_drift(W, e, c0, c1) - sg.committee_bias_drift(W, -e, c0, c1)) / (2 * eps)
        np.testing.assert_allclose(-col, M[:, j], rtol=1e-6, atol=1e-10)


def test_start_losses_at_zero_weights():
    assert sg.erf_start_loss(0.0, 0.0) == 2.0
    assert sg.relu_start_loss(0.0, 0.0) == 1.0


def test_class_variances_is_the_quadratic_form(covariances):
    c0, _ = covariances
    W = np.random.default_rng(0).standard_normal((5, N))
    got = sg.class_variances(W, c0)
    assert got.shape == (5,)
    np.testing.assert_allclose(got, [w @ c0 @ w for w in W], rtol=1e-13)
    assert sg.class_variances(W[0], c0).shape == (1,)
    with pytest.raises(ValueError, match="cov"):
        sg.class_variances(W, c0[:-1, :-1])


@pytest.mark.parametrize(("s", "t", "b"), [(0.7, 0.3, 0.4), (2.0, 0.1, -1.3)])
def test_notes_printed_committee_terms(s, t, b):
    right = 0.5 * (sg.mean_slope(s, b) - sg.mean_slope(t, b))
    assert sg.notes001_label_term(s, t, b) == pytest.approx(2 * right, rel=1e-12)
    assert math.sqrt(2 / math.pi) * sg.notes001_self_term(s, b) == pytest.approx(
        sg.mean_output_slope(s, b), rel=1e-12, abs=1e-15
    )
    with pytest.raises(ValueError, match="s1sq"):
        sg.notes001_self_term(-1.0, b)


def test_gaussian_expectation_moments():
    assert sgx.gaussian_expectation(lambda u: u, 2.0, 0.7) == pytest.approx(0.7, abs=1e-12)
    assert sgx.gaussian_expectation(lambda u: u * u, 2.0, 0.7) == pytest.approx(2.49, rel=1e-10)
    with pytest.raises(ValueError, match="s2"):
        sgx.gaussian_expectation(lambda u: u, 0.0, 0.0)
    with pytest.raises(TypeError, match="f"):
        sgx.gaussian_expectation(1.0, 1.0, 0.0)


def test_quadratures_match_the_closed_forms():
    args = (0.8, 1.3, 0.6, 0.5, -0.3)
    assert sgx.cross_term_quadrature(*args) == pytest.approx(float(sg.cross_output_slope(*args)), abs=1e-8)
    with pytest.raises(ValueError, match="s1k"):
        sgx.cross_term_quadrature(0.8, 1.3, 2.0, 0.5, -0.3)
    assert sgx.notes004_spread_integral(1.7, 0.6) == pytest.approx(float(sg.spread_probability(1.7**2, 0.36)), abs=1e-9)
    for s1, s0 in [(0.4, 1.1), (2.0, 0.5)]:
        erf = sgx.start_loss_quadrature(s1, s0, "erf")
        assert erf == pytest.approx(float(sg.erf_start_loss(s1, s0)), abs=1e-9)
        assert sgx.start_loss_quadrature(s1, s0, "relu") == pytest.approx(float(sg.relu_start_loss(s1, s0)), abs=1e-7)
        assert sgx.folded_start_loss_quadrature(s1, s0) == pytest.approx(erf, abs=1e-7)
    with pytest.raises(ValueError, match="activation"):
        sgx.start_loss_quadrature(1.0, 1.0, "tanh")


def test_spread_fields_are_unit_norm():
    f = sgx.spread_fields(N)
    assert f.shape == (3, N)
    np.testing.assert_allclose(np.linalg.norm(f, axis=1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(f[0], 1 / math.sqrt(N))
    assert np.argmax(f[1]) == N // 2
    with pytest.raises(ValueError, match="n"):
        sgx.spread_fields(1)


def test_drift_figure(covariances):
    c0, c1 = covariances
    fig = sig_fig.drift_figure(c0, c1, XI)
    assert len(fig.axes) == 2
    assert len(fig.axes[0].lines) == 5  # 2 fields x (flow, Eq. (42)) + the zero line
    with pytest.raises(TypeError, match="xi"):
        sig_fig.drift_figure(c0, c1, [1.0, 3.0])
