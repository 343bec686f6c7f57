"""The prediction from a data set (``theory.prediction``, ``experiments.own_data``) and the training that checks it.

Tolerances are stated before the runs: identities to rounding (1e-12, or the float32 of a product of
small corrections), sampled quantities from the bootstrap's nominal level with a binomial allowance
(stated at each test), the expansion of the bootstrap against the exact recomputation to a fraction of
the resamples' spread that its O(S^-1/2) relative error leaves room for.
"""

import json
import math

import jax
import numpy as np
import pytest

from localization import data, theory
from localization.data.empirical import EmpiricalModel
from localization.experiments import own_data
from localization.theory import prediction as rule

KEY = jax.random.key(0)
SLOPE = math.sqrt(2.0 / math.pi)


def samples_of(model, num, n=16, seed=1):
    """``num`` samples of a data model as a NumPy (num, N) array."""
    return np.asarray(model.sample(jax.random.key(seed), num, n), dtype=np.float64)


# --------------------------------------------------------------------------------------------- the rule
@pytest.mark.parametrize(
    "low, high, verdict",
    [
        (-0.5, -0.1, "localizes"),
        (0.1, 2.0, "does not localize"),
        (-0.1, 0.1, "undecided"),
        (-0.3, 0.0, "undecided"),  # touching 0 does not settle the sign
        (0.0, 0.2, "undecided"),
        (-2.0, -2.0, "localizes"),
    ],
)
def test_sign_rule(low, high, verdict):
    assert rule.sign_rule(low, high) == verdict
    assert verdict in rule.VERDICTS


def test_sign_rule_rejects_bad_intervals():
    with pytest.raises(ValueError, match="low must be <= high"):
        rule.sign_rule(0.5, -0.5)
    with pytest.raises(ValueError, match="high must be finite"):
        rule.sign_rule(-1.0, math.inf)
    with pytest.raises(TypeError, match="low must be a real number"):
        rule.sign_rule("-1", 0.0)


# ------------------------------------------------------------------------------------- Eq. (6) on samples
A = np.array([0.05, 0.3, 0.6, 0.9, 0.99])


def test_empirical_amplifier_of_two_atoms_is_the_closed_form():
    # X = +-1 with probability 1/2: phi(a) = erf(a / sqrt(2 (1 - a^2))) (theory.amplifier's closed form)
    x = np.array([[1.0, -1.0], [-1.0, 1.0]])
    exact = theory.evaluate_amplifier(theory.amplifier_of(data.RademacherMarginal()), A)
    np.testing.assert_allclose(rule.empirical_amplifier(x, A), exact, rtol=0, atol=1e-14)


def test_empirical_amplifier_of_normal_quantiles_is_the_gaussian_line():
    # 200,000 mid-quantiles of N(0, 1): phi(a) = sqrt(2/pi) a up to the quantisation, well below 1e-4
    from scipy.stats import norm

    q = norm.ppf((np.arange(200_000) + 0.5) / 200_000).reshape(-1, 4)
    q = q / np.sqrt(np.mean(q**2))  # unit variance exactly, as the theory's line assumes
    np.testing.assert_allclose(rule.empirical_amplifier(q, A), rule.gaussian_line(A), rtol=0, atol=1e-4)


def test_integrand_slope_is_the_derivative_of_the_integrand():
    x = np.linspace(-4.0, 4.0, 41)
    h = 1e-5  # central differences: truncation ~h^2 |g'''| < 1e-8, rounding ~1e-16 / h ~ 1e-11
    numeric = (rule.amplifier_integrand(x + h, A) - rule.amplifier_integrand(x - h, A)) / (2 * h)
    np.testing.assert_allclose(rule.amplifier_integrand_slope(x, A), numeric, rtol=0, atol=1e-8)
    assert rule.amplifier_integrand(x, A).shape == (41, 5)


