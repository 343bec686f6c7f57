"""Tests of localization.theory.hypercube: f(w) = E[1(<w, X> >= 0) X] on {-1, +1}^n (notes 002)."""

from __future__ import annotations

import itertools
import math

import jax
import numpy as np
import pytest

from localization.data import covariance, ising_correlation
from localization.experiments import hypercube as HX
from localization.theory import hypercube as H
from localization.theory import hypercube_laws as HL

RNG = np.random.default_rng(20)


def _biased_law(n, seed=0):
    """A generic law with no symmetry (random positive weights)."""
    w = np.random.default_rng(seed).uniform(0.1, 1.0, 2**n)
    return w / w.sum()


def _laws(n):
    laws = {"uniform": HL.uniform_law(n), "ising": HL.ising_ring_law(0.7, n), "biased": _biased_law(n)}
    if n <= 3:
        laws["nlgp"] = HL.nlgp_limit_law(1.5, n)
    return laws


def _brute_f(w, prob):
    """Direct loop over vertices (independent of the vectorised code)."""
    n = len(w)
    out = np.zeros(n)
    for k, x in enumerate(itertools.product([1.0, -1.0], repeat=n)):
        x = np.array(x[::-1])  # row k of vertices(n): x_i = 1 - 2 bit_i(k)
        if sum(wi * xi for wi, xi in zip(w, x, strict=True)) >= 0:
            out += prob[k] * x
    return out


# ---------------------------------------------------------------- laws and the enumeration itself
def test_vertices_ordering_and_brute_force():
    x = HL.vertices(3)
    assert x.shape == (8, 3) and np.all(x[0] == 1) and np.all(x[7] == -1) and np.all(x[1] == [-1, 1, 1])
    for n in (2, 4, 5):
        for p in _laws(n).values():
            w = RNG.normal(size=n)
            np.testing.assert_allclose(H.threshold_mean(w, p), _brute_f(w, p), atol=1e-15)


def test_batching_over_leading_axes():
    p = HL.ising_ring_law(0.4, 5)
    w = RNG.normal(size=(3, 4, 5))
    f = H.threshold_mean(w, p)
    assert f.shape == (3, 4, 5)
    np.testing.assert_allclose(f[2, 1], H.threshold_mean(w[2, 1], p), atol=0)


@pytest.mark.parametrize("n", [2, 3, 4, 7])
def test_ising_ring_matches_transfer_matrix(n):
    J = 0.8
    x = HL.vertices(n)
    p = HL.ising_ring_law(J, n)
    for d in range(n):
        corr = float(p @ (x[:, 0] * x[:, d]))
        t = math.tanh(J)
        assert corr == pytest.approx((t**d + t ** (n - d)) / (1 + t**n), abs=1e-13)
        assert corr == pytest.approx(float(ising_correlation(J, n, d)), abs=1e-13)


def test_sign_gaussian_exact_against_sheppard_and_monte_carlo():
    # E[sign Z_i sign Z_j] = (2/pi) arcsin(rho_ij) (Sheppard), checked on the 3-site exact law
    c = covariance(1.5, 3)
    p = HL.nlgp_limit_law(1.5, 3)
    x = HL.vertices(3)
    assert p.sum() == pytest.approx(1.0, abs=1e-14) and np.all(p > 0)
    for i, j in ((0, 1), (0, 2), (1, 2)):
        assert float(p @ (x[:, i] * x[:, j])) == pytest.approx(2 / np.pi * math.asin(c[i, j]), abs=1e-14)
    # Monte Carlo agrees within 5 standard errors (tolerance fixed before running)
    pm, se = HX.nlgp_limit_law_mc(jax.random.key(0), 1.5, 3, 400_000)
    assert np.all(np.abs(pm - p) <= 5 * se + 1e-12)


def test_nlgp_mc_law_is_sign_symmetric_and_shift_invariant():
    n = 5
    pm, se = HX.nlgp_limit_law_mc(jax.random.key(1), 1.2, n, 400_000)
    x = HL.vertices(n)
    idx = {tuple(v): k for k, v in enumerate(x)}
    flip = np.array([idx[tuple(-v)] for v in x])
    shift = np.array([idx[tuple(np.roll(v, 1))] for v in x])
    bound = 5 * np.sqrt(2) * np.maximum(se, 1 / 400_000)
    assert np.all(np.abs(pm - pm[flip]) <= bound) and np.all(np.abs(pm - pm[shift]) <= bound)


