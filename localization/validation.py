"""Argument checks shared by every public function.

Each check raises ``TypeError`` (wrong kind of object) or ``ValueError`` (right kind, value out of
range) with a message naming the parameter, the value received and the valid range, so that a
caller never gets NaN or inf back silently.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import jax


def real_scalar(name: str, value: Any) -> float:
    """Return ``value`` as a Python float, or raise if it is not a finite real number.

    Parameters
    ----------
    name : str
        The parameter's name, used in the messages.
    value : Any
        The argument.

    Returns
    -------
    float
        ``value`` as a Python float.
    """
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        if isinstance(value, (np.ndarray,)) and value.shape == () and np.issubdtype(value.dtype, np.number):
            value = value.item()
        else:
            try:  # 0-d JAX arrays
                if getattr(value, "shape", None) == () and np.issubdtype(value.dtype, np.number):
                    value = float(value)
                else:
                    raise TypeError
            except (TypeError, AttributeError):
                raise TypeError(f"{name} must be a real number, got {value!r} of type {type(value).__name__}") from None
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def positive(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is a finite real number > 0; raise otherwise.

    Parameters
    ----------
    name : str
        The parameter's name, used in the messages.
    value : Any
        The argument.

    Returns
    -------
    float
        ``value`` as a Python float.
    """
    value = real_scalar(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be positive (valid range: 0 < {name} < inf), got {value}")
    return value


def nonnegative(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is a finite real number >= 0; raise otherwise.

    Parameters
    ----------
    name : str
        The parameter's name, used in the messages.
    value : Any
        The argument.

    Returns
    -------
    float
        ``value`` as a Python float.
    """
    value = real_scalar(name, value)
    if value < 0:
        raise ValueError(f"{name} must be non-negative (valid range: 0 <= {name} < inf), got {value}")
    return value


def greater_than(name: str, value: Any, bound: float, reason: str) -> float:
    """Return ``value`` as a float if it is finite and > ``bound``.

    ``reason`` (e.g. which moment diverges) explains the bound in the message.
    """
    value = real_scalar(name, value)
    if not value > bound:
        raise ValueError(f"{name} must be > {bound:g} ({reason}; valid range: {bound:g} < {name} < inf), got {value}")
    return value


def kur_exponent(name: str, value: Any) -> float:
    """Check the exponent k of Kur(k): finite and > 2 (its variance diverges for k <= 2)."""
    return greater_than(name, value, 2.0, "the variance of Kur(k) diverges for k <= 2")


def student_dof(name: str, value: Any) -> float:
    """Degrees of freedom of a unit-variance Student t: finite and > 2."""
    return greater_than(name, value, 2.0, "unit variance needs a finite variance")


def in_range(
    name: str, value: Any, low: float, high: float, *, low_open: bool = False, high_open: bool = False
) -> float:
    """Return ``value`` as a float if it lies between ``low`` and ``high`` (closed unless ``*_open``).

    Parameters
    ----------
    name : str
        The parameter's name, used in the messages.
    value : Any
        The argument.
    low, high : float
        The interval's ends.
    low_open, high_open : bool
        Whether each end is excluded.

    Returns
    -------
    float
        ``value`` as a Python float.
    """
    value = real_scalar(name, value)
    too_low = value <= low if low_open else value < low
    too_high = value >= high if high_open else value > high
    if too_low or too_high:
        left = "(" if low_open else "["
        right = ")" if high_open else "]"
        raise ValueError(f"{name} must lie in {left}{low}, {high}{right}, got {value}")
    return value


def integer(name: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an int if it is a Python or NumPy integer (not a bool, not a float) in range.

    Parameters
    ----------
    name : str
        The parameter's name, used in the messages.
    value : Any
        The argument.
    minimum : int
        The smallest valid value.
    maximum : int or None
        The largest valid value (e.g. ``N - 1`` for an index into N coordinates); none if ``None``.

    Returns
    -------
    int
        ``value`` as a Python int.
    """
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r} of type {type(value).__name__}")
    value = int(value)
    if maximum is not None and not minimum <= value <= maximum:
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum}], got {value}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return value