@pytest.mark.parametrize("block", [40, 1 << 22])  # blocks of 2 rows: the last of 37 is padded
def test_amplifier_terms_are_the_means_they_name(block, monkeypatch):
    # The padding's g''(0) must be taken out of the curvature sums. Agreement to 1e-9: XLA's float64
    # erf and exp differ in their last ~7 digits between array shapes (measured ~5e-11).
    monkeypatch.setattr(rule, "_BLOCK", block)
    z = np.random.default_rng(3).standard_normal((37, 3))
    terms = rule.amplifier_terms(z, A)
    g, slope, curvature = (np.asarray(t) for t in rule.amplifier_integrand_core(jax.numpy.asarray(z), A))
    np.testing.assert_allclose(terms.per_sample, g.mean(axis=1), rtol=0, atol=1e-9)
    for d, values in enumerate((slope, curvature)):
        for k in range(3):
            direct = np.mean(z[..., None] ** k * values, axis=0)
            np.testing.assert_allclose(terms.derivatives[d, k], direct, rtol=0, atol=1e-9)
    np.testing.assert_allclose(rule.empirical_amplifier(z, A), g.mean(axis=(0, 1)), rtol=0, atol=1e-9)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: rule.empirical_amplifier(np.ones((4, 2)), [0.5, 1.0]), ValueError, r"a must lie in \[0, 1\)"),
        (lambda: rule.empirical_amplifier(np.ones((4, 2)), [-0.1]), ValueError, r"a must lie in \[0, 1\)"),
        (lambda: rule.empirical_amplifier(np.ones(4), [0.5]), ValueError, r"samples must be a non-empty \(S, N\)"),
        (lambda: rule.empirical_amplifier([[1.0, math.nan]], [0.5]), ValueError, "samples must be finite"),
        (lambda: rule.amplifier_integrand("x", [0.5]), TypeError, "x must be a real number or array"),
    ],
)
def test_eq6_helpers_check_their_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ----------------------------------------------------------------------------------------------- predict
@pytest.mark.slow
@pytest.mark.parametrize(
    "model, verdict",
    [
        (data.NLGP(xi=3.0, gain=10.0), "localizes"),  # excess kurtosis -1.95
        (data.Ising(J=0.7), "localizes"),  # Rademacher marginal: -2
        (data.StudentT(xi=3.0, nu=8.0), "does not localize"),  # +1.5, one scale per sample
        (data.StudentT(xi=3.0, nu=12.0), "does not localize"),  # +0.75
        # (not Kur(5), +1.29: its 8th moment diverges and 3000 samples of N = 16 often estimate ~0.3)
    ],
)
def test_predict_on_laws_of_known_sign(model, verdict):
    p = own_data.predict(KEY, samples_of(model, 3000), resamples=100)
    assert p.verdict == verdict, (p.excess_kurtosis, p.kurtosis_interval)


@pytest.mark.slow
def test_predict_on_gaussian_data_is_mostly_undecided():
    # 20 Gaussian data sets: each 95% interval contains the true 0 with probability ~0.95 (a little
    # less for a bootstrap interval at S = 400); 15 or more undecided fails with probability < 1 %
    # if that probability is >= 0.9
    x = samples_of(data.Gaussian(xi=2.0), 20 * 400, n=12)
    verdicts = [
        own_data.predict(jax.random.fold_in(KEY, i), part, resamples=100).verdict
        for i, part in enumerate(np.split(x, 20))
    ]
    assert verdicts.count("undecided") >= 15, verdicts


@pytest.mark.slow
def test_intervals_and_bands_cover_the_law_at_their_level():
    # 60 data sets of NLGP(g = 1) (all moments finite): the 95% kurtosis interval should contain the
    # law's exact excess kurtosis, and the band of phi at a = 0.5 its exact phi, in ~95% of them (a
    # bootstrap interval under-covers a little at S = 300). Required: 48 of 60 (80%), which a
    # coverage of 0.9 misses with probability ~0.4 % (binomial) and one of 0.95 almost never. (The
    # plain percentile interval, which doubles the estimator's bias, covered the kurtosis 50 times.)
    model = data.NLGP(xi=2.0, gain=1.0)
    exact_kurtosis = float(model.marginal.excess_kurtosis)
    exact_phi = float(theory.evaluate_amplifier(theory.amplifier_of(model.marginal), np.array([0.5]))[0])
    x = samples_of(model, 60 * 300, n=12)
    kurtosis_hits = phi_hits = 0
    for i, part in enumerate(np.split(x, 60)):
        p = own_data.predict(jax.random.fold_in(KEY, i), part, resamples=200, grid=3)  # a = 0.25, 0.5, 0.75
        low, high = p.kurtosis_interval
        kurtosis_hits += low <= exact_kurtosis <= high
        phi_hits += p.amplifier_band[0, 1] <= exact_phi <= p.amplifier_band[1, 1]
    assert kurtosis_hits >= 48 and phi_hits >= 48, (kurtosis_hits, phi_hits)


