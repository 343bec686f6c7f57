"""``localization.experiments.real_image_survey``: the chapter's survey of the photographs, on a small grid."""

import jax
import numpy as np
import pytest

import localization
from localization.experiments import real_image_survey as rs
from localization.experiments import real_images as ri

localization.enable_float64()
KEY = jax.random.key(0)
SMALL = ri.RealImageSettings(shape=(8,), samples=2000, inits=2, sgd_time=5.0, flow_time=50.0, checkpoints=3)


@pytest.fixture(scope="module")
def small():
    return rs.survey(KEY, image_names=("china.jpg",), preprocessings=("raw", "whitened"), settings=SMALL, resamples=20)


def test_every_data_set_gets_a_prediction_and_only_trained_ones_get_rows(small):
    assert set(small.predictions) == {("china.jpg", "raw"), ("china.jpg", "whitened")}
    assert [(r.settings.preprocessing, r.settings.task) for r in small.rows] == [
        ("raw", "lengthscale"),
        ("raw", "clone"),
    ]
    row = small.get("china.jpg", "raw", "clone")
    assert row.settings.shape == (8,) and row.sgd.weights.shape[0] == 2
    with pytest.raises(KeyError, match="no row for image='china.jpg', preprocessing='whitened'"):
        small.get("china.jpg", "whitened", "clone")


def test_the_tasks_of_a_data_set_share_its_rows_and_its_prediction(small):
    a, b = small.get("china.jpg", "raw", "lengthscale"), small.get("china.jpg", "raw", "clone")
    assert a.prediction is b.prediction
    # the clone task's classes have one covariance: its neighbour correlations are equal; the
    # length-scale task's class 1 is the same rows, so its class-1 correlation is the clone's
    assert b.neighbour_correlation[0] == pytest.approx(b.neighbour_correlation[1], abs=1e-12)
    assert a.neighbour_correlation[1] == pytest.approx(b.neighbour_correlation[1], abs=1e-12)


def test_the_prediction_is_made_on_the_rows_the_tasks_train_on(small):
    built = ri.build_task(jax.random.fold_in(KEY, 0), SMALL.replace(task="clone"))
    p = small.predictions["china.jpg", "raw"]
    assert p.excess_kurtosis == pytest.approx(built.excess_kurtosis, rel=1e-9)


def test_agreement_reads_the_verdicts(small):
    row = small.get("china.jpg", "raw", "clone")
    out = rs.agreement(row)
    assert set(out) == {"sign_rule", "finite_n"}
    localizes = row.sgd.count > row.sgd.localized.size / 2
    sign = {"localizes": True, "does not localize": False}.get(row.prediction.verdict)
    assert out["sign_rule"] == (None if sign is None else sign == localizes)
    with pytest.raises(TypeError, match="row must be a SurveyRow"):
        rs.agreement("row")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(image_names="china.jpg"), TypeError, "image_names must be a non-empty tuple"),
        (dict(image_names=("moon.jpg",)), ValueError, "image_names must hold names from"),
        (dict(preprocessings=()), TypeError, "preprocessings must be a non-empty tuple"),
        (dict(tasks=("noise",)), ValueError, "tasks must hold names from"),
        (dict(trained=("centred",), preprocessings=("raw",)), ValueError, "trained must hold names from"),
        (dict(settings="default"), TypeError, "settings must be a RealImageSettings or None"),
        (dict(resamples=5), ValueError, "resamples must be an integer >= 10"),
    ],
)
def test_survey_checks_its_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        rs.survey(KEY, **kwargs)


def test_survey_refuses_a_bad_key():
    with pytest.raises((TypeError, ValueError), match="key"):
        rs.survey(np.zeros(3))