def test_validation():
    with pytest.raises(ValueError, match="n must be <= 16"):
        HL.uniform_law(17)
    with pytest.raises(ValueError, match="sum to 1"):
        H.threshold_mean(np.ones(2), np.ones(4))
    with pytest.raises(ValueError, match="shape"):
        H.threshold_mean(np.ones(3), np.ones(4) / 4)
    with pytest.raises(ValueError, match="n must be <= 3"):
        HL.nlgp_limit_law(1.0, 4)
    with pytest.raises(ValueError, match="dominance"):
        H.dominant_closed_form(np.array([1.0, 0.6, 0.5]), HL.uniform_law(3))
    with pytest.raises(ValueError):
        H.threshold_mean(np.array([1.0, np.nan]), HL.uniform_law(2))
    with pytest.raises(TypeError):
        HL.vertices(2.0)


# ---------------------------------------------------------------- properties of f
@pytest.mark.parametrize("n", [3, 4, 6])
def test_scale_invariance_and_euler_identity(n):
    for p in _laws(n).values():
        w = RNG.normal(size=(20, n))
        for c in (1e-3, 0.5, 7.0):
            np.testing.assert_allclose(H.threshold_mean(c * w, p), H.threshold_mean(w, p), atol=0)
        # E ReLU(<w, X>) = <w, f(w)> (degree-1 homogeneity), exactly
        np.testing.assert_allclose(H.expected_relu(w, p), np.sum(w * H.threshold_mean(w, p), -1), atol=1e-14)


def test_sign_relation_with_ties():
    """f(w) + f(-w) = E X + E[1(<w, X> = 0) X]; f is odd for sign-symmetric laws, not in general."""
    n = 4
    grid = np.array(list(itertools.product([-2.0, -1.0, 0.0, 1.0, 2.0], repeat=n)))[1:]  # many ties
    for p in _laws(n).values():
        _, tie = H.tie_mean(grid, p)
        lhs = H.threshold_mean(grid, p) + H.threshold_mean(-grid, p)
        np.testing.assert_allclose(lhs, H.product_moment(p, n, ()) + tie, atol=1e-15)
    # sign-symmetric law (Ising, no field): odd even where ties carry mass
    p = HL.ising_ring_law(0.5, n)
    mass, _ = H.tie_mean(grid, p)
    assert mass.max() > 0.3
    np.testing.assert_allclose(H.threshold_mean(-grid, p), -H.threshold_mean(grid, p), atol=1e-15)
    # a law with E X = 0 but a biased tie set: f(-w) != -f(w) exactly at tied w
    x = HL.vertices(3)
    q = np.zeros(8)  # mass 1/4 on (1,-1,1), (-1,1,1), (1,1,-1), (-1,-1,-1): E X = 0, not sign-symmetric
    for v in ((1, -1, 1), (-1, 1, 1), (1, 1, -1), (-1, -1, -1)):
        q[np.flatnonzero(np.all(x == v, axis=1))] = 0.25
    np.testing.assert_allclose(q @ x, 0.0, atol=1e-15)
    w = np.array([1.0, 1.0, 0.0])
    np.testing.assert_allclose(H.threshold_mean(w, q) + H.threshold_mean(-w, q), [0, 0, 0.5], atol=1e-15)
    w = np.array([1.0, 0.5, 0.2])  # no tie: odd
    np.testing.assert_allclose(H.threshold_mean(-w, q), -H.threshold_mean(w, q), atol=1e-15)


def _signed_permutation(perm, signs):
    n = len(perm)
    a = np.zeros((n, n))
    a[np.arange(n), perm] = signs
    return a


def _transformed_law(p, a):
    """Law of A X when X ~ p (A a signed permutation)."""
    x = HL.vertices(a.shape[0])
    idx = {tuple(v): k for k, v in enumerate(x)}
    q = np.zeros_like(p)
    for k, v in enumerate(x):
        q[idx[tuple(a @ v)]] += p[k]
    return q


