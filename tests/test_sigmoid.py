"""Closed forms of localization.theory.sigmoid against Monte Carlo, quadrature and special cases."""

import math

import numpy as np
import pytest
import scipy.integrate
import scipy.special

from localization.data import family_task
from localization.experiments import sigmoid as SX
from localization.theory import sigmoid as S


def _quad(f, s2, b):
    s = math.sqrt(s2)
    val, _ = scipy.integrate.quad(
        lambda z: f(z + b) * math.exp(-z * z / (2 * s2)) / (s * math.sqrt(2 * math.pi)), -12 * s, 12 * s
    )
    return val


@pytest.mark.parametrize(("s2", "b", "c"), [(0.7, 0.4, S.DEFAULT_C), (2.0, -1.1, 1.0), (0.05, 2.0, 0.3)])
def test_single_neuron_moments_match_quadrature(s2, b, c):
    def slope(u):
        return 2 * c / math.sqrt(math.pi) * math.exp(-c * c * u * u)

    assert S.mean_slope(s2, b, c) == pytest.approx(_quad(slope, s2, b), rel=1e-8)
    assert S.mean_output_slope(s2, b, c) == pytest.approx(_quad(lambda u: math.erf(c * u) * slope(u), s2, b), rel=1e-7)


def test_zero_variance_limit_is_pointwise():
    b = np.array([-1.3, 0.0, 0.8])
    sl = math.sqrt(2 / math.pi) * np.exp(-b * b / 2)
    np.testing.assert_allclose(S.mean_slope(0.0, b), sl, rtol=1e-14)
    np.testing.assert_allclose(S.mean_output_slope(0.0, b), scipy.special.erf(b / math.sqrt(2)) * sl, rtol=1e-14)


@pytest.mark.slow
def test_cross_term_monte_carlo_and_diagonal_case():
    rng = np.random.default_rng(0)
    s11, skk, s1k, b1, bk = 0.8, 1.3, 0.6, 0.5, -0.3
    h = rng.standard_normal((2_000_000, 2)) @ np.linalg.cholesky([[s11, s1k], [s1k, skk]]).T
    mc = scipy.special.erf((h[:, 1] + bk) / math.sqrt(2)) * math.sqrt(2 / math.pi) * np.exp(-0.5 * (h[:, 0] + b1) ** 2)
    assert abs(S.cross_output_slope(s11, skk, s1k, b1, bk) - mc.mean()) < 5 * mc.std() / math.sqrt(mc.size)
    # k = 1: the pair is one variable, so the cross term is the self term B
    assert S.cross_output_slope(0.9, 0.9, 0.9, 0.4, 0.4) == pytest.approx(S.mean_output_slope(0.9, 0.4), rel=1e-12)
    # the notes' printed cross term is not the expectation (extra 1/s11 in the b1 coefficient)
    assert abs(S.notes001_cross_term(s11, skk, s1k, b1, bk) - mc.mean()) > 10 * mc.std() / math.sqrt(mc.size)


def test_bias_drift_at_zero_and_notes_eq42_convention():
    s1, s0 = np.array([0.3, 1.5]), np.array([1.5, 0.3])
    want = (1 / np.sqrt(1 + s1) - 1 / np.sqrt(1 + s0)) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(S.bias_drift(s1, s0, 0.0), want, rtol=1e-13)
    assert S.bias_drift(1.0, 1.0, 0.0) == 0.0
    # Eq. (42) holds for sigma = erf and labels 0/1, not for the stated erf(./sqrt2) and +-1
    for b in (-0.7, 0.0, 0.3):
        assert S.notes001_eq42(0.5, 1.5, b) == pytest.approx(
            S.bias_drift(0.5, 1.5, b, labels=(0.0, 1.0), c=1.0), rel=1e-12
        )
        assert abs(S.notes001_eq42(0.5, 1.5, b) - S.bias_drift(0.5, 1.5, b)) > 0.05


