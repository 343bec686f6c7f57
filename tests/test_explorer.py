"""Explorers: the frame grid, the static HTML and the live controls (localization.book.explorer)."""

import base64
import json
import re

import ipywidgets as widgets
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from localization import plotting
from localization.book import explorer, rasterise

ALT = "A line from the origin whose end height is the gain or the kurtosis parameter."


def _controls():
    return dict(
        family=explorer.Choice(["NLGP", "Kur"], value="NLGP", description="data family"),
        gain=explorer.Slider([("0.1", 0.1), ("3", 3.0), ("100", 100.0)], value=3.0, description="gain g"),
        k=explorer.Slider([4.5, 5.0, 8.0, 10.0], value=8.0, description="kurtosis parameter k"),
    )


WHEN = {"gain": {"family": "NLGP"}, "k": {"family": "Kur"}}


def _figure(calls, width=plotting.COLUMN_WIDTH):
    def figure(family, gain, k, scale=1.0):
        calls.append((family, gain, k, scale))
        fig, ax = plt.subplots(figsize=(width, 1.5))
        ax.plot([0, 1], [0, gain if family == "NLGP" else k])
        return fig

    return figure


def test_frame_grid_holds_one_frame_per_applicable_combination():
    specs = _controls()
    grid = list(explorer.frame_grid(specs, WHEN))
    # NLGP: 3 gains with k at its default (index 2); Kur: 4 values of k with the gain at its default (1).
    assert sorted(grid) == sorted([(0, g, 2) for g in range(3)] + [(1, 1, k) for k in range(4)])
    assert len(set(grid)) == len(grid) == 7
    # Without `when`, the full product.
    assert len(list(explorer.frame_grid(specs, {}))) == 2 * 3 * 4


def _capture_display(monkeypatch):
    """Collect what explore displays (IPython's display is imported by explore at call time)."""
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, *a, **k: shown.append(obj))
    return shown


@pytest.mark.slow
def test_static_mode_draws_every_frame_with_the_values_shown(monkeypatch):
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "frames")
    monkeypatch.delenv(explorer.FRAMES_LOG_ENV, raising=False)
    calls = []
    shown = _capture_display(monkeypatch)
    assert (
        explorer.explore(_figure(calls), alt=ALT, when=WHEN, scale=2.0, **_controls()) is None
    )  # shown once, not returned
    (html,) = shown
    page = html.data
    assert len(calls) == 7 and all(c[3] == 2.0 for c in calls)
    assert ("NLGP", 100.0, 8.0, 2.0) in calls and ("Kur", 3.0, 4.5, 2.0) in calls
    spec = json.loads(re.search(r'<script type="application/json">(.*?)</script>', page, re.S).group(1))
    assert len(spec["frames"]) == 7 and all(v.startswith("data:image/png;base64,") for v in spec["frames"].values())
    # The page opens on the default frame, and each slider shows the label of the value it passes.
    default = re.search(r'<img src="([^"]+)"', page).group(1)
    assert default == spec["frames"]["0-1-2"]
    gain = spec["controls"][1]
    assert gain["labels"] == ["0.1", "3", "100"] and gain["values"] == [0.1, 3.0, 100.0] and gain["default"] == 1
    assert gain["when"] == {"family": ["NLGP"]}
    assert plt.get_fignums() == []  # every frame's figure was closed
    # Each control is named in words with its symbol, and a slider shows the range of its stops.
    assert [c["description"] for c in spec["controls"]] == ["data family", "gain g", "kurtosis parameter k"]
    assert [c["range"] for c in spec["controls"]] == ["", "0.1 – 100", "4.5 – 10"]
    assert re.search(r'<label for="[^"]+-gain">gain g</label>', page)
    assert '<span class="loc-explorer-range" title="stops: 0.1, 3, 100">0.1 – 100</span>' in page
    assert '<span class="loc-explorer-range" title="stops: 4.5, 5, 8, 10">4.5 – 10</span>' in page
    # The picture's alt text is the description followed by the values of the controls shown (the
    # script writes the same text for every frame from spec["alt"]).
    assert spec["alt"] == ALT
    alt = re.search(r'<img [^>]*alt="([^"]+)"', page).group(1)
    assert alt == ALT + " Settings: data family = NLGP, gain g = 3."
    assert "img.alt = spec.alt + ' Settings: ' + shown.join(', ') + '.'" in page
    assert '<p class="loc-explorer-values">data family = NLGP, gain g = 3</p>' in page


