r"""Sweeps over several devices: the leading (sweep) axis of a pytree split across all JAX devices.

A sweep — initialisations in ``train.train_online``, tasks (parameter values) in ``train.train_sweep``
and hence every sweep of ``localization.experiments`` built on them (Fig. 5, the phase diagram,
``comparison_sweep``) — is one ``jit``-compiled computation vmapped over a leading axis.
:func:`shard_leading` places the arrays of that axis on a one-dimensional
:class:`jax.sharding.Mesh` of the devices (axis name :data:`SWEEP_AXIS`) with a
:class:`jax.sharding.NamedSharding`; ``jit`` then partitions the whole computation along the
same axis (GSPMD: each device runs its block of the sweep, data shared by the sweep are computed on
every device), with no process pool and no change to the traced code. :func:`unpad` strips the
padding from the outputs, which ``np.asarray`` gathers into one host array.

With one device (the default on a CPU) :func:`shard_leading` returns its input itself, so results
stay bit for bit those of the unsharded code. With D > 1 devices and a leading length L that is not a
multiple of D, the axis is *padded* to the next multiple by repeating its last entry, rather than
replicated: replication would run the whole sweep on every device (no speed-up, e.g. 30
initialisations on 4 GPUs), while padding costs at most D − 1 extra entries, each a copy of a
valid one (a zero weight vector or a zero family parameter could be a degenerate task), and
entries of a vmapped computation do not interact, so the real entries are unchanged up to
rounding by the padding, which :func:`unpad` removes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["SWEEP_AXIS", "sweep_devices", "shard_leading", "unpad"]

SWEEP_AXIS = "sweep"
"""Name of the mesh axis the sweep is split along."""


def sweep_devices(devices: Sequence[Any] | None = None) -> tuple[Any, ...]:
    """Return the devices a sweep is split over: ``devices`` checked, or all of ``jax.devices()`` (default).

    Raises TypeError unless ``devices`` is None or a non-empty sequence of distinct ``jax.Device``.

    Parameters
    ----------
    devices : Sequence or None
        Distinct ``jax.Device`` objects, or None for all.

    Returns
    -------
    tuple
        The devices.
    """
    if devices is None:
        return tuple(jax.devices())
    if isinstance(devices, (str, bytes)) or not isinstance(devices, Sequence) or len(devices) == 0:
        raise TypeError(f"devices must be None or a non-empty sequence of jax devices, got {devices!r}")
    for i, d in enumerate(devices):
        if not isinstance(d, jax.Device):
            raise TypeError(f"devices[{i}] must be a jax.Device, got {type(d).__name__}")
    if len(set(devices)) != len(devices):
        raise ValueError(f"devices must be distinct, got {list(devices)}")
    return tuple(devices)


def _leading_length(tree: Any) -> int:
    leaves = jax.tree_util.tree_leaves(tree)
    if not leaves:
        raise ValueError("tree must have at least one array leaf (the sweep axis), got no leaves")
    lengths = set()
    for i, leaf in enumerate(leaves):
        shape = np.shape(leaf)
        if len(shape) == 0:
            raise ValueError(f"tree leaf {i} must have a leading sweep axis (ndim >= 1), got a scalar")
        lengths.add(shape[0])
    if len(lengths) != 1:
        raise ValueError(f"tree leaves must share one leading axis length, got lengths {sorted(lengths)}")
    length = lengths.pop()
    if length == 0:
        raise ValueError("tree's leading axis must have length >= 1, got 0")
    return length


def shard_leading(tree: Any, devices: Sequence[Any] | None = None) -> tuple[Any, int]:
    """Place every array of ``tree`` split along its leading axis over ``devices`` (default: all).

    Parameters
    ----------
    tree : pytree whose leaves are arrays of shape (L, ...) with one common L ≥ 1 (e.g. stacked
        initial weights (I, N), or the stacked parameters of P tasks).
    devices : the devices, default ``jax.devices()``.

    Returns
    -------
    ``(placed, L)``. One device: ``placed`` *is* ``tree`` (identity, no copy, no transfer). D > 1
    devices: every leaf padded to length L' = D·⌈L/D⌉ by repeating its entry L − 1, and put on
    the mesh with ``NamedSharding(Mesh(devices, (SWEEP_AXIS,)), PartitionSpec(SWEEP_AXIS))`` (block
    d of L'/D entries on device d). Remove the padding from results with ``unpad(out, L, axis)``.

    Raises
    ------
    ValueError if the tree has no leaves, a scalar leaf, leaves of different or zero leading length;
    TypeError for bad ``devices``.
    """
    length = _leading_length(tree)
    devices = sweep_devices(devices)
    D = len(devices)
    if D == 1:
        return tree, length
    padded = -(-length // D) * D
    sharding = NamedSharding(Mesh(np.asarray(devices), (SWEEP_AXIS,)), PartitionSpec(SWEEP_AXIS))

    def place(leaf):
        leaf = jnp.asarray(leaf)
        if padded > length:
            leaf = jnp.concatenate([leaf, jnp.repeat(leaf[-1:], padded - length, axis=0)])
        return jax.device_put(leaf, sharding)

    return jax.tree_util.tree_map(place, tree), length


def unpad(tree: Any, length: int, axis: int = 0) -> Any:
    """Cut every array of ``tree`` to its first ``length`` entries along ``axis``.

    ``axis`` is the sweep axis of an output of a computation on :func:`shard_leading`'s result; leaves already of that
    length are returned as they are, so with one device this is the identity. None leaves stay None.

    Raises ValueError if ``length`` < 1 or a leaf's ``axis`` is shorter than ``length``.

    Parameters
    ----------
    tree : pytree
        Arrays (or None) with the sweep axis ``axis``.
    length : int
        The unpadded length L >= 1.
    axis : int
        The sweep axis.

    Returns
    -------
    pytree
        ``tree`` with every array cut to ``length`` along ``axis``.
    """
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
        raise ValueError(f"length must be an integer >= 1, got {length!r}")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an integer, got {axis!r}")

    def cut(leaf):
        shape = np.shape(leaf)
        if not -len(shape) <= axis < len(shape):
            raise ValueError(f"axis = {axis} is out of range for a leaf of shape {shape}")
        if shape[axis] < length:
            raise ValueError(f"leaf of shape {shape} has {shape[axis]} < length = {length} entries on axis {axis}")
        if shape[axis] == length:
            return leaf
        return leaf[(slice(None),) * (axis % len(shape)) + (slice(0, length),)]

    return jax.tree_util.tree_map(cut, tree)
