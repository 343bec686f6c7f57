"""Held-out task scores of fields (localization.experiments.task_value)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import multivariate_normal

from localization import data, models
from localization.experiments import task_value as tv

N = 12
TASK = data.family_task("Kur", 10.0, (1.0, 3.0))
KEY = jax.random.key(3)


def _sets(task, num):
    train = task.sample(jax.random.fold_in(KEY, 0), num, N, jnp.float64)
    test = task.sample(jax.random.fold_in(KEY, 1), num, N, jnp.float64)
    return [tuple(np.asarray(a) for a in s) for s in (train, test)]


@pytest.mark.slow
def test_neuron_scale_is_the_closed_form_least_squares_fit_and_scores_are_recomputed():
    fields = np.asarray(jax.random.normal(jax.random.key(0), (3, N))) * 0.3
    (x_tr, y_tr), (x_te, y_te) = _sets(TASK, 2000)
    fitted = tv.neuron_scores(KEY, TASK, fields, fit_scale=True, n=N, num_train=2000, num_test=2000)
    given = tv.neuron_scores(KEY, TASK, fields, fit_scale=False, n=N, num_train=2000, num_test=2000)
    h_tr, h_te = np.maximum(x_tr @ fields.T, 0), np.maximum(x_te @ fields.T, 0)
    alpha = (y_tr @ h_tr) / np.sum(h_tr**2, axis=0)
    np.testing.assert_allclose(fitted.scale, alpha, rtol=1e-10)
    np.testing.assert_allclose(fitted.sq_error, ((y_te[:, None] - alpha * h_te) ** 2).T, atol=1e-10)
    np.testing.assert_allclose(given.sq_error, ((y_te[:, None] - h_te) ** 2).T, atol=1e-10)
    np.testing.assert_array_equal(given.correct, ((h_te > 0.5) == (y_te[:, None] > 0.5)).T.astype(float))
    # the fit minimises the training loss over the scale: never above the unit scale's
    assert np.all(fitted.train_loss <= given.train_loss + 1e-12)


@pytest.mark.slow
def test_a_bias_free_relu_neuron_never_beats_the_guess_one_half():
    # Eq. (eq-mn-relu-bound): sign-symmetric classes, loss >= 1/4 and accuracy <= 3/4 (Monte Carlo, 20 000)
    fields = np.vstack([np.ones(N), np.eye(N)[0], np.asarray(jax.random.normal(jax.random.key(1), (4, N)))])
    s = tv.neuron_scores(KEY, TASK, fields, fit_scale=True, n=N, num_train=20_000, num_test=20_000)
    se = s.sq_error.std(axis=1) / np.sqrt(s.sq_error.shape[1])
    assert np.all(s.loss > 0.25 - 4 * se), (s.loss, se)
    assert np.all(s.accuracy < 0.75 + 4 * np.sqrt(0.75 * 0.25 / 20_000))


@pytest.mark.slow
def test_committee_scores_as_trained_and_refitted():
    W = np.asarray(jax.random.normal(jax.random.key(2), (2, 3, N)))
    b = np.asarray(jax.random.normal(jax.random.key(5), (2, 3)))
    (_, _), (x_te, y_te) = _sets(TASK, 500)
    s = tv.committee_scores(KEY, TASK, W, b, refit=False, n=N, num_train=500, num_test=500)
    out = np.stack([np.asarray(models.committee(W[r], x_te, "sigmoid", b[r])) for r in range(2)])
    np.testing.assert_allclose(s.sq_error, (y_te - out) ** 2, atol=1e-12)
    refit = tv.committee_scores(KEY, TASK, W, b, refit=True, n=N, num_train=500, num_test=500)
    # least squares over (c, a): the as-trained readout (0, 1/K, ...) is one candidate
    assert np.all(refit.train_loss <= s.train_loss + 1e-12)
    np.testing.assert_allclose(s.scale, 1.0)


@pytest.mark.slow
def test_gaussian_detector_is_the_gaussian_posterior():
    # the formula with the exact covariances, whatever law the data follow (here Kur(10))
    task = TASK
    s = tv.gaussian_detector_scores(KEY, task, n=N, num_train=10, num_test=300)
    (_, _), (x_te, y_te) = _sets(task, 300)
    c0, c1 = task.covariances(N)
    l0 = multivariate_normal(np.zeros(N), c0).logpdf(x_te)
    l1 = multivariate_normal(np.zeros(N), c1).logpdf(x_te)
    post = expit(l1 - l0)
    np.testing.assert_allclose(s.sq_error[0], (y_te - post) ** 2, atol=1e-9)


def test_paired_difference_and_argument_checks():
    s = tv.TaskScores(np.ones((2, 5)), np.zeros((2, 5)), np.ones(2), np.ones(2))
    assert s.difference(0, 1) == (0.0, 0.0) and s.difference(0, 1, "accuracy") == (0.0, 0.0)
    d, se = tv.TaskScores(np.array([[1.0, 3.0], [0.0, 0.0]]), np.zeros((2, 2)), np.ones(2), np.ones(2)).difference(0, 1)
    assert d == 2.0 and se == pytest.approx(np.sqrt(2) / np.sqrt(2))
    with pytest.raises(ValueError, match="metric"):
        s.difference(0, 1, "auc")
    with pytest.raises(TypeError, match="fit_scale"):
        tv.neuron_scores(KEY, TASK, np.ones((2, N)), fit_scale=1, n=N)
    with pytest.raises(ValueError, match="fields"):
        tv.neuron_scores(KEY, TASK, np.ones((2, N + 1)), fit_scale=False, n=N)
    with pytest.raises(ValueError, match="W must be"):
        tv.committee_scores(KEY, TASK, np.ones((2, 3, N)), np.ones((2, 4)), refit=False, n=N)
    with pytest.raises(ValueError, match="num_test"):
        tv.committee_scores(KEY, TASK, np.ones((2, 3, N)), np.ones((2, 3)), refit=False, n=N, num_test=1)
    with pytest.raises(ValueError, match="committees"):
        tv.compare_fields(KEY, {"Kur(10)": (np.ones((1, 2, 40)), np.ones((1, 2)))})
