"""Gating structures of the GDLN (localization.theory.gates): values, shapes, protocol, bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization.experiments import gdln as gx
from localization.theory import gates


def _x(num=64, n=10, seed=0):
    return jax.random.normal(jax.random.key(seed), (num, n), dtype=jnp.float64)


def test_coordinate_gate_is_the_sign_of_its_coordinates():
    x = _x()
    g = gates.CoordinateGate(10, (3, 7))
    out = np.asarray(g(x))
    assert out.shape == (64, 2) and g.num_gates == 2 and g.num_dims == 10
    np.testing.assert_array_equal(out, (np.asarray(x)[:, [3, 7]] > 0).astype(float))
    assert gates.CoordinateGate(10).num_gates == 10 and gates.CoordinateGate(10, 4).coordinates == (4,)


@pytest.mark.slow
def test_every_gating_is_a_half_space_gating_of_its_normals():
    x = _x(200)
    for g in (
        gates.CoordinateGate(10, (0, 5, 9)),
        gates.BumpGates.tiling(10, 3, 1.5),
        gx.random_half_space_gates(jax.random.key(1), 10, 4),
    ):
        assert isinstance(g, gates.Gating)
        out = np.asarray(g(x))
        assert set(np.unique(out)) <= {0.0, 1.0}
        np.testing.assert_array_equal(out, (np.asarray(x) @ np.asarray(g.normals).T > 0).astype(float))
        # open about half the time for a sign-symmetric law (binomial sd 0.035 at 200 samples)
        assert np.all(np.abs(out.mean(0) - 0.5) < 0.2)


def test_bumps_narrow_to_the_coordinate_gate_and_wrap_around_the_ring():
    b = gates.BumpGates(8, (0.0, 3.0), 1e-3)
    np.testing.assert_allclose(b.normals, np.eye(8)[[0, 3]], atol=1e-12)
    wide = gates.BumpGates(8, (0.0,), 2.0).normals[0]
    assert wide[1] == pytest.approx(wide[7]) and wide[0] == 1.0
    x = _x(50, 8)
    np.testing.assert_array_equal(np.asarray(b(x)), np.asarray(gates.CoordinateGate(8, (0, 3))(x)))


@pytest.mark.slow
def test_gates_pass_through_jit_and_vmap():
    x = _x()
    for g in (
        gates.CoordinateGate(10, (2,)),
        gates.BumpGates.tiling(10, 2, 1.0),
        gates.HalfSpaceGates(np.ones((1, 10))),
    ):
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda gg, xx: gg(xx))(g, x)), np.asarray(g(x)))
        np.testing.assert_array_equal(np.asarray(jax.vmap(g)(x)), np.asarray(g(x)))


def test_random_half_spaces_are_unit_and_reproducible():
    a = gx.random_half_space_gates(jax.random.key(3), 6, 5)
    b = gx.random_half_space_gates(jax.random.key(3), 6, 5)
    np.testing.assert_array_equal(np.asarray(a.normals), np.asarray(b.normals))
    np.testing.assert_allclose(np.linalg.norm(np.asarray(a.normals), axis=1), 1.0)


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: gates.CoordinateGate(0), ValueError, "num_dims"),
        (lambda: gates.CoordinateGate(5, (5,)), ValueError, r"coordinates\[0\]"),
        (lambda: gates.CoordinateGate(5, (1.5,)), TypeError, r"coordinates\[0\]"),
        (lambda: gates.CoordinateGate(5, ()), TypeError, "coordinates"),
        (lambda: gates.BumpGates(5, (1.0,), 0.0), ValueError, "width"),
        (lambda: gates.BumpGates(5, (5.0,), 1.0), ValueError, r"centres\[0\]"),
        (lambda: gates.HalfSpaceGates(np.zeros((2, 3))), ValueError, "non-zero"),
        (lambda: gates.HalfSpaceGates(np.ones(3)), ValueError, "normals"),
        (lambda: gates.HalfSpaceGates(np.full((1, 3), np.nan)), ValueError, "finite"),
        (lambda: gx.random_half_space_gates(0, 3, 1), TypeError, "key"),
    ],
)
def test_bad_construction_is_named(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_bad_inputs_are_named():
    g = gates.CoordinateGate(4, (1,))
    with pytest.raises(ValueError, match="x"):
        g(np.ones((3, 5)))
    with pytest.raises(ValueError, match="finite"):
        g(np.array([[0.0, np.inf, 0.0, 0.0]]))
    with pytest.raises(TypeError, match="x"):
        g("abc")
