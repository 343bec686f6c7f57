"""Library identities the many-neurons chapter relies on (moved out of its check cells)."""

import jax
import numpy as np

from localization import field_analysis

N = 40
WINDOW = field_analysis.localization_window(N)


def test_window_share_of_one_hot_and_constant_fields():
    # Eq. (eq-mn-share): 1 for a one-hot field, W/N for a constant one
    got = np.asarray(field_analysis.localization_share(np.vstack([np.eye(N)[7], np.ones(N)]), N))
    assert WINDOW == 10
    assert abs(got[0] - 1) < 1e-12
    assert abs(got[1] - WINDOW / N) < 1e-12


def test_window_share_is_at_least_w_over_n_with_equality_for_flat_magnitudes():
    # the chapter's exercise 1, on any fields
    key = jax.random.PRNGKey(0)
    fields = np.asarray(jax.random.normal(key, (500, N)))
    assert np.all(field_analysis.localization_share(fields, N) >= WINDOW / N - 1e-12)
    signs = np.where(np.asarray(jax.random.bernoulli(key, 0.5, (50, N))), 1.0, -1.0)
    assert np.max(np.abs(field_analysis.localization_share(3.0 * signs, N) - WINDOW / N)) < 1e-12


def test_wave_window_share_is_largest_for_one_period():
    # Eq. (eq-mn-share-sine) is largest at m = 1, and the threshold 0.8 is 1.9-2 times it
    formula = field_analysis.wave_window_share(np.arange(1, 20), WINDOW, N)
    assert np.argmax(formula) == 0
    assert 1.9 < field_analysis.LOCALIZED_SHARE / formula[0] < 2