@pytest.mark.slow
def test_frames_are_drawn_at_twice_the_dpi_and_shown_at_the_column_width(monkeypatch):
    # One width for all explorers: the picture is shown COLUMN_WIDTH inches wide (in CSS pixels at the
    # book's dpi) and drawn at FRAME_SCALE times as many pixels; the box is the column's width.
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "frames")
    monkeypatch.delenv(explorer.FRAMES_LOG_ENV, raising=False)
    pages = []
    for height in (1.5, 4.0):

        def figure(gain, height=height):
            fig, ax = plt.subplots(figsize=(plotting.COLUMN_WIDTH, height))
            ax.plot([0, 1], [0, gain])
            return fig

        shown = _capture_display(monkeypatch)
        explorer.explore(figure, alt=ALT, gain=explorer.Slider([1.0, 2.0], value=1.0, description="gain g"))
        pages.append(shown[0].data)
    css = round(plotting.COLUMN_WIDTH * plotting.FIGURE_DPI)
    for page, height in zip(pages, (1.5, 4.0), strict=True):
        attrs = re.search(r'<img src="data:image/png;base64,([^"]+)" width="(\d+)" height="(\d+)"', page)
        assert int(attrs.group(2)) == css and int(attrs.group(3)) == round(height * plotting.FIGURE_DPI)
        header = base64.b64decode(attrs.group(1)[:32])
        pixels = int.from_bytes(header[16:20], "big")
        assert abs(pixels - explorer.FRAME_SCALE * css) <= 1
        assert ".loc-explorer { box-sizing: border-box; width: 100%;" in page
    assert explorer.FRAME_SCALE == 2


def test_a_figure_not_as_wide_as_the_column_is_refused(monkeypatch):
    plt.close("all")  # figures another test left open are not this test's
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "frames")
    monkeypatch.delenv(explorer.FRAMES_LOG_ENV, raising=False)
    with pytest.raises(ValueError, match=r"figure is 5 in wide .* plotting.COLUMN_WIDTH = 6.8 in"):
        explorer.explore(_figure([], width=5.0), alt=ALT, when=WHEN, **_controls())
    assert plt.get_fignums() == []
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "")
    _capture_display(monkeypatch)
    with pytest.raises(ValueError, match="figure is 5 in wide"):
        explorer.explore(_figure([], width=5.0), alt=ALT, when=WHEN, **_controls())
    assert plt.get_fignums() == []


def test_alt_and_descriptions_are_required_and_checked(monkeypatch):
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "1")
    with pytest.raises(TypeError, match="alt"):
        explorer.explore(_figure([]), when=WHEN, **_controls())
    with pytest.raises(TypeError, match="alt must be a string describing what the figure shows, got int"):
        explorer.explore(_figure([]), alt=3, when=WHEN, **_controls())
    for bad in ("", "   ", "field_figure", "the learned field"):
        with pytest.raises(ValueError, match="alt must be a sentence describing what the figure shows"):
            explorer.explore(_figure([]), alt=bad, when=WHEN, **_controls())
    with pytest.raises(ValueError, match="alt must be at most MAX_ALT = 300 characters"):
        explorer.explore(_figure([]), alt="word " * 100, when=WHEN, **_controls())
    assert explorer._check_alt("  The learned\n field  per checkpoint ") == "The learned field per checkpoint."
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'description'"):
        explorer.Slider([1, 3], value=1)
    with pytest.raises(ValueError, match='description must name the control in words with its symbol, e.g. "gain g"'):
        explorer.Slider([1, 3], value=1, description=" ")
    with pytest.raises(TypeError, match="description must be a string, got int"):
        explorer.Choice(["a", "b"], value="a", description=1)
    assert explorer.Slider([0.01, 1.0, 100.0], value=1.0, description="gain g").range_text == "0.01 – 100"
    assert explorer.Choice(["a", "b"], value="a", description="data family").range_text == ""


def test_batch_mode_draws_nothing_and_live_mode_hides_what_does_not_apply(monkeypatch):
    calls = []
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "1")
    assert explorer.explore(_figure(calls), alt=ALT, when=WHEN, **_controls()) is None
    assert calls == []
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "")
    shown = _capture_display(monkeypatch)
    assert explorer.explore(_figure(calls), alt=ALT, when=WHEN, **_controls()) is None
    box = next(obj for obj in shown if isinstance(obj, widgets.VBox))
    family, gain_row, k_row = box.children[:3]
    (gain, gain_range), (k, k_range) = gain_row.children, k_row.children
    assert isinstance(gain, widgets.SelectionSlider) and gain.label == "3" and k.label == "8"
    # Named in words with the symbol, in full, and the range of the stops beside the slider.
    assert (family.description, gain.description, k.description) == ("data family", "gain g", "kurtosis parameter k")
    assert gain.style.description_width == "initial"
    assert (gain_range.value, k_range.value) == ("0.1 – 100", "4.5 – 10")
    assert calls == [("NLGP", 3.0, 8.0, 1.0)]
    assert k_row.layout.display == "none" and gain_row.layout.display is None
    family.value = "Kur"
    assert calls[-1] == ("Kur", 3.0, 8.0, 1.0)
    assert gain_row.layout.display == "none" and k_row.layout.display is None
    k.value = 4.5
    assert calls[-1] == ("Kur", 3.0, 4.5, 1.0)
    plt.close("all")


