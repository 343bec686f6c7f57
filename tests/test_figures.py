"""The figures: the registry and ``python -m localization figures`` (command line, errors, one rendered
figure), one builder per figure (each registered builder is the function its chapter calls, and no
chapter draws a registered figure itself), the cheap builders' results, and the drawing functions."""

import inspect
import re
import struct
import subprocess
import sys
from pathlib import Path

import matplotlib
import matplotlib.image
import numpy as np
import pytest

from localization import figures
from localization.__main__ import main

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
CHEAP = "fig3_amplifier"  # exact quadrature only: the cheapest figure to render


def _run(capsys, *argv):
    """main(argv) -> (exit code, stdout, stderr), whether it returns or exits."""
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def test_registry_has_the_paper_figures_with_descriptions():
    names = list(figures.FIGURES)
    for expected in ["fig2_data_models", "fig3_sgd_vs_flow", "fig5_ipr_vs_kurtosis", "phase_diagram"]:
        assert expected in names
    for name, entry in figures.FIGURES.items():
        assert entry.name == name and len(entry.description.split()) >= 8, (name, entry.description)
        assert (ROOT / "book" / f"{entry.chapter}.md").is_file(), (name, entry.chapter)
        assert entry.build.__doc__ and entry.description.split()[0] in entry.build.__doc__


def test_help_lists_every_figure_and_both_scales(capsys):
    code, out, err = _run(capsys, "figures", "--help")
    assert code == 0 and not err
    for name, entry in figures.FIGURES.items():
        assert f"  {name}  (book/{entry.chapter}.md)" in out, name
        assert " ".join(entry.description.split()[:6]) in " ".join(out.split()), name
    assert "chapter" in out and "paper" in out and "LOCALIZATION_SEED" in out


