r"""Initial scale and learning rate: SGD and the effective flow over a grid, and the step-size thresholds.

The back-end of the section *Initial scale and learning rate* of the chapter *Effective dynamics vs
simulation* (issue 26): where does localization depend on the initial scale and the learning rate?

* :func:`divergence_threshold` — :math:`\eta_c=4/\lambda_{\max}(\Sigma_0+\Sigma_1)`, above which the
  expected-gradient step (and the flow's Euler step) is unbounded from large weights;
* :func:`fixed_point_threshold` — the flow's localized fixed point and the step size
  :math:`2/|\lambda_{\min}(J)|` at which Euler steps lose it;
* :func:`lr_scale_sweep` — online SGD (one compiled, vmapped, masked loop; grid values traced) and the
  flow at every (task, learning rate, initial scale), read at a fixed time steps × lr;
* :func:`record_lr_scale_sweep` — the recorded grid :data:`LR_SCALE_RECORD` as JSON;
  :func:`lr_scale_record` — that record read back, with its two thresholds (:class:`LrScale`).

Time convention: :math:`t=\text{steps}\times\text{lr}` (see ``theory.effective``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import data, field_analysis, metrics, records, theory
from localization import validation as v
from localization.prng import splitmix_key
from localization.traced_task import rebuild_task, split_task, stack_tasks

__all__ = [
    "RECORD_COMMAND",
    "DIVERGENCE_NORM",
    "PAPER_M2_STEPS",
    "divergence_threshold",
    "LrScaleSweep",
    "lr_scale_sweep",
    "LR_SCALE_RECORD",
    "lr_scale_tasks",
    "record_lr_scale_sweep",
    "FixedPointThreshold",
    "fixed_point_threshold",
    "LR_SCALE_RECORD_PATH",
    "LrScale",
    "lr_scale_record",
]


def _check_w_unit(w_unit):
    w = np.asarray(v.float_array("w_unit", w_unit), dtype=np.float64)
    if w.ndim != 2 or w.shape[1] < 2:
        raise ValueError(f"w_unit must have shape (I, n) with n >= 2, got {w.shape}")
    return w, int(w.shape[1])


def _check_table(table):
    table = v.integer("table", table, minimum=3)
    if table % 2 == 0:
        raise ValueError(f"table must be odd (so that a = 0 is a grid point), got {table}")
    return table


#: The command that writes the record (book seed 0).
RECORD_COMMAND = ".venv/bin/python -c 'from localization.figures import effective_dynamics as f; f.record_lr_scale()'"
#: A run counts as diverged once ``||w||`` exceeds this (the fields of the chapter have norm of order 1).
DIVERGENCE_NORM = 1e3


def divergence_threshold(cov0: ArrayLike, cov1: ArrayLike) -> float:
    r"""Return the learning rate above which the expected-gradient step diverges: :math:`4/\mu_{\max}`.

    :math:`\mu_{\max}=\lambda_{\max}(\Sigma_0+\Sigma_1)`.

    For class distributions symmetric under :math:`x\to-x` (all data models of the book),
    :math:`\mathbb E[\mathrm{ReLU}\langle w,X\rangle X]=\tfrac12\Sigma w` exactly, so the expected
    negative gradient of :math:`\mathcal L` (paper Eq. (9), no ½) is
    :math:`g(w)-\tfrac12(\Sigma_0+\Sigma_1)w` with :math:`g(w)=\mathbb E[\mathbb 1(\langle w,X\rangle\ge0)X\mid Y=1]`
    bounded (:math:`\lVert g\rVert\le\sqrt N`) — without assumptions A1–A3. The expected step
    :math:`w\leftarrow w+\eta[g(w)-\tfrac12(\Sigma_0+\Sigma_1)w]` (and the effective flow's Euler step,
    where g is replaced by :math:`\tfrac12\varphi`) multiplies the top eigen-direction of
    :math:`\Sigma_0+\Sigma_1` by :math:`1-\eta\mu_{\max}/2` plus a bounded term: it stays bounded for
    :math:`\eta<4/\mu_{\max}` and, once that component is large, grows geometrically for
    :math:`\eta>4/\mu_{\max}`. :math:`\tfrac12(\Sigma_0+\Sigma_1)` is the Hessian of the loss away from
    the neuron's kink (for large ``w``).

    Parameters
    ----------
    cov0, cov1 : ArrayLike
        (n, n) class covariances (symmetric positive semi-definite).

    Returns
    -------
    float
        :math:`\eta_c = 4/\lambda_{\max}(\Sigma_0+\Sigma_1)`.
    """
    s0, s1 = v.covariance_pair(("cov0", "cov1"), cov0, cov1)
    mu_max = float(np.linalg.eigvalsh(np.asarray(s0, np.float64) + np.asarray(s1, np.float64))[-1])
    return 4.0 / mu_max


class LrScaleSweep(NamedTuple):
    r"""SGD and the effective flow over a grid of learning rates and initial scales (:func:`lr_scale_sweep`).

    Axes: P tasks, L learning rates, S initial scales, I initialisations, n sites.

    Attributes
    ----------
    lrs : (L,) learning rates; ``scales`` : (S,) init scales (Xavier variance multipliers).
    t_end : the time (steps × lr) at which the fields are read.
    steps : (L,) steps to ``t_end`` per learning rate; ``total_steps`` : the steps every run takes
        (the longest ``steps``), after which divergence is judged.
    sgd, flow : (P, L, S, I, n) float64 fields at ``t_end`` (the flow: Euler steps of
        :math:`\dot w=F(w)` with the exact φ, one per SGD step).
    sgd_diverged, flow_diverged : (P, L, S, I) bool, :math:`\lVert w\rVert>` ``DIVERGENCE_NORM``
        (or non-finite) at any step up to ``total_steps``.
    threshold : (P,) :func:`divergence_threshold` of each task.
    """

    lrs: np.ndarray
    scales: np.ndarray
    t_end: float
    steps: np.ndarray
    total_steps: int
    sgd: np.ndarray
    flow: np.ndarray
    sgd_diverged: np.ndarray
    flow_diverged: np.ndarray
    threshold: np.ndarray


@jax.jit
def _sgd_grid(key, dyn, spec_holder, w0, lrs, record, total):
    """Masked online SGD of R = L·S·I rows per task, vmapped over the P tasks (one compilation).

    w0 (R, n) float32, lrs (R,), record (R,) step at which to read the field, total: traced int.
    Returns (fields at ``record`` (P, R, n), diverged (P, R)).

    The gradient of the batch MSE is written out: it is ``jax.grad`` of ``models.batch_mse`` (the
    gradient of :func:`localization.sgd.gradient_descent`, ReLU'(0) = 0 in both) up to float32
    rounding, but the recorded grid depends on the rounding: with the autodiff gradient 448 of the
    record's 3072 SGD IPRs and shares change (by up to 0.86 in an IPR, at learning rates near or
    above the divergence threshold, where SGD amplifies rounding), its divergence flags do not.
    """
    spec, batch, n = spec_holder.fn

    def one_task(d):
        task = rebuild_task(d, spec)

        def step(k, carry):
            w, rec, alive = carry
            x, y = task.sample(jax.random.fold_in(key, k), batch, n, jnp.float32)
            z = w @ x.T  # (R, B)
            r = (y[None, :] - jnp.maximum(z, 0.0)) * (z > 0)
            grad = -2.0 / batch * (r @ x)  # (R, n): the gradient of the batch MSE, paper Eq. (9)
            new = w - lrs[:, None] * grad
            ok = jnp.all(jnp.isfinite(new), -1) & (jnp.linalg.norm(new, axis=-1) < DIVERGENCE_NORM)
            alive_new = alive & ok
            w = jnp.where(alive_new[:, None], new, w)
            rec = jnp.where((k + 1 == record)[:, None], w, rec)
            return w, rec, alive_new

        carry = (w0, w0, jnp.ones(w0.shape[0], bool))
        _, rec, alive = jax.lax.fori_loop(0, total, step, carry)
        return rec, ~alive

    return jax.vmap(one_task)(dyn)


def lr_scale_sweep(
    key: jax.Array,
    tasks: Sequence[Any],
    w_unit: ArrayLike,
    lrs: Sequence[float],
    scales: Sequence[float],
    *,
    t_end: float,
    batch: int,
    table: int = 1025,
) -> LrScaleSweep:
    r"""Online SGD and the effective flow at every (task, learning rate, initial scale), read at time ``t_end``.

    The initial weights are :math:`\sqrt{\text{scale}}\,w_{\rm unit}`, i.e. Xavier-normal with variance
    multiplied by ``scale`` when ``w_unit = initialisation.init_weights(key, n, 1.0, num=I)``. Each
    learning rate η runs ``round(t_end / η)`` steps to reach ``t_end`` (the book's time steps × lr),
    where its field is read; every run then continues to the longest of these step counts, so that
    divergence (norm above :data:`DIVERGENCE_NORM`) is judged over the same number of steps for every
    η. SGD (float32, batch ``batch``, a fresh batch per step from ``fold_in(key, step)``, shared by the
    whole grid of one task and, as in ``train.train_sweep``, the same stream for every task) is one
    compiled, vmapped loop: the grid values are traced arguments. The flow is
    ``theory.integrate_effective`` (exact φ tabulated on ``table`` points, float64) per (task, η), one
    compilation for all.

    Parameters
    ----------
    key : jax.Array
        PRNG key of the SGD data stream.
    tasks : Sequence
        P ``data.LengthscaleTask`` of one pytree structure (e.g. NLGP at two gains).
    w_unit : ArrayLike
        (I, n) unit-scale initial weights.
    lrs, scales : Sequence[float]
        L positive learning rates, S positive initial scales.
    t_end : float
        Positive time at which the fields are read (``t_end / min(lrs)`` steps at most).
    batch : int
        SGD batch size.
    table : int
        Points of the tabulated φ (odd).

    Returns
    -------
    LrScaleSweep
    """
    tasks = data.lengthscale_tasks("tasks", tasks)
    w_unit, n = _check_w_unit(w_unit)
    lrs = np.asarray([v.positive("lrs", x) for x in lrs], np.float64)
    scales = np.asarray([v.positive("scales", x) for x in scales], np.float64)
    if lrs.size == 0 or scales.size == 0:
        raise ValueError("lrs and scales must be non-empty")
    t_end = v.positive("t_end", t_end)
    batch = v.integer("batch", batch, minimum=2)
    table = _check_table(table)
    steps = np.maximum(np.rint(t_end / lrs).astype(int), 1)
    total = int(steps.max())
    L, S, (I, _) = lrs.size, scales.size, w_unit.shape
    w0 = np.sqrt(scales)[None, :, None, None] * np.broadcast_to(w_unit, (L, S, I, n))  # (L, S, I, n)
    grid = lambda a: np.broadcast_to(a[:, None, None], (L, S, I)).reshape(-1)  # noqa: E731
    dyn, spec = split_task(stack_tasks(tasks, jnp.float32))
    rec, div = _sgd_grid(
        splitmix_key(v.key("key", key)),
        dyn,
        _StaticSpec((spec, batch, n)),
        jnp.asarray(w0.reshape(-1, n), jnp.float32),
        jnp.asarray(grid(lrs), jnp.float32),
        jnp.asarray(grid(steps), jnp.int32),
        jnp.asarray(total, jnp.int32),
    )
    P = len(tasks)
    sgd = np.asarray(rec, np.float64).reshape(P, L, S, I, n)
    sgd_div = np.asarray(div).reshape(P, L, S, I)
    flow = np.empty((P, L, S, I, n))
    flow_div = np.empty((P, L, S, I), bool)
    thresholds = np.empty(P)
    for p, task in enumerate(tasks):
        cov0, cov1 = (np.asarray(s, dtype=np.float64) for s in task.covariances(n))
        thresholds[p] = divergence_threshold(cov0, cov1)
        phi = theory.tabulate_amplifier(theory.amplifier_of(task.model1.marginal), table)
        for i, lr in enumerate(lrs):
            run = theory.integrate_effective(
                w0[i], phi, cov0, cov1, lr=float(lr), steps=total, checkpoints=[int(steps[i]), total]
            )
            ws = np.asarray(run.weights)  # (S, I, 2, n)
            flow[p, i] = ws[..., 0, :]
            flow_div[p, i] = ~np.all(np.isfinite(ws[..., 1, :]), -1) | (
                np.linalg.norm(np.nan_to_num(ws[..., 1, :], nan=np.inf), axis=-1) > DIVERGENCE_NORM
            )
    return LrScaleSweep(lrs, scales, t_end, steps, total, sgd, flow, sgd_div, flow_div, thresholds)


@jax.tree_util.register_static
class _StaticSpec:
    """Hashable holder of the static part of :func:`_sgd_grid`'s arguments (task spec, batch, n)."""

    def __init__(self, fn):
        self.fn = fn

    def __hash__(self):
        return hash(self.fn)

    def __eq__(self, other):
        return isinstance(other, _StaticSpec) and self.fn == other.fn


#: Learning rate and batch size of the paper's single-neuron (M2) figures, from its public code
#: (``leonlufkin/Localization``, commit ``5ebb565``): Fig. 3 (``figures/fig3.ipynb``, ``fig3a.py``:
#: batch 500 for Ising, 10 000 for NLGP and Kur), Fig. 4 (``figures/fig4.ipynb``), the IPR sweep of Fig. 5
#: and Fig. 8 (App. D.1). The paper's other figures train many-neuron models (Figs. 1, 6, 7: learning
#: rates 3, 100, 80 and 0.5), to which the single neuron's step-size limits do not apply.
PAPER_M2_STEPS = {
    "Fig. 3 (Ising)": (0.05, 500),
    "Fig. 3 (NLGP, Kur)": (0.05, 10_000),
    "Fig. 4": (0.05, 10_000),
    "Fig. 5": (0.1, 5000),
    "Fig. 8": (0.01, 50_000),
}

#: The recorded sweep of :func:`record_lr_scale_sweep` (the chapter's section *Initial scale and learning rate*).
LR_SCALE_RECORD = dict(
    gains=(100.0, 0.01),
    xi=(0.3, 0.7),
    n=40,
    inits=4,
    lrs=(0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.2, 1.4, 1.6, 1.7, 1.8, 1.9, 2.0, 2.2, 2.4, 2.8),
    scales=(1e-6, 1e-3, 1e-1, 1.0, 1e2, 1e4),
    batches=(1000, 8000),
    t_end=60.0,
)


def lr_scale_tasks(gains: Sequence[float] = LR_SCALE_RECORD["gains"]) -> list[data.LengthscaleTask]:
    """Return the sweep's tasks: NLGP at ``gains`` with the short length-scales ξ = (0.3, 0.7) of paper Fig. 8.

    Parameters
    ----------
    gains : Sequence[float]
        NLGP gains (default: 100, localizing, and 0.01, not localizing).

    Returns
    -------
    list of data.LengthscaleTask
    """
    return [data.family_task("NLGP", float(g), xi=LR_SCALE_RECORD["xi"]) for g in gains]


def _record_text(record: dict) -> str:
    """Return the record as JSON: settings indented, each (P, L, S, I) array on one line, NaN as null."""
    import json

    runs = record["runs"]
    top = {k: x for k, x in record.items() if k != "runs"}
    lines = json.dumps(top, indent=1)[:-2] + ',\n "runs": {\n'
    blocks = []
    for batch, arrays in runs.items():
        inner = ",\n".join(f"   {json.dumps(k)}: {json.dumps(a, allow_nan=True)}" for k, a in arrays.items())
        blocks.append(f"  {json.dumps(batch)}: {{\n{inner}\n  }}")
    return (lines + ",\n".join(blocks) + "\n }\n}").replace("NaN", "null")


def record_lr_scale_sweep(key: jax.Array, w_unit: ArrayLike, path: str, *, seed: int) -> dict:
    """Run :func:`lr_scale_sweep` on the grid :data:`LR_SCALE_RECORD` at each batch size and write it as JSON.

    Parameters
    ----------
    key : jax.Array
        The SGD stream's key (the same for each batch size).
    w_unit : ArrayLike
        (inits, n) unit-scale Xavier-normal initial weights.
    path : str
        Output file (``book/data/lr_scale_sweep.json``).
    seed : int
        The book seed the key and weights come from (stored).

    Returns
    -------
    dict
        The record written: settings, seed, commit, thresholds, and per batch the (P, L, S, I)
        final IPRs and localization shares (``field_analysis.localization_share``: a field is
        localized when its share exceeds ``field_analysis.LOCALIZED_SHARE``) of SGD and flow (null
        where diverged) and divergence flags.
    """
    import json
    import time

    s = LR_SCALE_RECORD
    tasks = lr_scale_tasks()
    out: dict[str, Any] = {
        "description": "SGD (float32) and the effective flow (exact phi, Euler, one step per SGD step) "
        "for NLGP(g) at xi = (0.3, 0.7), N = 40, over learning rates and initial scales; IPR and "
        "localization share (field_analysis.localization_share) at t = t_end, divergence (||w|| > 1e3) "
        "judged after max(steps) steps. Written by localization.experiments.step_size.record_lr_scale_sweep.",
        "command": RECORD_COMMAND,
        "seed": int(seed),
        "commit": records.commit(),
        "jax_version": jax.__version__,
        "settings": {k: list(x) if isinstance(x, tuple) else x for k, x in s.items()},
        "runs": {},
    }
    start = time.time()
    for batch in s["batches"]:
        r = lr_scale_sweep(key, tasks, w_unit, s["lrs"], s["scales"], t_end=s["t_end"], batch=batch)
        sgd_ok = ~r.sgd_diverged
        flow_ok = np.all(np.isfinite(r.flow), -1) & ~r.flow_diverged
        sgd_w = np.where(sgd_ok[..., None], r.sgd, 1.0)
        flow_w = np.where(flow_ok[..., None], r.flow, 1.0)
        sgd_ipr = np.where(sgd_ok, np.asarray(metrics.ipr(sgd_w)), np.nan)
        flow_ipr = np.where(flow_ok, np.asarray(metrics.ipr(flow_w)), np.nan)
        sgd_share = np.where(sgd_ok, field_analysis.localization_share(sgd_w, r.sgd.shape[-1]), np.nan)
        flow_share = np.where(flow_ok, field_analysis.localization_share(flow_w, r.flow.shape[-1]), np.nan)
        out["runs"][str(batch)] = {
            "sgd_ipr": np.round(sgd_ipr, 5).tolist(),
            "flow_ipr": np.round(flow_ipr, 5).tolist(),
            "sgd_share": np.round(sgd_share, 4).tolist(),
            "flow_share": np.round(flow_share, 4).tolist(),
            "sgd_diverged": r.sgd_diverged.tolist(),
            "flow_diverged": r.flow_diverged.tolist(),
        }
        out["threshold"] = r.threshold.tolist()
        out["steps"] = r.steps.tolist()
        out["total_steps"] = r.total_steps
    out["wall_seconds"] = round(time.time() - start, 1)
    text = _record_text(out)
    with open(path, "w") as f:
        f.write(text + "\n")
    return json.loads(text)


class FixedPointThreshold(NamedTuple):
    r"""The localized fixed point of the effective flow and the step size at which Euler steps lose it.

    Attributes
    ----------
    w_star : (n,) the fixed point :math:`F(w^*)=0` (a single bump).
    eigenvalues : (n,) real parts of the Jacobian's eigenvalues at ``w_star``, ascending.
    threshold : :math:`2/|\lambda_{\min}|`: the Euler step :math:`w\leftarrow w+\eta F(w)` keeps
        ``w_star`` stable iff :math:`|1+\eta\lambda|<1` for every eigenvalue λ (all real and negative).
    """

    w_star: np.ndarray
    eigenvalues: np.ndarray
    threshold: float


def fixed_point_threshold(task: Any, n: int, *, width: float = 1.0, t_end: float = 100.0) -> FixedPointThreshold:
    r"""Find the localized fixed point of the effective flow (exact φ) and its step-size stability limit.

    Deterministic: the flow (:func:`theory.integrate_effective`, step 0.05) starts from a small Gaussian
    bump :math:`10^{-3}e^{-d^2/(2\,\text{width}^2)}` centred on site 0 (d the ring distance), runs to
    ``t_end``, and Newton's method (:func:`theory.effective_fixed_point`) finishes the fixed point; the
    spectrum is that of :func:`theory.effective_jacobian`. The spectrum does not depend on the site
    (translation invariance).

    Parameters
    ----------
    task : data.LengthscaleTask
        A task whose flow localizes (e.g. NLGP(100) at ξ = (0.3, 0.7)).
    n : int
        Ring size.
    width : float
        Width of the starting bump (sites).
    t_end : float
        Flow time before Newton's method.

    Returns
    -------
    FixedPointThreshold
    """
    if not isinstance(task, data.LengthscaleTask):
        raise TypeError(f"task must be a data.LengthscaleTask, got {type(task).__name__}")
    n = v.integer("n", n, minimum=2)
    width = v.positive("width", width)
    t_end = v.positive("t_end", t_end)
    d = np.minimum(np.arange(n), n - np.arange(n))
    w0 = 1e-3 * np.exp(-(d**2) / (2 * width**2))
    cov0, cov1 = (np.asarray(s, dtype=np.float64) for s in task.covariances(n))
    phi = theory.amplifier_of(task.model1.marginal)
    steps = max(int(round(t_end / 0.05)), 1)
    run = theory.integrate_effective(
        w0, theory.tabulate_amplifier(phi), cov0, cov1, lr=0.05, steps=steps, checkpoints=1
    )
    w_star, _ = theory.effective_fixed_point(np.asarray(run.weights[-1]), phi, cov0, cov1)
    ev = np.sort(np.linalg.eigvals(theory.effective_jacobian(w_star, phi, cov0, cov1)).real)
    return FixedPointThreshold(w_star, ev, float(2.0 / abs(ev[0])))


#: The recorded learning-rate x initial-scale sweep (written by :func:`record_lr_scale_sweep`, command
#: :data:`RECORD_COMMAND`), relative to the repository root.
LR_SCALE_RECORD_PATH = "book/data/lr_scale_sweep.json"


class LrScale(NamedTuple):
    """The recorded learning-rate x initial-scale sweep and its two spectral thresholds (:func:`lr_scale_record`).

    Attributes
    ----------
    record : dict
        The JSON record (settings, seed, ``runs[batch]`` with (P, L, S, I) IPRs, null where diverged,
        and divergence flags), P = the gains of ``settings``.
    eta_c : (P,) ndarray
        :func:`divergence_threshold` of each task.
    fixed_point : FixedPointThreshold
        The localizing task's flow fixed point and its Euler stability limit.
    """

    record: dict
    eta_c: np.ndarray
    fixed_point: FixedPointThreshold


def lr_scale_record(path: Any = None) -> LrScale:
    """Read the recorded sweep and compute its thresholds (deterministic, float64).

    Parameters
    ----------
    path : str, os.PathLike or None
        The record (default :data:`LR_SCALE_RECORD_PATH` in the repository).

    Returns
    -------
    LrScale
    """
    import json
    import os

    if path is None:
        path = records.ROOT / LR_SCALE_RECORD_PATH
    elif not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str, a path or None, got {type(path).__name__}")
    with open(path) as f:
        record = json.load(f)
    s = record["settings"]
    tasks = lr_scale_tasks(s["gains"])
    eta_c = np.array([divergence_threshold(*t.covariances(s["n"])) for t in tasks])
    return LrScale(record, eta_c, fixed_point_threshold(tasks[0], s["n"]))
