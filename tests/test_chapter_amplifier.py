"""Identities of the library that the amplifier chapter (book/amplifier.md) relies on, and its helpers.

The chapter checks the paper's statements; the checks here are of the library itself: the batch loss
and gradient terms against their definitions, the exact Gaussian gated mean against Lemma 3.1's
final form, the amplifier φ (Eq. (amp-phi)) against adaptive quadrature of laws written out here from
their definitions (sharing no node, rule or density code with the library), and the functions of
``localization.experiments.amplifier`` that the chapter's check cells call.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.integrate
from scipy.special import erf

from localization import data, theory
from localization.experiments import amplifier as amx
from localization.theory import batch_gradient as bg
from localization.theory import exact_gated_mean as eg

N = 40
XI = (1.0, 3.0)
A_TEST = np.array([0.1, 0.5, 0.9])
TOL = dict(epsabs=1e-13, epsrel=1e-12)

MODELS = {
    "Gaussian": data.Gaussian(XI[1]),
    "Ising": data.Ising(0.7),
    "SinglePulse": data.SinglePulse(0.2, 0.4),
    "NLGP(0.01)": data.NLGP(XI[1], 0.01),
    "NLGP(1.1)": data.NLGP(XI[1], 1.1),
    "NLGP(3)": data.NLGP(XI[1], 3.0),
    "NLGP(100)": data.NLGP(XI[1], 100.0),
    "Kur(5)": data.Kur(XI[1], 5.0),
    "Kur(10)": data.Kur(XI[1], 10.0),
    "StudentT(3)": data.StudentT(XI[1], 3.0),
    "EllipseSurface": data.EllipseSurface(XI[1]),
    "RadialElliptical": data.RadialElliptical(XI[1]),
}


def _w(n=N, seed=0):
    return np.random.default_rng(seed).normal(size=n)


# ---------------------------------------------------------------- batch loss and gradient terms
def test_batch_loss_and_relu_term_are_their_definitions():
    task = data.LengthscaleTask.of(data.Gaussian, xi=XI)
    x, y = task.sample(jax.random.PRNGKey(0), 4096, N)
    w = jnp.asarray(_w())
    per_example = (y - jax.nn.relu(x @ w)) ** 2
    assert abs(float(bg.mse_loss(w, x, y)) - float(jnp.mean(per_example))) < 1e-14
    relu_x = np.asarray(jax.nn.relu(x @ w))[:, None] * np.asarray(x)
    assert np.allclose(relu_x.mean(axis=0), bg.gradient_terms(w, x, y).relu, rtol=0, atol=1e-12)


def test_gaussian_gated_mean_is_lemma_3_1_final_form():
    sig = data.Gaussian(XI[1]).covariance(N)
    w = _w()
    phi = theory.amplifier_of(data.Gaussian(XI[1]).marginal)
    half_phi = 0.5 * np.asarray(phi(theory.amplifier_argument(w, sig)))
    assert np.max(np.abs(np.asarray(eg.gaussian_gated_mean(w, sig)) - half_phi)) < 1e-12


# ---------------------------------------------------------------- φ by independent quadrature
def _integrands(xx):
    """x erf(x alg^-1(a) / sqrt 2) at the three test values of a, and |x| (all even in x)."""
    return np.append(xx * erf(xx * (A_TEST / np.sqrt(1 - A_TEST**2)) / math.sqrt(2)), abs(xx))


def _half_line(g, pieces):
    """2 * int g over consecutive pieces [lo, hi] of the half-line (quad_vec): (value, error estimate)."""
    parts = [scipy.integrate.quad_vec(g, lo, hi, **TOL) for lo, hi in pieces]
    return 2 * sum(v for v, _ in parts), 2 * sum(e for _, e in parts)


def _normal_pdf(z):
    return math.exp(-z * z / 2) / math.sqrt(2 * math.pi)


def _expect_by_quad(name, f=_integrands):
    """E f(X_1) for an even f under the class-1 marginal of MODELS[name], from the law's definition."""
    model = MODELS[name]
    if name in ("Ising", "SinglePulse"):  # atoms +-1, probability 1/2 each
        return 0.5 * (f(1.0) + f(-1.0)), 0.0
    if name == "Gaussian":
        return _half_line(lambda x: f(x) * _normal_pdf(x), [(0, 5), (5, 40)])
    if name.startswith("NLGP"):  # X = erf(g Z) / Zn, Z ~ N(0, 1)
        g = model.gain
        cuts = sorted({0.0, 12.0} | {c / g for c in (1.0, 4.0) if c / g < 12})
        pieces = list(zip(cuts[:-1], cuts[1:], strict=True))
        zn = math.sqrt(_half_line(lambda z: np.array([math.erf(g * z) ** 2 * _normal_pdf(z)]), pieces)[0][0])
        return _half_line(lambda z: f(math.erf(g * z) / zn) * _normal_pdf(z), pieces)
    if name.startswith("Kur"):  # Y = Zn X has density (1 + |y|^k)^(-(k+1)/k) / 2
        k = model.k

        def dens(y):
            return 0.5 * (1 + y**k) ** (-(k + 1) / k)

        pieces = [(0, 1), (1, 4), (4, 10), (10, math.inf)]
        zn = math.sqrt(_half_line(lambda y: np.array([y * y * dens(y)]), pieces)[0][0])
        return _half_line(lambda y: f(y / zn) * dens(y), pieces)
    if name.startswith("StudentT"):  # X = sqrt((nu - 2)/nu) T, T ~ t(nu)
        nu = model.nu
        log_c = math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu * math.pi)

        def t_pdf(t):
            return math.exp(log_c - (nu + 1) / 2 * math.log1p(t * t / nu))

        return _half_line(
            lambda t: f(math.sqrt((nu - 2) / nu) * t) * t_pdf(t), [(0, 1), (1, 4), (4, 10), (10, math.inf)]
        )
    # T = <e, U>, U uniform on the unit sphere of R^dim
    dim = model.marginal.dim
    log_c = math.lgamma(dim / 2) - math.lgamma((dim - 1) / 2) - 0.5 * math.log(math.pi)

    def s_pdf(t):
        return math.exp(log_c + (dim - 3) / 2 * math.log1p(-t * t))

    if name == "EllipseSurface":  # X = sqrt(dim) T
        return _half_line(lambda t: f(math.sqrt(dim) * t) * s_pdf(t), [(0, 0.3), (0.3, 1)])

    # RadialElliptical: X = R T sqrt(dim / E R^2), R - 2 = artanh(V) has density sech^2
    def sech2(u):
        return 1 / math.cosh(u) ** 2

    r_pieces = [(0, 1), (1, 5), (5, 40)]
    scale = math.sqrt(dim / (_half_line(lambda u: np.array([(2 + u) ** 2 * sech2(u)]), r_pieces)[0][0] / 2))

    def inner(u):
        return _half_line(lambda t: f(scale * (2 + u) * t) * s_pdf(t), [(0, 0.3), (0.3, 1)])[0]

    value, err = _half_line(lambda u: inner(u) * sech2(u), r_pieces)
    return value / 2, err / 2  # the outer integral is over u >= 0 only


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MODELS))
def test_amplifier_matches_independent_quadrature(name):
    marginal = MODELS[name].marginal
    value, est = _expect_by_quad(name)
    assert float(np.max(est)) < 1e-11
    lib = theory.evaluate_amplifier(theory.amplifier_of(marginal), A_TEST)
    assert np.max(np.abs(lib - value[:-1])) < 1e-9
    # E|X_1|, which the chapter's check of Eq. (amp-limit) takes from the library
    assert abs(marginal.expect(np.abs) - value[-1]) < 1e-9


