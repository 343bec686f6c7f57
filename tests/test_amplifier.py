"""Tests of the amplifier φ (paper Eq. (6)), its derivatives at 0 (Lemma B.1, App. C.3) and Taylor form."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

from localization import data
from localization.theory import (
    Amplifier,
    alg_inv,
    amplifier_derivatives_at_zero,
    amplifier_of,
    amplifier_taylor,
)
from localization.theory.amplifier import pad_quadrature

SQ = math.sqrt(2 / math.pi)

MARGINALS = {
    "nlgp-0.3": data.NLGP(1.0, 0.3).marginal,
    "nlgp-1.1": data.NLGP(1.0, 1.1).marginal,
    "nlgp-100": data.NLGP(1.0, 100.0).marginal,
    "kur-5": data.Kur(1.0, 5.0).marginal,
    "kur-10": data.Kur(1.0, 10.0).marginal,
    "ising": data.Ising(0.7).marginal,
    "gauss": data.Gaussian(1.0).marginal,
}


@pytest.fixture(scope="module")
def phis():
    return {name: amplifier_of(m) for name, m in MARGINALS.items()}


# ---------------------------------------------------------------- SymPy derivations (App. C.3)
@pytest.fixture(scope="module")
def sym():
    a, x = sp.symbols("a x", real=True)
    f = x * sp.erf(x * a / sp.sqrt(1 - a**2) / sp.sqrt(2))  # integrand of Eq. (6)
    E = sp.exp(-(x**2) * a**2 / (2 * (1 - a**2)))
    return a, x, f, E


def test_printed_first_derivative_c3_is_right(sym):
    a, x, f, E = sym
    printed = sp.sqrt(2) / (sp.sqrt(sp.pi) * (1 - a**2) ** sp.Rational(3, 2)) * x**2 * E
    assert sp.simplify(sp.diff(f, a) - printed) == 0


def test_printed_third_derivative_c3_is_right(sym):
    # (1-a^2)^{7/2} (a^2-1)^2 = (1-a^2)^{11/2}: unusual but correct
    a, x, f, E = sym
    poly = 12 * a**6 + (9 * x**2 - 21) * a**4 + (x**4 - 8 * x**2 + 6) * a**2 - x**2 + 3
    printed = sp.sqrt(2) / (sp.sqrt(sp.pi) * (1 - a**2) ** sp.Rational(7, 2) * (a**2 - 1) ** 2) * x**2 * poly * E
    d3 = sp.diff(f, a, 3)
    for av in (sp.Rational(1, 3), sp.Rational(-4, 5)):
        for xv in (sp.Rational(1, 2), 2, 3):
            assert abs(sp.N((d3 - printed).subs({a: av, x: xv}), 30)) < 1e-25


def test_taylor_coefficients_sympy(sym):
    a, x, f, _ = sym
    series = sp.expand(sp.series(f, a, 0, 5).removeO())
    assert sp.simplify(series.coeff(a, 1) - sp.sqrt(2 / sp.pi) * x**2) == 0
    # φ'''(0)/6 integrand: sqrt(2/pi) x^2 (3 - x^2) / 6
    assert sp.simplify(series.coeff(a, 3) - sp.sqrt(2 / sp.pi) * x**2 * (3 - x**2) / 6) == 0
    assert series.coeff(a, 2) == 0 and series.coeff(a, 4) == 0


@pytest.mark.slow
def test_gaussian_closed_form_sympy():
    s, c, z = sp.symbols("sigma c z", positive=True)
    zz = sp.symbols("zz", real=True)
    G = sp.integrate(
        zz * sp.erf(c * zz / sp.sqrt(2)) * sp.exp(-(zz**2) / (2 * s**2)) / sp.sqrt(2 * sp.pi * s**2),
        (zz, -sp.oo, sp.oo),
    )
    assert sp.simplify(G - sp.sqrt(2 / sp.pi) * s**2 * c / sp.sqrt(1 + c**2 * s**2)) == 0


# ---------------------------------------------------------------- derivatives at 0 via jax.grad
@jax.jit
def _derivatives_at_zero(phi):
    """Return φ'(0), φ''(0), φ'''(0) by jax.grad of φ's call, compiled once per rule size.

    Eagerly, every operation of the three derivatives was compiled again for each marginal.
    """
    d1 = jax.grad(phi)
    d2 = jax.grad(d1)
    return d1(0.0), d2(0.0), jax.grad(d2)(0.0)


@pytest.mark.parametrize("name", list(MARGINALS))
@pytest.mark.slow
def test_grad_at_zero_matches_moments(phis, name):
    phi, m = phis[name], MARGINALS[name]
    # the rule padded with zero-weight nodes (exact): one compilation per 1024 nodes
    d1, d2, d3 = (float(d) for d in _derivatives_at_zero(pad_quadrature(phi)))
    ref = amplifier_derivatives_at_zero(m)
    assert ref.first == pytest.approx(SQ * m.variance, rel=1e-14)
    assert ref.third == pytest.approx(SQ * (3 * m.variance - m.fourth_moment), rel=1e-14)
    assert d1 == pytest.approx(ref.first, rel=1e-6)
    assert d3 == pytest.approx(ref.third, rel=1e-6, abs=1e-9)
    # the even derivatives vanish (φ odd)
    assert abs(d2) < 1e-12


@pytest.mark.slow
def test_gaussian_any_variance_derivatives():
    for var in (0.5, 1.0, 2.0):
        phi = Amplifier.gaussian(var)
        assert float(jax.grad(phi)(0.0)) == pytest.approx(SQ * var, rel=1e-13)
        d3 = float(jax.grad(jax.grad(jax.grad(phi)))(0.0))
        assert d3 == pytest.approx(SQ * (3 * var - 3 * var**2), rel=1e-12, abs=1e-13)


def test_kurtosis_sign_decides_curvature():
    # unit variance: φ'''(0) > 0 (super-linear) iff excess kurtosis < 0
    for m in (data.NLGP(1.0, 3.0).marginal, data.Kur(1.0, 10.0).marginal, data.Ising(0.7).marginal):
        assert m.excess_kurtosis < 0 and amplifier_derivatives_at_zero(m).third > 0
    m = data.Kur(1.0, 5.0).marginal
    assert m.excess_kurtosis > 0 and amplifier_derivatives_at_zero(m).third < 0


# ---------------------------------------------------------------- closed forms
@pytest.mark.slow
def test_gaussian_unit_variance_exactly_linear(phis):
    a = jnp.linspace(-1, 1, 41)
    assert phis["gauss"].kind == "gaussian"
    np.testing.assert_allclose(phis["gauss"](a), SQ * a, rtol=0, atol=1e-16)


@pytest.mark.slow
def test_gaussian_closed_form_matches_quadrature():
    a = jnp.array([0.0, 0.1, 0.5, 0.9, 0.999, 1 - 1e-9])
    quad = amplifier_of(data.Gaussian(1.0).marginal, method="quadrature")
    np.testing.assert_allclose(quad(a), SQ * a, rtol=0, atol=1e-12)


@pytest.mark.slow
def test_gaussian_variance_closed_form_by_scaled_quadrature():
    # X = s Z: nodes scaled by s give the N(0, s^2) law
    x, w = data.Gaussian(1.0).marginal.quadrature()
    for var in (0.25, 3.0):
        quad = Amplifier.from_quadrature(math.sqrt(var) * x, w)
        a = jnp.array([0.2, 0.7, 0.99])
        np.testing.assert_allclose(quad(a), Amplifier.gaussian(var)(a), rtol=0, atol=1e-12)


@pytest.mark.slow
def test_binary_closed_form_equals_two_atom_quadrature(phis):
    a = jnp.linspace(-0.999, 0.999, 31)
    assert phis["ising"].kind == "binary"
    np.testing.assert_allclose(phis["ising"](a), jax.scipy.special.erf(alg_inv(a) / math.sqrt(2)), atol=1e-15)
    for s in (1.0, 0.5, 2.0):
        two_atoms = Amplifier.from_quadrature([-s, s], [0.5, 0.5])
        np.testing.assert_allclose(Amplifier.binary(s)(a), two_atoms(a), rtol=0, atol=1e-15)
    forced = amplifier_of(data.Ising(0.7).marginal, method="quadrature")
    assert forced.kind == "quadrature"
    np.testing.assert_allclose(forced(a), phis["ising"](a), rtol=0, atol=1e-15)


@pytest.mark.slow
def test_quadrature_matches_adaptive_reference():
    # independent check of one value by scipy adaptive quadrature in z-space: NLGP(1.1), a = 0.8
    from scipy import integrate, special

    g = 1.1
    zn = float(data.nlgp_normaliser(g))
    c = 0.8 / math.sqrt(1 - 0.64)

    def f(z):
        x = special.erf(g * z) / zn
        return x * special.erf(c * x / math.sqrt(2)) * math.exp(-z * z / 2) / math.sqrt(2 * math.pi)

    ref = 2 * integrate.quad(f, 0, 40, epsabs=1e-15, epsrel=1e-13, limit=200)[0]
    assert float(amplifier_of(data.NLGP(1.0, g).marginal)(0.8)) == pytest.approx(ref, abs=1e-12)


# ---------------------------------------------------------------- symmetry, shapes, limits
@pytest.mark.parametrize("name", list(MARGINALS))
@pytest.mark.slow
def test_odd_and_vectorised(phis, name):
    phi = phis[name]
    a = jnp.linspace(0.0, 0.99, 12).reshape(3, 4)
    out = phi(a)
    assert out.shape == (3, 4) and out.dtype == jnp.float64
    np.testing.assert_allclose(phi(-a), -out, rtol=0, atol=1e-15)
    assert np.all(np.diff(np.asarray(out).ravel()) > 0)  # increasing on [0, 1)


@pytest.mark.parametrize("name", list(MARGINALS))
@pytest.mark.slow
def test_limit_at_one_is_mean_abs(phis, name):
    phi, m = phis[name], MARGINALS[name]
    mean_abs = m.expect(np.abs)
    near = float(phi(1 - 1e-12))
    assert math.isfinite(near) and near == pytest.approx(mean_abs, abs=1e-10)
    assert float(phi(1.0)) == pytest.approx(mean_abs, abs=1e-12)
    assert float(phi(-1.0)) == pytest.approx(-mean_abs, abs=1e-12)
    for order in (1, 3) if name in ("nlgp-100", "kur-5", "ising") else (1,):
        d = phi
        for _ in range(order):
            d = jax.grad(d)
        val = float(d(1 - 1e-12))
        assert math.isfinite(val), (name, order, val)


def test_gaussian_limit_sqrt_two_over_pi_sigma():
    assert float(Amplifier.gaussian(4.0)(1.0)) == pytest.approx(SQ * 2.0, rel=1e-15)


@pytest.mark.slow
def test_core_policy_outside_domain(phis):
    for phi in (phis["nlgp-1.1"], phis["ising"], phis["gauss"]):
        out = phi.core(jnp.array([1.5, -2.0, jnp.nan]))
        assert np.all(np.isnan(out))


@pytest.mark.slow
def test_jit_vmap_and_pytree(phis):
    phi = phis["nlgp-1.1"]
    a = jnp.linspace(-0.9, 0.9, 7)
    np.testing.assert_allclose(jax.jit(lambda p, x: p(x))(phi, a), phi(a), rtol=1e-14)
    np.testing.assert_allclose(jax.vmap(jax.grad(phi))(a)[::3], [jax.grad(phi)(x) for x in a[::3]], rtol=1e-12)


# ---------------------------------------------------------------- Taylor form
@pytest.mark.parametrize("name", ["nlgp-1.1", "kur-10", "ising", "gauss"])
def test_taylor_polynomial(phis, name):
    m = MARGINALS[name]
    taylor = amplifier_taylor(m)
    d = amplifier_derivatives_at_zero(m)
    assert float(taylor.first) == d.first and float(taylor.third) == d.third
    # remainder is O(a^5): ratio (φ - T)/a^5 stays bounded as a shrinks
    r = [abs(float(phis[name](a) - taylor(a))) / a**5 for a in (0.1, 0.05, 0.025)]
    assert max(r) < 10 and r[-1] == pytest.approx(r[-2], rel=0.1, abs=1e-6)


def test_taylor_divergent_fourth_moment_raises():
    m = data.Kur(1.0, 3.5).marginal
    assert math.isinf(m.fourth_moment)
    assert amplifier_derivatives_at_zero(m).third == -math.inf
    with pytest.raises(ValueError, match="marginal.*fourth moment"):
        amplifier_taylor(m)


# ---------------------------------------------------------------- validation
def test_validation_of_a(phis):
    phi = phis["nlgp-1.1"]
    with pytest.raises(ValueError, match=r"a must lie in \[-1, 1\]"):
        phi(1.5)
    with pytest.raises(ValueError, match="a must lie"):
        phi(jnp.array([0.0, -1.0000001]))
    with pytest.raises(ValueError, match="a must be finite"):
        phi(float("nan"))
    with pytest.raises(TypeError, match="a must be a real"):
        phi(True)
    with pytest.raises(TypeError, match="a must be a real"):
        phi("0.3")
    with pytest.raises(ValueError, match="a must lie"):
        amplifier_taylor(data.Kur(1.0, 10.0).marginal)(2.0)


def test_validation_of_constructors():
    with pytest.raises(TypeError, match="marginal"):
        amplifier_of(object())
    with pytest.raises(ValueError, match="method"):
        amplifier_of(data.Gaussian(1.0).marginal, method="monte_carlo")
    with pytest.raises(TypeError, match="order"):
        amplifier_of(data.NLGP(1.0, 1.1).marginal, order=32.0)
    with pytest.raises(ValueError, match="order"):
        amplifier_of(data.NLGP(1.0, 1.1).marginal, order=0)
    with pytest.raises(ValueError, match="closed_form"):
        amplifier_of(data.NLGP(1.0, 1.1).marginal, method="closed_form")
    with pytest.raises(ValueError, match="variance"):
        Amplifier.gaussian(-1.0)
    with pytest.raises(ValueError, match="scale"):
        Amplifier.binary(0.0)
    with pytest.raises(ValueError, match="nodes must be a 1-D"):
        Amplifier.from_quadrature(np.ones((2, 2)), np.ones((2, 2)) / 4)
    with pytest.raises(ValueError, match="weights must have the shape"):
        Amplifier.from_quadrature([1.0, -1.0], [1.0])
    with pytest.raises(ValueError, match="weights must be non-negative"):
        Amplifier.from_quadrature([1.0, -1.0], [1.5, -0.5])
    with pytest.raises(ValueError, match="weights must sum to 1"):
        Amplifier.from_quadrature([1.0, -1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="finite"):
        Amplifier.from_quadrature([np.inf, -1.0], [0.5, 0.5])
    with pytest.raises(TypeError, match="nodes"):
        Amplifier.from_quadrature("abc", [1.0])
    with pytest.raises(TypeError, match="marginal"):
        amplifier_derivatives_at_zero(3.0)


# -------------------------------------------------------------------------------------------------
# the PytreeAmplifier protocol and evaluation at concrete points
# -------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_pytree_amplifier_protocol():
    from localization import theory

    phi = amplifier_of(data.Kur(1.0, 5.0).marginal)
    for obj in (phi, amplifier_taylor(data.Kur(1.0, 10.0).marginal), theory.tabulate_amplifier(phi, 101)):
        assert isinstance(obj, theory.PytreeAmplifier), type(obj)
    for obj in (jnp.sin, lambda a: a, 3.0):
        assert not isinstance(obj, theory.PytreeAmplifier)
    # the flow treats both kinds alike: a plain callable gives the same field as the pytree
    w = jnp.array([0.3, -0.2, 0.5, 0.1])
    s = np.eye(4)
    lin_phi = Amplifier.gaussian(1.0)
    f1 = theory.effective_vector_field(w, lin_phi, s, s)
    f2 = theory.effective_vector_field(w, lambda a: SQ * a, s, s)
    np.testing.assert_allclose(np.asarray(f1), np.asarray(f2), rtol=0, atol=1e-15)


@pytest.mark.slow
def test_evaluate_amplifier_equals_phi_and_pads_exactly():
    import importlib

    from localization.theory import amplifier_taylor as taylor
    from localization.theory import evaluate_amplifier

    amp = importlib.import_module("localization.theory.amplifier")  # the module

    # zero nodes of zero weight change nothing; rules of different sizes share one padded size
    grid = np.linspace(-1, 1, 257)
    sizes = set()
    for m in (
        data.NLGP(0.7, 0.1).marginal,
        data.NLGP(0.7, 3.0).marginal,
        data.Kur(0.7, 5.0).marginal,
        data.Kur(0.7, 20.0).marginal,
    ):
        phi = amplifier_of(m)
        padded = amp.pad_quadrature(phi)
        n_phi, n_pad = phi.params[0].shape[0], padded.params[0].shape[0]
        assert n_pad % amp._PAD == 0 and n_phi <= n_pad < n_phi + amp._PAD
        assert np.max(np.abs(np.asarray(padded.core(grid)) - np.asarray(phi.core(grid)))) < 1e-15
        assert np.max(np.abs(evaluate_amplifier(phi, grid) - np.asarray(phi(grid)))) < 1e-15
        sizes.add(n_pad)
    assert sizes == {1024, 2048}
    # closed forms, the Taylor polynomial and plain callables are evaluated unchanged; shapes kept
    for phi in (Amplifier.binary(1.0), Amplifier.gaussian(1.0), taylor(data.Kur(0.7, 5.0).marginal)):
        assert amp.pad_quadrature(phi) is phi
        assert np.max(np.abs(evaluate_amplifier(phi, grid) - np.asarray(phi(grid)))) < 1e-15
    assert np.array_equal(evaluate_amplifier(jnp.sin, grid), np.sin(grid))
    assert evaluate_amplifier(Amplifier.binary(1.0), 1.0).shape == ()
    assert evaluate_amplifier(Amplifier.binary(1.0), np.zeros((2, 3))).shape == (2, 3)
    assert float(evaluate_amplifier(Amplifier.binary(1.0), 1.0)) == 1.0  # phi(1) = E|X|


def test_evaluate_amplifier_validation():
    from localization.theory import evaluate_amplifier

    with pytest.raises(TypeError, match="phi must be callable"):
        evaluate_amplifier(3.0, 0.5)
    with pytest.raises(ValueError, match=r"a must be finite and lie in \[-1, 1\]"):
        evaluate_amplifier(Amplifier.binary(1.0), [0.5, -1.5])
    with pytest.raises(ValueError, match=r"a must be finite and lie in \[-1, 1\]"):
        evaluate_amplifier(Amplifier.binary(1.0), np.nan)
    with pytest.raises(TypeError, match="a must be a real number or array"):
        evaluate_amplifier(Amplifier.binary(1.0), np.array([True]))


# -------------------------------------------------------------------------------------------------
# tabulated amplifier (theory.tabulated)
# -------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_tabulated_amplifier_accuracy_and_oddness():
    from localization.theory import tabulate_amplifier

    a = np.clip(np.linspace(-1, 1, 3001) + 1e-4 * np.sin(np.arange(3001)), -1, 1)
    for m in (data.Ising(0.7).marginal, data.NLGP(1.0, 100.0).marginal, data.Kur(1.0, 5.0).marginal):
        phi = amplifier_of(m)
        tab = tabulate_amplifier(phi)
        assert np.max(np.abs(np.asarray(tab(a)) - np.asarray(phi(a)))) < 1e-6, m
        assert np.allclose(np.asarray(tab(-a)), -np.asarray(tab(a)), rtol=0, atol=1e-15)
        assert float(tab(0.0)) == 0.0
    # linear functions are reproduced exactly by linear interpolation (Gaussian phi)
    lin = tabulate_amplifier(amplifier_of(data.Gaussian(1.0).marginal), num=5)
    assert np.allclose(np.asarray(lin(a)), SQ * a, rtol=0, atol=1e-14)
    # a pytree: passes through jit, and outside [-1, 1] inputs are clipped
    f = jax.jit(lambda t, x: t.core(x))
    assert float(f(lin, 2.0)) == pytest.approx(SQ, abs=1e-14)


def test_tabulate_validation():
    from localization.theory import tabulate_amplifier

    phi = amplifier_of(data.Gaussian(1.0).marginal)
    with pytest.raises(ValueError, match="num must be odd"):
        tabulate_amplifier(phi, num=10)
    with pytest.raises(ValueError, match="num"):
        tabulate_amplifier(phi, num=1)
    with pytest.raises(TypeError, match="phi"):
        tabulate_amplifier(3.0)
    with pytest.raises(ValueError, match="finite"):
        tabulate_amplifier(lambda a: a / 0.0 * 0.0)


def test_amplifier_needs_a_data_marginal():
    from types import SimpleNamespace

    fake = SimpleNamespace(variance=1.0, quadrature=lambda order=None: (np.array([-1.0, 1.0]), np.array([0.5, 0.5])))
    with pytest.raises(TypeError, match="marginal must be a localization.data marginal"):
        amplifier_of(fake)
    # a Gaussian marginal (the class, not its name) selects the closed form
    assert amplifier_of(data.Gaussian(1.0).marginal).kind == "gaussian"
    assert amplifier_of(data.Gaussian(1.0).marginal, method="quadrature").kind == "quadrature"