def test_bad_arguments_are_named(monkeypatch):
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "1")
    with pytest.raises(TypeError, match="figure must be callable"):
        explorer.explore(3, alt=ALT, **_controls())
    with pytest.raises(TypeError, match="argument 'x' is an ipywidgets object"):
        explorer.explore(
            lambda x, g: None, alt=ALT, x=widgets.FloatSlider(), g=explorer.Slider([1], value=1, description="g")
        )
    with pytest.raises(ValueError, match="at least one control"):
        explorer.explore(lambda x: None, alt=ALT, x=1)
    with pytest.raises(ValueError, match="when names control 'q'"):
        explorer.explore(_figure([]), alt=ALT, when={"q": {"family": "NLGP"}}, **_controls())
    with pytest.raises(ValueError, match=r"\['Ising'\] are not options of 'family'"):
        explorer.explore(_figure([]), alt=ALT, when={"gain": {"family": "Ising"}}, **_controls())
    with pytest.raises(ValueError, match="not another control"):
        explorer.explore(_figure([]), alt=ALT, when={"gain": {"gain": 3.0}}, **_controls())
    with pytest.raises(ValueError, match=r"value 2 is not one of the stops \[1, 3\]"):
        explorer.Slider([1, 3], value=2, description="n")
    with pytest.raises(ValueError, match="non-empty list of stops"):
        explorer.Choice([], value=None, description="n")
    with pytest.raises(ValueError, match="two stops have the same label"):
        explorer.Slider([("a", 1), ("a", 2)], value=1, description="n")


def test_frames_must_be_figures_and_few(monkeypatch):
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "frames")
    monkeypatch.delenv(explorer.FRAMES_LOG_ENV, raising=False)
    with pytest.raises(TypeError, match="figure must return a Matplotlib figure"):
        explorer.explore(lambda family, gain, k: None, alt=ALT, when=WHEN, **_controls())
    many = explorer.Slider(list(range(explorer.MAX_FRAMES + 1)), value=0, description="n")
    with pytest.raises(ValueError, match="more than MAX_FRAMES"):
        explorer.explore(lambda n: None, alt=ALT, n=many)


@pytest.mark.slow
def test_the_build_log_is_summed(tmp_path, monkeypatch):
    log = tmp_path / "explorers.jsonl"
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "frames")
    monkeypatch.setenv(explorer.FRAMES_LOG_ENV, str(log))
    explorer.explore(_figure([]), alt=ALT, when=WHEN, **_controls())
    explorer.explore(_figure([]), alt=ALT, when=WHEN, **_controls())
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["frames"] for r in records] == [7, 7]
    summary = explorer.summarize_log(str(log))
    assert "total: 14 frames" in summary
    assert "none built" in explorer.summarize_log(str(tmp_path / "missing.jsonl"))


@pytest.mark.slow
def test_frames_drawn_by_a_worker_are_the_frames_drawn_in_the_kernel(monkeypatch):
    # A worker process draws the pickled figure under the kernel's rcParams: the same PNG bytes. A
    # local rcParams change (a font size) must reach the worker, or the bytes would differ.
    monkeypatch.delenv(explorer.FRAMES_LOG_ENV, raising=False)
    frames = {}
    with matplotlib.rc_context({"font.size": 7.0, "lines.linewidth": 3.0}):
        for workers in ("0", "1"):
            monkeypatch.setenv(rasterise.WORKERS_ENV, workers)
            frames[workers] = explorer.render_frames(_figure([]), _controls(), WHEN)
    assert len(frames["0"]) == 7 and frames["0"] == frames["1"]
    plain = explorer.render_frames(_figure([]), _controls(), WHEN)  # default rcParams: other pictures
    assert plain.keys() == frames["0"].keys() and plain != frames["0"]


@pytest.mark.slow
def test_a_failing_worker_falls_back_to_the_kernel_with_a_warning(monkeypatch):
    class Broken:
        def submit(self, *args):
            raise RuntimeError("no process can start here")

    monkeypatch.setenv(rasterise.WORKERS_ENV, "0")
    here = explorer.render_frames(_figure([]), _controls(), WHEN)
    monkeypatch.setenv(rasterise.WORKERS_ENV, "1")
    monkeypatch.setattr(rasterise, "_pool", lambda workers: Broken())
    with pytest.warns(UserWarning, match="drawn in the kernel.*no process can start"):
        assert explorer.render_frames(_figure([]), _controls(), WHEN) == here
    monkeypatch.setenv(rasterise.WORKERS_ENV, "several")
    with pytest.raises(ValueError, match="LOCALIZATION_EXPLORER_WORKERS must be a non-negative integer"):
        explorer.render_frames(_figure([]), _controls(), WHEN)