@pytest.mark.slow
def test_prediction_is_consistent_with_its_data():
    x = samples_of(data.Kur(xi=2.0, k=8.0), 1500)
    model = EmpiricalModel.of(x)
    p = own_data.predict(KEY, model, resamples=50, level=0.9, grid=9)
    z = (x - x.mean(axis=0)) / x.std(axis=0)  # an independent z-scoring
    per_coordinate = np.mean(z**4, axis=0) / np.mean(z**2, axis=0) ** 2 - 3.0
    np.testing.assert_allclose(p.coordinate_kurtosis, per_coordinate, rtol=0, atol=1e-10)
    np.testing.assert_allclose(p.excess_kurtosis, np.mean(z**4) / np.mean(z**2) ** 2 - 3.0, rtol=0, atol=1e-10)
    np.testing.assert_allclose(p.a, np.arange(1, 10) / 10, rtol=0, atol=1e-15)
    np.testing.assert_allclose(p.amplifier, rule.empirical_amplifier(z, p.a), rtol=0, atol=1e-12)
    np.testing.assert_allclose(p.deviation, p.amplifier - SLOPE * p.a, rtol=0, atol=1e-15)
    np.testing.assert_allclose(p.deviation_band, p.amplifier_band - SLOPE * p.a, rtol=0, atol=1e-15)
    assert p.verdict == rule.sign_rule(*p.kurtosis_interval)
    assert (p.n_samples, p.n_inputs, p.shape, p.level, p.resamples) == (1500, 16, (16,), 0.9, 50)
    assert p.amplifier_band.shape == (2, 9) and np.all(p.amplifier_band[0] <= p.amplifier_band[1])
    np.testing.assert_array_equal(p.superlinear, p.deviation_band[0] > 0)
    # the data model's own amplifier (its 2048-atom quadrature of the same law) agrees within the band
    quadrature = theory.evaluate_amplifier(theory.amplifier_of(model.marginal), p.a)
    half_width = (p.amplifier_band[1] - p.amplifier_band[0]) / 2
    assert np.all(np.abs(quadrature - p.amplifier) <= half_width), (quadrature - p.amplifier, half_width)
    json.dumps(p.as_dict(), allow_nan=False)  # every number finite, plain Python
    again = own_data.predict(KEY, model, resamples=50, level=0.9, grid=9)
    assert again.kurtosis_interval == p.kurtosis_interval  # the key fixes the resamples


def test_bca_interval_reduces_to_percentiles_and_corrects_bias():
    rng = np.random.default_rng(0)
    replicates = rng.standard_normal(4001)
    symmetric = np.concatenate([[-1.0, 1.0]] * 50)  # influence without skew: no acceleration
    # unbiased (median at the estimate) and unskewed: the percentile interval
    plain = own_data._bca(np.median(replicates), replicates, symmetric, 0.9)
    np.testing.assert_allclose(plain, np.quantile(replicates, [0.05, 0.95]), rtol=0, atol=1e-12)
    # resamples shifted up from the estimate by ~0.5 sd (the estimator's bias, reproduced): the levels
    # become Phi(2 z0 + z), z0 = Phi^-1(share below the estimate) ~ -0.5, so the interval moves down by
    # about twice the shift (1 sd, to the sampling noise of 4001 normals' tails, ~0.1)
    from scipy.special import ndtr, ndtri

    estimate = np.median(replicates) - 0.5
    shifted = own_data._bca(estimate, replicates, symmetric, 0.9)
    z0 = ndtri(np.mean(replicates < estimate))
    levels = ndtr(2 * z0 + ndtri(np.array([0.05, 0.95])))
    np.testing.assert_allclose(shifted, np.quantile(replicates, levels), rtol=0, atol=1e-12)
    np.testing.assert_allclose(shifted, np.quantile(replicates, [0.05, 0.95]) - 1.0, rtol=0, atol=0.15)