@pytest.mark.parametrize("n", [3, 5])
def test_equivariance_under_symmetries(n):
    """For A X ~ X (A a signed permutation, so A^{-T} = A): f(A w) = A^{-T} f(w)."""
    p = HL.ising_ring_law(0.6, n) if n > 3 else HL.nlgp_limit_law(1.5, n)
    shift = _signed_permutation(np.roll(np.arange(n), 1), np.ones(n))
    reflect = _signed_permutation(np.arange(n)[::-1], np.ones(n))
    flip = -np.eye(n)
    grid = np.concatenate([RNG.normal(size=(30, n)), RNG.integers(-2, 3, size=(30, n)).astype(float)])
    for a in (shift, reflect, flip, shift @ reflect):
        np.testing.assert_allclose(_transformed_law(p, a), p, atol=1e-15)  # a symmetry of p
        lhs = H.threshold_mean(grid @ a.T, p)
        rhs = H.threshold_mean(grid, p) @ np.linalg.inv(a)  # rows: A^{-T} f
        np.testing.assert_allclose(lhs, rhs, atol=1e-15)
    # not a symmetry of the biased law: equivariance fails
    q = _biased_law(n)
    lhs = H.threshold_mean(grid @ shift.T, q)
    assert not np.allclose(lhs, H.threshold_mean(grid, q) @ shift.T)


def test_symmetry_convention_for_non_orthogonal_a_on_gaussian():
    """Gaussian f(w) = Sigma w / sqrt(2 pi w'Sigma w): f(Aw) = A^{-T} f(w) needs A^T X ~ X, not A X ~ X."""
    rng = np.random.default_rng(3)
    n = 3
    s = covariance(1.3, n)
    ev, u = np.linalg.eigh(s)
    root, iroot = u @ np.diag(ev**0.5) @ u.T, u @ np.diag(ev**-0.5) @ u.T
    r, _ = np.linalg.qr(rng.normal(size=(n, n)))
    a = root @ r @ iroot  # A Sigma A^T = Sigma: A X ~ X, A not orthogonal
    np.testing.assert_allclose(a @ s @ a.T, s, atol=1e-12)
    assert not np.allclose(a @ a.T, np.eye(n), atol=1e-3)

    def f(w, cov):
        return cov @ w / np.sqrt(2 * np.pi * w @ cov @ w)

    w = rng.normal(size=n)
    # with A X ~ X the correct statement is f(A^{-T} w) = A f(w); the notes' form fails
    ait = np.linalg.inv(a).T
    np.testing.assert_allclose(f(ait @ w, s), a @ f(w, s), atol=1e-12)
    assert not np.allclose(f(a @ w, s), ait @ f(w, s), atol=1e-3)
    # with B = A^{-T} (so B^T X = A^{-1} X ~ X) the notes' form holds for B
    np.testing.assert_allclose(f(ait @ w, s), np.linalg.inv(ait).T @ f(w, s), atol=1e-12)


def test_jacobian_is_zero_off_the_tie_hyperplanes():
    """f is locally constant where no <w, x> = 0: finite differences vanish, so J w = 0 = w^T J."""
    n = 5
    p = HL.ising_ring_law(0.5, n)
    x = HL.vertices(n)
    for _ in range(20):
        w = RNG.normal(size=n)
        gap = np.abs(x @ w).min()
        assert gap > 0
        h = 0.4 * gap / np.sqrt(n)
        for j in range(n):
            e = np.eye(n)[j]
            np.testing.assert_array_equal(H.threshold_mean(w + h * e, p), H.threshold_mean(w, p))
    # across a tie hyperplane f jumps: not differentiable there
    w = np.array([1.0, 1.0, 0.0, 0.0, 0.0])
    eps = 1e-6 * np.array([0.0, -1.0, 0.0, 0.0, 0.0])
    assert np.abs(H.threshold_mean(w + eps, p) - H.threshold_mean(w - eps, p)).max() > 0.1


