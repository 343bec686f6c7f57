"""Library identities behind book/elliptical.md, moved out of the chapter's check cells.

The chapter keeps the checks of the paper's statements (Eqs. ell-affine, ell-moment, ell-usub,
ell-flow, Proposition 3.3) and of its own findings; here are the identities of the library itself
(closed forms against ``radial_constant``, one implementation against another, shapes, validation).
"""

import math

import jax
import matplotlib
import numpy as np
import pytest

from localization import data
from localization.experiments import elliptical as ell
from localization.figures import elliptical as ell_fig
from localization.theory import gaussian as gf

matplotlib.use("Agg")

N, XI = 40, (1.0, 3.0)


@pytest.fixture(scope="module")
def tasks():
    return {
        "Student-t(3)": data.LengthscaleTask.of(data.StudentT, xi=XI, nu=3.0),
        "ellipse surface": data.LengthscaleTask.of(data.EllipseSurface, xi=XI, dim=N),
        "radial": data.LengthscaleTask.of(data.RadialElliptical, xi=XI, dim=N),
    }


@pytest.fixture(scope="module")
def covariances(tasks):
    return tuple(np.asarray(s, dtype=np.float64) for s in tasks["Student-t(3)"].covariances(N))


def test_closed_forms_of_kappa_equal_radial_constant(tasks):
    closed = {
        "Student-t(3)": ell.kappa_student_t(3.0),
        "ellipse surface": ell.kappa_sphere(N),
        "radial": ell.kappa_radial(N),
    }
    assert closed["Student-t(3)"] == pytest.approx(1 / math.pi, rel=1e-14)
    for name, task in tasks.items():
        assert abs(gf.radial_constant(task.model1.marginal) - closed[name]) < 1e-10, name
    assert abs(gf.radial_constant(None) - 1 / math.sqrt(2 * math.pi)) < 1e-15


@pytest.mark.parametrize("nu", [3.0, 5.0, 10.0, 50.0])
def test_student_t_kappa_formula_equals_radial_constant(nu):
    marginal = data.StudentT(xi=1.0, nu=nu).marginal
    assert abs(ell.kappa_student_t(nu) - gf.radial_constant(marginal)) < 1e-10


def test_kappa_validation():
    with pytest.raises(ValueError, match="nu"):
        ell.kappa_student_t(2.0)
    with pytest.raises((ValueError, TypeError), match="dim"):
        ell.kappa_sphere(1)
    with pytest.raises((ValueError, TypeError), match="dim"):
        ell.kappa_radial(0)


def test_circulant_from_spectrum_has_that_spectrum():
    half = np.linspace(1.0, 2.0, 5)
    c = ell.circulant_from_spectrum(half)
    assert c.shape == (8, 8)
    np.testing.assert_allclose(c, c.T, atol=1e-14)
    np.testing.assert_allclose(np.fft.rfft(c[0]).real, half, atol=1e-13)
    with pytest.raises(ValueError, match="half"):
        ell.circulant_from_spectrum([1.0])


def test_two_frequency_fixed_point_is_a_zero_of_the_flow():
    marginal = data.StudentT(xi=1.0, nu=3.0).marginal
    w, a0, a1 = ell.two_frequency_fixed_point(gf.radial_constant(marginal), 16)
    assert w.shape == (16,) and a0.shape == a1.shape == (16, 16)
    assert np.max(np.abs(gf.flow(w, a0, a1, marginal=marginal))) < 1e-12
    with pytest.raises(ValueError, match="n"):
        ell.two_frequency_fixed_point(0.3, 15)
    with pytest.raises(ValueError, match="kappa"):
        ell.two_frequency_fixed_point(-1.0, 16)


def test_flow_jacobian_matches_autodiff(covariances):
    s0, s1 = covariances
    w = np.random.default_rng(0).standard_normal(N) / math.sqrt(N)
    auto = np.asarray(jax.jacfwd(lambda x: gf.flow(x, s0, s1))(w))
    np.testing.assert_allclose(ell.flow_jacobian(w, s0, s1), auto, atol=1e-7)
    with pytest.raises(ValueError, match="w"):
        ell.flow_jacobian(np.zeros(N), s0, s1)


def test_monte_carlo_z_scores_on_gaussian_samples(covariances):
    _, s1 = covariances
    x = np.random.default_rng(1).multivariate_normal(np.zeros(N), s1, size=20_000)
    w = np.random.default_rng(2).standard_normal(N)
    k = 1 / math.sqrt(2 * math.pi)
    assert ell.half_space_moment_z(x, w, s1, k) < 5
    assert ell.relu_mean_z(x, w, s1, k) < 5
    with pytest.raises(ValueError, match="w"):
        ell.half_space_moment_z(x, w[:-1], s1, k)
    with pytest.raises(ValueError, match="kappa"):
        ell.relu_mean_z(x, w, s1, 0.0)
    with pytest.raises(ValueError, match="x"):
        ell.relu_mean_z(x[0], w, s1, k)


def test_affine_ks_on_gaussian_samples(covariances):
    _, s1 = covariances
    rng = np.random.default_rng(3)
    x = rng.multivariate_normal(np.zeros(N), s1, size=4096)
    ref = rng.standard_normal(4096)
    two_sample, normal = ell.affine_ks(x, ref, [rng.standard_normal(N), np.eye(N)[0]], s1)
    assert two_sample < 2.5 and normal < 2.5
    with pytest.raises(ValueError, match="weights"):
        ell.affine_ks(x, ref, [], s1)


def test_substitution_integrals_gaussian():
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    c, relu = ell.substitution_integrals(pdf, 1.7)
    assert c == pytest.approx(math.sqrt(2 / math.pi), rel=1e-9)
    assert relu == pytest.approx(1.7 * c / 2, rel=1e-9)
    with pytest.raises(ValueError, match="sigma"):
        ell.substitution_integrals(pdf, 0.0)


def test_summaries_of_constant_fields():
    n, amp = 12, 0.3
    const = np.full((2, 5, n), amp / math.sqrt(n))
    share, err = ell.flow_summary(const, amp)
    assert share == pytest.approx(1.0) and err < 1e-12
    rng = np.random.default_rng(4)
    sgd = const + 1e-3 * rng.standard_normal(const.shape)
    s = ell.sgd_summary(sgd, amp, tail=3)
    assert s["average"].shape == (2, n) and len(s["fits"]) == 2
    for k in ("share", "amp", "norm", "end", "avg", "low"):
        assert s[k].shape == (2,), k
    np.testing.assert_allclose(s["amp"], 1.0, atol=1e-2)
    assert len(ell.describe_sgd({"a": s, "b": s}).splitlines()) == 2
    with pytest.raises(ValueError, match="tail"):
        ell.sgd_summary(sgd, amp, tail=6)
    with pytest.raises(ValueError, match="sgd"):
        ell.sgd_summary(sgd[0], amp)
    fig = ell_fig.draw_fig4({"a": sgd, "b": sgd}, {"a": s, "b": s}, {"a": amp, "b": amp})
    assert len(fig.axes) == 2
    fig2 = ell_fig.draw_window_shares({"a": np.ones(4), "c": np.zeros(4)}, 0.8, control="c")
    assert len(fig2.axes) == 1


def test_amplifier_gap_validation():
    from localization import theory

    phi = theory.amplifier_of(data.StudentT(xi=1.0, nu=3.0).marginal)
    with pytest.raises(ValueError, match="a must"):
        ell.amplifier_gap(phi, 0.3, [0.0, 0.5])