def shape(name: str, value: Any, minimum: int = 2) -> tuple[int, ...]:
    """Return an input size as a shape tuple: an int ``n`` (1-D signal) or a tuple of ints (a periodic grid).

    Parameters
    ----------
    name : str
        The parameter's name, used in the messages.
    value : Any
        The argument.
    minimum : int
        The smallest valid size of each axis.

    Returns
    -------
    tuple[int, ...]
        The shape: ``(n,)`` for an int.
    """
    if isinstance(value, tuple):
        if not value:
            raise ValueError(f"{name} must be a non-empty tuple of integers, got {value!r}")
        return tuple(integer(f"{name}[{i}]", v, minimum) for i, v in enumerate(value))
    return (integer(name, value, minimum),)


def key(name: str, value: Any) -> jax.Array:
    """Return ``value`` if it is one JAX PRNG key: a typed key (``jax.random.key``) or a raw ``uint32[2]`` key.

    Parameters
    ----------
    name : str
        The parameter's name, used in the messages.
    value : Any
        The argument.

    Returns
    -------
    jax.Array
        ``value`` unchanged.
    """
    import jax
    import jax.numpy as jnp

    if isinstance(value, jax.Array):
        if jnp.issubdtype(value.dtype, jax.dtypes.prng_key) and value.shape == ():
            return value
        if value.dtype == jnp.uint32 and value.shape == (2,):
            return value
    raise TypeError(f"{name} must be a single JAX PRNG key (jax.random.key(seed)), got {value!r}")


def floating_dtype(name: str, value: Any, allowed: tuple[str, ...] | None = None) -> np.dtype:
    """Return ``value`` as a floating NumPy/JAX dtype.

    ``allowed`` (names, e.g. ("float32", "float64")) restricts it further; a 64-bit dtype also needs
    JAX's 64-bit mode (:func:`require_float64`).

    Parameters
    ----------
    name : str
        The parameter's name, used in the messages.
    value : Any
        The argument.
    allowed : tuple[str, ...] or None
        Names of the allowed dtypes.

    Returns
    -------
    np.dtype
        The dtype.
    """
    import jax.numpy as jnp

    valid = " or ".join(f"jnp.{a}" for a in allowed) if allowed else "a floating dtype such as jnp.float32"
    try:
        dt = jnp.dtype(value)
    except TypeError:
        raise TypeError(f"{name} must be {valid}, got {value!r}") from None
    if not jnp.issubdtype(dt, jnp.floating) or (allowed and dt.name not in allowed):
        raise TypeError(f"{name} must be {valid}, got {value!r}")
    require_float64(name, dt)
    return dt


def require_float64(name: str, dtype: Any) -> None:
    """Raise ``ValueError`` when ``dtype`` is a 64-bit type that JAX's 32-bit mode would silently truncate.

    Parameters
    ----------
    name : str
        What asks for the dtype (named in the message).
    dtype : dtype-like
        The requested dtype; only float64 and complex128 are checked.

    Raises
    ------
    ValueError
        ``dtype`` is float64 (or complex128) and ``jax_enable_x64`` is off: call
        ``localization.enable_float64()`` first, or ask for float32.
    """
    import jax

    dt = np.dtype(dtype)
    if dt.name in ("float64", "complex128") and not jax.config.jax_enable_x64:
        raise ValueError(
            f"{name}: {dt.name} needs JAX's 64-bit mode, which is off (JAX would truncate to 32 bits); "
            "call localization.enable_float64() before computing, or pass dtype=jnp.float32"
        )


