"""localization.experiments.real_image_fields: shape measures of fields, and the three learners on the photographs.

The shape measures are checked on synthetic fields whose answer is known in closed form (a plane
wave, a rotated Gabor of known angle and phase, an isotropic Gaussian blob). Tolerances are stated
before the runs: identities to rounding (1e-9); Gabor angles to 1 degree and phases to 2 degrees (the
aliasing of a Gaussian of width 3 sites on a 32-site torus and the e^{-(kσ)²} ~ 4e-4 overlap of the
carrier's harmonics move them by far less); sampled quantities to 6 binomial standard errors.
"""

import math

import jax
import numpy as np
import pytest

from localization import field_analysis
from localization.data import images
from localization.data.empirical import EmpiricalModel
from localization.experiments import real_image_fields as rf
from localization.experiments.real_images import RingModel, image_samples

KEY = jax.random.key(0)
GRID = (32, 32)


def gabor(theta, psi, *, sigma=3.0, frequency=0.15, grid=GRID, centre=(16.0, 16.0)):
    """exp(-|d|²/2σ²) cos(2π f (dx cos θ + dy sin θ) + ψ), d from ``centre``; x along axis 1, y along axis 0."""
    y, x = np.meshgrid(np.arange(grid[0]), np.arange(grid[1]), indexing="ij")
    dy, dx = y - centre[0], x - centre[1]
    t = math.radians(theta)
    carrier = np.cos(2 * np.pi * frequency * (dx * math.cos(t) + dy * math.sin(t)) + math.radians(psi))
    return (np.exp(-(dx**2 + dy**2) / (2 * sigma**2)) * carrier).ravel()


# --------------------------------------------------------------------------------------- shapes
@pytest.mark.parametrize(("theta", "psi"), [(30.0, 0.0), (30.0, 90.0), (-60.0, 45.0), (75.0, -20.0), (0.0, 160.0)])
def test_a_rotated_gabor_has_its_angle_phase_and_envelope(theta, psi):
    s = rf.field_shapes(gabor(theta, psi), GRID)
    assert s.orientation == pytest.approx(theta, abs=1.0)
    folded = abs(math.degrees(math.atan2(math.sin(math.radians(psi)), math.cos(math.radians(psi)))))
    folded = min(folded, 180.0 - folded)  # |ψ| folded into [0, 90]: cos and -cos are both even
    assert s.phase == pytest.approx(folded, abs=2.0)
    assert s.size == pytest.approx(3.0, rel=0.02)
    assert s.selectivity > 0.8  # the envelope's angular spread 1/(2πσf) ≈ 0.35 rad gives |R| ≈ e^{-2·0.35²} ≈ 0.78+
    assert s.localized and s.share > field_analysis.LOCALIZED_SHARE


def test_an_isotropic_blob_has_no_orientation_and_its_width_as_size():
    s = rf.field_shapes(gabor(0.0, 0.0, frequency=0.0, sigma=2.0), GRID)
    assert s.selectivity < 1e-9  # its power is unchanged by a quarter turn of the square grid
    assert s.size == pytest.approx(2.0, rel=1e-3)
    assert s.phase < 1e-6


def test_a_plane_wave_is_perfectly_selective_at_its_wave_vector():
    y, x = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    s = rf.field_shapes(np.cos(2 * np.pi * (3 * x + y) / 16).ravel(), (16, 16))
    assert s.selectivity == pytest.approx(1.0, abs=1e-9)
    assert s.orientation == pytest.approx(math.degrees(math.atan2(1, 3)), abs=1e-9)
    assert s.frequency == pytest.approx(math.sqrt(10) / 16, abs=1e-12)
    assert not s.localized


def test_nyquist_waves_count_at_both_signs():
    y, x = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    stripes = rf.field_shapes(np.cos(np.pi * x).ravel(), (8, 8))  # the column Nyquist wave: along x
    assert stripes.orientation == pytest.approx(0.0, abs=1e-9) and stripes.selectivity == pytest.approx(1.0)
    checker = rf.field_shapes(np.cos(np.pi * (x + y)).ravel(), (8, 8))  # both diagonals at once
    assert checker.selectivity < 1e-12


def test_shapes_do_not_move_with_the_field_on_the_torus():
    field = gabor(20.0, 30.0)
    shifted = np.roll(field.reshape(GRID), (11, -7), axis=(0, 1)).ravel()
    shapes = rf.field_shapes(np.stack([field, shifted]), GRID)
    for name in ("share", "size", "frequency", "phase", "orientation", "selectivity"):
        pair = getattr(shapes, name)
        assert pair[0] == pytest.approx(pair[1], abs=1e-9), name


def test_rows_have_phase_and_frequency_but_no_orientation():
    x = np.arange(40)
    envelope = np.exp(-((x - 20.0) ** 2) / (2 * 3.0**2))
    even = envelope * np.cos(2 * np.pi * 0.2 * (x - 20.0))
    odd = envelope * np.sin(2 * np.pi * 0.2 * (x - 20.0))
    s = rf.field_shapes(np.stack([even, odd]), 40)
    assert s.orientation is None and s.selectivity is None
    np.testing.assert_allclose(s.phase, [0.0, 90.0], atol=1e-6)
    wave = rf.field_shapes(np.cos(2 * np.pi * 3 * x / 40), 40)
    assert wave.frequency == pytest.approx(3 / 40, abs=1e-12)