def test_committee_reduces_to_single_neuron_and_is_symmetric():
    task = family_task("NLGP", 0.01)
    c0, c1 = task.covariances(12)
    rng = np.random.default_rng(1)
    w = rng.standard_normal((1, 12)) / math.sqrt(12)
    got = S.committee_bias_drift(w, np.array([0.2]), c0, c1)
    assert got[0] == pytest.approx(S.bias_drift(w[0] @ c1 @ w[0], w[0] @ c0 @ w[0], 0.2), rel=1e-12)
    W = rng.standard_normal((3, 12)) / math.sqrt(12)
    # at b = 0 every cross term vanishes: each neuron drifts as alone
    d = S.committee_bias_drift(W, np.zeros(3), c0, c1)
    s1, s0 = np.einsum("ki,ij,kj->k", W, c1, W), np.einsum("ki,ij,kj->k", W, c0, W)
    np.testing.assert_allclose(d, S.bias_drift(s1, s0, 0.0), rtol=1e-12)


@pytest.mark.slow
def test_committee_monte_carlo():
    rng = np.random.default_rng(2)
    N, K = 6, 3
    A = rng.standard_normal((N, N))
    c0 = A @ A.T / N + np.eye(N) * 0.5
    B = rng.standard_normal((N, N))
    c1 = B @ B.T / N + np.eye(N) * 0.2
    W, b = rng.standard_normal((K, N)) / math.sqrt(N), np.array([0.3, -0.5, 0.1])
    num = 1_000_000
    tot = np.zeros(K)
    for y, c in ((1.0, c1), (-1.0, c0)):
        x = rng.standard_normal((num, N)) @ np.linalg.cholesky(c).T
        h = x @ W.T + b
        yhat = scipy.special.erf(h / math.sqrt(2)).mean(axis=1)
        tot += 0.5 * ((y - yhat)[:, None] * math.sqrt(2 / math.pi) * np.exp(-h * h / 2)).mean(axis=0)
    np.testing.assert_allclose(S.committee_bias_drift(W, b, c0, c1), tot, atol=3e-3)


def test_spread_probability_closed_form():
    assert S.spread_probability(1.0, 1.0) == pytest.approx(0.5, abs=1e-15)
    assert S.spread_probability(3.0, 0.0) == 1.0
    rng = np.random.default_rng(3)
    z1, z0 = math.sqrt(2.5) * rng.standard_normal(2_000_000), rng.standard_normal(2_000_000)
    p = (np.abs(z1) > np.abs(z0)).mean()
    assert abs(S.spread_probability(2.5, 1.0) - p) < 5 * math.sqrt(p * (1 - p) / z1.size)


def test_rayleigh_optimum_on_circulant_is_constant_for_longer_class_one():
    c0, c1 = family_task("NLGP", 0.01).covariances(20)
    ratio, w = S.rayleigh_optimum(c0, c1)
    np.testing.assert_allclose(np.abs(w), np.full(20, 1 / math.sqrt(20)), atol=1e-8)
    assert ratio == pytest.approx(w @ c1 @ w / (w @ c0 @ w), rel=1e-10)
    other = np.random.default_rng(4).standard_normal((50, 20))
    assert np.all(np.einsum("ki,ij,kj->k", other, c1, other) / np.einsum("ki,ij,kj->k", other, c0, other) < ratio)


def test_start_losses_monte_carlo_and_limits():
    assert S.erf_start_loss(0.0, 0.0) == 2.0
    assert S.relu_start_loss(0.0, 0.0) == 1.0
    rng = np.random.default_rng(5)
    s1, s0 = 0.6, 1.4
    z1, z0 = math.sqrt(s1) * rng.standard_normal(2_000_000), math.sqrt(s0) * rng.standard_normal(2_000_000)
    e = (scipy.special.erf(z1 / math.sqrt(2)) - 1) ** 2 + (scipy.special.erf(z0 / math.sqrt(2)) + 1) ** 2
    r = (np.maximum(z1, 0) - 1) ** 2 + np.maximum(z0, 0) ** 2
    for f, t in ((S.erf_start_loss, e), (S.relu_start_loss, r)):
        assert abs(f(s1, s0) - t.mean()) < 5 * t.std() / math.sqrt(t.size)