# ---------------------------------------------------------------- experiments.amplifier
def test_lattice_weights_and_validation():
    w = amx.lattice_weights([0.3, -1.0, 0.004])
    assert np.array_equal(w, [30.0, -100.0, 0.0])
    with pytest.raises(ValueError, match="top"):
        amx.lattice_weights([1.0, 2.0], top=0)
    with pytest.raises(ValueError, match="w must be"):
        amx.lattice_weights([0.0, 0.0])


def test_ising_gate_and_discrepancies():
    n = 12
    sig = data.Ising(0.7).covariance(n)
    w = amx.lattice_weights(_w(n), top=20)
    exact, pred = amx.ising_gate(0.7, w, sig, 3)
    assert exact.shape == pred.shape == (2,)
    assert np.all((0 <= exact) & (exact <= 1)) and np.max(np.abs(exact - pred)) < 0.2
    with pytest.raises(ValueError, match="i must"):
        amx.ising_gate(0.7, w, sig, n)
    d1, d2 = amx.ising_discrepancies(0.7, w, sig)
    assert d1 < 1e-12 and d2 < 1e-12  # A1, A2 hold exactly for +-1 data
    with pytest.raises(ValueError, match="cov"):
        amx.ising_discrepancies(0.7, w, np.eye(n + 1))


