"""localization.experiments.onset_scaling: the onset g*(N) of the constant state's instability at large N.

Tolerances: Brent's are its xtol; the large-N ones come from the size β of the O(1/N) corrections,
measured at the chapter's N = 40 (outside the fitted range): κ*·N = C (1 + β/N + ...) with
β = N (κ*N/C - 1) at N = 40 (about 8), and every bound below takes 2β.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.integrate
import scipy.optimize
import scipy.special
import sympy as sy

from localization import data, theory
from localization.data.marginals import kur_excess_kurtosis_zero, nlgp_excess_kurtosis
from localization.experiments import onset_scaling as osc
from localization.theory import mechanism as mech

XI = (1.0, 3.0)


# -------------------------------------------------------------------------------------------------
# the derivation (SymPy)
# -------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_sympy_elasticity_expansion():
    # rho - 1 = (phi3 / (3 phi1)) a^2 + O(a^4), not phi3 / (2 phi1)
    a, p1, p3, p5 = sy.symbols("a phi1 phi3 phi5", positive=True)
    phi = p1 * a + p3 * a**3 / 6 + p5 * a**5 / 120
    rho = sy.series(a * sy.diff(phi, a) / phi - 1, a, 0, 4).removeO()
    assert sy.simplify(rho - p3 / (3 * p1) * a**2) == 0
    # the integrand of Eq. (6): x erf(x alg^-1(a)/sqrt 2) = sqrt(2/pi) [x^2 a + x^2 (3 - x^2) a^3 / 6] + O(a^5)
    x = sy.symbols("x", real=True)
    integrand = x * sy.erf(x * a / sy.sqrt(1 - a**2) / sy.sqrt(2))
    series = sy.series(integrand, a, 0, 5).removeO()
    expected = sy.sqrt(2 / sy.pi) * (x**2 * a + x**2 * (3 - x**2) * a**3 / 6)
    assert sy.simplify(sy.expand(series - expected)) == 0
    # unit variance, E X^4 = 3 + kappa: phi3 / phi1 = -kappa; with alpha^2 = S1/N, rho - 1 = -kappa S1 / (3N)
    kappa, s1, n = sy.symbols("kappa S1 N", positive=True)
    m2, m4 = 1, 3 + kappa
    ratio = (sy.sqrt(2 / sy.pi) * (3 * m2 - m4)) / (sy.sqrt(2 / sy.pi) * m2)
    assert sy.simplify(ratio + kappa) == 0
    # and the library's derivatives agree for a sub-Gaussian marginal
    marginal = data.NLGP(xi=3.0, gain=0.2).marginal
    d = theory.amplifier_derivatives_at_zero(marginal)
    assert d.third / d.first == pytest.approx(-marginal.excess_kurtosis, rel=1e-10)


@pytest.mark.slow
def test_sympy_threshold_and_onset_constant():
    nu, d = sy.symbols("nu d", real=True)
    # the lattice spectrum S(nu) = sum_d c(d) cos(2 pi nu d) = S [1 - 2 pi^2 D nu^2 + O(nu^4)]
    cosine = sy.series(sy.cos(2 * sy.pi * nu * d), nu, 0, 3).removeO()
    assert sy.simplify(cosine - (1 - 2 * sy.pi**2 * d**2 * nu**2)) == 0
    s0, s1, d0, d1, e0, e1, n = sy.symbols("S0 S1 D0 D1 E0 E1 N", positive=True)
    kappa = sy.symbols("kappa", real=True)
    lam0 = s0 * (1 - 2 * sy.pi**2 * d0 * nu**2 + e0 * nu**4)
    lam1 = s1 * (1 - 2 * sy.pi**2 * d1 * nu**2 + e1 * nu**4)
    r0 = s0 / s1
    excess = sy.series((1 + lam0 / lam1) / (1 + r0) - 1, nu, 0, 4).removeO()
    t = 2 * sy.pi**2 * r0 / (1 + r0) * (d1 - d0)
    assert sy.simplify(excess - t * nu**2) == 0
    # onset: -kappa S1 / (3N) = T / N^2
    (kappa_star,) = sy.solve(sy.Eq(-kappa * s1 / (3 * n), t / n**2), kappa)
    constant = sy.simplify(kappa_star * n)
    assert sy.simplify(constant + 3 * t / s1) == 0
    # the module's constant: the SymPy expression on lattice sums computed here directly over d in Z
    dd = np.arange(-200, 201, dtype=np.float64)
    sums = {}
    for y, xi in enumerate(XI):
        c = np.exp(-(dd**2) / xi**2)
        sums[y] = (c.sum(), (dd**2 * c).sum() / c.sum())
    value = float(constant.subs({s0: sums[0][0], s1: sums[1][0], d0: sums[0][1], d1: sums[1][1]}))
    pred = osc.predicted_asymptotics(xi=XI)
    assert pred.kurtosis == (-1.0, pytest.approx(value, rel=1e-12))
    # Poisson summation: C = -3 pi^(3/2) xi0 (xi1 - xi0) / xi1 up to D0's relative correction
    # 4 pi^2 xi0^2 e^{-pi^2 xi0^2} (2e-3), which enters C as D0/(D1 - D0) of it (2.5e-4): bound 1e-3
    continuum = -3 * math.pi**1.5 * XI[0] * (XI[1] - XI[0]) / XI[1]
    assert pred.kurtosis.constant == pytest.approx(continuum, rel=1e-3)


@pytest.mark.slow
def test_sympy_nlgp_kurtosis_is_minus_8_g_squared():
    g, z = sy.symbols("g z", positive=True)
    x = sy.series(sy.erf(g * z), g, 0, 10).removeO()

    def gaussian_mean(expr):  # E over z ~ N(0, 1): z^(2m) -> (2m - 1)!!, odd powers -> 0
        poly = sy.Poly(sy.expand(expr), z)
        return sum(c * (sy.factorial2(m - 1) if m % 2 == 0 else 0) for (m,), c in poly.terms())

    m2, m4 = gaussian_mean(x**2), gaussian_mean(x**4)
    kurt = sy.series(m4 / m2**2 - 3, g, 0, 8).removeO()
    assert sy.simplify(kurt - (-8 * g**2 + 40 * g**4 - sy.Rational(640, 3) * g**6)) == 0
    # the exact excess kurtosis at g = 0.02 up to O(g^8): the coefficients grow by about 5 per order
    # (8, 40, 213), so the next is about 1200; bound 2000 g^8
    series = -8 * 0.02**2 + 40 * 0.02**4 - 640 / 3 * 0.02**6
    assert nlgp_excess_kurtosis(0.02) == pytest.approx(series, abs=2000 * 0.02**8)


@pytest.mark.slow
def test_kur_singular_coefficient():
    # the Mellin integral against direct evaluation: on [0, 1] term by term from erf's power series
    # (u^(-k) times its terms beyond the cubic; no cancellation), on [1, inf) by quadrature
    for k in (4.5, 5.0, 5.5, 5.9):

        def subtracted(u, k=k):
            return u ** (-k) * (scipy.special.erf(u / math.sqrt(2)) - math.sqrt(2 / math.pi) * (u - u**3 / 6))

        terms = [(-1) ** m / (2**m * math.factorial(m) * (2 * m + 1) * (2 * m + 2 - k)) for m in range(2, 40)]
        integral = math.sqrt(2 / math.pi) * math.fsum(terms)
        integral += scipy.integrate.quad(subtracted, 1, np.inf, limit=200)[0]
        normaliser = data.marginals.KurMarginal(k).normaliser
        assert osc.kur_singular_coefficient(k) == pytest.approx(normaliser ** (-k) * integral, rel=1e-9)
    # the exact amplifier of Kur(5): rho - 1 - (cubic part) = (k - 2) B alpha^(k - 2) (1 + O(alpha)); the
    # relative error must shrink about in proportion to alpha (to at most half from alpha = 0.03 to 0.01)
    k = 5.0
    b = osc.kur_singular_coefficient(k)
    phi = theory.amplifier_of(data.marginals.KurMarginal(k))
    d = theory.amplifier_derivatives_at_zero(data.marginals.KurMarginal(k))
    errors = []
    for alpha in (0.03, 0.01):
        value, slope = (float(np.asarray(f)) for f in _value_and_slope(phi, alpha))
        rest = alpha * slope / value - 1 - alpha**2 * d.third / (3 * d.first)
        errors.append(abs(rest / ((k - 2) * b / d.first * alpha ** (k - 2)) - 1))
    assert errors[1] < 0.5 * errors[0] and errors[1] < 3 * 0.01, errors
    assert osc.kur_singular_coefficient(5.9) > 0
    with pytest.raises(ValueError, match="k must lie in"):
        osc.kur_singular_coefficient(6.0)


def _value_and_slope(phi, alpha):
    return jax.jvp(phi.core, (jnp.asarray(alpha, jnp.float64),), (jnp.asarray(1.0, jnp.float64),))


# -------------------------------------------------------------------------------------------------
# the constant state and the onset
# -------------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(("family", "parameter"), [("NLGP", 0.2), ("Kur", 5.5)])
def test_constant_state_matches_dense_stability(family, parameter):
    n = 40
    task = data.family_task(family, parameter, XI)
    cov = task.covariances(n)
    sp = mech.circulant_spectra(*cov)
    lam0, lam1 = osc.class_spectra(n, parameter, family=family, xi=XI)
    assert np.allclose(lam0[sp.freq], sp.lam0, rtol=0, atol=1e-12)
    assert np.allclose(lam1[sp.freq], sp.lam1, rtol=0, atol=1e-12)
    ref = mech.constant_mode_stability(theory.amplifier_of(task.model1.marginal), *cov)
    st = osc.constant_state(n, parameter, family=family, xi=XI)
    assert st.alpha == pytest.approx(ref.alpha, rel=1e-12)
    assert st.elasticity == pytest.approx(ref.elasticity, rel=1e-12)
    assert st.threshold == pytest.approx(ref.threshold, rel=1e-12)
    assert st.mode == 1 and np.argmax(ref.rates[1:]) + 1 in (1, 2)  # columns 1, 2: frequency 1


@pytest.mark.slow
def test_onset_at_the_chapter_size():
    # the chapter's exercise 2, re-derived: dense stability, Brent with xtol 1e-4 on [0.05, 0.5]
    def margin(g):
        task = data.LengthscaleTask.of(data.NLGP, xi=XI, gain=g)
        st = mech.constant_mode_stability(theory.amplifier_of(task.model1.marginal), *task.covariances(40))
        return st.elasticity - st.threshold

    chapter = scipy.optimize.brentq(margin, 0.05, 0.5, xtol=1e-4)
    onset = osc.onset_gain(40)
    # both are within their xtol (+ 4 eps |g|, brentq's rtol) of the same root
    assert abs(onset.parameter - chapter) <= 1e-4 + osc.XTOL + 8 * np.finfo(float).eps
    assert round(onset.parameter, 2) == 0.23 and round(onset.excess_kurtosis, 2) == -0.33
    assert abs(onset.elasticity - onset.threshold) < 1e-8 and onset.mode == 1
    assert onset.excess_kurtosis == pytest.approx(data.NLGP(xi=3.0, gain=onset.parameter).marginal.excess_kurtosis)


@pytest.fixture(scope="module")
def nlgp_scaling():
    return osc.onset_scaling(osc.NS, family="NLGP", xi=XI)


@pytest.mark.slow
def test_nlgp_onset_kurtosis_scales_like_c_over_n(nlgp_scaling):
    sc = nlgp_scaling
    c = sc.predicted.kurtosis.constant
    scaled = sc.scaled_kurtosis
    beta = sc.ns[0] * (scaled[0] / c - 1)  # the O(1/N) coefficient, from N = 40 (not fitted)
    assert 0 < beta < 20, beta
    # kappa* N approaches C monotonically, from the more negative side, within 2 beta / N of it
    assert np.all(np.diff(scaled) > 0) and np.all(scaled < c)
    assert abs(scaled[-1] / c - 1) < 2 * beta / sc.ns[-1]
    # Richardson (N = 320, 640) removes the 1/N term: what is left is O((2 beta / 320)^2)
    richardson = 2 * scaled[-1] - scaled[-2]
    assert abs(richardson / c - 1) < (2 * beta / sc.ns[-2]) ** 2
    # the fitted exponent: -1 - d log(1 + beta/N) / d log N over N = 160..640, at most 2 beta / 160 = 0.1
    # with beta = 8; measured 0.03. Bound 0.05: a -1/2 or -2 law, or Kur's -0.945, would fail it
    assert sc.kurtosis_fit.exponent == pytest.approx(-1.0, abs=0.05)
    assert sc.kurtosis_fit.constant < 0
    # threshold - 1 = T / N^2 (1 + O(g*^2)); its relative correction at N = 40 is 2.5 %, so the slope is
    # -2 to about 0.025 * 40 / 320 = 0.003: bound 0.01. rho - 1 equals it at the onset (Brent)
    assert sc.threshold_fit.exponent == pytest.approx(-2.0, abs=0.01)
    assert sc.elasticity_fit.exponent == pytest.approx(sc.threshold_fit.exponent, abs=1e-6)
    thr = np.array([(o.threshold - 1) * o.n**2 for o in sc.onsets])
    assert abs(thr[-1] / sc.predicted.threshold_coefficient - 1) < 2 * beta / sc.ns[-1]
    assert all(o.mode == 1 for o in sc.onsets)


@pytest.mark.slow
def test_nlgp_elasticity_follows_the_cubic_term(nlgp_scaling):
    # (rho - 1) / (alpha^2 phi'''(0) / (3 phi'(0))) = 1 + O(alpha^2) and alpha^2 = S1/N: the error halves
    # as N doubles (to O(1/N) relative: within 0.5 (1 +- 2 beta / 320) ~ 0.5 +- 0.05)
    errors = np.array([abs((o.elasticity - 1) / o.cubic_elasticity - 1) for o in nlgp_scaling.onsets])
    assert np.all(np.diff(errors) < 0)
    assert errors[-1] / errors[-2] == pytest.approx(0.5, abs=0.05)
    alphas = np.array([o.alpha for o in nlgp_scaling.onsets])
    assert osc.fit_power_law(nlgp_scaling.ns[-3:], alphas[-3:] ** 2).exponent == pytest.approx(-1.0, abs=0.01)
    # g* ~ sqrt(-C / (8 N)) (kappa = -8 g^2 (1 - 5 g^2)): the relative error is beta / (2N) (kappa* N)
    # plus 5 g^2 / 2 (the g^4 term), each halved by the square root; bound: twice each
    c = nlgp_scaling.predicted.kurtosis.constant
    n = nlgp_scaling.ns[-1]
    g_pred = math.sqrt(-c / (8 * n))
    beta = nlgp_scaling.ns[0] * (nlgp_scaling.scaled_kurtosis[0] / c - 1)
    assert nlgp_scaling.onsets[-1].parameter == pytest.approx(g_pred, rel=beta / n + 5 * g_pred**2)


@pytest.mark.slow
def test_kur_onset_sits_at_positive_kurtosis():
    # the tail term of Kur's phi makes rho > threshold already at zero excess kurtosis (k0)
    k0 = kur_excess_kurtosis_zero()
    for n in (40, 640):
        assert osc.constant_state(n, k0, family="Kur", xi=XI).margin > 0
    sc = osc.onset_scaling((160, 320, 640), family="Kur", xi=XI, fit_points=3)
    kurt = np.array([o.excess_kurtosis for o in sc.onsets])
    # kappa* > 0, decreasing to 0, but slower than 1/N (kappa* N grows): the exponent lies in (-1, 0)
    assert np.all(kurt > 0) and np.all(np.diff(kurt) < 0)
    assert np.all(np.diff(sc.scaled_kurtosis) > 0)
    assert -1 < sc.kurtosis_fit.exponent < 0
    assert all(o.parameter < k0 for o in sc.onsets)
    assert sc.predicted.kurtosis.exponent == pytest.approx(-(k0 - 4) / 2)


# -------------------------------------------------------------------------------------------------
# errors and helpers
# -------------------------------------------------------------------------------------------------
def test_fit_power_law():
    x = np.array([10.0, 20.0, 40.0])
    fit = osc.fit_power_law(x, -3.0 * x**-1.5)
    assert fit.exponent == pytest.approx(-1.5, rel=1e-12) and fit.constant == pytest.approx(-3.0, rel=1e-12)
    with pytest.raises(ValueError, match="one sign"):
        osc.fit_power_law(x, [1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="x must be finite, positive"):
        osc.fit_power_law([1.0, 1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="1-D of one length"):
        osc.fit_power_law([1.0, 2.0], [1.0, 2.0, 3.0])


def test_argument_errors():
    with pytest.raises(ValueError, match="family must be one of"):
        osc.onset_gain(40, family="Ising")
    with pytest.raises(TypeError, match="n must be an integer"):
        osc.constant_state(40.0, 0.2)
    with pytest.raises(ValueError, match="n must be an integer >= 4"):
        osc.constant_state(3, 0.2)
    with pytest.raises(ValueError, match="parameter must be positive"):
        osc.constant_state(40, 0.0)
    with pytest.raises(ValueError, match="parameter must be > 4"):
        osc.constant_state(40, 4.0, family="Kur")
    with pytest.raises(ValueError, match=r"xi\[1\] > xi\[0\]"):
        osc.constant_state(40, 0.2, xi=(3.0, 1.0))
    with pytest.raises(TypeError, match="xi must be a pair"):
        osc.constant_state(40, 0.2, xi=3.0)
    with pytest.raises(ValueError, match=r"bracket\[0\] < bracket\[1\]"):
        osc.onset_gain(40, bracket=(0.5, 0.05))
    with pytest.raises(ValueError, match=r"bracket\[0\] must be positive"):
        osc.onset_gain(40, bracket=(-0.1, 0.5))
    with pytest.raises(ValueError, match="xtol must be positive"):
        osc.onset_gain(40, xtol=0.0)
    with pytest.raises(ValueError, match="ns must be strictly increasing"):
        osc.onset_scaling((80, 40))
    with pytest.raises(TypeError, match="ns must be a sequence"):
        osc.onset_scaling(40)
    with pytest.raises(ValueError, match=r"fit_points must be an integer in \[2, 2\]"):
        osc.onset_scaling((40, 80), fit_points=3)


@pytest.mark.slow
def test_bracket_without_sign_change():
    # at N = 40 the onset is g* = 0.23: [0.3, 0.5] is unstable at both ends
    with pytest.raises(ValueError, match="bracket must hold a sign change of rho - threshold at N = 40"):
        osc.onset_gain(40, bracket=(0.3, 0.5))
