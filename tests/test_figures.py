"""``python -m localization figures``: the registry, the command line and its errors, one rendered
figure (the cheapest), and the settings the registry copies from the chapters."""

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
    with pytest.raises(ValueError, match="docstring"):
        figures.register("no_docstring_figure", "amplifier")(lambda scale: None)
    assert "no_docstring_figure" not in figures.FIGURES


def _png_size(path):
    raw = path.read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n" and raw[12:16] == b"IHDR", path
    return struct.unpack(">II", raw[16:24]), len(raw)


def test_only_writes_the_named_figure_as_a_valid_png(capsys, tmp_path):
    code, out, err = _run(capsys, "figures", "--out", str(tmp_path / "new"), "--only", CHEAP, "--no-progress")
    assert code == 0 and not err and f"{CHEAP}.png (" in out, (out, err)
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == [f"{CHEAP}.png"]
    (width, height), nbytes = _png_size(tmp_path / "new" / f"{CHEAP}.png")
    assert width > 800 and height > 300 and nbytes > 30_000, (width, height, nbytes)
    image = matplotlib.image.imread(tmp_path / "new" / f"{CHEAP}.png")
    assert image.shape[:2] == (height, width) and np.std(image[..., :3]) > 0.05  # not a blank canvas


def test_render_reports_progress_and_rejects_a_bad_scale(tmp_path, capsys):
    with pytest.raises(ValueError, match="scale must be one of"):
        figures.render([CHEAP], tmp_path, "poster")
    written = figures.render([CHEAP], tmp_path, "paper")
    assert list(written) == [CHEAP] and written[CHEAP][0] == tmp_path / f"{CHEAP}.png" and written[CHEAP][1] > 0
    out, err = capsys.readouterr()
    assert f"{CHEAP}.png (" in out and "scale paper" in out  # one line per figure on stdout
    assert "1/1" in err and CHEAP in err  # tqdm's bar, with the figure's name, on stderr