@pytest.mark.slow
def test_monte_carlo_helpers_agree_with_gaussian_closed_forms():
    from localization import book

    task = family_task("NLGP", 0.01)
    c0, c1 = task.covariances(16)
    w = np.cos(2 * np.pi * np.arange(16) / 16) * 0.4
    s1, s0 = w @ c1 @ w, w @ c0 @ w
    m, se = SX.monte_carlo_bias_drift(book.key("test_sigmoid", "drift"), task, w, 0.1, num=40_000)
    assert abs(m - S.bias_drift(s1, s0, 0.1)) < 5 * se
    p, pse = SX.monte_carlo_spread(book.key("test_sigmoid", "spread"), task, w[None], num=40_000)
    assert abs(p[0] - S.spread_probability(s1, s0)) < 5 * pse[0]
    for act, f in (("erf", S.erf_start_loss), ("relu", S.relu_start_loss)):
        m, se = SX.monte_carlo_start_loss(book.key("test_sigmoid", act), task, w, act, num=40_000)
        assert abs(m - f(s1, s0)) < 5 * se


def test_input_validation():
    with pytest.raises(ValueError, match="s2"):
        S.mean_slope(-1.0, 0.0)
    with pytest.raises(ValueError, match="b"):
        S.mean_slope(1.0, float("nan"))
    with pytest.raises(ValueError, match="c"):
        S.mean_slope(1.0, 0.0, c=0.0)
    with pytest.raises(ValueError, match="s1k"):
        S.cross_output_slope(1.0, 1.0, 2.0, 0.0, 0.0)
    with pytest.raises(TypeError, match="labels"):
        S.bias_drift(1.0, 1.0, 0.0, labels=[0, 1])
    with pytest.raises(ValueError, match="both"):
        S.spread_probability(0.0, 0.0)
    with pytest.raises(ValueError, match="W"):
        S.committee_bias_drift(np.ones((2, 3)), np.zeros(2), np.eye(4), np.eye(4))
    with pytest.raises(ValueError, match="b"):
        S.committee_bias_drift(np.ones((2, 4)), np.zeros(3), np.eye(4), np.eye(4))
    with pytest.raises(ValueError, match="cov0"):
        S.rayleigh_optimum(np.zeros((3, 3)), np.eye(3))
    with pytest.raises(TypeError, match="task"):
        SX.monte_carlo_spread(None, "NLGP", np.ones((1, 4)))
    with pytest.raises(ValueError, match="num"):
        SX.monte_carlo_bias_drift(None, family_task("NLGP", 1.0), np.ones(4), 0.0, num=1)
    with pytest.raises(ValueError, match="activation"):
        SX.monte_carlo_start_loss(None, None, np.ones(4), "tanh")


def test_committee_linearisation_matches_finite_differences():
    c0, c1 = family_task("NLGP", 1.0).covariances(10)
    W = np.random.default_rng(6).standard_normal((4, 10)) / math.sqrt(10)
    D, M = S.committee_bias_linearisation(W, c0, c1)
    eps = 1e-5
    for j in range(4):
        e = np.zeros(4)
        e[j] = eps
        col = (S.committee_bias_drift(W, e, c0, c1) - S.committee_bias_drift(W, -e, c0, c1)) / (2 * eps)
        np.testing.assert_allclose(-col, M[:, j], rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(D, S.committee_bias_drift(W, np.zeros(4), c0, c1), rtol=0, atol=0)


def test_covariances_that_are_not_positive_semidefinite_are_refused():
    """The sigmoid flows refuse a non-PSD covariance, naming it and its smallest eigenvalue (-0.8)."""
    bad = np.full((3, 3), -0.9) + 1.9 * np.eye(3)  # unit diagonal; eigenvalue 1 - 2(0.9) on (1, 1, 1)
    assert np.linalg.eigvalsh(bad)[0] == pytest.approx(-0.8)
    W = np.array([[1.0, 0.5, -0.2], [0.3, -1.0, 0.4]])
    for cov0, cov1, name in ((bad, np.eye(3), "cov0"), (np.eye(3), bad, "cov1")):
        msg = f"{name} must be positive semi-definite .* smallest eigenvalue -0.8 "
        with pytest.raises(ValueError, match=msg):
            S.committee_bias_drift(W, np.zeros(2), cov0, cov1)
        with pytest.raises(ValueError, match=msg):
            S.committee_bias_linearisation(W, cov0, cov1)
        with pytest.raises(ValueError, match=msg):
            S.rayleigh_optimum(cov0, cov1)