def float64(name: str, value: Any) -> jax.Array:
    """Return ``value`` as a float64 JAX array: the library's one rule for float64 computations.

    With JAX's 64-bit mode off, ``jnp.asarray(x, dtype=jnp.float64)`` warns and returns float32; every
    float64 computation of the library asks through here instead, and refuses (:func:`require_float64`).

    Parameters
    ----------
    name : str
        What is converted (named in the message).
    value : array-like
        A real array or scalar (not checked for finiteness: it may be a tracer).

    Returns
    -------
    jax.Array
        ``value`` as float64.

    Raises
    ------
    ValueError
        JAX's 64-bit mode is off: call ``localization.enable_float64()`` first.
    """
    import jax.numpy as jnp

    require_float64(name, np.float64)
    return jnp.asarray(value, dtype=jnp.float64)


def float_array(name: str, value: Any, ndim_min: int = 1, last_dim: int | None = None) -> np.ndarray | jax.Array:
    """Return ``value`` if it is a real (floating or integer) array with at least ``ndim_min`` axes.

    Lists and tuples become NumPy arrays; ``last_dim`` fixes the length of the last axis. Entries are
    not checked for finiteness here (the value may be a tracer); callers check concrete values.

    Parameters
    ----------
    name : str
        The parameter's name, used in the messages.
    value : Any
        The argument.
    ndim_min : int
        The fewest axes.
    last_dim : int or None
        The required length of the last axis.

    Returns
    -------
    np.ndarray or jax.Array
        ``value`` (lists and tuples as NumPy arrays).
    """
    import jax.numpy as jnp

    if not hasattr(value, "shape") or not hasattr(value, "dtype"):
        if isinstance(value, (list, tuple)):
            value = np.asarray(value)
        else:
            raise TypeError(f"{name} must be an array, got {type(value).__name__}")
    if not (jnp.issubdtype(value.dtype, jnp.floating) or jnp.issubdtype(value.dtype, jnp.integer)):
        raise TypeError(f"{name} must be a real floating-point array, got dtype {value.dtype}")
    if value.ndim < ndim_min:
        raise ValueError(f"{name} must have at least {ndim_min} axes, got shape {tuple(value.shape)}")
    if last_dim is not None and value.shape[-1] != last_dim:
        raise ValueError(f"{name} must have last axis of length {last_dim}, got shape {tuple(value.shape)}")
    return value


def finite_weights(name: str, value: Any) -> jax.Array:
    """Return concrete weights as a finite float64 JAX array with at least one axis.

    Parameters
    ----------
    name : str
        The parameter's name, used in the messages.
    value : Any
        The argument: (..., N) weights, leading axes independent weight vectors.

    Returns
    -------
    jax.Array
        ``value`` as float64.
    """
    import jax.numpy as jnp

    w = jnp.asarray(float_array(name, value, ndim_min=1), dtype=jnp.float64)
    if not bool(jnp.all(jnp.isfinite(w))):
        raise ValueError(f"{name} must be finite, got non-finite entries")
    return w


#: A covariance's smallest eigenvalue may fall below 0 by rounding: by at most this fraction of its
#: largest absolute eigenvalue (float64 eigenvalues of the book's circulants reach ~1e-16 of it).
PSD_TOLERANCE = 1e-10