def test_unknown_figure_exits_2_naming_the_valid_names(capsys, tmp_path):
    code, out, err = _run(capsys, "figures", "--out", str(tmp_path), "--only", "fig99_nothing")
    assert code == 2 and not out and "Traceback" not in err
    assert "fig99_nothing" in err and all(name in err for name in figures.FIGURES), err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    "argv, words",
    [
        (["figures", "--out", "{tmp}", "--scale", "huge"], ["--scale", "huge", "chapter", "paper"]),
        (["figures"], ["--out"]),
        (["figures", "--out", "{tmp}/file/sub"], ["--out", "cannot write"]),
        (["pictures"], ["pictures", "figures"]),
    ],
)
def test_bad_arguments_exit_2_with_a_message(capsys, tmp_path, argv, words):
    (tmp_path / "file").write_text("a file, not a directory")
    code, out, err = _run(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2 and not out and "Traceback" not in err
    assert all(w in err for w in words), err


def test_resolve_names_filters_and_keeps_registry_order():
    names = list(figures.FIGURES)
    assert figures.resolve_names(None) == names
    assert figures.resolve_names([f"{names[-1]},{names[0]}"]) == [names[0], names[-1]]
    assert figures.resolve_names([names[1], names[1]]) == [names[1]]
    with pytest.raises(ValueError, match="at least one"):
        figures.resolve_names([" , "])


def test_register_refuses_duplicates_and_missing_docstrings():
    with pytest.raises(ValueError, match="new identifier"):
        figures.register(CHEAP, "amplifier")

    def no_docstring_figure(scale="chapter"):
        return None

    with pytest.raises(ValueError, match="docstring"):
        figures.register("no_docstring_figure", "amplifier")(no_docstring_figure)
    with pytest.raises(ValueError, match="must be the function named 'other_name'"):
        figures.register("other_name", "amplifier")(figures.amplifier.fig3_amplifier)
    assert "no_docstring_figure" not in figures.FIGURES and "other_name" not in figures.FIGURES


def _png_size(path):
    raw = path.read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n" and raw[12:16] == b"IHDR", path
    return struct.unpack(">II", raw[16:24]), len(raw)


@pytest.mark.slow
def test_only_writes_the_named_figure_as_a_valid_png(capsys, tmp_path):
    code, out, err = _run(capsys, "figures", "--out", str(tmp_path / "new"), "--only", CHEAP, "--no-progress")
    assert code == 0 and not err and f"{CHEAP}.png (" in out, (out, err)
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == [f"{CHEAP}.png"]
    (width, height), nbytes = _png_size(tmp_path / "new" / f"{CHEAP}.png")
    assert width > 800 and height > 300 and nbytes > 30_000, (width, height, nbytes)
    image = matplotlib.image.imread(tmp_path / "new" / f"{CHEAP}.png")
    assert image.shape[:2] == (height, width) and np.std(image[..., :3]) > 0.05  # not a blank canvas


@pytest.mark.slow
def test_render_reports_progress_and_rejects_a_bad_scale(tmp_path, capsys):
    with pytest.raises(ValueError, match="scale must be one of"):
        figures.render([CHEAP], tmp_path, "poster")
    written = figures.render([CHEAP], tmp_path, "paper")
    assert list(written) == [CHEAP] and written[CHEAP][0] == tmp_path / f"{CHEAP}.png" and written[CHEAP][1] > 0
    out, err = capsys.readouterr()
    assert f"{CHEAP}.png (" in out and "scale paper" in out  # one line per figure on stdout
    assert "1/1" in err and CHEAP in err  # tqdm's bar, with the figure's name, on stderr


@pytest.mark.slow
def test_module_entry_point_runs():
    done = subprocess.run(
        [sys.executable, "-m", "localization", "figures", "--only", "nope", "--out", "."],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 2 and "valid names" in done.stderr and "Traceback" not in done.stderr


def test_draw_functions_check_their_axes():
    from matplotlib.figure import Figure

    axes = Figure().subplots(2, 4)
    with pytest.raises(ValueError, match=r"axes must be a \(4, 3\) array"):
        figures.data.draw_data_models(axes, None)
    with pytest.raises(ValueError, match=r"axes must be a \(4,\) array"):
        figures.data.draw_model_row(axes[0, :3], None)
    with pytest.raises(TypeError, match="result must be a Fig5Result"):
        figures.sweeps.draw_ipr_vs_kurtosis(axes[0, 0], {"nlgp": None}, linthresh=2.0)
    with pytest.raises(TypeError, match="pd must be a PhaseDiagram"):
        figures.sweeps.draw_phase_diagram(axes[0, 0], None, 40)
    with pytest.raises(ValueError, match="one panel per run"):
        figures.sweeps.draw_field_grid(axes, {"a": None})


@pytest.mark.slow
def test_draw_model_row_draws_the_samples_covariance_and_marginal():
    import jax
    from matplotlib.figure import Figure

    from localization import data, plotting
    from localization.experiments import data_properties as dp

    axes = Figure().subplots(1, 4)
    long_model, short_model = data.NLGP(xi=5.0, gain=3.0), data.NLGP(xi=1.0, gain=3.0)
    key = jax.random.key(3)
    im = figures.data.draw_model_row(axes, dp.model_row_samples(key, long_model, short_model, 30, num_marginal=500))
    k_long, k_short, _ = jax.random.split(key, 3)
    np.testing.assert_array_equal(axes[0].lines[0].get_ydata(), np.asarray(long_model.sample(k_long, 1, 30))[0])
    np.testing.assert_array_equal(axes[1].lines[0].get_ydata(), np.asarray(short_model.sample(k_short, 1, 30))[0])
    assert axes[0].lines[0].get_color() == plotting.CLASS_COLORS[1]  # long = class 1
    np.testing.assert_allclose(im.get_array(), np.asarray(long_model.covariance(30)))
    assert f"{long_model.marginal.excess_kurtosis:.3g}" in axes[3].get_title()
    with pytest.raises(ValueError, match="n must be"):
        dp.model_row_samples(key, long_model, short_model, 1)
    with pytest.raises(TypeError, match="row must be a ModelRowSamples"):
        figures.data.draw_model_row(axes, None)


@pytest.mark.slow
def test_draw_amplifier_deviation_and_curves():
    import math

    from matplotlib.figure import Figure

    from localization import data, theory

    top, bottom = Figure().subplots(2, 1)
    a = np.linspace(0.01, 0.99, 50)
    m = data.Kur(xi=1.0, k=10.0).marginal
    dev = figures.amplifier.draw_amplifier(top, bottom, m, a, name="Kur(k = 10)")
    np.testing.assert_allclose(dev, theory.linear_deviation(theory.amplifier_of(m), a), rtol=0, atol=1e-15)
    assert len(top.lines) == 3 and len(bottom.lines) == 3  # line, Taylor, phi / phi, Taylor, zero
    np.testing.assert_allclose(top.lines[0].get_ydata(), math.sqrt(2 / math.pi) * a)
    assert top.get_title().startswith("Kur(k = 10), excess kurtosis") and "-0.9" in top.get_title()
    # a divergent fourth moment: no Taylor curve
    top, bottom = Figure().subplots(2, 1)
    figures.amplifier.draw_amplifier(top, bottom, data.Kur(xi=1.0, k=4.0).marginal, a, name="Kur(k = 4)")
    assert len(top.lines) == 2 and len(bottom.lines) == 2 and "∞" in top.get_title()


def _sweep(params, kurtosis, curves):
    """A synthetic IPRSweep: one task per curve (C,), two identical initialisations, times 0..C-1."""
    from localization.experiments import IPRSweep

    curves = np.asarray(curves, dtype=np.float64)
    p, c = curves.shape
    ipr = np.repeat(curves[:, None, :], 2, axis=1)
    return IPRSweep(
        np.asarray(params, float), np.asarray(kurtosis, float), np.arange(c, dtype=float), np.arange(c), ipr, None
    )


def test_fig5_settling_times_are_the_last_exits_from_the_band():
    """A curve that reaches its final value at checkpoint j and stays there settles at time j; one
    that oscillates by more than SETTLE_TOL until the end settles at the last checkpoint."""
    from localization import experiments as ex

    tol = figures.simulation.SETTLE_TOL
    flat_after_3 = [0.0, 0.2, 0.5, 0.9, 0.9, 0.9]
    wobbling = [0.1, 0.1 + 3 * tol, 0.1, 0.1 + 3 * tol, 0.1, 0.1 + 3 * tol]
    settled_at_once = [0.3] * 6
    result = ex.Fig5Result(
        nlgp=_sweep([0.1, 10.0], [0.5, -1.9], [flat_after_3, settled_at_once]),
        kur=_sweep([5.0], [1.3], [wobbling]),
        settings=figures.simulation.FIG5,
    )
    built = figures.simulation.fig5_settling(result=result)
    assert built.data == {("NLGP($g$)", 0.1): 3.0, ("NLGP($g$)", 10.0): 0.0, ("Kur($k$)", 5.0): 5.0}
    top, bottom = [ax for ax in built.figure.get_axes() if ax.get_label() != "<colorbar>"]
    assert len(top.lines) == 2 and len(bottom.lines) == 1
    np.testing.assert_allclose(bottom.lines[0].get_ydata(), wobbling)
    with pytest.raises(TypeError, match="result must be a Fig5Result"):
        figures.simulation.fig5_settling(result={"nlgp": None})


def test_ipr_six_models_draws_mean_and_reference_levels():
    sweeps = {"a": _sweep([1.0], [-2.0], [[0.1, 0.5, 0.8]]), "b": _sweep([2.0], [0.0], [[0.1, 0.08, 0.07]])}
    built = figures.simulation.ipr_six_models(six=figures.simulation.SixModels({}, sweeps))
    (ax,) = built.figure.get_axes()
    n = figures.simulation.N
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [0.1, 0.5, 0.8])
    levels = sorted(float(line.get_ydata()[0]) for line in ax.lines[2:])
    np.testing.assert_allclose(levels, [3 / (2 * n), 3 / (n + 2)])
    assert ax.get_yscale() == "log" and built.data.runs is sweeps
    with pytest.raises(TypeError, match="six must be a SixModels"):
        figures.simulation.ipr_six_models(six=sweeps)


def test_amplifier_chapter_drawings_show_phi_and_its_deviation():
    """draw_phi_models: φ (last line) equals the values given, the line has slope √(2/π), no Taylor
    curve where the fourth moment diverges; draw_phi_deviations: φ - line on the positive points;
    draw_kur_crossings: the curves and crossing points given."""
    from matplotlib.figure import Figure

    from localization import data, theory

    amp = figures.amplifier
    a = np.linspace(-1, 1, 41)
    marginals = {"Kur(10)": data.Kur(3.0, 10.0).marginal, "Kur(4)": data.Kur(3.0, 4.0).marginal}
    phi = {name: theory.evaluate_amplifier(theory.amplifier_of(m), a) for name, m in marginals.items()}
    fig = Figure()
    grid = amp.draw_phi_models(fig.subplots(1, 2, squeeze=False), marginals, phi, a)
    kur10, kur4 = grid[0]
    np.testing.assert_allclose(kur10.lines[0].get_ydata(), amp.SQRT_2_OVER_PI * a)
    np.testing.assert_allclose(kur10.lines[-1].get_ydata(), phi["Kur(10)"])
    assert len(kur10.lines) == 3 and len(kur4.lines) == 2 and "∞" in kur4.get_title()
    with pytest.raises(ValueError, match="phi_values must name the marginals"):
        amp.draw_phi_models(Figure().subplots(1, 2, squeeze=False), marginals, {"Kur(10)": phi["Kur(10)"]}, a)
    with pytest.raises(ValueError, match="at least 2 panels"):
        amp.draw_phi_models(Figure().subplots(1, 1, squeeze=False), marginals, phi, a)
    ax = Figure().subplots()
    amp.draw_phi_deviations(ax, phi, a)
    positive = a > 0
    for line, name in zip(ax.lines[:2], phi, strict=True):
        np.testing.assert_allclose(line.get_xdata(), a[positive])
        np.testing.assert_allclose(line.get_ydata(), phi[name][positive] - amp.SQRT_2_OVER_PI * a[positive])
    left, right = amp.draw_kur_crossings(
        Figure().subplots(1, 2), a, {"k = 10": (phi["Kur(10)"], "C0")}, [4.5, 5.0], [0.6, 0.5], 4.3, 5.9
    )
    np.testing.assert_allclose(left.lines[0].get_ydata(), phi["Kur(10)"])
    np.testing.assert_allclose(right.lines[0].get_ydata(), [0.6, 0.5])
    assert right.get_ylim() == (0.0, 1.0)


def test_data_chapter_drawings_show_the_values_given():
    from matplotlib.figure import Figure

    fig = Figure()
    spectra = {
        3.0: (np.array([0.5, 1.0, 2.0]), np.array([0.4, 1.1, 2.1])),
        15.0: (np.array([-0.5, 1.0, 9.0]), [1, 2, 3]),
    }
    log_ax, symlog_ax = figures.data.draw_kernel_spectra(fig.subplots(1, 2), spectra, 40)
    np.testing.assert_allclose(symlog_ax.lines[0].get_ydata(), [-0.5, 1.0, 9.0])
    assert log_ax.get_yscale() == "log" and symlog_ax.get_yscale() == "symlog" and "ξ = 15" in symlog_ax.get_title()
    with pytest.raises(ValueError, match="two length-scales"):
        figures.data.draw_kernel_spectra(Figure().subplots(1, 2), {3.0: spectra[3.0]}, 40)
    exact = 0.5 ** np.minimum(np.arange(10), 10 - np.arange(10))
    results = {
        "J": dict(exact=exact, c_ex=exact + 0.01, se_ex=np.full(10, 0.02), c_mh=exact - 0.1, se_mh=np.full(10, 0.02))
    }
    (ax,) = figures.data.draw_ising_correlations(Figure().subplots(1, 1, squeeze=False), results)
    np.testing.assert_allclose(ax.lines[0].get_xdata(), np.arange(6))  # distances 0..N/2
    np.testing.assert_allclose(ax.lines[0].get_ydata(), exact[:6])
    with pytest.raises(ValueError, match=r"axes must be a \(1,\) array"):
        figures.data.draw_ising_correlations(Figure().subplots(1, 2), results)


def test_draw_gate_probability_draws_the_gaussian_formula_and_the_estimates():
    from matplotlib.figure import Figure

    from localization.theory import batch_gradient, exact_gated_mean

    n = 8
    w, cov1 = np.linspace(-1, 1, n), np.eye(n)
    e = batch_gradient.GateEstimate(
        np.array([-1.0, 0.0, 1.0]), np.array([0.3, 0.5, 0.7]), np.array([10, 10, 10]), np.array([0.01, 0.01, 0.01])
    )
    axes = Figure().subplots(1, 2)
    panels = {"A": (w, cov1, e, 2, 0.4), "B": (w, cov1, e, 5, 0.1)}
    left, right = figures.amplifier.draw_gate_probability(axes, panels, exact={"A": ([-1.0, 1.0], [0.2, 0.8])})
    xx = np.linspace(-1, 1, 200)
    np.testing.assert_allclose(left.lines[0].get_ydata(), exact_gated_mean.gaussian_gate_probability(w, cov1, 2, xx))
    np.testing.assert_allclose(right.lines[0].get_ydata(), exact_gated_mean.gaussian_gate_probability(w, cov1, 5, xx))
    assert [line.get_label() for line in left.lines][-1] == "exact (transfer matrix)"
    assert "exact (transfer matrix)" not in [line.get_label() for line in right.lines]
    assert "$i$ = 5" in right.get_title()


# Figures are drawn at the page column's width in the book style, so that no text is shown smaller than
# the captions (tests/test_site.py measures the built pages; these check the figures themselves).
CHEAP_FIGURES = {"fig3_amplifier": 6, "mechanism_gain": 1, "mechanism_flow": 15, "mechanism_ipr": 2}  # name -> axes


def _text_sizes(fig):
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return {
        t.get_text(): t.get_fontsize()
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and t.get_window_extent(renderer).width > 0
    }


@pytest.mark.parametrize("name", sorted(CHEAP_FIGURES))
@pytest.mark.slow
def test_cheap_figures_fit_the_column_with_caption_sized_text(name):
    """Each builds with its panels, no wider than the column once cropped (the PNG the book shows is
    the tight bounding box plus 0.1 in margins: at most 672 px at 96 dpi), with no text below
    FONT_SIZE points."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from localization import plotting

    with matplotlib.rc_context(plotting.BOOK_STYLE):
        fig = figures.FIGURES[name].build("chapter").figure
        FigureCanvasAgg(fig)
        sizes = _text_sizes(fig)
        width = fig.get_tightbbox(fig.canvas.get_renderer()).width
    panels = [ax for ax in fig.get_axes() if ax.get_label() != "<colorbar>"]
    assert len(panels) == CHEAP_FIGURES[name], [ax.get_label() for ax in fig.get_axes()]
    assert fig.get_figwidth() <= plotting.COLUMN_WIDTH and (width + 0.2) * plotting.FIGURE_DPI <= 672, width
    small = {text: size for text, size in sizes.items() if size < plotting.FONT_SIZE}
    assert len(sizes) > 5 and not small, small


def test_new_figure_is_at_most_column_wide_and_outside_pyplot():
    """Every builder creates its figure with registry.new_figure, which refuses a figure wider than
    the page column (so no registered figure is, whether cheap or not)."""
    import matplotlib.pyplot as plt

    from localization import plotting

    fig = figures.new_figure((plotting.COLUMN_WIDTH, 2.0), layout="constrained")
    assert fig.get_figwidth() == plotting.COLUMN_WIDTH and fig.get_layout_engine() is not None
    assert fig not in [plt.figure(n) for n in plt.get_fignums()]
    for bad in [(plotting.COLUMN_WIDTH + 0.1, 2.0), (0.0, 2.0), (3.0, -1.0)]:
        with pytest.raises(ValueError, match="figsize must be"):
            figures.new_figure(bad)
    for name, entry in figures.FIGURES.items():
        source = inspect.getsource(entry.build)
        assert "new_figure(" in source and "plt." not in source, name


def _chapter_code(chapter):
    """The code cells of book/<chapter>.md, as one string."""
    text = (ROOT / "book" / f"{chapter}.md").read_text(encoding="utf-8")
    return "\n".join(re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.S))


# Registered figures their chapter does not show: the command line's extra figures, drawn with the
# chapter's drawing functions (the amplifier chapter shows phi of every model, and this one in its widget).
COMMAND_LINE_ONLY = {"fig3_amplifier"}


@pytest.mark.parametrize("name", sorted(figures.FIGURES))
def test_each_builder_is_the_public_function_its_chapter_calls(name):
    """One builder per figure: ``name`` is a public function ``name(scale="chapter", ...) -> Built`` of
    a figures module (any further parameter optional), and its chapter's code calls exactly that
    function (``figures.<module>.<name>(``)."""
    entry = figures.FIGURES[name]
    build = entry.build
    module = build.__module__
    assert module.startswith("localization.figures.") and module != "localization.figures.registry", module
    assert build.__name__ == name and getattr(sys.modules[module], name) is build, (module, build.__name__)
    signature = inspect.signature(build)
    scale, *others = signature.parameters.values()
    assert scale.name == "scale" and scale.default == "chapter", signature
    assert all(p.default is not p.empty for p in others), signature  # build(scale) computes everything
    assert signature.return_annotation in ("Built", figures.Built), signature
    call = f"figures.{module.rsplit('.', 1)[1]}.{name}("
    if name in COMMAND_LINE_ONLY:
        assert call not in _chapter_code(entry.chapter)
    else:
        assert call in _chapter_code(entry.chapter), f"book/{entry.chapter}.md does not call {call})"


@pytest.mark.parametrize("name", sorted(set(figures.FIGURES) - COMMAND_LINE_ONLY))
def test_no_chapter_draws_a_registered_figure_itself(name):
    """The chapter of a registered figure calls none of the drawing functions its builder calls (it
    shows ``Built.figure``), so the figure's drawing exists once."""
    entry = figures.FIGURES[name]
    drawn = set(re.findall(r"\b(draw_\w+)\(", inspect.getsource(entry.build)))
    code = _chapter_code(entry.chapter)
    repeated = sorted(d for d in drawn if re.search(rf"\b{d}\(", code))
    assert not repeated, f"book/{entry.chapter}.md draws {repeated} itself: show figures.FIGURES[{name!r}]'s figure"


def test_the_figures_chapters_use_no_private_figure_names():
    """Every registered figure names a chapter with figures of its own module's builders, and no
    chapter reaches into a figures module's private names."""
    chapters = {entry.chapter for entry in figures.FIGURES.values()}
    assert {"intro", "data", "simulation", "amplifier"} <= chapters
    for chapter in sorted(p.stem for p in (ROOT / "book").glob("*.md")):
        assert not re.search(r"figures\.(\w+\.)?_\w", _chapter_code(chapter)), chapter


# Chapters whose every figure is drawn by the library (a builder, or figures.<chapter>.draw_* on the
# chapter's own results); their widgets (cells tagged widget) draw live frames with plotting's panels.
DRAWN_BY_THE_LIBRARY = ["intro", "data", "simulation", "amplifier"]


@pytest.mark.parametrize("chapter", DRAWN_BY_THE_LIBRARY)
def test_no_figure_is_drawn_in_a_cell_of_these_chapters(chapter):
    text = (ROOT / "book" / f"{chapter}.md").read_text(encoding="utf-8")
    drawn_here = []
    for cell in re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.S):
        tags = re.search(r"^:tags: \[(.*?)\]", cell, re.M)
        if tags and "widget" in tags.group(1):
            continue
        if re.search(r"plt\.(subplots|figure|subplot_mosaic)\(", cell) and "figures." not in cell:
            drawn_here.append(cell.strip().splitlines()[0][:80])
        if re.search(r"\bax\w*\.(plot|errorbar|imshow|set_title)\(", cell):
            drawn_here.append(cell.strip().splitlines()[0][:80])
    assert not drawn_here, f"book/{chapter}.md draws in its cells: {drawn_here}"


@pytest.mark.slow
def test_cheap_builders_return_the_figure_and_the_data_the_chapter_reads():
    """fig3_amplifier: the deviations it draws are theory.linear_deviation of each model's amplifier;
    fig2_data_models: 4 x 3 panels and one colour bar, no data."""
    from localization import theory

    built = figures.amplifier.fig3_amplifier()
    assert isinstance(built, figures.Built) and built.figure.get_figwidth() <= 6.8
    assert list(built.data) == list(figures.amplifier.FIG3_MODELS)
    for label, model in figures.amplifier.FIG3_MODELS.items():
        expected = theory.linear_deviation(theory.amplifier_of(model.marginal), figures.amplifier.A_POS)
        np.testing.assert_allclose(built.data[label], expected, rtol=0, atol=1e-15)
    # the amplifier's deviation is positive near 0 for the Ising (sub-Gaussian) model and negative for Kur(5)
    small = figures.amplifier.A_POS < 0.2
    assert np.all(built.data["Ising(J = 0.7)"][small] > 0) and np.all(built.data["Kur(k = 5)"][small] < 0)
    built = figures.data.fig2_data_models("paper")
    assert built.data is None
    panels = [ax for ax in built.figure.get_axes() if ax.get_label() != "<colorbar>"]
    assert len(panels) == 12 and len(built.figure.get_axes()) == 13
    with pytest.raises(ValueError, match="scale must be one of"):
        figures.data.fig2_data_models("poster")


def test_mechanism_figures_are_registered_for_their_chapter(capsys):
    code, out, _ = _run(capsys, "figures", "--help")
    assert code == 0
    for name in ("mechanism_gain", "mechanism_flow", "mechanism_ipr"):
        assert figures.FIGURES[name].chapter == "mechanism" and f"  {name}  (book/mechanism.md)" in out


@pytest.mark.slow
def test_mechanism_drawing_checks_its_arguments():
    import jax
    from matplotlib.figure import Figure

    from localization.experiments import mechanism as em
    from localization.figures import flows

    fig = Figure()
    ax = fig.subplots()
    with pytest.raises(ValueError, match="alphas must name the same tasks"):
        flows.draw_gain(ax, [0.1, 0.2], {"a": [1.0, 1.1]}, {"b": 0.1})
    with pytest.raises(ValueError, match=r"gains\['a'\] must have the shape"):
        flows.draw_gain(ax, [0.1, 0.2], {"a": [1.0]}, {"a": 0.1})
    with pytest.raises(TypeError, match="trajectories must be a non-empty mapping"):
        flows.draw_ipr_split(Figure().subplots(2), {}, {}, 40)
    tr = em.integrate_flows(jax.random.key(0), em.setup(), 20)
    with pytest.raises(ValueError, match=r"steps \[7\] are not checkpoints"):
        flows.draw_flow_snapshots(Figure().subplots(3, 1, squeeze=False), tr, {k: np.eye(40) for k in tr}, [7])