# ---------------------------------------------------------------- analytical examples (notes 002 §3)
@pytest.mark.parametrize("n", [3, 4, 5])
def test_single_and_imbalanced_bumps(n):
    for p in _laws(n).values():
        sigma_cols = [H.product_moment(p, n, (i,)) for i in range(n)]
        mean = H.product_moment(p, n, ())
        e = np.eye(n)
        for w, k, s in ((e[1], 1, 1), (-e[0], 0, -1), (2.0 * e[0] + e[2], 0, 1), (2.0 * e[0] - e[2], 0, 1)):
            expected = 0.5 * (mean + s * sigma_cols[k])
            np.testing.assert_allclose(H.threshold_mean(w, p), expected, atol=1e-15)
            np.testing.assert_allclose(H.dominant_closed_form(w, p), expected, atol=1e-15)
    # notes' constants: f(e_i) = Sigma e_i (Eq. (8)) is off by the factor 1/2 for symmetric laws
    p = HL.ising_ring_law(0.7, n)
    np.testing.assert_allclose(H.threshold_mean(np.eye(n)[0], p), 0.5 * H.product_moment(p, n, (0,)), atol=1e-15)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_balanced_bumps(n):
    for name, p in _laws(n).items():
        for si, sj, c in ((1, 1, 1.0), (1, -1, 3.0), (-1, -1, 0.2)):
            w = np.zeros(n)
            w[0], w[-1] = c * si, c * sj
            np.testing.assert_allclose(H.threshold_mean(w, p), H.balanced_closed_form(w, p), atol=1e-15)
        if name != "biased":  # symmetric laws: f(e_i + e_j) = Sigma (e_i + e_j) / 4, not Sigma (e_i + e_j)
            w = np.zeros(n)
            w[0] = w[-1] = 1.0
            sig = H.product_moment(p, n, (0,)) + H.product_moment(p, n, (n - 1,))
            np.testing.assert_allclose(H.threshold_mean(w, p), sig / 4, atol=1e-15)


@pytest.mark.parametrize("n", [3, 4, 6])
def test_three_bumps_all_regimes(n):
    for p in _laws(n).values():
        for mags in ((3.0, 1.5, 1.0), (2.5, 1.5, 1.0), (1.5, 1.2, 1.0), (1.0, 1.0, 1.0), (1.1, 0.6, 0.45)):
            for signs in itertools.product([1, -1], repeat=3):
                w = np.zeros(n)
                w[[0, 1, n - 1]] = np.array(mags) * signs
                np.testing.assert_allclose(H.threshold_mean(w, p), H.three_bump_closed_form(w, p), atol=1e-15)


def test_three_bumps_majority_counterexample_to_extracting_the_maximum():
    """alpha > beta > 1 but alpha < beta + 1: f = (Sigma(e_i + e_j + e_k) - M_ijk)/4 (E X = 0), not ~ Sigma e_i."""
    n = 3
    w = np.array([1.5, 1.2, 1.0])
    f = H.threshold_mean(w, HL.uniform_law(n))
    np.testing.assert_allclose(f, [0.25, 0.25, 0.25], atol=1e-15)  # no coordinate singled out
    p = HL.ising_ring_law(0.7, n)
    sig = sum(H.product_moment(p, n, (i,)) for i in range(n))
    f = H.threshold_mean(w, p)
    np.testing.assert_allclose(f, (sig - H.product_moment(p, n, (0, 1, 2))) / 4, atol=1e-15)
    np.testing.assert_allclose(f, f[0], atol=1e-15)  # ring symmetry: all three entries equal
    assert np.abs(f - 0.5 * H.product_moment(p, n, (0,))).max() > 0.05  # exact gap 0.0514 (J = 0.7)


# ---------------------------------------------------------------- "f extracts the maximum of w"
@pytest.mark.parametrize("n", [4, 6, 8])
def test_dominance_implies_extraction(n):
    for p in _laws(n).values():
        w = RNG.normal(size=(400, n))
        w[:, 0] = np.sign(w[:, 0]) * (np.abs(w[:, 1:]).sum(axis=1) + RNG.uniform(1e-3, 1.0, 400))
        assert np.all(H.dominance_margin(w) > 0)
        f = H.threshold_mean(w, p)
        for row, fw in zip(w, f, strict=True):
            np.testing.assert_allclose(fw, H.dominant_closed_form(row, p), atol=1e-15)