@pytest.mark.parametrize(
    ("w", "shape", "error", "words"),
    [
        (np.ones(10), (4, 4), ValueError, "last axis"),
        (np.zeros(16), (4, 4), ValueError, "non-zero"),
        (np.ones(16), (3, 3), ValueError, "shape"),
        (np.ones(64), (4, 4, 4), ValueError, "shape must be"),
        (np.full(16, np.nan), (4, 4), ValueError, "finite"),
    ],
)
def test_field_shapes_name_the_bad_argument(w, shape, error, words):
    with pytest.raises(error, match=words):
        rf.field_shapes(w, shape)


def test_the_selectivity_null_puts_five_percent_of_fresh_noise_above_its_quantile():
    null = rf.selectivity_null(KEY, (8, 8), 4000)
    assert np.all(np.diff(null) >= 0) and 0 <= null[0] and null[-1] <= 1
    threshold = np.quantile(null, rf.ORIENTED_LEVEL)
    fresh = rf.selectivity_null(jax.random.key(1), (8, 8), 4000)
    share = np.mean(fresh > threshold)
    p = 1 - rf.ORIENTED_LEVEL
    # the quantile's own sampling error and the fresh share's, each binomial at n = 4000
    assert abs(share - p) < 6 * math.sqrt(2 * p * (1 - p) / 4000)
    with pytest.raises(ValueError, match="orientation is defined in 2-D"):
        rf.selectivity_null(KEY, (40,))
    with pytest.raises(ValueError, match="num"):
        rf.selectivity_null(KEY, (8, 8), 5)


# --------------------------------------------------------------------------------------- settings
@pytest.mark.parametrize(
    ("field", "value", "error", "words"),
    [
        ("image", "lena.png", ValueError, "image must be one of"),
        ("preprocessing", "blurred", ValueError, "preprocessing must be one of"),
        ("shape", (3,), ValueError, "shape"),
        ("shape", (8, 8, 8), ValueError, "shape must be"),
        ("samples", 5, ValueError, "samples"),
        ("neuron_inits", 0, ValueError, "neuron_inits"),
        ("K", 1.5, TypeError, "K"),
        ("committee_inits", 0, ValueError, "committee_inits"),
        ("init_scale", -1.0, ValueError, "init_scale"),
        ("max_lr", 0.0, ValueError, "max_lr"),
        ("sgd_time", float("inf"), ValueError, "sgd_time"),
        ("batch", 0, ValueError, "batch"),
        ("checkpoints", 2, ValueError, "checkpoints"),
        ("ica_samples", 40, ValueError, "ica_samples"),
    ],
)
def test_settings_name_the_bad_field(field, value, error, words):
    with pytest.raises(error, match=words):
        rf.FieldSettings(**{field: value})


def test_entry_points_check_their_arguments():
    with pytest.raises(TypeError, match="settings must be a FieldSettings"):
        rf.run_fields(KEY, {"image": "china.jpg"})
    with pytest.raises(TypeError, match="key"):
        rf.run_fields(0, rf.FieldSettings())
    with pytest.raises(TypeError, match="must not set"):
        rf.chapter_fields(KEY, shape=(8, 8))
    with pytest.raises(TypeError, match="shapes must be a non-empty tuple"):
        rf.chapter_fields(KEY, shapes=())
    assert rf.FieldSettings(shape=[6, 8]).n == (6, 8) and rf.FieldSettings(shape=40).n == 40


# --------------------------------------------------------------------------------------- runs
def out_cov(settings):
    """The ring covariance of the rows :func:`rf.run_fields` draws from KEY (positions from fold_in(KEY, 0))."""
    x = image_samples(
        jax.random.fold_in(KEY, 0), settings.image, settings.preprocessing, settings.shape, settings.samples
    )
    return RingModel(EmpiricalModel.of(x, settings.shape)).covariance(settings.n)


@pytest.mark.slow
def test_run_fields_trains_both_networks_and_fits_ica_on_one_law():
    settings = rf.FieldSettings(
        shape=(6, 6), samples=300, neuron_inits=2, K=3, committee_inits=2, sgd_time=2.0, batch=32, ica_samples=400
    )
    out = rf.run_fields(KEY, settings)
    assert out.neuron.fields.shape == (2, 36) and out.committee.fields.shape == (6, 36)
    lam = np.linalg.eigvalsh(np.asarray(out_cov(settings)))
    assert out.ica.fields.shape == (int(np.sum(lam > images.WHITENING_FLOOR * lam[-1])), 36)
    assert out.committee.lr == pytest.approx(3 * out.neuron.lr) and out.committee.steps == out.neuron.steps
    assert out.neuron.steps == round(2.0 / out.neuron.lr) and out.neuron.lr <= settings.max_lr
    for learned in (out.neuron, out.committee, out.ica):
        np.testing.assert_array_equal(learned.shapes.localized, field_analysis.is_localized(learned.fields, (6, 6)))
        assert learned.counts[-1] == learned.count
    assert out.predicted == (out.excess_kurtosis < 0) and 0 < out.oriented_threshold < 1
    again = rf.run_fields(KEY, settings)
    np.testing.assert_array_equal(again.committee.fields, out.committee.fields)
