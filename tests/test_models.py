"""Tests for localization.models: model formulas, activations, initialisation statistics, validation."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import erf as sp_erf

from localization import initialisation, models
from localization.theory import batch_gradient as bg

RNG = np.random.default_rng(0)
X = RNG.normal(size=(7, 5))
W = RNG.normal(size=(3, 5))
B = RNG.normal(size=3)


def test_relu_neuron_formula():
    w = W[0]
    np.testing.assert_allclose(models.relu_neuron(w, X), np.maximum(X @ w, 0.0), rtol=1e-14)


@pytest.mark.parametrize(
    "activation, f",
    [
        ("relu", lambda h: np.maximum(h, 0.0)),
        ("sigmoid", lambda h: 1.0 / (1.0 + np.exp(-h))),
        ("erf", lambda h: sp_erf(h / math.sqrt(2.0))),
    ],
)
def test_committee_and_two_layer_formulas(activation, f):
    h = X @ W.T + B
    np.testing.assert_allclose(models.committee(W, X, activation, B), f(h).mean(-1), rtol=1e-13)
    np.testing.assert_allclose(models.committee(W, X, activation), f(X @ W.T).mean(-1), rtol=1e-13)
    a = RNG.normal(size=3)
    p = models.Params(w=W, b=B, a=a, c=0.25)
    # the output bias sits inside the 1/K, as the paper's code (feedforward.MLP: fc2(x) / num_hiddens)
    np.testing.assert_allclose(models.two_layer(p, X, activation), (0.25 + f(h) @ a) / 3, rtol=1e-13)
    np.testing.assert_allclose(models.two_layer(models.Params(w=W, a=a), X, activation), f(X @ W.T) @ a / 3, rtol=1e-13)


def test_committee_with_one_relu_unit_is_the_neuron():
    np.testing.assert_allclose(models.committee(W[:1], X, "relu"), models.relu_neuron(W[0], X), rtol=1e-15)


def test_predict_dispatch():
    np.testing.assert_allclose(models.predict("neuron", W[0], X), models.relu_neuron(W[0], X))
    np.testing.assert_allclose(models.predict("committee", W, X, "erf"), models.committee(W, X, "erf"))
    np.testing.assert_allclose(
        models.predict("committee", models.Params(W, B), X, "erf"), models.committee(W, X, "erf", B)
    )
    p = models.Params(W, B, np.ones(3))
    np.testing.assert_allclose(models.predict("two_layer", p, X, "relu"), models.two_layer(p, X, "relu"))


@pytest.mark.slow
def test_models_under_jit_and_grad():
    g = jax.grad(lambda w: jnp.sum(models.relu_neuron(w, X)))(W[0])
    np.testing.assert_allclose(g, ((X @ W[0]) > 0) @ X, rtol=1e-14)
    out = jax.jit(models.committee, static_argnums=2)(W, X, "sigmoid")
    np.testing.assert_allclose(out, models.committee(W, X, "sigmoid"), rtol=1e-14)


# --------------------------------------------------------------------------------------- loss
def test_mean_squared_error_is_the_one_mse():
    y = (RNG.random(7) > 0.5).astype(np.float64)
    pred = models.relu_neuron(W[0], X)
    expected = np.mean((y - np.maximum(X @ W[0], 0.0)) ** 2)  # paper Eq. (9), no factor 1/2
    assert float(models.mean_squared_error(y, pred)) == pytest.approx(expected, rel=1e-14)
    assert float(models.mse(W[0], X, y)) == float(models.mean_squared_error(y, pred))
    batched = models.mean_squared_error(y, jnp.stack([models.relu_neuron(w, X) for w in W]))  # (3, M) -> (3,)
    assert batched.shape == (3,)
    # the theory layer's restatement for the neuron (it may not import models) is the same loss
    np.testing.assert_allclose(bg.mse_loss(W, X, y), batched, rtol=1e-14)
    g = jax.grad(lambda q: models.mean_squared_error(y, models.relu_neuron(q, X)))(W[0])
    np.testing.assert_allclose(g, jax.grad(bg.mse_loss.core)(W[0], X, y), rtol=1e-13)
    for shapes in [((7,), (6,)), ((), (7,)), ((0,), (0,))]:
        with pytest.raises(ValueError, match="y and prediction must be batches"):
            models.mean_squared_error(np.ones(shapes[0]), np.ones(shapes[1]))


# --------------------------------------------------------------------------------------- init
@pytest.mark.slow
def test_init_weights_xavier_variance_times_init_scale():
    key = jax.random.key(3)
    w = initialisation.init_weights(key, 40, 0.001, num=20_000)
    assert w.shape == (20_000, 40) and w.dtype == jnp.float64
    target = 0.001 * 2.0 / (40 + 1)
    var = float(jnp.var(w))  # 800 000 draws: relative std of the estimate ~ sqrt(2/8e5) = 0.16 %
    assert abs(var / target - 1) < 0.01
    assert abs(float(jnp.mean(w))) < 4 * math.sqrt(target / w.size)
    W2 = initialisation.init_weights(key, 40, 0.1, K=10, num=2000, dtype=jnp.float32)
    assert W2.shape == (2000, 10, 40) and W2.dtype == jnp.float32
    assert abs(float(jnp.var(W2)) / (0.1 * 2.0 / 50) - 1) < 0.01
    # reproducible and independent across keys
    np.testing.assert_array_equal(
        initialisation.init_weights(key, 40, 0.001), initialisation.init_weights(key, 40, 0.001)
    )
    assert not np.allclose(initialisation.init_weights(key, 40), initialisation.init_weights(jax.random.key(4), 40))
    assert initialisation.init_weights(key, (40,)).shape == (40,)


@pytest.mark.slow
def test_init_weights_grid_is_the_flattened_input():
    """A grid shape is an input size (a torus), never read as (K, N): 8 × 8 sites → 64 weights."""
    key = jax.random.key(5)
    w = initialisation.init_weights(key, (8, 8), 0.5, num=4000)
    assert w.shape == (4000, 64)
    assert abs(float(jnp.var(w)) / (0.5 * 2.0 / 65) - 1) < 0.01  # 256 000 draws: relative SE 0.3 %
    W = initialisation.init_weights(key, (6, 5), 0.5, K=3, num=4000)
    assert W.shape == (4000, 3, 30)
    assert abs(float(jnp.var(W)) / (0.5 * 2.0 / 33) - 1) < 0.01  # 360 000 draws
    # the grid and the ring of the same size draw the same weights (only the size enters)
    np.testing.assert_array_equal(initialisation.init_weights(key, (8, 8)), initialisation.init_weights(key, 64))


@pytest.mark.slow
def test_init_params_shapes():
    key = jax.random.key(0)
    p = initialisation.init_params(key, 10, 40, 0.1, model="committee", bias=True, num=3)
    assert p.w.shape == (3, 10, 40) and p.b.shape == (3, 10) and p.a is None and p.c is None
    r = initialisation.init_params(key, 4, 6, model="two_layer", bias=True, num=2)
    assert r.w.shape == (2, 4, 6) and r.a.shape == (2, 4) and r.b.shape == (2, 4)
    assert r.c.shape == (2,) and np.all(np.asarray(r.c) == 0)
    assert np.all(np.asarray(p.b) == 0) and np.all(np.asarray(r.b) == 0)  # biases start at 0 (paper's code)


@pytest.mark.slow
def test_init_params_readout_is_shifted_xavier():
    # The paper's code: readout = init_shift (1) + sqrt(init_scale) * glorot_normal(K -> 1), var 2 scale / (K + 1).
    key = jax.random.key(5)
    K, num, scale = 10, 20_000, 0.1
    a = np.asarray(initialisation.init_params(key, K, 40, scale, model="two_layer", num=num).a).ravel()
    var = scale * 2 / (K + 1)
    se_mean, se_var = math.sqrt(var / a.size), var * math.sqrt(2 / a.size)
    assert abs(a.mean() - 1.0) < 6 * se_mean and abs(a.var() - var) < 6 * se_var
    a0 = initialisation.init_params(key, K, 40, scale, model="two_layer", readout_mean=0.0, num=num).a
    a0 = np.asarray(a0).ravel()
    np.testing.assert_allclose(a0, a - 1.0, atol=1e-12)
    with pytest.raises(ValueError, match="readout_mean"):
        initialisation.init_params(key, K, 40, model="two_layer", readout_mean=float("nan"))


@pytest.mark.slow
def test_init_params_on_a_grid_are_the_flattened_weights_with_the_grid_fan_in():
    # A grid input size (as for the data models) gives weights over the flattened grid: the same draw
    # as N = prod(shape), with the Xavier variance 2 * scale / (prod(shape) + K).
    key = jax.random.key(3)
    grid = initialisation.init_params(key, 20, (30, 30), 0.5, num=8)
    flat = initialisation.init_params(key, 20, 900, 0.5, num=8)
    assert grid.w.shape == (8, 20, 900)
    assert np.array_equal(np.asarray(grid.w), np.asarray(flat.w))
    w = np.asarray(grid.w).ravel()
    var, se = 0.5 * 2 / (900 + 20), np.sqrt(2 / w.size) * 0.5 * 2 / (900 + 20)  # SE of a Gaussian variance
    assert abs(w.var() - var) < 6 * se
    with pytest.raises(ValueError, match=r"n\[1\] must be"):
        initialisation.init_params(key, 2, (3, 0))


# --------------------------------------------------------------------------------------- validation
def test_activation_validation():
    with pytest.raises(ValueError, match="activation must be one of"):
        models.activation_fn("tanh")
    with pytest.raises(TypeError, match="activation must be a string"):
        models.activation_fn(None)
    with pytest.raises(ValueError, match="activation"):
        models.committee(W, X, "softplus")


def test_model_argument_validation():
    with pytest.raises(ValueError, match="w must be a single"):
        models.relu_neuron(W, X)
    with pytest.raises(ValueError, match="x must have last axis"):
        models.relu_neuron(W[0], X[:, :4])
    with pytest.raises(ValueError, match=r"x must be a \(num, N\) batch"):
        models.relu_neuron(W[0], X[None])
    with pytest.raises(TypeError, match="w must be an array"):
        models.relu_neuron("w", X)
    with pytest.raises(ValueError, match="W must be a"):
        models.committee(W[None], X)
    with pytest.raises(ValueError, match="b must have shape"):
        models.committee(W, X, "relu", B[:2])
    with pytest.raises(TypeError, match="params must be"):
        models.two_layer((W, B), X)
    with pytest.raises(ValueError, match="params.a"):
        models.two_layer(models.Params(W), X)
    with pytest.raises(ValueError, match="params.a must have shape"):
        models.two_layer(models.Params(W, a=np.ones(2)), X)
    with pytest.raises(ValueError, match="params.c must be a scalar"):
        models.two_layer(models.Params(W, a=np.ones(3), c=np.ones(2)), X)
    with pytest.raises(ValueError, match="model must be one of"):
        models.predict("cnn", W[0], X)
    with pytest.raises(ValueError, match="activation must be 'relu'"):
        models.predict("neuron", W[0], X, "sigmoid")
    with pytest.raises(ValueError, match="params.a and params.c must be None"):
        models.predict("committee", models.Params(W, a=np.ones(3)), X)


def test_init_validation():
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="init_scale must be positive"):
        initialisation.init_weights(key, 4, 0.0)
    with pytest.raises(TypeError, match="init_scale must be a real number"):
        initialisation.init_weights(key, 4, "big")
    with pytest.raises(TypeError, match="key must be a single JAX PRNG key"):
        initialisation.init_weights(0, 4)
    with pytest.raises(ValueError, match=r"n\[1\] must be an integer >= 1"):
        initialisation.init_weights(key, (2, 0))
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        initialisation.init_weights(key, 0)
    with pytest.raises(ValueError, match="K must be an integer >= 1"):
        initialisation.init_weights(key, 4, K=0)
    with pytest.raises(ValueError, match="num must be an integer >= 1"):
        initialisation.init_weights(key, 4, num=0)
    with pytest.raises(TypeError, match="dtype"):
        initialisation.init_weights(key, 4, dtype=jnp.int32)
    with pytest.raises(ValueError, match="model must be 'committee' or 'two_layer'"):
        initialisation.init_params(key, 2, 4, model="neuron")
    with pytest.raises(TypeError, match="bias must be a bool"):
        initialisation.init_params(key, 2, 4, bias=1)
    with pytest.raises(ValueError, match="K must be an integer >= 1"):
        initialisation.init_params(key, 0, 4)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        initialisation.init_params(key, 2, 0)
    with pytest.raises(ValueError, match="num must be an integer >= 1"):
        initialisation.init_params(key, 2, 4, num=0)
    with pytest.raises(ValueError, match="init_scale must be positive"):
        initialisation.init_params(key, 2, 4, -1.0)