def test_lindeberg_cases():
    cases = amx.lindeberg_cases(0.7, (40, 80))
    assert set(cases) == {(k, n) for k in ("one", "spread") for n in (40, 80)}
    for n in (40, 80):
        one = cases["one", n]
        assert abs(one["var"] - (1 - one["sigma01"] ** 2)) < 1e-12 and one["share"] > 1 - 1e-12
        assert cases["spread", n]["top"] == 30
    with pytest.raises(ValueError, match="ns"):
        amx.lindeberg_cases(0.7, (1,))


def test_single_pulse_atoms_have_the_model_covariance():
    pulse = data.SinglePulse(0.2, 0.4)
    pulses = amx.single_pulse_atoms(pulse, 20)
    atoms = np.concatenate([pulses, -pulses])
    assert set(np.unique(atoms)) == {-1.0, 1.0}
    assert np.max(np.abs(atoms.T @ atoms / len(atoms) - np.asarray(pulse.covariance(20)))) < 1e-12
    with pytest.raises(TypeError, match="SinglePulse"):
        amx.single_pulse_atoms(data.Gaussian(1.0), 20)


def test_gated_mean_errors_on_gaussian_samples():
    n = 16
    model = data.Gaussian(XI[1])
    x = model.sample(jax.random.PRNGKey(1), 2**14, n)
    w = _w(n)
    phi = theory.amplifier_of(model.marginal)
    assert amx.final_form_error(w, x, model.covariance(n), phi) < 0.1
    ell = amx.elliptical_errors(w, x, model.covariance(n), model.marginal, phi)
    assert set(ell) == {"C", "z", "rel", "printed", "lemma"}
    assert abs(ell["C"] - math.sqrt(2 / math.pi)) < 1e-10 and ell["lemma"] < 1e-10
    e, i_star, abs_a, diff, z = amx.binned_gate(w, x, model.covariance(n), bins=6)
    assert 0 <= i_star < n and 0 < abs_a < 1 and diff < 0.1 and z >= 0
    d1, d2, ratio = amx.elliptical_discrepancies(x, w)
    assert d1 < 0.1 and d2 < 0.1 and 0.8 < ratio < 1.25  # Gaussian: A1, A2 hold
    with pytest.raises(ValueError, match="bins"):
        amx.binned_gate(w, x, model.covariance(n), bins=1)


def test_phi_of_density_gaussian_is_linear():
    def normal(xx):
        return math.exp(-xx * xx / 2) / math.sqrt(2 * math.pi)

    for a in (0.1, 0.5, 0.9):
        assert abs(amx.phi_of_density(a, normal, math.inf) - math.sqrt(2 / math.pi) * a) < 1e-10
    with pytest.raises(ValueError, match="a must"):
        amx.phi_of_density(1.0, normal, math.inf)
    with pytest.raises(ValueError, match="upper"):
        amx.phi_of_density(0.5, normal, 0.0)
    with pytest.raises(TypeError, match="density"):
        amx.phi_of_density(0.5, 1.0, 1.0)


def test_tables():
    text = amx.text_table(["a", "bb"], [[1, "x"], ["long", 2]])
    assert text.splitlines() == ["a     bb", "----  --", "1     x", "long  2"]
    assert amx.md_table(["a", "b"], [[1, 2]]) == "| a | b |\n|---|---|\n| 1 | 2 |"
    with pytest.raises(ValueError, match="rows"):
        amx.md_table(["a"], [[1, 2]])
