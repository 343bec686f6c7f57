"""One way to make a frozen dataclass a JAX pytree, used by every class of the library.

``@pytree_dataclass`` turns a class into a frozen dataclass and registers it with JAX. Its fields
are *leaves* (traced under ``jit``/``vmap``: family parameters such as the NLGP gain, arrays) unless
declared with :func:`static_field` (hashable auxiliary data: a new value recompiles; length-scales,
dimensions, names). Unflattening bypasses ``__init__``/``__post_init__``, so validation runs on
construction by the user and never on tracers.

The field names are recorded on the class as ``leaf_fields`` and ``static_fields``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import jax

__all__ = ["pytree_dataclass", "static_field"]

T = TypeVar("T")


def static_field(**kwargs: Any) -> Any:
    """Return a dataclass field stored as static (hashable) pytree auxiliary data, not as a leaf.

    Parameters
    ----------
    **kwargs
        Passed to ``dataclasses.field`` (e.g. ``default``); ``metadata`` is extended.

    Returns
    -------
    dataclasses.Field
        The field, marked static.
    """
    metadata = dict(kwargs.pop("metadata", {}) or {})
    metadata["static"] = True
    return dataclasses.field(metadata=metadata, **kwargs)


def pytree_dataclass(cls: type[T] | None = None, *, eq: bool = True) -> Any:
    """Make ``cls`` a frozen dataclass registered as a pytree (a decorator; see module docstring).

    ``@pytree_dataclass(eq=False)`` keeps identity equality and hashing, for classes whose leaves are
    arrays (field-wise ``==`` on arrays is not a bool).

    Parameters
    ----------
    cls : type or None
        The class (None when called with options, ``@pytree_dataclass(eq=False)``).
    eq : bool
        Field-wise equality and hashing (True) or identity (False).

    Returns
    -------
    type or Callable
        The registered class, or a decorator when ``cls`` is None.
    """
    if cls is None:
        return lambda c: _register(c, eq)
    return _register(cls, eq)


def _register(cls: type[T], eq: bool) -> type[T]:
    cls = dataclasses.dataclass(frozen=True, eq=eq)(cls)
    fields = dataclasses.fields(cls)
    leaves = tuple(f.name for f in fields if not f.metadata.get("static", False))
    static = tuple(f.name for f in fields if f.metadata.get("static", False))

    def flatten_with_keys(obj):
        children = tuple((jax.tree_util.GetAttrKey(name), getattr(obj, name)) for name in leaves)
        return children, tuple(getattr(obj, name) for name in static)

    def flatten(obj):
        return tuple(getattr(obj, name) for name in leaves), tuple(getattr(obj, name) for name in static)

    def unflatten(aux, children):
        obj = object.__new__(cls)
        for name, value in zip(leaves, children, strict=True):
            object.__setattr__(obj, name, value)
        for name, value in zip(static, aux, strict=True):
            object.__setattr__(obj, name, value)
        return obj

    jax.tree_util.register_pytree_with_keys(cls, flatten_with_keys, unflatten, flatten)
    cls.leaf_fields = leaves
    cls.static_fields = static
    return cls
