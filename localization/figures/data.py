r"""The figures of the data chapter (``book/data.md``): paper Fig. 2 redrawn.

Drawing only; what the figures show is computed by :mod:`localization.experiments.data_properties`
(:func:`~localization.experiments.data_properties.data_model_samples`,
:func:`~localization.experiments.data_properties.kernel_spectra`,
:func:`~localization.experiments.data_properties.paper_chain_correlations`).

* :func:`draw_model_row` — one model's panels: two samples, the covariance, the marginal (also the
  chapter's widget);
* :func:`draw_data_models` — paper Fig. 2 on a (4, 3) grid of axes;
* :func:`draw_kernel_spectra`, :func:`draw_ising_correlations` — the chapter's figures of the
  covariance kernels' spectra and of the Ising chain's correlations (from the chapter's results);
* :func:`draw_paper_samplers` — the comparison of the paper code's samplers with the book's;
* :func:`fig2_data_models` — the registered builder (``python -m localization figures``), which the
  chapter calls;
* :func:`paper_samplers` — the registered builder of the comparison of the paper code's samplers
  with the book's (Figs. 2, 5, 7; reads ``book/data/paper_samplers.json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from jax.typing import ArrayLike
from matplotlib.ticker import MaxNLocator

from localization import book, plotting
from localization.experiments import data_properties as dp
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = [
    "draw_model_row",
    "draw_data_models",
    "draw_kernel_spectra",
    "draw_ising_correlations",
    "draw_paper_samplers",
    "fig2_data_models",
    "paper_samplers",
]


def draw_model_row(axes: Any, row: dp.ModelRowSamples) -> Any:
    """Draw one data model's panels on four ``axes``: two samples, the covariance and the marginal.

    Parameters
    ----------
    axes : sequence of 4 matplotlib Axes
        A long- and a short-lengthscale sample (y = 1, y = 0), the long-lengthscale covariance, and
        the marginal law of one coordinate (exact law and a histogram of the draws).
    row : ModelRowSamples
        What to draw (:func:`localization.experiments.data_properties.model_row_samples`).

    Returns
    -------
    matplotlib.image.AxesImage
        The covariance image (for a colour bar).
    """
    axes = plotting.axes_grid("axes", np.asarray(axes, dtype=object).ravel(), (4,))
    if not isinstance(row, dp.ModelRowSamples):
        raise TypeError(f"row must be a ModelRowSamples (data_properties.model_row_samples), got {type(row).__name__}")
    n = len(row.long)
    for ax, model, x, y in ((axes[0], row.model_long, row.long, 1), (axes[1], row.model_short, row.short, 0)):
        ax.plot(np.arange(n), x, "-", lw=1, color=plotting.CLASS_COLORS[y])
        ax.plot(np.arange(n), x, ".", ms=2.5, color="k")
        ax.set_xlim(0, n - 1)
        ax.set_title(f"{model!r}, $y = {y}$")
        ax.set_xlabel("position $i$")
    axes[0].set_ylabel("$x_i$")
    im = axes[2].imshow(row.covariance, cmap="RdBu_r", vmin=-1, vmax=1)
    axes[2].set_xticks([])
    axes[2].set_yticks([])
    axes[2].grid(False)
    axes[2].set_title("covariance (y = 1)")
    marg = row.model_long.marginal
    plotting.plot_marginal(axes[3], marg, samples=row.marginal_draws)
    # whole-number ticks: "-2.5 0.0 2.5" ran into each other in a third of the figure's width
    axes[3].xaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
    axes[3].set_title(f"marginal, $\\kappa - 3 = {marg.excess_kurtosis:.3g}$")
    return im


def draw_data_models(axes: Any, rows: Mapping[str, dp.ModelRowSamples]) -> Any:
    """Draw paper Fig. 2 on a (4, 3) grid of ``axes``, one column per model.

    Column ``i`` is drawn by :func:`draw_model_row`; rows: a long- and a short-lengthscale sample,
    the long-lengthscale covariance, the marginal (titled with its excess kurtosis). One colour bar
    for the covariances, right of the covariance row.

    Parameters
    ----------
    axes : (4, 3) array of matplotlib Axes
        The panels.
    rows : mapping of str to ModelRowSamples
        Column label → its samples
        (:func:`localization.experiments.data_properties.data_model_samples`), three columns.

    Returns
    -------
    matplotlib.colorbar.Colorbar
        The covariances' colour bar.
    """
    grid = plotting.axes_grid("axes", axes, (4, len(dp.FIG2_MODELS)))
    if not isinstance(rows, Mapping) or len(rows) != grid.shape[1]:
        raise ValueError(f"rows must map {grid.shape[1]} column labels to ModelRowSamples, got {rows!r:.80}")
    im = None
    for i, (label, row) in enumerate(rows.items()):
        im = draw_model_row(grid[:, i], row)
        grid[0, i].set_title(f"{label}\nlong, $y = 1$")
        grid[1, i].set_title("short, $y = 0$")
        grid[2, i].set_title("covariance, $y = 1$")
        grid[3, i].set_title(f"$\\kappa - 3 = {row.model_long.marginal.excess_kurtosis:.2g}$")
        if i:
            grid[0, i].set_ylabel("")
    for ax in grid[:2].flat:
        ax.set_xlabel("")
    grid[1, 0].set_ylabel("$x_i$")
    return grid[0, 0].figure.colorbar(im, ax=grid[2, :], shrink=0.9, label="covariance")


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
    rows = dp.data_model_samples(book.key("data", "models"), n=100)
    fig = new_figure((plotting.COLUMN_WIDTH, 9.0), layout="constrained")
    draw_data_models(fig.subplots(4, len(dp.FIG2_MODELS)), rows)
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
    check_scale(scale)
    rec = dp.read_paper_samplers()
    chain = dp.paper_chain_correlations(book.key("data", "paper-chain"), 1.2, 100, 1000, num_flips=1000)
    fig = new_figure((plotting.COLUMN_WIDTH, 3.2), layout="constrained")
    draw_paper_samplers(fig.subplots(1, 3), rec, chain)
    return Built(fig, dict(record=rec, chain=chain))


def draw_paper_samplers(axes: Any, record: Mapping[str, Any], chain: Mapping[str, ArrayLike]) -> np.ndarray:
    """Draw the comparison of the paper code's samplers with the book's on three ``axes``.

    Left: the Ising correlations (distances 0..20), exact and of the code's chains with ±2 standard
    errors. Centre: final IPR against k of Fig. 5's neuron per sampler (mean ± standard deviation
    over initialisations). Right: the fraction of Fig. 7's networks that diverge, per sampler.

    Parameters
    ----------
    axes : 3 matplotlib Axes
        The panels.
    record : mapping
        :func:`~localization.experiments.data_properties.read_paper_samplers`.
    chain : mapping
        ``exact``, ``c``, ``se`` (N,) by distance
        (:func:`~localization.experiments.data_properties.paper_chain_correlations`).

    Returns
    -------
    np.ndarray
        The three axes.
    """
    ax = plotting.axes_grid("axes", np.asarray(axes, dtype=object).ravel(), (3,))
    d = np.arange(21)
    ax[0].plot(d, np.asarray(chain["exact"])[d], "k-", lw=1.2, label="exact")
    ax[0].errorbar(
        d, np.asarray(chain["c"])[d], 2 * np.asarray(chain["se"])[d], fmt="x", ms=4, label="code, 1000 proposals"
    )
    ax[0].set(xlabel="distance d", ylabel=r"$\mathbb{E}[x_0x_d]$", title="Fig. 2: Ising")
    ax[0].legend(fontsize="small")
    ks = np.asarray(record["fig5"]["ks"])
    for sampler, fmt, label in (("book", "o-", "book (exact)"), ("paper_float64", "s--", "code, float64")):
        ipr = record["fig5"][sampler]["ipr"]
        ax[1].errorbar(ks, ipr.mean(axis=1), ipr.std(axis=1), fmt=fmt, ms=4, capsize=2, label=label)
    ax[1].set(xscale="log", xlabel="Kur exponent k", ylabel="final IPR", title="Fig. 5")
    ax[1].set_xticks(ks, [f"{k:g}" for k in ks], minor=False)
    ax[1].minorticks_off()
    ax[1].legend(fontsize="small", loc="upper left")
    frac = [record["fig7"][s]["diverged"].mean() for s in dp.SAMPLERS]
    ax[2].bar(range(3), frac, color=["C0", "C1", "C3"])
    ax[2].set_xticks(range(3), ["book", "code\nfloat64", "code\nfloat32"])
    ax[2].set(ylim=(0, 1), ylabel="fraction diverged", title="Fig. 7: lr 80")
    return ax
