"""localization.experiments.real_images: rows on a ring, the tasks, the finite-N prediction and the runs.

Tolerances are stated before the runs: identities to rounding (1e-10 and tighter), sampled quantities
to 6 standard errors computed from the data themselves. Small data sets (a few hundred rows) keep every
test within a few seconds.
"""

import math

import jax
import numpy as np
import pytest

from localization import data, field_analysis, theory
from localization.data import ring
from localization.data.empirical import CloneTask, EmpiricalModel
from localization.experiments import real_images as ri

KEY = jax.random.key(0)
SMALL = dict(samples=300, inits=3, flow_time=20.0, sgd_time=5.0, batch=64, checkpoints=5)


def small(**changes):
    return ri.RealImageSettings(**{**SMALL, **changes})


def rolled_covariance(x, shape):
    """The covariance of every cyclic shift of every row of x (S, N), computed from the shifted rows."""
    grid = x.reshape(x.shape[0], *shape)
    axes = tuple(range(1, len(shape) + 1))
    shifts = np.stack(np.meshgrid(*[np.arange(n) for n in shape], indexing="ij"), -1).reshape(-1, len(shape))
    rows = np.concatenate([np.roll(grid, tuple(s), axis=axes).reshape(x.shape[0], -1) for s in shifts])
    return rows.T @ rows / rows.shape[0]