def test_extraction_fails_without_dominance_random_w():
    """Random Gaussian w on n = 6: most violate dominance and f is not the dominant form there."""
    n = 6
    p = HL.uniform_law(n)
    w = np.random.default_rng(7).normal(size=(2000, n))
    margin = H.dominance_margin(w)
    f = H.threshold_mean(w, p)
    k = np.argmax(np.abs(w), axis=1)
    g = 0.5 * np.sign(w[np.arange(len(w)), k])[:, None] * np.eye(n)[k]  # (E X + s Sigma e_k)/2, uniform
    differs = np.abs(f - g).max(axis=1) > 1e-12
    assert np.all(~differs[margin > 0])
    assert differs[margin < 0].mean() > 0.99  # without dominance the identity fails almost always
    # but the argmax is still often the largest |f_i| (uniform law, where f_i = P(...) correlations)
    assert (np.argmax(np.abs(f), axis=1) == k).mean() > 0.5


def test_separation_gap_reduction():
    """Notes 002 Eq. (13): if sum_{tail} |w_i| < delta_head then f(w) = f(w_head)."""
    n = 6
    p = HL.ising_ring_law(0.5, n)
    rng = np.random.default_rng(11)
    used = 0
    for _ in range(300):
        w = rng.normal(size=n) * np.array([3.0, 2.0, 1.0, 0.3, 0.2, 0.1])
        for k in range(1, n):
            delta, tail = H.separation_gap(w, k)
            if tail < delta:
                head = np.zeros(n)
                order = np.argsort(-np.abs(w), kind="stable")[:k]
                head[order] = w[order]
                np.testing.assert_allclose(H.threshold_mean(w, p), H.threshold_mean(head, p), atol=1e-15)
                used += 1
    assert used > 100
    # delta_INT = max_x -<w, x>^2 = -delta^2 (the notes write -sqrt(delta))
    w = np.array([3.0, 2.0, 0.5])
    delta, _ = H.separation_gap(w, 3)
    assert max(-((x @ w) ** 2) for x in HL.vertices(3)) == pytest.approx(-(delta**2))


def test_notes_eq20_sum_over_coordinates_is_not_f():
    """Notes 002 Eq. (20) replaces the product over j in Eq. (19) by a sum; the result is not f.

    sum_j g_j(x) = sum_{x' in Theta} (n + <x, x'>)/2, so the right side of Eq. (20) equals
    (n |Theta| / 2) E X + Sigma s / 2 with s = sum_{x' in Theta} x', while f = sum_{x'} p(x') x'.
    """
    n = 4
    x = HL.vertices(n)
    w = np.array([1.3, -0.7, 0.4, 0.2])
    theta = x[x @ w >= 0]
    for p in _laws(n).values():
        g = np.array([[np.sum(theta[:, j] == v[j]) for j in range(n)] for v in x])  # g_j(x), (2^n, n)
        rhs = (p * g.sum(axis=1)) @ x
        sigma = (x * p[:, None]).T @ x
        s = theta.sum(axis=0)
        np.testing.assert_allclose(rhs, n * len(theta) / 2 * (p @ x) + sigma @ s / 2, atol=1e-13)
        assert np.abs(rhs - H.threshold_mean(w, p)).max() > 0.5


def test_largest_entry_of_f_for_exchangeable_laws_and_a_failure_on_the_ising_ring():
    """Swap pairing: if p is invariant under x_i <-> x_j and sign flips, |w_i| > |w_j| => |f_i| >= |f_j|.

    Pair x with x_i, x_j swapped: <w, x> grows by 2(|w_i| - |w_j|) >= 0 when s_i x_i = 1 = -s_j x_j,
    so sum p(x) 1(<w, x> >= 0)(s_i x_i - s_j x_j) >= 0. The iid uniform law qualifies; the Ising
    ring does not (coordinates at different distances), and the argmax of |f| can move.
    """
    for n in (4, 6, 8):
        w = np.random.default_rng(n).normal(size=(500, n))
        f = np.abs(H.threshold_mean(w, HL.uniform_law(n)))
        k = np.argmax(np.abs(w), axis=1)
        assert np.all(f[np.arange(500), k] >= f.max(axis=1) - 1e-15)
    w = np.array([0.9, 0.1, -0.75, -0.92])
    f = H.threshold_mean(w, HL.ising_ring_law(0.7, 4))
    assert np.argmax(np.abs(w)) == 3 and np.abs(f[2]) > np.abs(f[3]) + 0.01
