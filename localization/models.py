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

Initial parameters (Xavier-normal, the paper code's readout and biases) are
:mod:`localization.initialisation`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from localization import validation as v

__all__ = [
    "ACTIVATIONS",
    "MODELS",
    "Params",
    "activation_fn",
    "relu_neuron",
    "committee",
    "two_layer",
    "predict",
    "check_architecture",
    "mean_squared_error",
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


def check_architecture(model: str, activation: str) -> None:
    """Raise ``ValueError`` unless ``model`` is one of :data:`MODELS` and ``activation`` one of :data:`ACTIVATIONS`.

    The single neuron M2 is a ReLU neuron.

    Parameters
    ----------
    model : str
        One of :data:`MODELS`.
    activation : str
        One of :data:`ACTIVATIONS` (``"relu"`` for ``model="neuron"``).
    """
    if not isinstance(model, str) or model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    if model == "neuron" and activation != "relu":
        raise ValueError(f"activation must be 'relu' for model='neuron' (paper M2), got {activation!r}")


def mean_squared_error(y: ArrayLike, prediction: ArrayLike) -> jax.Array:
    r"""Return the mean squared error of paper Eq. (9) over the last axis: the library's one MSE.

    :math:`\frac1M\sum_{m=1}^M(y_m-\hat y_m)^2`, no factor ½. Traceable and differentiable (used inside
    ``jit``/``grad`` by :func:`batch_mse` and the reduced model of ``experiments.specialisation``); only
    the shapes are checked. ``theory.batch_gradient.mse_loss`` restates it for the neuron (the theory
    layer may not import the core); the exact loss over the hypercube is an expectation, not this mean.

    Parameters
    ----------
    y : ArrayLike
        (..., M) targets.
    prediction : ArrayLike
        (..., M) predictions :math:`\hat y`, broadcastable against ``y``.

    Returns
    -------
    jax.Array
        (...) the loss of each batch (a scalar for one batch).
    """
    y, prediction = jnp.asarray(y), jnp.asarray(prediction)
    if y.ndim < 1 or prediction.ndim < 1 or y.shape[-1] != prediction.shape[-1] or y.shape[-1] == 0:
        raise ValueError(
            f"y and prediction must be batches (..., M) with the same M >= 1, got shapes {tuple(y.shape)} "
            f"and {tuple(prediction.shape)}"
        )
    r = y - prediction
    return jnp.mean(r * r, axis=-1)


def batch_mse(params, x, y, model: str, activation: str) -> jax.Array:
    r"""Return the loss of paper Eq. (9) on a batch, unvalidated (for compiled training loops).

    :math:`\frac1M\sum_m(y_m-\hat y(x_m))^2`, no factor ½. Differentiable and traceable: the
    arguments are not checked (:func:`mse` checks them).

    Parameters
    ----------
    params : ArrayLike or Params
        As in :func:`mse`.
    x, y : ArrayLike
        (M, N) inputs and (M,) targets.
    model, activation : str
        The architecture, as in :func:`predict`.

    Returns
    -------
    jax.Array
        The scalar loss.
    """
    return mean_squared_error(y, predict(model, params, x, activation))


def mse(
    params: ArrayLike | Params, x: ArrayLike, y: ArrayLike, *, model: str = "neuron", activation: str = "relu"
) -> jax.Array:
    r"""Batch estimate of the loss, paper Eq. (9): :math:`\frac1M\sum_{m}(y_m-\hat y(x_m))^2` (no ½).

    The loss that ``localization.train`` minimises; differentiable in ``params`` (:func:`jax.grad`).

    Parameters
    ----------
    params : ArrayLike or Params
        (N,) weights (``model="neuron"``), a (K, N) array (committee) or :class:`Params`.
    x : ArrayLike
        (M, N) inputs.
    y : ArrayLike
        (M,) targets.
    model : str
        One of :data:`MODELS`.
    activation : str
        One of :data:`ACTIVATIONS`.

    Returns
    -------
    jax.Array
        The scalar loss.
    """
    check_architecture(model, activation)
    x = v.float_array("x", x, ndim_min=2)
    y = v.float_array("y", y, ndim_min=1)
    if y.ndim != 1 or x.ndim != 2 or y.shape[0] != x.shape[0]:
        raise ValueError(
            f"x must be (M, N) and y (M,) with the same M, got shapes {tuple(x.shape)} and {tuple(y.shape)}"
        )
    return batch_mse(params, x, y, model, activation)