# --------------------------------------------------------------------------------------- settings
@pytest.mark.parametrize(
    ("field", "value", "error", "words"),
    [
        ("image", "lena.png", ValueError, "image must be one of"),
        ("preprocessing", "blurred", ValueError, "preprocessing must be one of"),
        ("shape", (3,), ValueError, "shape"),
        ("shape", (8, 8, 8), ValueError, "shape must be (N,) or (h, w)"),
        ("task", "noise", ValueError, "task must be one of"),
        ("geometry", "torus", ValueError, "geometry must be one of"),
        ("samples", 5, ValueError, "samples"),
        ("inits", 0, ValueError, "inits"),
        ("init_scale", -1.0, ValueError, "init_scale"),
        ("max_lr", 0.0, ValueError, "max_lr"),
        ("flow_time", float("nan"), ValueError, "flow_time"),
        ("batch", 2.5, TypeError, "batch"),
        ("checkpoints", 2, ValueError, "checkpoints"),
        ("settle_tolerance", 1.0, ValueError, "settle_tolerance"),
    ],
)
def test_settings_name_the_bad_field(field, value, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        ri.RealImageSettings(**{field: value})


def test_settings_normalise_the_shape_and_refuse_a_lengthscale_task_on_whitened_data():
    s = ri.RealImageSettings(shape=40)
    assert s.shape == (40,) and s.n == 40 and s.N == 40
    assert ri.RealImageSettings(shape=[8, 10]).n == (8, 10)
    with pytest.raises(ValueError, match="whitening removes"):
        ri.RealImageSettings(preprocessing="whitened", task="lengthscale")
    assert ri.RealImageSettings(preprocessing="whitened", task="clone").task == "clone"


# --------------------------------------------------------------------------------------- the ring
@pytest.mark.parametrize("shape", [(6,), (3, 4)])
def test_ring_average_is_the_covariance_of_all_cyclic_shifts(shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((50, math.prod(shape))) @ rng.standard_normal((math.prod(shape),) * 2)
    cov = x.T @ x / x.shape[0]
    np.testing.assert_allclose(ring.ring_average(cov, shape), rolled_covariance(x, shape), rtol=0, atol=1e-10)


@pytest.mark.parametrize("shape", [(7,), (4, 5)])
def test_torus_eigenvalues_are_the_spectrum_of_the_ring_average(shape):
    rng = np.random.default_rng(2)
    N = math.prod(shape)
    a = rng.standard_normal((N, N))
    circ = ring.ring_average(a @ a.T, shape)
    lam = ring.torus_eigenvalues(circ, shape)
    assert lam.shape == shape
    np.testing.assert_allclose(np.sort(lam.ravel()), np.linalg.eigvalsh(circ), rtol=0, atol=1e-10)
    np.testing.assert_allclose(lam.ravel()[0], circ.sum() / N, rtol=1e-12)  # the constant's eigenvalue
    with pytest.raises(ValueError, match="circulant"):
        ring.torus_eigenvalues(a @ a.T, shape)  # not shift-averaged


def test_ring_model_draws_cyclic_shifts_of_stored_rows_with_uniform_shifts():
    n = 5
    rows = np.arange(1.0, 1.0 + 30 * n).reshape(30, n) ** 1.5  # distinct values, every row recognisable
    source = EmpiricalModel.of(rows, symmetrize=False)
    model = ring.RingModel(source)
    x = np.asarray(model.sample(KEY, 20_000, n))
    table = source.samples
    where = {tuple(np.round(np.roll(r, s), 12)): s for r in table for s in range(n)}
    shifts = np.array([where[tuple(np.round(row, 12))] for row in x])  # KeyError if a draw is no shift of a row
    counts = np.bincount(shifts, minlength=n)
    # uniform shifts: each count is Binomial(20000, 1/5); 6 standard errors
    assert np.all(np.abs(counts - 4000) < 6 * math.sqrt(20_000 * 0.2 * 0.8)), counts
    np.testing.assert_allclose(model.covariance(n), ring.ring_average(source.covariance(n), (n,)), atol=1e-12)
    assert model.marginal == source.marginal


def test_ring_model_on_patches_has_the_torus_average_covariance_in_its_samples():
    x = ri.image_samples(KEY, "flower.jpg", "raw", (4, 4), 400)
    model = ring.RingModel(EmpiricalModel.of(x))
    draws = np.asarray(model.sample(jax.random.key(3), 10_000, (4, 4)))
    cov = model.covariance((4, 4))
    np.testing.assert_allclose(np.diag(cov), 1.0, atol=1e-12)
    # each entry of the sample covariance: standard error sqrt(Var(x_i x_j) / 10000) (rows repeat: the
    # stored 800 rows x 16 shifts are the law, and the draws are independent from it)
    prod = draws[:, :, None] * draws[:, None, :]
    se = prod.std(axis=0) / math.sqrt(draws.shape[0])
    assert np.all(np.abs(prod.mean(axis=0) - cov) < 6 * se + 1e-12)
    with pytest.raises(TypeError, match="EmpiricalModel"):
        ring.RingModel(data.Gaussian(xi=1.0))


# --------------------------------------------------------------------------------------- data and tasks
def test_image_samples_keep_every_second_pixel_and_preprocess_after_the_cut():
    from localization.data import images

    wide = images.image_rows(KEY, "china.jpg", 16, 50)
    np.testing.assert_array_equal(ri.image_samples(KEY, "china.jpg", "raw", (8,), 50, stride=2), wide[:, ::2])
    centred = ri.image_samples(KEY, "china.jpg", "centred", (8,), 50, stride=2)
    np.testing.assert_allclose(centred, wide[:, ::2] - wide[:, ::2].mean(axis=1, keepdims=True), atol=1e-15)
    patches = images.image_patches(KEY, "china.jpg", (8, 6), 50)
    np.testing.assert_array_equal(ri.image_samples(KEY, "china.jpg", "raw", (4, 3), 50, stride=2), patches[:, ::2, ::2])
    white = ri.image_samples(KEY, "flower.jpg", "whitened", (8,), 2000, stride=2).reshape(2000, -1)
    lam = np.linalg.eigvalsh(np.cov(white.T, bias=True))
    # the unfloored directions have unit variance; the row constant (centred away) has none
    assert lam[0] < 1e-10 and np.all(lam[1:] <= 1 + 1e-9) and lam[-1] > 1 - 1e-9
    with pytest.raises(ValueError, match="preprocessing"):
        ri.image_samples(KEY, "china.jpg", "sharpened", (8,), 50)


@pytest.mark.parametrize("task", ri.TASKS)
def test_build_task_gives_unit_diagonal_covariances_and_the_stable_step(task):
    built = ri.build_task(KEY, small(task=task, preprocessing="centre_surround"))
    N = built.settings.N
    np.testing.assert_allclose(np.diag(built.cov1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.diag(built.cov0), 1.0, atol=1e-12)
    for cov in (built.cov0, built.cov1):  # the ring makes both circulant
        ring.torus_eigenvalues(cov, built.settings.shape)
    rate = np.linalg.eigvalsh(0.5 * (built.cov0 + built.cov1))[-1]
    assert built.lr == pytest.approx(min(0.05, 1 / rate), rel=1e-12)
    if task == "clone":
        assert isinstance(built.task, CloneTask)
        np.testing.assert_array_equal(built.cov0, built.cov1)
    elif task == "white":
        np.testing.assert_allclose(built.cov0, np.eye(N), atol=1e-12)
    else:  # every second pixel: shorter correlations, the same pixels
        assert built.neighbour_correlation[0] < built.neighbour_correlation[1]
    x, y = built.task.sample(KEY, 8, built.settings.n)
    assert x.shape == (8, N) and y.shape == (8,)


# --------------------------------------------------------------------------------------- the prediction
@pytest.mark.parametrize(("image", "task"), [("flower.jpg", "clone"), ("flower.jpg", "lengthscale")])
def test_reference_state_at_the_constant_agrees_with_the_mechanism_formulas(image, task):
    built = ri.build_task(KEY, small(image=image, task=task, samples=2000))
    ref = ri.reference_state(built)
    assert ref.constant and ref.converged
    # the Newton fixed point is the constant state of the mechanism chapter
    st = theory.constant_mode_stability(built.amplifier, built.cov0, built.cov1)
    np.testing.assert_allclose(ref.weights, st.amplitude, rtol=1e-8)
    # Jacobian by automatic differentiation vs the Fourier formula of the growth rates
    assert ref.top_rate == pytest.approx(st.rates.max(), abs=1e-8)
    cs = ref.constant_state
    assert cs.alpha == pytest.approx(st.alpha, rel=1e-12) and cs.threshold == pytest.approx(st.threshold, rel=1e-10)
    assert cs.elasticity == pytest.approx(st.elasticity, rel=1e-8)
    if task == "clone":
        assert ref.tied == built.settings.N and ref.ratio == pytest.approx(1.0, abs=1e-9) and cs.threshold == 1.0


def test_reference_state_on_a_torus_matches_the_rates_from_its_spectrum():
    built = ri.build_task(KEY, small(image="flower.jpg", shape=(6, 6), task="lengthscale", samples=1000))
    ref = ri.reference_state(built)
    assert ref.constant and ref.converged
    lam0 = ring.torus_eigenvalues(built.cov0, (6, 6)).ravel()
    lam1 = ring.torus_eigenvalues(built.cov1, (6, 6)).ravel()
    rho, r = ref.constant_state.elasticity, lam0 / lam1
    rates = 0.5 * lam1[1:] * ((1 + r[0]) * rho - 1 - r[1:])
    assert ref.top_rate == pytest.approx(max(rates.max(), -0.5 * (lam0[0] + lam1[0])), abs=1e-8)


def test_reference_state_selects_the_least_ratio_when_the_constant_loses():
    # centred rows have no constant direction: the selected state is a pair of waves of one frequency
    built = ri.build_task(KEY, small(preprocessing="centred", task="lengthscale", samples=2000))
    ref = ri.reference_state(built)
    assert not ref.constant and ref.constant_state is None and ref.tied == 2
    share = field_analysis.frequency_power(ref.start, built.settings.n)
    assert share.max() > 1 - 1e-9  # one frequency
    lam, vec = np.linalg.eigh(built.cov1)
    keep = lam > 1e-8 * lam[-1]
    b = vec[:, keep] / np.sqrt(lam[keep])
    assert ref.ratio == pytest.approx(np.linalg.eigvalsh(b.T @ built.cov0 @ b)[0], rel=1e-10)
    assert ref.verdict in ("stable", "unstable", "marginal")


# --------------------------------------------------------------------------------------- the runs
def test_open_share_does_not_join_the_ends_of_a_row():
    n = 40
    split = np.zeros(n)
    split[[0, 1, 38, 39]] = 1.0  # one bump on the ring, two halves on the line
    inside = np.roll(split, 20)
    assert field_analysis.localization_share(split, n) == pytest.approx(1.0)
    assert ri.open_share(split, (n,)) == pytest.approx(0.5)
    assert ri.open_share(inside, (n,)) == pytest.approx(1.0)
    patch = np.zeros((8, 8))
    patch[0, 0] = patch[7, 7] = 1.0  # opposite corners: neighbours on the torus only
    assert ri.open_share(patch.ravel(), (8, 8)) == pytest.approx(0.5)
    assert field_analysis.localization_share(patch.ravel(), (8, 8)) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="non-zero"):
        ri.open_share(np.zeros(n), (n,))


def test_flow_and_sgd_start_from_the_same_fields_and_report_consistent_judgements():
    built = ri.build_task(KEY, small())
    flow = ri.run_flow(jax.random.key(5), built)
    sgd = ri.run_sgd(jax.random.key(5), built)
    np.testing.assert_allclose(flow.weights[:, 0], sgd.weights[:, 0], rtol=1e-6)  # float32 copy
    assert flow.weights.shape == (3, 5, 40) and sgd.weights.shape == (3, 5, 40)
    assert flow.times[-1] == pytest.approx(flow.steps * built.lr) and sgd.times[-1] == pytest.approx(
        sgd.steps * built.lr
    )
    np.testing.assert_array_equal(flow.localized, field_analysis.is_localized(flow.weights[:, -1], 40))
    np.testing.assert_array_equal(sgd.counts, field_analysis.is_localized(sgd.weights, 40).sum(axis=0))
    expected = np.linalg.norm(flow.weights[:, -1] - flow.weights[:, 2], axis=-1) / np.linalg.norm(
        flow.weights[:, -1], axis=-1
    )
    np.testing.assert_allclose(flow.change, expected, rtol=1e-12)
    assert flow.settled == bool(np.all(expected <= 0.05))


@pytest.mark.slow
def test_flower_clone_flow_leaves_its_unstable_constant_state_and_localizes():
    # the finite-N criterion says the constant is unstable (rate ~ +0.4): Eq. (5) must leave it
    built = ri.build_task(KEY, ri.RealImageSettings(image="flower.jpg", task="clone", flow_time=300.0, inits=4))
    assert ri.reference_state(built).verdict == "unstable"
    flow = ri.run_flow(jax.random.key(1), built)
    assert flow.count == 4


def test_field_discrepancy_is_the_exact_finite_sum_and_small_for_gaussian_data():
    rng = np.random.default_rng(4)
    n, S = 6, 4000
    root = np.linalg.cholesky(0.6 * np.ones((n, n)) + 0.4 * np.eye(n))
    x = rng.standard_normal((S, n)) @ root.T
    settings = small(shape=(n,))
    source = EmpiricalModel.of(x)
    model = ring.RingModel(source)
    cov = np.asarray(model.covariance(n))
    built = ri.RealImageTask(
        settings, CloneTask(model), model, cov, cov, 0.0, (0.0, 0.0), 0.02, theory.amplifier_of(model.marginal)
    )
    w = rng.standard_normal((2, n))
    out = ri.field_discrepancy(built, w)
    # brute force: every cyclic shift of every stored row
    rows = np.concatenate([np.roll(source.samples, s, axis=1) for s in range(n)])
    gated = ((rows @ w.T >= 0).astype(float).T @ rows) / rows.shape[0]
    np.testing.assert_allclose(out.exact, gated - w @ cov, rtol=0, atol=1e-12)
    # Gaussian data: Eq. (5) is exact for the law, so the error is the sampling error of the gated mean
    # (sign(h) x over the S original rows, each standard error sqrt(Var / S); the shifts only average)
    sign = np.sign(source.samples[:S] @ w.T)  # (S, 2)
    se = np.array([np.linalg.norm((sign[:, b : b + 1] * source.samples[:S]).std(axis=0)) for b in range(2)])
    half_phi = np.linalg.norm(out.effective + w @ cov, axis=-1)
    assert np.all(out.relative * half_phi < 6 * 0.5 * se / math.sqrt(S))
    with pytest.raises(ValueError, match="shape"):
        ri.field_discrepancy(built, np.ones(n + 1))


@pytest.mark.parametrize(("shape", "geometry"), [((4, 5), "ring"), ((8,), "line")])
def test_field_discrepancy_by_fft_on_a_torus_and_directly_on_the_line_equal_brute_force(shape, geometry):
    built = ri.build_task(KEY, small(shape=shape, geometry=geometry, task="clone", samples=200))
    w = np.random.default_rng(5).standard_normal((3, math.prod(shape)))
    rows = built.model1.source.samples if geometry == "ring" else built.model1.samples
    grid = rows.reshape(rows.shape[0], *shape)
    axes = tuple(range(1, len(shape) + 1))
    shifts = np.stack(np.meshgrid(*[np.arange(n) for n in shape], indexing="ij"), -1).reshape(-1, len(shape))
    if geometry == "line":
        shifts = shifts[:1] * 0
    every = np.concatenate([np.roll(grid, tuple(s), axis=axes).reshape(rows.shape[0], -1) for s in shifts])
    gated = ((every @ w.T >= 0).astype(float).T @ every) / every.shape[0]
    out = ri.field_discrepancy(built, w)
    np.testing.assert_allclose(out.exact, gated - w @ (0.5 * (built.cov0 + built.cov1)), rtol=0, atol=1e-12)


def test_exact_flow_steps_along_the_exact_expected_gradient_from_the_flows_starts():
    built = ri.build_task(KEY, small(task="lengthscale", samples=200))
    one_step = built.lr * 1.5  # rounds to one step
    run = ri.run_exact_flow(jax.random.key(5), built, duration=one_step)
    flow = ri.run_flow(jax.random.key(5), built)
    np.testing.assert_array_equal(run.weights[:, 0], flow.weights[:, 0])
    assert run.steps == 2 and run.times[-1] == pytest.approx(2 * built.lr)
    w = run.weights[:, 0]
    for _ in range(2):
        w = w + built.lr * ri.field_discrepancy(built, w).exact
    np.testing.assert_allclose(run.weights[:, -1], w, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="duration"):
        ri.run_exact_flow(KEY, built, duration=0.0)