@pytest.mark.slow
@pytest.mark.parametrize("model", [data.NLGP(xi=3.0, gain=10.0), data.Gaussian(xi=3.0), data.Kur(xi=3.0, k=8.0)])
def test_the_expansion_matches_the_exact_bootstrap(model, monkeypatch):
    # Same resamples (same key), phi recomputed exactly or by the expansion: the expansion's relative
    # error is O(S^-1/2) (second order against the first-order spread); at S = 2000 the band's ends
    # must agree to 0.1 of its half-width. (A first-order expansion without the exact x^2 part is off
    # by more than a whole spread on NLGP: the test tells them apart.)
    x = samples_of(model, 2000, n=20)
    monkeypatch.setattr(own_data, "EXACT_BUDGET", 10**12)
    exact = own_data.predict(KEY, x, resamples=60, grid=7)
    monkeypatch.setattr(own_data, "EXACT_BUDGET", 0)
    expanded = own_data.predict(KEY, x, resamples=60, grid=7)
    assert (exact.band_method, expanded.band_method) == ("exact", "expansion")
    half_width = (exact.amplifier_band[1] - exact.amplifier_band[0]) / 2
    assert np.all(np.abs(expanded.amplifier_band - exact.amplifier_band) <= 0.1 * half_width)
    assert expanded.kurtosis_interval == exact.kurtosis_interval


@pytest.mark.slow
def test_predict_reads_patches():
    x = samples_of(data.NLGP(xi=1.5, gain=3.0), 200, n=(6, 6)).reshape(200, 6, 6)
    p = own_data.predict(KEY, x, resamples=10, grid=3)
    assert p.shape == (6, 6) and p.n_inputs == 36 and p.n_samples == 200
    flat = own_data.predict(KEY, x.reshape(200, 36), shape=(6, 6), resamples=10, grid=3)
    assert flat.shape == (6, 6) and flat.kurtosis_interval == p.kurtosis_interval


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(key=0), TypeError, "key must be a single JAX PRNG key"),
        (dict(resamples=9), ValueError, "resamples must be an integer >= 10"),
        (dict(resamples=10.0), TypeError, "resamples must be an integer"),
        (dict(level=1.0), ValueError, r"level must lie in \(0.0, 1.0\)"),
        (dict(level=0.0), ValueError, r"level must lie in \(0.0, 1.0\)"),
        (dict(grid=2), ValueError, "grid must be an integer >= 3"),
        (dict(progress=1), TypeError, "progress must be a bool"),
        (dict(samples=np.ones((30, 4))), ValueError, "zero variance"),
        (dict(samples=np.full((30, 4), math.nan)), ValueError, "samples must be finite"),
        (dict(samples=np.zeros((10, 4)) + np.arange(10)[:, None]), ValueError, "at least 20 samples"),
        (dict(samples=np.array([["a", "b"]] * 30)), TypeError, "samples must be a real"),
        (dict(samples=np.ones((30, 2, 2, 2))), ValueError, "ndim 4"),
    ],
)
def test_predict_checks_its_arguments(kwargs, error, match):
    args = dict(key=KEY, samples=np.random.default_rng(0).standard_normal((40, 4)))
    args.update(kwargs)
    with pytest.raises(error, match=match):
        own_data.predict(args.pop("key"), args.pop("samples"), **args)


def test_shape_is_the_models_own_when_a_model_is_given():
    model = EmpiricalModel.of(np.random.default_rng(0).standard_normal((40, 4)))
    with pytest.raises(ValueError, match="shape must be None"):
        own_data.predict(KEY, model, shape=4)


# ------------------------------------------------------------------------------------------- training
def _run(localized, verdict="localizes"):
    """A run with the given judgements and a prediction with the given verdict (no training)."""
    localized = np.asarray(localized)
    run = own_data.OwnDataRun(
        w0=np.zeros((localized.size, 4)),
        weights=np.ones((localized.size, 4)),
        shape=(4,),
        against="white",
        geometry="ring",
        localized=localized,
        localization_share=np.where(localized, 0.9, 0.4),
        lr=0.1,
        batch=10,
        steps=5,
    )
    a = np.array([0.25, 0.5, 0.75])
    prediction = own_data.Prediction(
        verdict=verdict,
        n_samples=40,
        n_inputs=4,
        shape=(4,),
        level=0.95,
        resamples=10,
        excess_kurtosis=0.0,
        kurtosis_interval=(-0.1, 0.1),
        coordinate_kurtosis=np.zeros(4),
        a=a,
        band_method="exact",
        amplifier=SLOPE * a,
        amplifier_band=np.stack([SLOPE * a, SLOPE * a]),
        deviation=np.zeros(3),
        deviation_band=np.zeros((2, 3)),
        superlinear=np.zeros(3, bool),
        sublinear=np.zeros(3, bool),
    )
    return run, prediction


