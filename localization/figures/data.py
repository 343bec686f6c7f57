r"""The figures of the data chapter (``book/data.md``): paper Fig. 2 redrawn.

* :data:`FIG2_MODELS` — the (label, long-lengthscale model, short-lengthscale model) columns;
* :func:`draw_model_row` — one model's panels: two samples, the covariance, the marginal (also the
  chapter's widget);
* :func:`draw_data_models` — paper Fig. 2 on a (4, 3) grid of axes;
* :func:`kernel_spectra` — the float64 spectra of the wrapped and the periodised kernels;
* :func:`draw_kernel_spectra`, :func:`draw_ising_correlations` — the chapter's figures of the
  covariance kernels' spectra and of the Ising chain's correlations (from the chapter's results);
* :func:`fig2_data_models` — the registered builder (``python -m localization figures``), which the
  chapter calls;
* :func:`paper_samplers` — the registered builder of the comparison of the paper code's samplers
  with the book's (Figs. 2, 5, 7; reads ``book/data/paper_samplers.json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jax
import numpy as np
from jax.typing import ArrayLike
from matplotlib.ticker import MaxNLocator

from localization import book, data, plotting
from localization import validation as v
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = [
    "FIG2_MODELS",
    "draw_model_row",
    "draw_data_models",
    "kernel_spectra",
    "draw_kernel_spectra",
    "draw_ising_correlations",
    "fig2_data_models",
    "paper_samplers",
]

#: Columns of the paper's Fig. 2 as redrawn by the data chapter: (label, long-lengthscale model,
#: short-lengthscale model) for the models of the paper's Fig. 3 (Ising J = 1.2 / 0.3, NLGP(0.01) and
#: Kur(5) with ξ = 5 / 1).
FIG2_MODELS = (
    ("Ising", data.Ising(J=1.2), data.Ising(J=0.3)),
    ("NLGP(0.01)", data.NLGP(xi=5.0, gain=0.01), data.NLGP(xi=1.0, gain=0.01)),
    ("Kur(5)", data.Kur(xi=5.0, k=5.0), data.Kur(xi=1.0, k=5.0)),
)


def draw_model_row(
    key: jax.Array,
    axes: Any,
    model_long: data.DataModel,
    model_short: data.DataModel,
    n: int,
    num_marginal: int = 20_000,
) -> Any:
    """Draw one data model's panels on four ``axes``: two samples, the covariance and the marginal.

    Parameters
    ----------
    key : jax.Array
        PRNG key, split into the long sample, the short sample and the marginal's draws.
    axes : sequence of 4 matplotlib Axes
        A long- and a short-lengthscale sample (y = 1, y = 0), the long-lengthscale covariance, and
        the marginal law of one coordinate (exact law and a histogram of ``num_marginal`` draws).
    model_long, model_short : data.DataModel
        The models of the classes y = 1 and y = 0.
    n : int
        Input size (>= 2).
    num_marginal : int
        Draws of the marginal's histogram (>= 1).

    Returns
    -------
    matplotlib.image.AxesImage
        The covariance image (for a colour bar).
    """
    n = v.integer("n", n, 2)
    num_marginal = v.integer("num_marginal", num_marginal, 1)
    axes = plotting.axes_grid("axes", np.asarray(axes, dtype=object).ravel(), (4,))
    k_long, k_short, k_marg = jax.random.split(key, 3)
    for ax, model, k, y in ((axes[0], model_long, k_long, 1), (axes[1], model_short, k_short, 0)):
        x = np.asarray(model.sample(k, 1, n))[0]
        ax.plot(np.arange(n), x, "-", lw=1, color=plotting.CLASS_COLORS[y])
        ax.plot(np.arange(n), x, ".", ms=2.5, color="k")
        ax.set_xlim(0, n - 1)
        ax.set_title(f"{model!r}, $y = {y}$")
        ax.set_xlabel("position $i$")
    axes[0].set_ylabel("$x_i$")
    im = axes[2].imshow(np.asarray(model_long.covariance(n)), cmap="RdBu_r", vmin=-1, vmax=1)
    axes[2].set_xticks([])
    axes[2].set_yticks([])
    axes[2].grid(False)
    axes[2].set_title("covariance (y = 1)")
    marg = model_long.marginal
    plotting.plot_marginal(axes[3], marg, samples=marg.sample(k_marg, num_marginal))
    # whole-number ticks: "-2.5 0.0 2.5" ran into each other in a third of the figure's width
    axes[3].xaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
    axes[3].set_title(f"marginal, $\\kappa - 3 = {marg.excess_kurtosis:.3g}$")
    return im


def draw_data_models(key: jax.Array, axes: Any, n: int = 100, num_marginal: int = 20_000) -> Any:
    """Draw paper Fig. 2 on a (4, 3) grid of ``axes``, one column per model of :data:`FIG2_MODELS`.

    Column ``i`` is drawn by :func:`draw_model_row` with ``jax.random.fold_in(key, i)``; rows: a
    long- and a short-lengthscale sample, the long-lengthscale covariance, the marginal (titled with
    its excess kurtosis). One colour bar for the covariances, right of the covariance row.

    Parameters
    ----------
    key : jax.Array
        PRNG key of the figure.
    axes : (4, 3) array of matplotlib Axes
        The panels.
    n : int
        Input size.
    num_marginal : int
        Draws of each marginal's histogram.

    Returns
    -------
    matplotlib.colorbar.Colorbar
        The covariances' colour bar.
    """
    grid = plotting.axes_grid("axes", axes, (4, len(FIG2_MODELS)))
    im = None
    for i, (label, long_model, short_model) in enumerate(FIG2_MODELS):
        im = draw_model_row(jax.random.fold_in(key, i), grid[:, i], long_model, short_model, n, num_marginal)
        grid[0, i].set_title(f"{label}\nlong, $y = 1$")
        grid[1, i].set_title("short, $y = 0$")
        grid[2, i].set_title("covariance, $y = 1$")
        grid[3, i].set_title(f"$\\kappa - 3 = {long_model.marginal.excess_kurtosis:.2g}$")
        if i:
            grid[0, i].set_ylabel("")
    for ax in grid[:2].flat:
        ax.set_xlabel("")
    grid[1, 0].set_ylabel("$x_i$")
    return grid[0, 0].figure.colorbar(im, ax=grid[2, :], shrink=0.9, label="covariance")


def kernel_spectra(xis: tuple[float, ...], n: int) -> dict[float, tuple[np.ndarray, np.ndarray]]:
    """Sorted eigenvalues of the wrapped and of the periodised covariance kernels at each ξ (float64).

    The wrapped kernel's are the real parts of the DFT of its first row
    (:func:`localization.data.min_distance_covariance`); the periodised kernel's are those of
    :func:`localization.data.covariance`.

    Parameters
    ----------
    xis : tuple of float
        Length-scales, each > 0.
    n : int
        Input size, >= 2.

    Returns
    -------
    dict
        ξ → (wrapped kernel's eigenvalues, periodised kernel's), each (n,) sorted, the input of
        :func:`draw_kernel_spectra`.
    """
    n = v.integer("n", n, 2)
    out = {}
    for xi in xis:
        xi = v.positive("xi", xi)
        row = np.asarray(data.min_distance_covariance(xi, n))[0]
        periodised = np.linalg.eigvalsh(np.asarray(data.covariance(xi, n)))
        out[xi] = (np.sort(np.fft.fft(row).real), np.sort(periodised))
    return out


def draw_kernel_spectra(axes: Any, spectra: Mapping[float, tuple[ArrayLike, ArrayLike]], n: int) -> np.ndarray:
    """Draw the eigenvalues of the wrapped and the periodised covariance kernels, one panel per ξ.

    The first panel on a logarithmic axis, the second on a symmetric-logarithmic one (it shows
    negative eigenvalues); one legend below the figure.

    Parameters
    ----------
    axes : 2 matplotlib Axes
        One panel per length-scale.
    spectra : mapping of float to (array_like, array_like)
        ξ → (eigenvalues of the wrapped kernel, sorted eigenvalues of the periodised kernel).
    n : int
        Input size (for the titles).

    Returns
    -------
    np.ndarray
        The two axes.
    """
    grid = plotting.axes_grid("axes", np.asarray(axes, dtype=object).ravel(), (2,))
    if len(spectra) != 2:
        raise ValueError(f"spectra must hold two length-scales, got {len(spectra)}")
    for ax, (xi, (wrapped, periodised)) in zip(grid, spectra.items(), strict=True):
        ax.plot(np.asarray(wrapped), "o", ms=4, label="wrapped kernel")
        ax.plot(np.asarray(periodised), "x", ms=5, label="periodised kernel")
        ax.set_title(f"N = {n}, ξ = {xi:g}")
        ax.set_xlabel("eigenvalue rank")
    grid[0].set_yscale("log")
    grid[0].set_ylabel("eigenvalue (log scale)")
    grid[1].set_yscale("symlog", linthresh=0.01)
    grid[1].set_yticks([-1, -0.1, -0.01, 0, 0.01, 0.1, 1, 10])
    grid[1].axhline(0, color="0.4", lw=0.8)
    grid[1].set_ylabel("eigenvalue (symmetric log)")
    grid[0].figure.legend(*grid[1].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return grid


def draw_ising_correlations(axes: Any, results: Mapping[str, Mapping[str, ArrayLike]]) -> np.ndarray:
    """Draw the Ising chain's correlations: exact, exact sampler and short Metropolis chains.

    One panel per setting, distances 0..N/2: the exact correlation (line), the exact sampler's and
    the Metropolis chains' estimates with ±2 standard errors; one legend below the figure.

    Parameters
    ----------
    axes : matplotlib Axes, one per setting
        The panels (create them with ``sharey=True``).
    results : mapping of str to mapping
        Panel title → arrays ``exact``, ``c_ex``, ``se_ex``, ``c_mh``, ``se_mh`` over the distances.

    Returns
    -------
    np.ndarray
        The axes.
    """
    grid = plotting.axes_grid("axes", np.asarray(axes, dtype=object).ravel(), (len(results),))
    for ax, (label, r) in zip(grid, results.items(), strict=True):
        d = np.arange(len(r["exact"]) // 2 + 1)
        ax.plot(d, np.asarray(r["exact"])[d], "k-", lw=1.2, label="exact (transfer matrix)")
        ax.errorbar(
            d, np.asarray(r["c_ex"])[d], 2 * np.asarray(r["se_ex"])[d], fmt="o", ms=3.5, label="exact sampler (±2 SE)"
        )
        ax.errorbar(
            d, np.asarray(r["c_mh"])[d], 2 * np.asarray(r["se_mh"])[d], fmt="x", ms=4.5, label="short Metropolis chain"
        )
        ax.set_xlim(-0.5, 20.5)
        ax.set_title(label)
        ax.set_xlabel("distance d")
    grid[0].set_ylabel(r"$\mathbb{E}[x_0 x_d]$")
    grid[0].figure.legend(*grid[-1].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return grid


@register("fig2_data_models", "data")
def fig2_data_models(scale: str = "chapter") -> Built:
    """Build paper Fig. 2 redrawn: samples, covariance and marginal of Ising, NLGP(0.01) and Kur(5).

    One sample at the long and the short length-scale, the covariance and the marginal of each model,
    N = 100, exact samplers (the same at both scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        Both scales draw the same figure (book key ``("data", "models")``).

    Returns
    -------
    Built
        The figure; ``data`` is ``None``.
    """
    check_scale(scale)
    fig = new_figure((plotting.COLUMN_WIDTH, 9.0), layout="constrained")
    draw_data_models(book.key("data", "models"), fig.subplots(4, len(FIG2_MODELS)), n=100)
    return Built(fig, None)


@register("paper_samplers", "data")
def paper_samplers(scale: str = "chapter") -> Built:
    """Build the comparison of the paper code's samplers with the book's, for Figs. 2, 5 and 7.

    Left: the Ising correlations of Fig. 2's setting (J = 1.2, N = 100), exact and after the code's
    1000 Metropolis proposals (1000 chains, book key ``("data", "paper-chain")``). Centre: final IPR
    against k for Fig. 5's single neuron trained on Kur(k) drawn by the book's sampler and by the
    code's float64 map (record ``book/data/paper_samplers.json``; every float32 run ends non-finite).
    Right: the fraction of Fig. 7's two-layer sigmoid networks (Kur(4), lr 80) that diverge within
    250 steps, per sampler (same record).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        Both scales draw the same figure.

    Returns
    -------
    Built
        The figure; ``data`` is a dict: ``record``
        (:func:`~localization.experiments.data_properties.read_paper_samplers`), and ``chain``:
        ``exact``, ``c``, ``se`` (N,) correlations of the code's chain by distance.
    """
    from localization import metrics
    from localization.data import paper_samplers as ps
    from localization.experiments import data_properties as dp

    check_scale(scale)
    rec = dp.read_paper_samplers()
    J, n = 1.2, 100
    x = np.asarray(ps.paper_metropolis_ising(book.key("data", "paper-chain"), J, n, 1000, num_flips=1000))
    c, se = metrics.mean_and_se(metrics.circular_autocorr(x))
    chain = dict(exact=data.ising_correlation(J, n, np.arange(n)), c=np.asarray(c), se=np.asarray(se))
    fig = new_figure((plotting.COLUMN_WIDTH, 3.2), layout="constrained")
    ax = fig.subplots(1, 3)
    d = np.arange(21)
    ax[0].plot(d, chain["exact"][d], "k-", lw=1.2, label="exact")
    ax[0].errorbar(d, chain["c"][d], 2 * chain["se"][d], fmt="x", ms=4, label="code, 1000 proposals")
    ax[0].set(xlabel="distance d", ylabel=r"$\mathbb{E}[x_0x_d]$", title="Fig. 2: Ising")
    ax[0].legend(fontsize="small")
    ks = np.asarray(rec["fig5"]["ks"])
    for sampler, fmt, label in (("book", "o-", "book (exact)"), ("paper_float64", "s--", "code, float64")):
        ipr = rec["fig5"][sampler]["ipr"]
        ax[1].errorbar(ks, ipr.mean(axis=1), ipr.std(axis=1), fmt=fmt, ms=4, capsize=2, label=label)
    ax[1].set(xscale="log", xlabel="Kur exponent k", ylabel="final IPR", title="Fig. 5")
    ax[1].set_xticks(ks, [f"{k:g}" for k in ks], minor=False)
    ax[1].minorticks_off()
    ax[1].legend(fontsize="small", loc="upper left")
    frac = [rec["fig7"][s]["diverged"].mean() for s in dp.SAMPLERS]
    ax[2].bar(range(3), frac, color=["C0", "C1", "C3"])
    ax[2].set_xticks(range(3), ["book", "code\nfloat64", "code\nfloat32"])
    ax[2].set(ylim=(0, 1), ylabel="fraction diverged", title="Fig. 7: lr 80")
    return Built(fig, dict(record=rec, chain=chain))
