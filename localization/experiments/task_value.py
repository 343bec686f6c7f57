r"""Experiments of the chapter *Many neurons*, section *What localization buys*: held-out task scores of fields.

Does a localized receptive field help the length-scale task? These functions score given fields on
held-out data of a task (mean squared error without ½ and accuracy of the rule ``ŷ > 1/2``), with paired
Monte Carlo errors:

* :func:`neuron_scores` — the ReLU neuron M2 of each field, as given or with its scale fitted on a
  training set (closed form);
* :func:`committee_scores` — committee machines, as trained or with their readout refitted;
* :func:`gaussian_detector_scores` — the Gaussian likelihood-ratio detector of the task's exact class
  covariances, a strong baseline that uses no training;
* :class:`TaskScores` — per-example errors and hits, their means and paired differences;
* :func:`compare_fields` — the section's whole comparison (:data:`NEURON`, :data:`TASKS`): single neurons
  trained on a localizing and a non-localizing model against Fourier-mode fields at equal norm, committee
  machines at equal norm with refitted readouts, and the detector, each on held-out data of both models.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import data, field_analysis, models
from localization import validation as v
from localization.experiments import many_neurons as mn

__all__ = [
    "NEURON",
    "TASKS",
    "TaskScores",
    "FieldComparison",
    "neuron_scores",
    "committee_scores",
    "gaussian_detector_scores",
    "compare_fields",
    "OFFSET_BIAS",
]

#: A committee unit with a bias above this is an offset unit (sigmoid(4) = 0.982).
OFFSET_BIAS = 4.0

#: The single ReLU neuron M2 (an SCM with one unit, no bias) on Kur(10), ξ = (1, 3), N = 40: init 0.001,
#: lr 0.5, batch 1000, 2000 steps, 4 initialisations (about 3 s per data model).
NEURON = mn.FIG6_KUR10.replace(
    model="committee", K=1, bias=False, activation="relu", init_scale=0.001, lr=0.5, batch=1000, steps=2000, inits=4
)
#: The localizing and the non-localizing data model of the comparison (those of paper Fig. 6): name → k.
TASKS = {"Kur(10)": 10.0, "Kur(4)": 4.0}


class TaskScores(NamedTuple):
    """Held-out scores of R predictors on one test set of the length-scale task (labels {0, 1}).

    Attributes
    ----------
    sq_error, correct : (R, num) squared error (y - ŷ)² and hit (1.0 where ``ŷ > 1/2`` matches y) of
        every test example under every predictor (the same examples for all R: differences are paired).
    train_loss : (R,) mean squared error on the training set (after any fit).
    scale : (R,) fitted readout scale α (1 where nothing was fitted; for a refitted committee, the
        sum of its fitted readout weights).
    """

    sq_error: np.ndarray
    correct: np.ndarray
    train_loss: np.ndarray
    scale: np.ndarray

    @property
    def loss(self) -> np.ndarray:
        """(R,) held-out mean squared error."""
        return self.sq_error.mean(axis=-1)

    @property
    def accuracy(self) -> np.ndarray:
        """(R,) held-out accuracy."""
        return self.correct.mean(axis=-1)

    def difference(self, i: int, j: int, metric: str = "loss") -> tuple[float, float]:
        """Return the paired difference (mean, standard error) of ``metric`` between predictors i and j.

        Parameters
        ----------
        i, j : int
            Predictor indices.
        metric : str
            "loss" or "accuracy".

        Returns
        -------
        tuple[float, float]
            Mean of predictor i minus predictor j, and its Monte Carlo standard error.
        """
        per = {"loss": self.sq_error, "accuracy": self.correct}
        if metric not in per:
            raise ValueError(f"metric must be 'loss' or 'accuracy', got {metric!r}")
        d = per[metric][i] - per[metric][j]
        return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size))


def _split(key, task, n, num_train, num_test):
    num_train = v.integer("num_train", num_train, 2)
    num_test = v.integer("num_test", num_test, 2)
    train_set = task.sample(jax.random.fold_in(key, 0), num_train, n, jnp.float64)
    return train_set, task.sample(jax.random.fold_in(key, 1), num_test, n, jnp.float64)


def _scores(predict, fit, key, task, n, num_train, num_test) -> TaskScores:
    (x_tr, y_tr), (x_te, y_te) = _split(v.key("key", key), task, n, num_train, num_test)
    coef = fit(x_tr, y_tr)  # (R, P) readout coefficients on the predictors' features
    out_tr, out_te = predict(x_tr, coef), predict(x_te, coef)  # (R, num)
    err = np.asarray((y_te - out_te) ** 2)
    return TaskScores(
        sq_error=err,
        correct=np.asarray((out_te > 0.5) == (y_te > 0.5), np.float64),
        train_loss=np.asarray(jnp.mean((y_tr - out_tr) ** 2, axis=-1)),
        scale=np.asarray(coef[:, -1] if coef.shape[1] == 1 else coef[:, 1:].sum(axis=1)),
    )


@jax.jit
def _least_squares(h, y):  # h (R, num, P), y (num,) -> (R, P), by the normal equations
    return jnp.linalg.solve(jnp.einsum("rbp,rbq->rpq", h, h), jnp.einsum("rbp,b->rp", h, y)[..., None])[..., 0]


def neuron_scores(
    key: jax.Array,
    task: Any,
    fields: ArrayLike,
    *,
    fit_scale: bool,
    n: int = 40,
    num_train: int = 20_000,
    num_test: int = 20_000,
) -> TaskScores:
    r"""Score the ReLU neuron :math:`\hat y=\alpha\,\mathrm{ReLU}(\langle\mathbf w,\mathbf x\rangle)` of each field.

    With ``fit_scale`` the scale is fitted on a training set by least squares, in closed form
    :math:`\alpha=\sum_b y_b h_b/\sum_b h_b^2` with :math:`h_b=\mathrm{ReLU}(\langle\mathbf w,\mathbf x_b\rangle)`;
    otherwise α = 1 (the field as given). Training set from ``fold_in(key, 0)``, test set from
    ``fold_in(key, 1)`` (i.i.d. labels, float64): the same key gives the same examples to every caller.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    task : data.LengthscaleTask
        The task to evaluate on.
    fields : ArrayLike
        (F, N) fields.
    fit_scale : bool
        Fit α on the training set.
    n : int
        Input size N.
    num_train, num_test : int
        Training and test examples (>= 2).

    Returns
    -------
    TaskScores
        Scores of the F neurons.
    """
    w = jnp.asarray(v.float_array("fields", fields, ndim_min=2, last_dim=v.integer("n", n, 2)), jnp.float64)
    if not isinstance(fit_scale, bool):
        raise TypeError(f"fit_scale must be a bool, got {fit_scale!r}")
    feats = lambda x: jax.nn.relu(x @ w.T).T[..., None]  # noqa: E731  (F, num, 1)
    fit = (lambda x, y: _least_squares(feats(x), y)) if fit_scale else (lambda x, y: jnp.ones((len(w), 1)))
    return _scores(lambda x, c: (feats(x) @ c[:, :, None])[..., 0], fit, key, task, n, num_train, num_test)


def committee_scores(
    key: jax.Array,
    task: Any,
    W: ArrayLike,
    b: ArrayLike,
    *,
    refit: bool,
    activation: str = "sigmoid",
    n: int = 40,
    num_train: int = 20_000,
    num_test: int = 20_000,
) -> TaskScores:
    r"""Score R committee machines :math:`\hat y=\frac1K\sum_k\sigma(\langle\mathbf w_k,\mathbf x\rangle+b_k)`.

    With ``refit`` the readout is refitted on the training set by least squares,
    :math:`\hat y=c+\sum_k a_k\sigma(\langle\mathbf w_k,\mathbf x\rangle+b_k)` (the fields and biases kept):
    the fields are then scored as features. Data as in :func:`neuron_scores`.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    task : data.LengthscaleTask
        The task to evaluate on.
    W, b : ArrayLike
        (R, K, N) fields and (R, K) biases.
    refit : bool
        Refit the readout (and an output bias).
    activation : str
        "sigmoid", "relu" or "erf".
    n : int
        Input size N.
    num_train, num_test : int
        Training and test examples (>= 2).

    Returns
    -------
    TaskScores
        Scores of the R networks.
    """
    W = jnp.asarray(v.float_array("W", W, ndim_min=3, last_dim=v.integer("n", n, 2)), jnp.float64)
    b = jnp.asarray(v.float_array("b", b, ndim_min=2), jnp.float64)
    if W.ndim != 3 or b.shape != W.shape[:2]:
        raise ValueError(f"W must be (R, K, N) and b (R, K); got {W.shape} and {b.shape}")
    if not isinstance(refit, bool):
        raise TypeError(f"refit must be a bool, got {refit!r}")
    act = models.activation_fn(activation)

    def feats(x):  # (R, num, K + 1): a constant, then the K units
        h = act(jnp.einsum("bn,rkn->rbk", x, W) + b[:, None, :])
        return jnp.concatenate([jnp.ones(h.shape[:2] + (1,)), h], axis=-1)

    K = W.shape[1]
    mean_readout = jnp.tile(jnp.r_[0.0, jnp.full(K, 1.0 / K)], (len(W), 1))
    fit = (lambda x, y: _least_squares(feats(x), y)) if refit else (lambda x, y: mean_readout)
    return _scores(lambda x, c: (feats(x) @ c[:, :, None])[..., 0], fit, key, task, n, num_train, num_test)


def gaussian_detector_scores(
    key: jax.Array, task: Any, *, n: int = 40, num_train: int = 20_000, num_test: int = 20_000
) -> TaskScores:
    r"""Score the Gaussian likelihood-ratio detector of the task's two exact class covariances (one predictor).

    :math:`\hat y=\mathrm{sigmoid}(\ell)`, :math:`\ell=\tfrac12\mathbf x^\top(C_0^{-1}-C_1^{-1})\mathbf x
    -\tfrac12\log(\det C_1/\det C_0)`: the posterior probability of y = 1 were both classes Gaussian
    (then Bayes-optimal for the loss and the accuracy); nothing is fitted. Data as in :func:`neuron_scores`.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    task : data.LengthscaleTask
        The task (its ``covariances(n)``).
    n : int
        Input size N.
    num_train, num_test : int
        Training and test examples (>= 2).

    Returns
    -------
    TaskScores
        Scores of the detector (R = 1).
    """
    c0, c1 = (np.asarray(c, np.float64) for c in task.covariances(v.integer("n", n, 2)))
    A = jnp.asarray(np.linalg.inv(c0) - np.linalg.inv(c1))
    logdet = np.linalg.slogdet(c1)[1] - np.linalg.slogdet(c0)[1]

    def predict(x, c):
        return jax.nn.sigmoid(0.5 * jnp.einsum("bi,ij,bj->b", x, A, x) - 0.5 * logdet)[None]

    return _scores(predict, lambda x, y: jnp.ones((1, 1)), key, task, n, num_train, num_test)


class FieldComparison(NamedTuple):
    """The section's comparison (:func:`compare_fields`).

    Attributes
    ----------
    fields : (F, N) neuron fields, each rescaled to ``norm``: the I fields learned on each model of
        :data:`TASKS` in turn, then the N columns of the real Fourier basis (the constant first).
    kinds : (F,) "learned on <model>" or "Fourier mode".
    norm : the common norm, the mean norm of the fields learned on the localizing model.
    committee_norm : the common Frobenius norm of the committees' fields (their biases scaled along).
    committee_kinds : (R,) "learned on <model>" for each committee machine.
    committee_offset : (R,) number of *offset units* of each committee: units with bias above
        :data:`OFFSET_BIAS` (their sigmoid is mostly near 1, so they act as an output bias).
    shares : (F,) share of each neuron field in its best quarter-ring window
        (:func:`localization.field_analysis.localization_share`, the book's measure of localization);
        committee_shares : (R,) the mean of that share over each committee's units other than offset units.
    scores : dict (test model, predictor) → :class:`TaskScores`; predictors "neuron" (α = 1),
        "neuron fitted" (α fitted), "committee" (equal norm, refitted readout), "detector".
    """

    fields: np.ndarray
    kinds: np.ndarray
    norm: float
    committee_norm: float
    committee_kinds: np.ndarray
    committee_offset: np.ndarray
    shares: np.ndarray
    committee_shares: np.ndarray
    scores: dict[tuple[str, str], TaskScores]


def compare_fields(
    key: jax.Array, committees: dict[str, tuple[ArrayLike, ArrayLike]], *, num: int = 20_000
) -> FieldComparison:
    """Compare localized and delocalized fields on held-out data of both models of :data:`TASKS`.

    Trains :data:`NEURON` on each model (key ``fold_in(fold_in(key, 0), j)``), rescales every field to
    one norm, and scores them, the given committee machines (rescaled to one Frobenius norm, readout
    refitted) and the Gaussian detector on ``num`` training and ``num`` test examples of each model (key
    ``fold_in(fold_in(key, 1), j)``, the same examples for every predictor).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    committees : dict
        Model name of :data:`TASKS` → (W (R, K, N), b (R, K)) of committee machines trained on it
        (sigmoid units; e.g. the chapter's Fig. 6 runs).
    num : int
        Training and test examples per model.

    Returns
    -------
    FieldComparison
        Fields, norms and scores.
    """
    key = v.key("key", key)
    if not isinstance(committees, dict) or set(committees) != set(TASKS):
        raise ValueError(f"committees must map each of {list(TASKS)} to (W, b), got {committees!r}")
    n = NEURON.N
    learned = [
        mn.train_population(jax.random.fold_in(jax.random.fold_in(key, 0), j), NEURON.replace(param=k)).final[:, 0]
        for j, k in enumerate(TASKS.values())
    ]
    norm = float(np.linalg.norm(learned[0], axis=1).mean())
    fields = np.vstack([*learned, data.fourier_basis(n).T])
    fields = norm * fields / np.linalg.norm(fields, axis=1, keepdims=True)
    kinds = np.array([f"learned on {name}" for name in TASKS for _ in range(NEURON.inits)] + ["Fourier mode"] * n)
    W = np.concatenate([np.asarray(committees[name][0], np.float64) for name in TASKS])
    b = np.concatenate([np.asarray(committees[name][1], np.float64) for name in TASKS])
    c_kinds = np.array([f"learned on {name}" for name in TASKS for _ in range(len(committees[name][0]))])
    offset_units = b > OFFSET_BIAS
    unit_shares = np.asarray(field_analysis.localization_share(W, n))
    c_shares = np.nanmean(np.where(offset_units, np.nan, unit_shares), axis=1)
    frob = np.linalg.norm(W.reshape(len(W), -1), axis=1)
    c_norm = float(frob[c_kinds == c_kinds[0]].mean())
    W, b = W * (c_norm / frob)[:, None, None], b * (c_norm / frob)[:, None]
    scores = {}
    for j, (name, k) in enumerate(TASKS.items()):
        task, kj = data.family_task("Kur", k, NEURON.xi), jax.random.fold_in(jax.random.fold_in(key, 1), j)
        kw = dict(n=n, num_train=num, num_test=num)
        scores[name, "neuron"] = neuron_scores(kj, task, fields, fit_scale=False, **kw)
        scores[name, "neuron fitted"] = neuron_scores(kj, task, fields, fit_scale=True, **kw)
        scores[name, "committee"] = committee_scores(kj, task, W, b, refit=True, **kw)
        scores[name, "detector"] = gaussian_detector_scores(kj, task, **kw)
    shares = np.asarray(field_analysis.localization_share(fields, n))
    return FieldComparison(fields, kinds, norm, c_norm, c_kinds, offset_units.sum(axis=1), shares, c_shares, scores)