def covariance_pair(
    names: tuple[str, str], first: Any, second: Any, *, symmetric: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Return two class covariances Σ₀, Σ₁ as finite float64 (N, N) matrices of one shape, N ≥ 2.

    The library's one check of a covariance: every flow of the theory and every Gaussian task takes
    its pair through here. Both must be symmetric to 1e-10 (absolute) and positive semi-definite: the
    smallest eigenvalue may fall below 0 by rounding only, by at most :data:`PSD_TOLERANCE` times the
    largest absolute eigenvalue. ``symmetric=False`` skips both checks (for callers that test a
    structure of their own, e.g. circulance, with their own tolerance).

    Parameters
    ----------
    names : tuple[str, str]
        The two parameters' names, used in the messages (e.g. ``("cov0", "cov1")``).
    first, second : Any
        The two matrices, (N, N).
    symmetric : bool
        Whether to require symmetry and positive semi-definiteness.

    Returns
    -------
    tuple[np.ndarray, np.ndarray]
        The two matrices, float64 (N, N).

    Raises
    ------
    ValueError
        If a matrix is not square with N >= 2, not finite, not symmetric, not positive semi-definite
        (the message names the parameter and its smallest eigenvalue), or the shapes differ.
    """
    mats = []
    for name, value in zip(names, (first, second), strict=True):
        m = np.asarray(float_array(name, value, ndim_min=2), dtype=np.float64)
        if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 2:
            raise ValueError(f"{name} must be a square (N, N) matrix with N >= 2, got shape {m.shape}")
        if not np.all(np.isfinite(m)):
            raise ValueError(f"{name} must be finite")
        if symmetric:
            if not np.allclose(m, m.T, rtol=0, atol=1e-10):
                raise ValueError(
                    f"{name} must be symmetric (to 1e-10), got max |{name} - {name}^T| = {np.abs(m - m.T).max():.3g}"
                )
            eig = np.linalg.eigvalsh(m)
            floor = -PSD_TOLERANCE * max(1.0, float(np.max(np.abs(eig))))
            if eig[0] < floor:
                raise ValueError(
                    f"{name} must be positive semi-definite (a covariance), got smallest eigenvalue {eig[0]:.6g} "
                    f"(valid: >= {floor:.3g}, i.e. >= 0 up to rounding)"
                )
        mats.append(m)
    if mats[0].shape != mats[1].shape:
        raise ValueError(f"{names[0]} and {names[1]} must have equal shapes, got {mats[0].shape} and {mats[1].shape}")
    return mats[0], mats[1]


def finite_real_array(name: str, value: Any, valid: str = "") -> np.ndarray:
    """Return a concrete real number or array (not bool) as finite float64.

    ``valid`` (e.g. "-1 <= a <= 1") is appended to the message for non-finite entries.

    Parameters
    ----------
    name : str
        The parameter's name, used in the messages.
    value : Any
        The argument.
    valid : str
        The valid range, for the message.

    Returns
    -------
    np.ndarray
        float64.
    """
    if isinstance(value, bool) or (hasattr(value, "dtype") and np.asarray(value).dtype == bool):
        raise TypeError(f"{name} must be a real number or array, got {value!r}")
    try:
        arr = np.asarray(value)
    except Exception:  # e.g. a ragged sequence
        raise TypeError(f"{name} must be a real number or array, got {type(value).__name__}") from None
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be a real number or array, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        where = f" (valid range: {valid})" if valid else ""
        raise ValueError(f"{name} must be finite{where}, got non-finite entries in {value!r}")
    return arr


def real_fields(name: str, value: Any, minimum: int = 4) -> np.ndarray:
    """Return real fields of shape ``(..., N)`` as float64: finite, N >= ``minimum``, none all-zero.

    Parameters
    ----------
    name : str
        The parameter's name, used in the messages.
    value : Any
        The argument, a real array ``(..., N)`` (each row along the last axis one field).
    minimum : int
        The smallest allowed N.

    Returns
    -------
    np.ndarray
        ``(..., N)`` float64.
    """
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise TypeError(f"{name} must be a real array of shape (..., N), got {type(value).__name__}")
    arr = np.asarray(value)
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be a real array of shape (..., N), got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.ndim < 1 or arr.shape[-1] < minimum:
        raise ValueError(f"{name} must have shape (..., N) with N >= {minimum}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {int(np.sum(~np.isfinite(arr)))} NaN/inf entries")
    norms = np.sum(arr**2, axis=-1)
    if np.any(norms == 0):
        raise ValueError(f"{name} must have no all-zero field (index {np.argwhere(norms == 0)[0].tolist()})")
    return arr
