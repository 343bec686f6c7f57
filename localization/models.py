r"""Networks of the paper (Section 2.1).

The single ReLU neuron (M2), the soft committee machine and the two-layer network with trainable
readout (M1).

All models map one parameter set and a batch ``x`` of shape ``(num, N)`` to predictions of shape
``(num,)``; leading axes on the parameters (independent initialisations, parameter sweeps) are
handled with :func:`jax.vmap` by the callers (``localization.train``), so the functions here stay
small and pure. ``N = prod(n)`` for a grid input size ``n``.

* :func:`relu_neuron` — paper model (M2): :math:`\hat y(x)=\mathrm{ReLU}(\langle w,x\rangle)`, no bias.
* :func:`committee` — soft committee machine: paper (M1) with the second layer fixed at :math:`1/K`,
  :math:`\hat y(x)=\frac1K\sum_{k=1}^K\sigma(\langle w_k,x\rangle+b_k)` (optional bias ``b``).
* :func:`two_layer` — paper (M1) with trainable readout ``a`` and output bias ``c``, both scaled by
  :math:`1/K`: :math:`\hat y(x)=\frac1K\bigl(c+\sum_k a_k\,\sigma(\langle w_k,x\rangle+b_k)\bigr)`. The
  :math:`1/K` keeps the output of order one at initialisation; it is a reparametrisation of the
  paper's second layer (:math:`w^{(2)}_m = a_m/K`, :math:`b^{(2)} = c/K`) and the forward pass of the
  paper's code (``MLP.__call__`` in ``localization/models/feedforward.py`` of
  github.com/leonlufkin/Localization at 5ebb565 divides the whole readout layer, bias included, by K).
  With ``c`` outside the :math:`1/K`, SGD would move ``c`` K² times faster than the paper's code does
  (at the paper's lr 80–100 with K = 10 that diverges).

Activations ``σ``: ``"relu"`` (:math:`\max(h,0)`), ``"sigmoid"`` (logistic :math:`1/(1+e^{-h})`) and
``"erf"`` (:math:`\operatorname{erf}(h/\sqrt2)`, the odd "sigmoidal" unit of Ingrosso & Goldt and the
statistical-physics literature; range (−1, 1)).

Initialisation (reference settings): every weight is an independent centred Gaussian (the paper's
"isotropic Gaussian distribution with scaled variance", Section 2.1) with the Xavier/Glorot variance
:math:`2/(\text{fan}_\text{in}+\text{fan}_\text{out})` multiplied by ``init_scale`` (0.001 for the
single neuron, 0.1 for the committee machine in the paper's figures). For a single neuron
:math:`\text{fan}_\text{out}=1`, so the variance is ``init_scale · 2/(N+1)``. The readout and the biases
of :func:`init_params` follow the paper's code rather than its text (Section 2.1 says weights *and
biases* are Gaussian): the readout starts at 1 plus a Xavier draw (``init_shift=1.`` of the readout
layer), every bias at 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike, DTypeLike

from localization import validation as v

__all__ = [
    "ACTIVATIONS",
    "Params",
    "activation_fn",
    "relu_neuron",
    "committee",
    "two_layer",
    "init_weights",
    "init_params",
    "predict",
    "MODELS",
    "check_architecture",
    "flatten_initialisations",
    "batch_mse",
    "mse",
]

ACTIVATIONS = ("relu", "sigmoid", "erf")
MODELS = ("neuron", "committee", "two_layer")

_SQRT_HALF = 1.0 / math.sqrt(2.0)


class Params(NamedTuple):
    """Parameters of the many-neuron models (M1).

    Attributes
    ----------
    w : (..., K, N) first-layer weights (row k is the receptive field of hidden unit k).
    b : (..., K) hidden biases, or ``None`` (no bias).
    a : (..., K) readout weights (``two_layer`` only), or ``None`` (soft committee machine: readout
        fixed at 1/K).
    c : (...) output bias (``two_layer`` only), or ``None``.
    """

    w: Any
    b: Any = None
    a: Any = None
    c: Any = None


def activation_fn(activation: str) -> Callable[[jax.Array], jax.Array]:
    """Return the pointwise nonlinearity named ``activation`` ("relu", "sigmoid" or "erf").

    Parameters
    ----------
    activation : str
        One of :data:`ACTIVATIONS`; "erf" is erf(·/√2).

    Returns
    -------
    Callable[[jax.Array], jax.Array]
        The elementwise function.
    """
    if not isinstance(activation, str):
        raise TypeError(f"activation must be a string, one of {ACTIVATIONS}, got {activation!r}")
    if activation == "relu":
        return jax.nn.relu
    if activation == "sigmoid":
        return jax.nn.sigmoid
    if activation == "erf":
        return lambda h: jax.lax.erf(h * _SQRT_HALF)
    raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")


def _check_x(x, n_in: int):
    x = v.float_array("x", x, ndim_min=2)
    if x.ndim != 2:
        raise ValueError(f"x must be a (num, N) batch, got shape {tuple(x.shape)}")
    if x.shape[-1] != n_in:
        raise ValueError(
            f"x must have last axis of length N = {n_in} (the weights' input size), got shape {tuple(x.shape)}"
        )
    return x


def relu_neuron(w: ArrayLike, x: ArrayLike) -> jax.Array:
    r"""Single ReLU neuron, paper (M2): :math:`\hat y = \mathrm{ReLU}(\langle w, x\rangle)`.

    Parameters
    ----------
    w : (N,) weights.
    x : (num, N) inputs.

    Returns
    -------
    (num,) predictions.
    """
    w = v.float_array("w", w, ndim_min=1)
    if w.ndim != 1:
        raise ValueError(f"w must be a single (N,) weight vector (vmap over leading axes), got shape {tuple(w.shape)}")
    x = _check_x(x, w.shape[0])
    return jax.nn.relu(x @ w)


def _hidden(W, x, act, b):
    W = v.float_array("W", W, ndim_min=2)
    if W.ndim != 2:
        raise ValueError(f"W must be a (K, N) weight matrix (vmap over leading axes), got shape {tuple(W.shape)}")
    x = _check_x(x, W.shape[1])
    h = x @ W.T  # (num, K)
    if b is not None:
        b = v.float_array("b", b, ndim_min=1)
        if b.shape != (W.shape[0],):
            raise ValueError(f"b must have shape (K,) = ({W.shape[0]},), got {tuple(b.shape)}")
        h = h + b
    return activation_fn(act)(h)


def committee(W: ArrayLike, x: ArrayLike, activation: str = "sigmoid", b: ArrayLike | None = None) -> jax.Array:
    r"""Return the soft committee machine's output: (M1) with readout fixed at 1/K.

    :math:`\hat y = \frac1K\sum_k \sigma(\langle w_k, x\rangle + b_k)`.

    Parameters
    ----------
    W : (K, N) first-layer weights.
    x : (num, N) inputs.
    activation : "relu", "sigmoid" or "erf".
    b : optional (K,) hidden biases.

    Returns
    -------
    (num,) predictions.
    """
    return jnp.mean(_hidden(W, x, activation, b), axis=-1)


def two_layer(params: Params, x: ArrayLike, activation: str = "relu") -> jax.Array:
    r"""Return the two-layer network's output, trainable readout, paper (M1).

    :math:`\hat y = \frac1K\bigl(c + \sum_k a_k\,\sigma(\langle w_k, x\rangle + b_k)\bigr)`.

    Parameters
    ----------
    params : :class:`Params` with ``w`` (K, N), ``a`` (K,) (required), ``b`` (K,) or None, ``c`` () or None.
    x : (num, N) inputs.
    activation : "relu", "sigmoid" or "erf".

    Returns
    -------
    (num,) predictions.
    """
    if not isinstance(params, Params):
        raise TypeError(f"params must be a localization.models.Params, got {type(params).__name__}")
    if params.a is None:
        raise ValueError(
            "params.a (readout weights, shape (K,)) is required by two_layer; use committee() for a fixed readout"
        )
    hid = _hidden(params.w, x, activation, params.b)
    a = v.float_array("a", params.a, ndim_min=1)
    if a.shape != (hid.shape[-1],):
        raise ValueError(f"params.a must have shape (K,) = ({hid.shape[-1]},), got {tuple(a.shape)}")
    out = hid @ a
    if params.c is not None:
        c = jnp.asarray(params.c)
        if c.shape != ():
            raise ValueError(f"params.c must be a scalar, got shape {tuple(c.shape)}")
        out = out + c
    return out / hid.shape[-1]


def predict(model: str, params: ArrayLike | Params, x: ArrayLike, activation: str = "relu") -> jax.Array:
    """Return the (num,) predictions of ``model`` for inputs ``x`` (num, N).

    Parameters
    ----------
    model : str
        "neuron", "committee" or "two_layer" (:data:`MODELS`).
    params : ArrayLike or Params
        (N,) array for the neuron; :class:`Params` or a (K, N) array for the committee; :class:`Params`
        for the two-layer network.
    x : ArrayLike
        (num, N) inputs.
    activation : str
        One of :data:`ACTIVATIONS` ("relu" for the neuron).

    Returns
    -------
    jax.Array
        (num,) predictions.
    """
    if model == "neuron":
        if activation != "relu":
            raise ValueError(f"activation must be 'relu' for model='neuron' (paper M2), got {activation!r}")
        return relu_neuron(params, x)
    if model == "committee":
        if isinstance(params, Params):
            if params.a is not None or params.c is not None:
                raise ValueError("model='committee' has a fixed readout: params.a and params.c must be None")
            return committee(params.w, x, activation, params.b)
        return committee(params, x, activation)
    if model == "two_layer":
        return two_layer(params, x, activation)
    raise ValueError(f"model must be one of {MODELS}, got {model!r}")


def init_weights(
    key: jax.Array,
    n: int | tuple[int, ...],
    init_scale: float = 1.0,
    *,
    K: int | None = None,
    num: int | None = None,
    dtype: DTypeLike = jnp.float64,
) -> jax.Array:
    r"""Xavier-normal first-layer weights with variance multiplied by ``init_scale``.

    Each entry is :math:`\mathcal N(0,\ \text{init\_scale}\cdot 2/(N+\text{fan}_\text{out}))` with
    :math:`N=\prod n` input sites and :math:`\text{fan}_\text{out}=K` (1 for a single neuron), as
    :func:`init_params` draws the weights of the many-neuron models.

    Parameters
    ----------
    key : JAX PRNG key.
    n : input size as everywhere in the library: an int (a ring of N sites) or a grid shape such as
        ``(30, 30)`` (a torus); the weights are over the flattened input (row-major, the layout of the
        data models' samples).
    init_scale : variance multiplier (> 0); reference values 0.001 (neuron), 0.1 (committee).
    K : optional number of hidden units; adds an axis of that length before the input axis.
    num : optional number of independent initialisations; adds a leading axis of that length.
    dtype : floating dtype of the result.

    Returns
    -------
    Array of shape (N,), (K, N), (num, N) or (num, K, N).
    """
    key = v.key("key", key)
    N = math.prod(v.shape("n", n, minimum=1))
    init_scale = v.positive("init_scale", init_scale)
    fan_out = 1 if K is None else v.integer("K", K, 1)
    if num is not None:
        num = v.integer("num", num, 1)
    dtype = _float_dtype(dtype)
    std = math.sqrt(init_scale * 2.0 / (N + fan_out))
    full = (*(() if num is None else (num,)), *(() if K is None else (fan_out,)), N)
    return _scaled_normal(key, jnp.asarray(std, dtype), full, dtype)


@partial(jax.jit, static_argnums=(2, 3))
def _scaled_normal(key, std, shape, dtype):
    return std * jax.random.normal(key, shape, dtype)


def init_params(
    key: jax.Array,
    K: int,
    n: int | tuple[int, ...],
    init_scale: float = 0.1,
    *,
    model: str = "committee",
    bias: bool = False,
    readout_mean: float = 1.0,
    num: int | None = None,
    dtype: DTypeLike = jnp.float64,
) -> Params:
    """Return initial :class:`Params` for ``model`` "committee" (w, optional b) or "two_layer" (w, a, b, c).

    As the paper's code (``Linear`` and ``MLP`` in ``localization/models/feedforward.py``,
    github.com/leonlufkin/Localization at 5ebb565): first-layer weights (K, N) Xavier-normal times
    ``init_scale`` (variance ``init_scale · 2/(N+K)``, as :func:`init_weights`); readout ``a`` (K,) =
    ``readout_mean`` + Xavier-normal of the readout layer (variance ``init_scale · 2/(K+1)``); hidden
    biases ``b`` (K,) and the output bias ``c`` start at 0.

    ``n`` is the input size as everywhere in the library: an int (a ring of N = n sites) or a grid
    shape such as ``(30, 30)``; the weights are then over the flattened grid, (K, N) with
    N = prod(n) in row-major order, the layout of the data models' samples — train them with the same ``n``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    K : int
        Number of hidden units, >= 1.
    n : int or tuple[int, ...]
        Input size; N = prod(n).
    init_scale : float
        Variance multiplier, > 0.
    model : str
        "committee" or "two_layer".
    bias : bool
        Whether to include the biases b (and c).
    readout_mean : float
        Mean of the two-layer readout ``a``.
    num : int or None
        Number of independent initialisations (a leading axis), or None.
    dtype : DTypeLike
        Floating dtype.

    Returns
    -------
    Params
        ``w`` ([num,] K, N) and, as asked, ``b`` ([num,] K), ``a`` ([num,] K), ``c`` ([num]).
    """
    key = v.key("key", key)
    K = v.integer("K", K, 1)
    N = math.prod(v.shape("n", n, minimum=1))
    init_scale = v.positive("init_scale", init_scale)
    if model not in ("committee", "two_layer"):
        raise ValueError(f"model must be 'committee' or 'two_layer', got {model!r}")
    if not isinstance(bias, bool):
        raise TypeError(f"bias must be a bool, got {bias!r}")
    if num is not None:
        num = v.integer("num", num, 1)
    readout_mean = v.real_scalar("readout_mean", readout_mean)
    dtype = _float_dtype(dtype)
    std_w = math.sqrt(init_scale * 2.0 / (N + K))
    std_a = math.sqrt(init_scale * 2.0 / (1 + K))
    consts = [jnp.asarray(c, dtype) for c in (std_w, std_a, readout_mean)]
    return _init_params(key, *consts, K, N, model, bias, num, dtype)


@partial(jax.jit, static_argnums=(4, 5, 6, 7, 8, 9))
def _init_params(key, std_w, std_a, readout_mean, K, N, model, bias, num, dtype):
    kw, _, ka = jax.random.split(key, 3)  # three keys: the weights stay the draw of earlier versions
    lead = () if num is None else (num,)
    w = std_w * jax.random.normal(kw, (*lead, K, N), dtype)
    b = jnp.zeros((*lead, K), dtype) if bias else None
    if model == "committee":
        return Params(w=w, b=b)
    a = readout_mean + std_a * jax.random.normal(ka, (*lead, K), dtype)
    c = jnp.zeros(lead, dtype) if bias else None
    return Params(w=w, b=b, a=a, c=c)


def _float_dtype(dtype):
    return v.floating_dtype("dtype", dtype)


# -------------------------------------------------------------------------------------------------
# initial parameters: validation and the initialisation axis
# -------------------------------------------------------------------------------------------------
def check_architecture(model: str, activation: str) -> None:
    """Raise ``ValueError`` unless ``model`` is one of :data:`MODELS` and ``activation`` one of :data:`ACTIVATIONS`.

    The single neuron M2 is a ReLU neuron.
    """
    if not isinstance(model, str) or model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    if model == "neuron" and activation != "relu":
        raise ValueError(f"activation must be 'relu' for model='neuron' (paper M2), got {activation!r}")


def _param_ndim(model: str) -> int:
    return 1 if model == "neuron" else 2


def flatten_initialisations(
    w0: ArrayLike | Params, model: str, dtype: DTypeLike, n: int | tuple[int, ...] | None = None
) -> tuple[Any, tuple[int, ...], int]:
    """Validate initial parameters ``w0`` of ``model`` and merge their leading axes.

    Parameters
    ----------
    w0 : ArrayLike or Params
        (..., N) array for the neuron; (..., K, N) array or :class:`Params` for the committee;
        :class:`Params` (w, a, optional b, c) for the two-layer network. The leading axes ``...``
        index independent initialisations.
    model : str
        One of :data:`MODELS`.
    dtype : DTypeLike
        Floating dtype of the result.
    n : int or tuple[int, ...] or None
        If given, the input size the last axis of w must match (N = prod(n)).

    Returns
    -------
    tuple
        ``(params, lead, N_w)``: the parameters as NumPy arrays of ``dtype`` with the leading axes
        merged into one axis of length I = prod(lead) (tracers stay traced), the leading shape, and
        the input size (last axis of w).
    """
    if model == "neuron":
        if isinstance(w0, Params):
            raise TypeError("w0 must be an (..., N) array for model='neuron', got Params")
        w = v.float_array("w0", w0, ndim_min=1)
        params = jnp.asarray(w)
        W = params
    else:
        if isinstance(w0, Params):
            params = w0
        elif model == "committee":
            params = Params(w=v.float_array("w0", w0, ndim_min=2))
        else:
            raise TypeError("w0 must be a localization.models.Params (w, a, ...) for model='two_layer'")
        W = v.float_array("w0.w", params.w, ndim_min=2)
        if model == "committee" and (params.a is not None or params.c is not None):
            raise ValueError("model='committee' has a fixed readout 1/K: w0.a and w0.c must be None")
        if model == "two_layer" and params.a is None:
            raise ValueError("model='two_layer' needs readout weights w0.a of shape (..., K)")
    lead = tuple(W.shape[: W.ndim - _param_ndim(model)])
    N_w = W.shape[-1]
    if n is not None and N_w != (N := math.prod(v.shape("n", n, minimum=1))):
        raise ValueError(f"w0 must have last axis of length N = prod(n) = {N}, got shape {tuple(W.shape)}")
    if model != "neuron":
        K = W.shape[-2]
        own = {"b": (K,), "a": (K,), "c": ()}
        for name in ("b", "a", "c"):
            leaf = getattr(params, name)
            if leaf is None:
                continue
            leaf = v.float_array(f"w0.{name}", leaf, ndim_min=0)
            if tuple(leaf.shape) != lead + own[name]:
                raise ValueError(f"w0.{name} must have shape {lead + own[name]}, got {tuple(leaf.shape)}")
    I = int(np.prod(lead, dtype=np.int64)) if lead else 1

    def flat(a):
        # concrete values are prepared on the host (numpy): no small XLA programs to compile per call
        if isinstance(a, jax.core.Tracer):
            a = jnp.asarray(a, dtype)
        else:
            a = np.asarray(a, dtype)
            if not np.all(np.isfinite(a)):
                raise ValueError("w0 must be finite")
        return a.reshape((I,) + a.shape[len(lead) :])

    params = jax.tree_util.tree_map(flat, params)
    return params, lead, N_w


def batch_mse(params, x, y, model: str, activation: str) -> jax.Array:
    r"""Return the loss of paper Eq. (9) on a batch, unvalidated (for compiled training loops).

    :math:`\frac1M\sum_m(y_m-\hat y(x_m))^2`, no factor ½. Shapes as in :func:`mse`.
    """
    r = y - predict(model, params, x, activation)
    return jnp.mean(r * r)


def mse(
    params: ArrayLike | Params, x: ArrayLike, y: ArrayLike, *, model: str = "neuron", activation: str = "relu"
) -> jax.Array:
    r"""Batch estimate of the loss, paper Eq. (9): :math:`\frac1M\sum_{m}(y_m-\hat y(x_m))^2` (no ½).

    Parameters
    ----------
    params : (N,) weights (``model="neuron"``), (K, N) array or :class:`Params`.
    x : (M, N) inputs; y : (M,) targets.
    """
    check_architecture(model, activation)
    x = v.float_array("x", x, ndim_min=2)
    y = v.float_array("y", y, ndim_min=1)
    if y.ndim != 1 or x.ndim != 2 or y.shape[0] != x.shape[0]:
        raise ValueError(
            f"x must be (M, N) and y (M,) with the same M, got shapes {tuple(x.shape)} and {tuple(y.shape)}"
        )
    return batch_mse(params, x, y, model, activation)