def test_module_entry_point_runs():
    done = subprocess.run(
        [sys.executable, "-m", "localization", "figures", "--only", "nope", "--out", "."],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 2 and "valid names" in done.stderr and "Traceback" not in done.stderr


# settings each registry entry copies from its chapter: a change in the chapter must be made here too
COPIED = {
    "simulation": [
        "EVO = dict(lr=0.05, batch=1000, steps=1000, inits=8, checkpoints=41)",
        "FIG5 = ex.PAPER_FIG5.replace(batch=1000, steps=4000, checkpoints=41)",
        "PD = dict(ks=(4.5, 5.0, 5.4, 6.1, 7.0, 10.0, 50.0), ratios=(1.4, 2.0, 3.0, 5.0), xi0=0.5,",
        "inits=4, batch=250, steps=2000, checkpoints=11)",
        'keys["evo"]',
        'keys["fig5"]',
        'keys["phase"]',
    ],
    "effective_dynamics": [
        "N, XI, J = 40, (1.0, 3.0), (0.3, 0.7)",
        '"Ising": data.LengthscaleTask(data.Ising(J[0]), data.Ising(J[1])),',
        '"NLGP(0.01)": data.LengthscaleTask.of(data.NLGP, xi=XI, gain=0.01),',
        '"Kur(5)": data.LengthscaleTask.of(data.Kur, xi=XI, k=5.0),',
        "LR, STEPS = 0.05, 2000",
        'W30 = models.init_weights(book.key(CH, "peaks-w0"), N, init_scale=1e-3, num=30)',
        'book.key(CH, "peaks-ising"), FIG3["Ising"], W30, lr=LR, batch=2000',
        'book.key(CH, "modes-sgd", j), task, W30, lr=LR, batch=1000, steps=STEPS',
        "figures.draw_sgd_vs_flow(axes, fig3)",
        "XI_S = (0.3, 0.7)",
        'F8_TASKS = [data.family_task("NLGP", g, xi=XI_S) for g in (100.0, 0.01)]',
        "F8 = dict(lr=0.05, steps=1200, checkpoints=121)",
        'w8 = models.init_weights(book.key(CH, "fig8-w0"), N, init_scale=1e-3, num=4)',
        'sgd8 = train.train_sweep(book.key(CH, "fig8-sgd"), F8_TASKS, w8, batch=8000, balanced=True, **F8)',
        'train.train_online(book.key(CH, "fig8-replica"), F8_TASKS[1], w8, batch=8000, balanced=True, **F8)',
        "noise_floor = float(np.median(dist_replica)) / math.sqrt(2)",
        "LEVEL = 3 * noise_floor",
    ],
    "data": ['figures.draw_data_models(axes, keys["models"], n=100)'],
    "mechanism": [
        "N, XI = 40, (1.0, 3.0)",
        '"Gaussian": data.LengthscaleTask.of(data.Gaussian, xi=XI),',
        '"NLGP(3)": data.LengthscaleTask.of(data.NLGP, xi=XI, gain=3.0),',
        '"Kur(5)": data.LengthscaleTask.of(data.Kur, xi=XI, k=5.0),',
        'COLORS = {"Gaussian": "0.35", "NLGP(3)": "C3", "Kur(5)": "C0"}',
        "grid = np.linspace(1e-3, 1.0, 400)",
        'w0 = np.asarray(jax.random.normal(book.key(CH, "w0"), (8, N), dtype=np.float64))',
        "T_SNAP = [0.0, 5.0, 10.0, 20.0, 200.0]",
        'phi = (lambda a: C * a) if name == "Gaussian" else FAST[name]',
        "TRAJ[name] = theory.integrate_effective(w0[0], phi, *COV[name], lr=0.05, steps=STEPS[-1],",
        "checkpoints=np.arange(0, STEPS[-1] + 1, 20))",
        "figures.mechanism.draw_gain(ax, grid, GAIN, ALPHA, slope=C, colors=COLORS)",
        "figures.mechanism.draw_flow_snapshots(axes, TRAJ, SIGMA1, STEPS, colors=COLORS)",
        'SHOWN = {name: SPLIT[name] for name in ("NLGP(3)", "Kur(5)")}',
        "figures.mechanism.draw_ipr_split(axes, TRAJ, SHOWN, N, colors=COLORS, tmax=100)",
    ],
    "intro": [
        "n, xi = 40, (1.0, 3.0)",
        "lr, batch, steps = 0.05, 10_000, 2000",
        'book.key("intro", "data")',
        'book.key("intro", "init"), (n,), init_scale=1e-3',
    ],
}


@pytest.mark.parametrize("chapter", sorted(COPIED))
def test_registry_settings_are_the_chapters(chapter):
    text = (ROOT / "book" / f"{chapter}.md").read_text()
    missing = [snippet for snippet in COPIED[chapter] if snippet not in text]
    assert not missing, f"book/{chapter}.md no longer has {missing}: update localization/figures/registry.py"


def test_draw_functions_check_their_axes():
    from matplotlib.figure import Figure

    axes = Figure().subplots(2, 4)
    with pytest.raises(ValueError, match=r"axes must be a \(4, 3\) array"):
        figures.draw_data_models(axes, None)
    with pytest.raises(TypeError, match="result must be a Fig5Result"):
        figures.draw_ipr_vs_kurtosis(axes[0, 0], {"nlgp": None})
    with pytest.raises(TypeError, match="pd must be a PhaseDiagram"):
        figures.draw_phase_diagram(axes[0, 0], None, 40)


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


def test_every_registered_figure_is_created_at_most_column_wide():
    """Every builder creates its figure with a width of at most plotting.COLUMN_WIDTH inches (read from
    the registry's source: the expensive figures are not built here)."""
    import inspect
    import re

    from localization import plotting

    for name, entry in figures.FIGURES.items():
        widths = [float(w) for w in re.findall(r"_figure\(\(([0-9.]+),", inspect.getsource(entry.build))]
        assert widths and max(widths) <= plotting.COLUMN_WIDTH, (name, widths)


def test_mechanism_figures_are_registered_for_their_chapter(capsys):
    code, out, _ = _run(capsys, "figures", "--help")
    assert code == 0
    for name in ("mechanism_gain", "mechanism_flow", "mechanism_ipr"):
        assert figures.FIGURES[name].chapter == "mechanism" and f"  {name}  (book/mechanism.md)" in out


def test_mechanism_drawing_checks_its_arguments():
    from matplotlib.figure import Figure

    from localization.figures import mechanism

    fig = Figure()
    ax = fig.subplots()
    with pytest.raises(ValueError, match="alphas must name the same tasks"):
        mechanism.draw_gain(ax, [0.1, 0.2], {"a": [1.0, 1.1]}, {"b": 0.1})
    with pytest.raises(ValueError, match=r"gains\['a'\] must have the shape"):
        mechanism.draw_gain(ax, [0.1, 0.2], {"a": [1.0]}, {"a": 0.1})
    with pytest.raises(TypeError, match="trajectories must be a non-empty mapping"):
        mechanism.draw_ipr_split(Figure().subplots(2), {}, {}, 40)
    tr = figures.registry._mechanism_flows(figures.registry._mechanism_setup(), [0, 20])
    with pytest.raises(ValueError, match=r"steps \[7\] are not checkpoints"):
        mechanism.draw_flow_snapshots(Figure().subplots(3, 1, squeeze=False), tr, {k: np.eye(40) for k in tr}, [7])
