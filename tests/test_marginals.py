"""Exact statistics and quadratures of the marginal laws (localization.data.marginals)."""

import math
import warnings

import jax
import numpy as np
import pytest
import scipy.integrate as si
import scipy.special as sp

from localization import data

A_VALUES = [0.1, 0.5, 0.9, 0.99]


def quad(f, a, b, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        val, err = si.quad(f, a, b, epsabs=0.0, epsrel=1e-13, limit=400, **kw)
    return val


def amp_integrand(a):
    c = a / math.sqrt(1 - a * a) / math.sqrt(2)
    return lambda x: x * sp.erf(c * x)


def all_marginals():
    return [
        data.GaussianMarginal(),
        data.NLGPMarginal(0.01),
        data.NLGPMarginal(1.1),
        data.NLGPMarginal(100.0),
        data.KurMarginal(3.0),
        data.KurMarginal(4.1),
        data.KurMarginal(10.0),
        data.RademacherMarginal(),
        data.StudentTMarginal(3.0),
        data.StudentTMarginal(5.0),
        data.SphereMarginal(40),
        data.RadialEllipticalMarginal(40),
    ]


@pytest.mark.parametrize("m", all_marginals(), ids=repr)
def test_unit_variance_exact_and_quadrature(m):
    assert abs(m.variance - 1.0) < 1e-12
    x, w = m.quadrature()
    assert x.dtype == np.float64 and w.dtype == np.float64 and np.all(w >= 0)
    assert abs(w.sum() - 1.0) < 1e-13
    assert abs(np.sum(w * x)) < 1e-14  # symmetric
    assert abs(np.sum(w * x * x) - 1.0) < 1e-11


# ---------------------------------------------------------------- NLGP
@pytest.mark.parametrize("g", [0.01, 0.3, 1.0, 1.1, 3.0, 100.0])
def test_nlgp_normaliser_closed_form_vs_quadrature(g):
    pts = [p for p in (0.25 / g, 0.5 / g, 1 / g, 2 / g, 4 / g, 1.0, 3.0) if p < 40]
    ref = 2 * quad(lambda z: sp.erf(g * z) ** 2 * np.exp(-z * z / 2) / math.sqrt(2 * math.pi), 0, 40, points=pts)
    assert abs(float(data.nlgp_normaliser(g)) ** 2 - ref) < 1e-13


def nlgp_ref(g, f):
    Zn = float(data.nlgp_normaliser(g))
    pts = [p for p in (0.25 / g, 0.5 / g, 1 / g, 2 / g, 4 / g, 1.0, 3.0) if p < 40]

    def h(z):
        x = sp.erf(g * z) / Zn
        return (f(x) + f(-x)) * np.exp(-z * z / 2) / math.sqrt(2 * math.pi)

    return quad(h, 0, 40, points=pts)


@pytest.mark.parametrize("a", A_VALUES)
@pytest.mark.parametrize("g", [0.01, 1.0, 100.0])
def test_nlgp_quadrature_vs_scipy(g, a):
    m = data.NLGPMarginal(g)
    f = amp_integrand(a)
    assert abs(m.expect(f) - nlgp_ref(g, f)) < 1e-12


def test_nlgp_fourth_moment_limits():
    assert abs(data.nlgp_excess_kurtosis(1e-3)) < 1e-5  # Gaussian limit
    assert abs(data.nlgp_excess_kurtosis(1e4) + 2.0) < 1e-3  # Rademacher limit
    ek = [data.nlgp_excess_kurtosis(g) for g in (0.1, 1.0, 3.0, 30.0)]
    assert all(np.diff(ek) < 0) and all(-2 < e < 0 for e in ek)


@pytest.mark.parametrize("g", [0.01, 0.3, 1.1, 3.0, 100.0])
def test_nlgp_excess_kurtosis_vs_quadrature_of_erf_moments(g):
    # independent of the library: E[erf(gZ)^4] / E[erf(gZ)^2]^2 - 3 by adaptive quadrature
    pts = [p for p in (0.25 / g, 0.5 / g, 1 / g, 2 / g, 4 / g, 1.0, 3.0) if p < 40]

    def mom(p):
        return 2 * quad(lambda z: sp.erf(g * z) ** p * np.exp(-z * z / 2) / math.sqrt(2 * math.pi), 0, 40, points=pts)

    ref = mom(4) / mom(2) ** 2 - 3
    assert abs(data.nlgp_excess_kurtosis(g) / ref - 1) < 1e-9
    assert abs(data.NLGPMarginal(g).excess_kurtosis / ref - 1) < 1e-9


# ---------------------------------------------------------------- Kur
def kur_pdf_moment(k, power):
    Zn = data.KurMarginal(k).normaliser
    f = lambda y: y**power * 0.5 * (1 + y**k) ** (-(k + 1) / k)  # noqa: E731
    return 2 * (quad(f, 0, 1) + quad(f, 1, 10) + quad(f, 10, np.inf)) / Zn**power


@pytest.mark.parametrize("k", [2.5, 4.1, 5.0, 5.89, 10.0, 50.0])
def test_kur_moments_closed_form_vs_pdf_quadrature(k):
    m = data.KurMarginal(k)
    assert abs(kur_pdf_moment(k, 2) - 1.0) < 1e-11
    if k > 4:
        assert abs(kur_pdf_moment(k, 4) / m.fourth_moment - 1.0) < 1e-10
    else:
        assert m.fourth_moment == math.inf and m.excess_kurtosis == math.inf


def test_kur_paper_values_and_sign_change():
    # paper Sec. 4.4: Kur(10) -0.93, Kur(30) -1.17; Sec. 2.3: sign change between 5.8 and 5.9
    assert round(data.kur_excess_kurtosis(10.0), 2) == -0.93
    assert round(data.kur_excess_kurtosis(30.0), 2) == -1.17
    assert data.kur_excess_kurtosis(5.8) > 0 > data.kur_excess_kurtosis(5.9)
    kstar = data.kur_excess_kurtosis_zero()
    assert 5.89 < kstar < 5.891
    assert abs(data.kur_excess_kurtosis(kstar)) < 1e-12
    # Kur(3), Kur(4): fourth moment diverges, so the paper's 7.66 and 3.28 cannot be exact values
    assert data.kur_excess_kurtosis(3.0) == math.inf
    assert data.kur_excess_kurtosis(4.0) == math.inf


def test_kur_quantile_accurate_in_tails():
    for k in (2.5, 4.1, 10.0):
        m = data.KurMarginal(k)
        for p in (1e-300, 1e-50, 1e-8, 0.1, 0.49):
            x = m.upper_quantile(p)
            # 1 - F(x) computed without cancellation: 1 - F = (1 - y/(1+y^k)^(1/k))/2
            y = x * m.normaliser
            tail = -0.5 * np.expm1(-np.log1p(y**-k) / k) if y > 1 else 0.5 * (1 - y / (1 + y**k) ** (1 / k))
            assert abs(tail / p - 1) < 1e-12, (k, p)


@pytest.mark.parametrize("a", A_VALUES)
@pytest.mark.parametrize("k", [4.1, 5.0, 10.0, 50.0])
def test_kur_quadrature_vs_scipy(k, a):
    m = data.KurMarginal(k)
    f = amp_integrand(a)
    g = lambda x: 2 * f(x) * m.pdf(x)  # noqa: E731  (f even)
    ref = quad(g, 0, 1) + quad(g, 1, 10) + quad(g, 10, np.inf)
    assert abs(m.expect(f) - ref) < 1e-12


# ---------------------------------------------------------------- elliptical marginals
@pytest.mark.parametrize("nu", [3.0, 5.0, 9.0])
def test_student_t_moments_and_quadrature(nu):
    m = data.StudentTMarginal(nu)
    g2 = lambda x: 2 * x * x * m.pdf(x)  # noqa: E731
    assert abs(quad(g2, 0, 10) + quad(g2, 10, np.inf) - 1.0) < 1e-10
    assert m.excess_kurtosis == (math.inf if nu <= 4 else pytest.approx(6 / (nu - 4), rel=1e-14))
    for a in A_VALUES:
        f = amp_integrand(a)

        def g(x, f=f):
            return 2 * f(x) * m.pdf(x)

        assert abs(m.expect(f) - (quad(g, 0, 10) + quad(g, 10, np.inf))) < 1e-11


@pytest.mark.parametrize("D", [3, 10, 40])
def test_sphere_marginal(D):
    m = data.SphereMarginal(D)
    assert abs(m.excess_kurtosis + 6 / (D + 2)) < 1e-14
    s = math.sqrt(D)
    assert abs(quad(lambda x: x**4 * m.pdf(x), -s, s) - m.fourth_moment) < 1e-11
    assert abs(quad(m.pdf, -s, s) - 1) < 1e-12
    f = amp_integrand(0.9)
    assert abs(m.expect(f) - quad(lambda x: f(x) * m.pdf(x), -s, s)) < 1e-12
    # the rule is split at 0: the kink of abs and the steep x erf(c x) near a = 1 are integrated
    # accurately (a rule across 0 missed E|X| by 4e-4 at D = 40)
    assert abs(m.expect(np.abs) - m.mean_absolute) < 1e-12
    near_one = amp_integrand(1 - 1e-10)
    assert abs(m.expect(near_one) - 2 * quad(lambda x: near_one(x) * m.pdf(x), 0, s, points=[1e-3, 0.1])) < 1e-9


def test_radial_moments():
    # E[artanh(U)^n], n = 1..4 against scipy quadrature of the density sech^2 v
    from localization.data.elliptical import ARTANH_MOMENTS as _ARTANH_MOMENTS

    for n in range(1, 5):
        ref = quad(lambda v, n=n: v**n / np.cosh(v) ** 2, 0, 60)
        assert abs(ref - _ARTANH_MOMENTS[n]) < 1e-12
    m = data.RadialEllipticalMarginal(40)
    x, w = m.quadrature()
    assert abs(np.sum(w * x**4) - m.fourth_moment) < 1e-10
    assert abs(np.sum(w * np.abs(x)) - m.mean_absolute) < 1e-12  # the T rule is split at the kink 0


def test_rademacher():
    m = data.RademacherMarginal()
    x, w = m.quadrature()
    np.testing.assert_array_equal(x, [-1.0, 1.0])
    np.testing.assert_array_equal(w, [0.5, 0.5])
    # the excess kurtosis from the law itself (E x^4 / (E x^2)^2 - 3), not a restated constant
    assert m.is_discrete and m.excess_kurtosis == np.sum(w * x**4) / np.sum(w * x**2) ** 2 - 3 == -2.0


# ---------------------------------------------------------------- sampling
@pytest.mark.parametrize("m", all_marginals(), ids=repr)
@pytest.mark.slow
def test_marginal_sample_variance(m):
    num = 100_000
    x = np.asarray(m.sample(jax.random.key(1), num))
    assert x.shape == (num,)
    # tolerance: 6 standard errors of the mean of x^2 (capped for infinite fourth moments)
    m4 = m.fourth_moment if math.isfinite(m.fourth_moment) else 50.0
    tol = 6 * math.sqrt((m4 - 1) / num) + 1e-12
    assert abs(np.mean(x * x) - 1) < (tol if math.isfinite(m.fourth_moment) else 0.1)
    assert abs(np.mean(x)) < 6 / math.sqrt(num)


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_nlgp_bad_gain(bad):
    with pytest.raises(ValueError, match="gain"):
        data.NLGPMarginal(bad)
    with pytest.raises(ValueError, match="gain"):
        data.nlgp_excess_kurtosis(bad)


@pytest.mark.parametrize("bad", [2.0, 1.0, -3.0, float("nan")])
def test_kur_bad_k(bad):
    with pytest.raises(ValueError, match="k"):
        data.KurMarginal(bad)
    with pytest.raises(ValueError, match="k"):
        data.kur_excess_kurtosis(bad)


@pytest.mark.parametrize("bad", [2.0, 0.5, float("inf")])
def test_student_bad_nu(bad):
    with pytest.raises(ValueError, match="nu"):
        data.StudentTMarginal(bad)


def test_bad_types_and_args():
    with pytest.raises(TypeError, match="gain"):
        data.NLGPMarginal("1")
    with pytest.raises(ValueError, match="dim"):
        data.SphereMarginal(1)
    with pytest.raises(TypeError, match="dim"):
        data.SphereMarginal(4.0)
    m = data.GaussianMarginal()
    with pytest.raises(ValueError, match="order"):
        m.quadrature(2)
    with pytest.raises(TypeError, match="key"):
        m.sample(0, 10)
    with pytest.raises(ValueError, match="num"):
        m.sample(jax.random.key(0), 0)
    with pytest.raises(TypeError, match="dtype"):
        m.sample(jax.random.key(0), 10, dtype=np.int32)


def test_nlgp_small_gain_expansion():
    # erf(x) ~ (2/sqrt(pi))(x - x^3/3) gives excess kurtosis ~ -8 g^2 as g -> 0
    g = 0.01
    assert abs(data.nlgp_excess_kurtosis(g) / g**2 + 8) < 0.01
