"""The GDLN chapter's library identities (moved out of book/gdln.md) and its figure functions.

The chapter keeps the checks of the notes' statements; what is tested here is the library: the ReLU
neuron as the GDLN with its own gate, the algebra of the notes' flow with its factor 1/K, and the
drawing functions of :mod:`localization.experiments.gdln` (shapes and argument validation).
"""

import jax
import matplotlib
import numpy as np
import pytest

from localization import data
from localization.figures import gdln as gdln_fig
from localization.theory import gates, gdln
from localization.theory import gdln_moments as gm

matplotlib.use("Agg")

N = 12
TASK = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 2.0), gain=3.0)


def _sample(num=2048):
    x, y = TASK.sample_balanced(jax.random.key(0), num, N)
    return np.asarray(x, np.float64), np.asarray(y, np.float64)


def test_relu_neuron_is_the_gdln_with_its_own_gate():
    x, _ = _sample()
    w = np.asarray(jax.random.normal(jax.random.key(1), (N,)), np.float64)
    own = gm.predict(gates.HalfSpaceGates(w[None, :]), w, x)
    assert np.max(np.abs(np.asarray(own) - np.maximum(x @ w, 0.0))) < 1e-12


def test_notes_flow_with_one_over_k_is_not_the_gradient_flow():
    """For (1/K) sum_k g_k <w_k, x> with loss 1/2 E[...], -grad = (1/K)(b - A w / K): the printed
    (1/K)(b - A w) differs by (1/K)(1 - 1/K) A w, stops at A^{-1} b, where the true field is
    (1 - 1/K) b / K, and the true flow stops at K A^{-1} b."""
    x, y = _sample()
    two = gates.CoordinateGate(N, (3, 6))
    k = two.num_gates
    xt = (np.asarray(two(x))[:, :, None] * x[:, None, :]).reshape(len(x), -1)
    b, A = xt.T @ y / len(x), xt.T @ xt / len(x)
    w = np.asarray(jax.random.normal(jax.random.key(2), (k * N,)), np.float64)

    def notes_loss(v):
        return 0.5 * jax.numpy.mean((gm.predict(two, v, x) / k - y) ** 2)

    true_field = -np.asarray(jax.grad(notes_loss)(w))
    np.testing.assert_allclose(true_field, (b - A @ w / k) / k, rtol=0, atol=1e-10)
    printed = (b - A @ w) / k
    np.testing.assert_allclose(printed - true_field, -(1 - 1 / k) * A @ w / k, rtol=0, atol=1e-10)
    w_printed_end = np.linalg.solve(A, b)
    np.testing.assert_allclose(b - A @ (k * w_printed_end) / k, 0.0, rtol=0, atol=1e-10)
    np.testing.assert_allclose((b - A @ w_printed_end / k) / k, (1 - 1 / k) * b / k, rtol=0, atol=1e-10)
    # the printed flow K tau dw/dt = b - A w stops there
    np.testing.assert_allclose(gdln.vector_field(A, b, w_printed_end), 0.0, atol=1e-10)


def _flips_inputs():
    t = np.arange(6.0)
    notes = dict(t=t, flips=np.full((4, 5), 0.01), gauss=np.full((4, 5), 0.01), kurt=np.zeros((4, 6)))
    notes["kurt_gauss"] = np.zeros((4, 6))
    relu = dict(t=t, flips=np.full((2, 3, 5), 0.1), kurt=np.zeros((2, 3, 6)))
    return notes, relu


def test_draw_functions_return_figures():
    from matplotlib.figure import Figure

    notes, relu = _flips_inputs()
    fig = gdln_fig.draw_gate_flips(notes, relu, (1.0, 3.0), np.array([0.0, 1.0, 5.0]), np.ones((2, 3, 3)))
    assert isinstance(fig, Figure) and len(fig.axes) == 3
    fields = np.exp(-0.5 * (np.arange(N) - 6.0) ** 2)[None] * np.array([[1.0], [2.0]])
    assert len(gdln_fig.draw_ols_fields((1.0, 3.0), fields, fields, 6).axes) == 3
    learned = np.stack([fields, np.roll(fields, 2, axis=1)], axis=1)
    assert len(gdln_fig.draw_ols_vs_learned((1.0, 3.0), learned, fields, 6).axes) == 2
    assert len(gdln_fig.draw_gate_field(fields[0], fields[1], 6, "title").axes) == 2
    matplotlib.pyplot.close("all")


def test_draw_functions_name_bad_arguments():
    notes, relu = _flips_inputs()
    with pytest.raises(ValueError, match="gains"):
        gdln_fig.draw_gate_flips(notes, relu, (1.0,), np.array([0.0, 1.0]), np.ones((2, 3, 2)))
    with pytest.raises(ValueError, match="own_dist"):
        gdln_fig.draw_gate_flips(notes, relu, (1.0, 3.0), np.array([0.0, 1.0]), np.ones((2, 3)))
    fields = np.ones((2, N))
    with pytest.raises(ValueError, match="drives and fields"):
        gdln_fig.draw_ols_fields((1.0,), fields, fields, 6)
    with pytest.raises(ValueError, match="gains"):
        gdln_fig.draw_ols_fields((1.0, -3.0), fields, fields, 6)
    with pytest.raises(ValueError, match="centre"):
        gdln_fig.draw_ols_fields((1.0, 3.0), fields, fields, N)
    with pytest.raises(ValueError, match="learned"):
        gdln_fig.draw_ols_vs_learned((1.0, 3.0), np.ones((2, 3, N + 1)), fields, 6)
    with pytest.raises(ValueError, match="drive and field"):
        gdln_fig.draw_gate_field(np.ones(N), np.ones(N + 1), 6, "t")
    with pytest.raises(TypeError, match="title"):
        gdln_fig.draw_gate_field(np.ones(N), np.ones(N), 6, 3)
    with pytest.raises(ValueError, match="finite"):
        gdln_fig.draw_gate_field(np.full(N, np.nan), np.ones(N), 6, "t")
