"""Tasks as arguments of compiled functions: traced parameters, static structure, stacked sweeps.

A pytree task (``data.LengthscaleTask`` of data models whose family parameters — gain, k, J, nu — are
leaves and whose length-scales are static) enters a ``jit``-compiled function as traced leaves plus
a static spec, so a new parameter value does not recompile (:func:`split_task`,
:func:`rebuild_task`). Leaves with *equal values* are passed once, so that inside the trace both
classes see the *same* tracer; ``LengthscaleTask.sample`` relies on this to apply one transform to
both classes when they share the family parameter. :func:`stack_tasks` stacks tasks that differ
only in their leaves into one task with a leading sweep axis (``train.train_sweep`` vmaps over it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import DTypeLike

from localization import validation as v

__all__ = ["split_task", "rebuild_task", "stack_tasks"]


def _is_numeric_leaf(x):
    if isinstance(x, bool):
        return False
    return isinstance(x, (int, float, np.ndarray, np.number, jax.Array))


@dataclass(frozen=True, eq=False)
class _ByIdentity:
    """Static-argument wrapper for an unhashable task (compiled once per object identity)."""

    obj: Any


@dataclass(frozen=True)
class _TaskSpec:
    """Static part of a pytree task: its treedef and, per leaf, the index of its (deduplicated) value."""

    treedef: Any
    index: tuple


def _same_value(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))


def split_task(task: Any) -> tuple[tuple[Any, ...] | None, Any]:
    """Split a task into ``(dynamic, static)`` parts for a compiled function.

    Pytree tasks with numeric leaves go in as traced arguments (no recompilation for new parameter
    values), with equal leaves passed once, so that inside the trace they are the
    *same* tracer (e.g. the gain shared by both classes of ``LengthscaleTask.of(NLGP, gain=g)``; a
    sampler can then see that one transform serves both classes). Anything else is a static argument
    (hash/eq, or identity).

    Parameters
    ----------
    task : Task
        A task (pytree or hashable object).

    Returns
    -------
    tuple
        ``(dynamic, static)``: the distinct numeric leaves (or None) and what :func:`rebuild_task` needs.
    """
    leaves, treedef = jax.tree_util.tree_flatten(task)
    if all(_is_numeric_leaf(l) for l in leaves) and not (len(leaves) == 1 and leaves[0] is task):
        uniq, index = [], []
        for leaf in leaves:
            for j, u in enumerate(uniq):
                if _same_value(leaf, u):
                    index.append(j)
                    break
            else:
                index.append(len(uniq))
                uniq.append(leaf)
        return tuple(uniq), _TaskSpec(treedef, tuple(index))
    try:
        hash(task)
        return None, task
    except TypeError:
        return None, _ByIdentity(task)


def rebuild_task(dyn: tuple[Any, ...] | None, static: Any) -> Any:
    """Return the task that :func:`split_task` split into ``dyn`` and ``static`` (inside or outside a trace)."""
    if isinstance(static, _TaskSpec):
        return jax.tree_util.tree_unflatten(static.treedef, [dyn[i] for i in static.index])
    return static.obj if isinstance(static, _ByIdentity) else static


def stack_tasks(tasks: Sequence[Any], dtype: DTypeLike = jnp.float32) -> Any:
    """Stack tasks that differ only in array-valued parameters into one task, for :func:`train_sweep`.

    The stacked task's leaves have a leading axis of length P = len(tasks) (floating leaves cast to
    ``dtype``).

    The tasks must be pytrees with the same structure (same static fields, e.g. the same length
    scales ``xi``) and numeric leaves (e.g. ``NLGP`` gains, ``Kur`` exponents ``k``).

    Parameters
    ----------
    tasks : Sequence
        The P tasks.
    dtype : DTypeLike
        float32 or float64, the dtype of the stacked floating leaves.

    Returns
    -------
    Task
        One task whose leaves have a leading axis of length P.
    """
    if isinstance(tasks, (str, bytes)) or not isinstance(tasks, Sequence) or len(tasks) == 0:
        raise TypeError(f"tasks must be a non-empty sequence of tasks, got {tasks!r}")
    dtype = v.floating_dtype("dtype", dtype, allowed=("float32", "float64"))
    structs = [jax.tree_util.tree_structure(t) for t in tasks]
    leaves = [jax.tree_util.tree_leaves(t) for t in tasks]
    if not leaves[0] or not all(_is_numeric_leaf(l) for l in leaves[0]) or leaves[0][0] is tasks[0]:
        raise TypeError(
            "tasks must be pytrees with numeric leaves (register the data models with "
            "jax.tree_util, parameters as leaves); got a task with no numeric leaves: "
            f"{type(tasks[0]).__name__}"
        )
    for i, s in enumerate(structs[1:], 1):
        if s != structs[0]:
            raise ValueError(
                f"tasks must share one structure (same static fields such as xi and the same model types); "
                f"tasks[{i}] differs from tasks[0]: {s} vs {structs[0]}"
            )

    def stack(*xs):
        a = jnp.stack([jnp.asarray(x) for x in xs])
        return a.astype(dtype) if jnp.issubdtype(a.dtype, jnp.floating) else a

    return jax.tree_util.tree_map(stack, *tasks)