@pytest.mark.slow
def test_an_interrupt_to_the_process_group_does_not_stop_the_drawing_worker(monkeypatch):
    # A Jupyter kernel is stopped with SIGINT to its process group; the worker must neither die nor
    # print a KeyboardInterrupt traceback into the build log, and must still draw afterwards.
    import os
    import signal

    monkeypatch.delenv(explorer.FRAMES_LOG_ENV, raising=False)
    pool = rasterise._pool(1)
    worker = pool.submit(os.getpid).result(timeout=60)
    assert worker != os.getpid()
    os.kill(worker, signal.SIGINT)
    assert pool.submit(signal.getsignal, signal.SIGINT).result(timeout=60) == signal.SIG_IGN
    assert pool.submit(os.getpid).result(timeout=60) == worker  # the same process, alive
    monkeypatch.setenv(rasterise.WORKERS_ENV, "0")
    here = explorer.render_frames(_figure([]), _controls(), WHEN)
    monkeypatch.setenv(rasterise.WORKERS_ENV, "1")
    assert explorer.render_frames(_figure([]), _controls(), WHEN) == here


def test_png_draws_at_the_dpi_and_in_the_colours_asked():
    import io

    from PIL import Image

    fig, ax = plt.subplots(figsize=(2.0, 1.0), dpi=96)
    ax.imshow([[0.0, 0.5], [0.7, 1.0]], cmap="viridis")
    small = Image.open(io.BytesIO(rasterise.png(fig, dpi=50, colors=16)))
    assert small.size == (100, 50) and len(small.getcolors()) <= 16
    assert Image.open(io.BytesIO(rasterise.png(fig))).size == (100, 50)  # png set the figure to that dpi
    with pytest.raises(ValueError, match="colors must be an integer from 2 to 256, got 300"):
        rasterise.png(fig, colors=300)
    with pytest.raises(ValueError, match="dpi must be positive, got 0"):
        rasterise.FrameDrawer(dpi=0)
    plt.close(fig)


def test_the_site_moves_explorer_frames_to_a_script_loaded_on_first_use(monkeypatch, tmp_path):
    """_ext/explorer_frames.py (issue 34: pages under 1.5 MB): after the build, an explorer's frames
    leave the page for ``_static/explorers/<page>--<id>.js``; the page keeps the default picture, the
    controls and the spec without frames, and names the script in ``data-frames``. A second pass
    changes nothing."""
    import importlib.util
    from pathlib import Path

    spec_file = Path(__file__).resolve().parents[1] / "_ext" / "explorer_frames.py"
    module_spec = importlib.util.spec_from_file_location("explorer_frames", spec_file)
    frames_ext = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(frames_ext)

    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "frames")
    monkeypatch.delenv(explorer.FRAMES_LOG_ENV, raising=False)
    shown = _capture_display(monkeypatch)
    explorer.explore(_figure([]), alt=ALT, when=WHEN, scale=2.0, **_controls())
    (html,) = shown
    before = json.loads(re.search(r'<script type="application/json">(.*?)</script>', html.data, re.S).group(1))
    page = tmp_path / "book" / "chapter.html"
    page.parent.mkdir()
    page.write_text(f"<html><body>{html.data}</body></html>", encoding="utf-8")
    assert frames_ext.externalise(page, tmp_path) == 1
    text = page.read_text(encoding="utf-8")
    after = json.loads(re.search(r'<script type="application/json">(.*?)</script>', text, re.S).group(1))
    assert "frames" not in after and after == {k: v for k, v in before.items() if k != "frames"}
    address = re.search(r'data-frames="([^"]+)"', text).group(1)
    ident = re.search(r'class="loc-explorer" id="([^"]+)"', text).group(1)
    assert address == f"../_static/explorers/book--chapter--{ident}.js"
    script = (page.parent / address).read_text(encoding="utf-8")
    prefix = f"(window.locExplorerFrames = window.locExplorerFrames || {{}})[{json.dumps(ident)}] = "
    assert script.startswith(prefix)
    assert json.loads(script[len(prefix) :].rstrip().rstrip(";")) == before["frames"]
    assert re.search(r'<img src="([^"]+)"', text).group(1) == before["frames"]["0-1-2"]  # the default stays
    assert len(text) < len(html.data) / 2
    assert frames_ext.externalise(page, tmp_path) == 0 and page.read_text(encoding="utf-8") == text
