"""Sweeps split over devices (localization.sharding): the same sweep run in a subprocess with two
forced CPU devices and in one with a single device gives the same weights to float64 rounding, its
inputs and the compiled sweep's outputs really span both devices, and with one device the placement is
the identity (so every chapter's numbers stay bit for bit)."""

import json
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import sharding

# A small sweep: 3 NLGP gains x 5 initialisations (neither a multiple of 2: the padding is exercised),
# one train_online run, and a 1 x 2 phase diagram (RootedKur tasks: (P, n) array leaves), in float64.
SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    import jax
    import localization
    localization.enable_float64()
    import jax.numpy as jnp
    import numpy as np
    from localization import data, train
    from localization.experiments import simulation

    seen = {"inputs": [], "outputs": []}
    shard, cut = train.shard_leading, train.unpad

    def spy_shard(tree):
        placed, length = shard(tree)
        leaves = jax.tree_util.tree_leaves(placed)
        seen["inputs"].append([len(getattr(a, "sharding", None).device_set) if hasattr(a, "sharding") else 1
                               for a in leaves])
        seen["pad_equal"] = seen.get("pad_equal", True) and all(
            bool(np.array_equal(np.asarray(a)[length:], np.repeat(np.asarray(a)[length - 1 : length],
                                                                    a.shape[0] - length, 0)))
            for a in leaves)
        return placed, length

    def spy_cut(tree, length, axis=0):
        seen["outputs"].append([len(a.sharding.device_set) for a in jax.tree_util.tree_leaves(tree)])
        return cut(tree, length, axis)

    train.shard_leading, train.unpad = spy_shard, spy_cut
    tasks = [data.family_task("NLGP", g, xi=(0.3, 0.7)) for g in (0.5, 1.0, 3.0)]
    w0 = simulation.init_neurons(jax.random.key(1), 5, 20, 1e-3, jnp.float64)
    kw = dict(lr=0.1, batch=100, steps=100, checkpoints=5, dtype=jnp.float64)
    start = time.perf_counter()
    sweep = train.train_sweep(jax.random.key(0), tasks, w0, record_loss=True, **kw)
    online = train.train_online(jax.random.key(0), tasks[0], w0, **kw)
    pd = simulation.phase_diagram(jax.random.key(2), (5.0, 10.0), (2.0,), n=16, inits=3, batch=100,
                                  steps=50, checkpoints=3, dtype=jnp.float64)
    out = dict(sweep=np.asarray(sweep.weights), loss=np.asarray(sweep.loss), online=np.asarray(online.weights),
               pd=np.asarray(pd.ipr_path))
    seen["seconds"] = time.perf_counter() - start
    seen["devices"] = len(jax.devices())
    seen["shapes"] = {k: list(a.shape) for k, a in out.items()}
    np.savez(sys.argv[1], **out)
    print(json.dumps(seen))
    """
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Both subprocesses, started together: {devices: (arrays, report)}."""
    tmp = tmp_path_factory.mktemp("sharding")
    (tmp / "sweep.py").write_text(SCRIPT)
    procs = {}
    for count in (1, 2):
        env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=f"--xla_force_host_platform_device_count={count}")
        procs[count] = subprocess.Popen(
            [sys.executable, str(tmp / "sweep.py"), str(tmp / f"out{count}.npz")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    result = {}
    for count, proc in procs.items():
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        result[count] = (dict(np.load(tmp / f"out{count}.npz")), json.loads(out.strip().splitlines()[-1]))
    return result


@pytest.mark.slow
def test_two_devices_match_one_device(runs):
    (one, rep1), (two, rep2) = runs[1], runs[2]
    assert rep1["devices"] == 1 and rep2["devices"] == 2
    shapes = {"sweep": [3, 5, 5, 20], "loss": [3, 5, 5], "online": [5, 5, 20], "pd": [1, 2, 3, 3]}
    assert rep1["shapes"] == rep2["shapes"] == shapes
    # Not always bit-identical: each device's block has another shape (2 tasks / 3 initialisations
    # instead of 3 / 5), so XLA may block and fuse the products and batch sums differently, which
    # reassociates float64 sums (relative error ~ 1e-16 per operation). Over 100 SGD steps at lr 0.1
    # (t = 10, where the weights grow by at most a factor of order 10) that stays far below 1e-12
    # relative to the largest entry (measured: train_sweep's weights bit for bit, train_online's and
    # the phase diagram's within 1e-16 absolute); wrong blocks or padding would give O(1) errors.
    for name in one:
        a, b = one[name], two[name]
        assert np.all(np.isfinite(a)) and np.all(np.isfinite(b)), name
        scale = np.max(np.abs(a))
        assert scale > 0, name
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-12 * scale, err_msg=name)


def test_two_device_sweep_is_sharded(runs):
    (_, rep1), (_, rep2) = runs[1], runs[2]
    # three placements (train_sweep's tasks, train_online's initialisations, the phase diagram's tasks)
    assert len(rep2["inputs"]) == len(rep2["outputs"]) == 3
    assert all(n == 2 for leaves in rep2["inputs"] for n in leaves)  # every input leaf on both devices
    assert all(n == 2 for leaves in rep2["outputs"] for n in leaves)  # and the compiled outputs too
    assert rep2["pad_equal"]  # padding rows are copies of the last real entry
    assert all(n == 1 for leaves in rep1["inputs"] + rep1["outputs"] for n in leaves)


def test_one_device_is_identity():
    tree = {"w": np.ones((3, 4)), "k": (jnp.arange(3.0), None)}
    devices = jax.devices()[:1]
    placed, length = sharding.shard_leading(tree, devices)
    assert placed is tree and length == 3
    same = sharding.unpad(tree, 3)
    assert same["w"] is tree["w"] and same["k"][0] is tree["k"][0] and same["k"][1] is None
    assert sharding.sweep_devices() == tuple(jax.devices())


def test_unpad_cuts_the_sweep_axis():
    out = sharding.unpad((np.arange(24.0).reshape(2, 4, 3), None), 3, axis=1)
    np.testing.assert_array_equal(out[0], np.arange(24.0).reshape(2, 4, 3)[:, :3])
    assert out[1] is None
    np.testing.assert_array_equal(sharding.unpad(np.arange(5), 2, axis=-1), [0, 1])


@pytest.mark.parametrize(
    "tree, match",
    [
        ({}, "at least one array leaf"),
        ((np.ones(3), np.float64(1.0)), "leaf 1 must have a leading sweep axis"),
        ((np.ones(3), np.ones((4, 2))), r"one leading axis length, got lengths \[3, 4\]"),
        (np.ones((0, 2)), "length >= 1, got 0"),
    ],
)
def test_shard_leading_rejects_bad_trees(tree, match):
    with pytest.raises(ValueError, match=match):
        sharding.shard_leading(tree)


def test_bad_devices_and_lengths():
    with pytest.raises(TypeError, match="devices must be None or a non-empty sequence"):
        sharding.shard_leading(np.ones(2), [])
    with pytest.raises(TypeError, match=r"devices\[0\] must be a jax.Device, got str"):
        sharding.shard_leading(np.ones(2), ["cpu"])
    with pytest.raises(ValueError, match="devices must be distinct"):
        sharding.sweep_devices(jax.devices()[:1] * 2)
    with pytest.raises(ValueError, match="length must be an integer >= 1, got 0"):
        sharding.unpad(np.ones(2), 0)
    with pytest.raises(TypeError, match="axis must be an integer, got 1.0"):
        sharding.unpad(np.ones(2), 1, axis=1.0)
    with pytest.raises(ValueError, match="axis = 2 is out of range"):
        sharding.unpad(np.ones((2, 3)), 1, axis=2)
    with pytest.raises(ValueError, match="has 2 < length = 3 entries on axis 0"):
        sharding.unpad(np.ones((2, 3)), 3)