@pytest.mark.parametrize(
    "localized, verdict, agrees",
    [
        ([1, 1, 1, 0], "localizes", True),
        ([1, 1, 0, 0], "localizes", False),  # half is not most
        ([0, 0, 0, 0], "localizes", False),
        ([1, 0, 0, 0], "does not localize", True),  # at most one
        ([1, 1, 0, 0], "does not localize", False),
        ([1, 1, 1, 1], "undecided", None),
    ],
)
def test_agreement_rule(localized, verdict, agrees):
    run, prediction = _run(np.asarray(localized, dtype=bool), verdict)
    assert run.agrees_with(prediction) is agrees
    assert run.localized_fraction == np.mean(localized) and run.time == pytest.approx(0.5)
    with pytest.raises(TypeError, match="prediction must be a Prediction"):
        run.agrees_with(verdict)


@pytest.mark.slow
def test_training_on_sub_gaussian_data_localizes_and_agrees():
    x = samples_of(data.NLGP(xi=3.0, gain=10.0), 4000, n=40)
    model = EmpiricalModel.of(x)
    run = own_data.train_on_samples(KEY, model)  # the defaults: 8 starts, time 300
    assert run.weights.shape == run.w0.shape == (8, 40)
    assert run.localized.sum() >= 7, run.localization_share  # measured 8 of 8 on other data seeds
    prediction = own_data.predict(KEY, model, resamples=20)
    assert prediction.verdict == "localizes" and run.agrees_with(prediction)
    json.dumps(run.as_dict(), allow_nan=False)


@pytest.mark.slow
@pytest.mark.parametrize("model", [data.Gaussian(xi=3.0), data.Kur(xi=3.0, k=5.0)])
def test_training_on_gaussian_or_heavy_tailed_data_does_not_localize(model):
    # against white noise (the default): at most one of 4 fields localized (measured: none of 8)
    run = own_data.train_on_samples(KEY, EmpiricalModel.of(samples_of(model, 4000, n=40)), inits=4)
    assert run.localized.sum() <= 1, run.localization_share


@pytest.mark.slow
def test_against_the_clone_a_super_gaussian_law_can_localize():
    # Kur(5): excess kurtosis +1.29 but phi super-linear above a ~ 0.67. With equal class covariances
    # the linear part of the flow cancels and such a phi localizes (measured 7-8 of 8): the reason the
    # default class 0 is white noise. Required: more than one of 4. (With 4000 samples instead of
    # 20,000 none of 4 localized in two draws: the data's tails are then too thinly sampled.)
    x = samples_of(data.Kur(xi=3.0, k=5.0), 20_000, n=40)
    run = own_data.train_on_samples(KEY, EmpiricalModel.of(x), against="clone", inits=4)
    assert run.against == "clone" and run.localized.sum() >= 2, run.localization_share


@pytest.mark.parametrize("geometry", ["ring", "line"])
def test_the_geometry_is_recorded(geometry):
    model = EmpiricalModel.of(np.random.default_rng(0).standard_normal((400, 8)))
    run = own_data.train_on_samples(KEY, model, geometry=geometry, inits=2, steps=5, batch=20)
    assert run.geometry == geometry and run.as_dict()["geometry"] == geometry


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(model=np.ones((30, 4))), TypeError, "model must be a data.empirical.EmpiricalModel"),
        (dict(against="noise"), ValueError, "against must be one of"),
        (dict(geometry="torus"), ValueError, "geometry must be one of"),
        (dict(inits=0), ValueError, "inits must be an integer >= 1"),
        (dict(steps=0), ValueError, "steps must be an integer >= 1"),
        (dict(lr=0.0), ValueError, "lr must be positive"),
        (dict(batch=0), ValueError, "batch must be an integer >= 1"),
        (dict(init_scale=-1.0), ValueError, "init_scale must be positive"),
        (dict(progress="yes"), TypeError, "progress must be a bool"),
    ],
)
def test_training_checks_its_arguments(kwargs, error, match):
    args = dict(model=EmpiricalModel.of(np.random.default_rng(0).standard_normal((40, 4))))
    args.update(kwargs)
    with pytest.raises(error, match=match):
        own_data.train_on_samples(KEY, args.pop("model"), **args)


@pytest.mark.slow
def test_a_diverging_run_is_reported():
    model = EmpiricalModel.of(np.random.default_rng(0).standard_normal((40, 8)))
    with pytest.raises(ValueError, match="training diverged"):
        own_data.train_on_samples(KEY, model, lr=1e30, steps=20, batch=50, inits=2)
