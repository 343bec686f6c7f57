"""Library helpers of the ICA chapter (``book/ica.md``): the filters' outputs on fresh examples."""

import jax
import numpy as np
import pytest

from localization import data
from localization.experiments import ica


@pytest.fixture(scope="module")
def fit_and_task():
    task = data.family_task("Kur", 10.0, (1.0, 3.0))
    return ica.fit_ica(jax.random.key(0), task, 8, num=4000, n=16), task


def test_filter_outputs_shapes_and_kurtosis(fit_and_task):
    fit, task = fit_and_task
    out = ica.filter_outputs(jax.random.key(1), task, fit, num=3000)
    assert out.outputs.shape == (3000, 8) and out.labels.shape == (3000,)
    assert out.kurtosis.shape == out.localized.shape == (8,)
    assert out.localized.dtype == bool
    # centred outputs
    assert np.max(np.abs(out.outputs.mean(0))) < 1e-10
    s = out.outputs - out.outputs.mean(0)
    kurt = np.mean(s**4, 0) / np.mean(s**2, 0) ** 2 - 3
    assert np.allclose(out.kurtosis, kurt, rtol=0, atol=1e-2)


def test_filter_outputs_validation(fit_and_task):
    fit, task = fit_and_task
    with pytest.raises(TypeError, match="fit"):
        ica.filter_outputs(jax.random.key(1), task, object())
    with pytest.raises(ValueError, match="num"):
        ica.filter_outputs(jax.random.key(1), task, fit, num=1)
