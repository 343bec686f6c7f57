"""Explorers: the frame grid, the static HTML and the live controls (localization.explorer)."""

import json
import re

import ipywidgets as widgets
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from localization import explorer, rasterise


def _controls():
    return dict(
        family=explorer.Choice(["NLGP", "Kur"], value="NLGP", description="family"),
        gain=explorer.Slider([("0.1", 0.1), ("3", 3.0), ("100", 100.0)], value=3.0, description="g"),
        k=explorer.Slider([4.5, 5.0, 8.0, 10.0], value=8.0, description="k"),
    )


WHEN = {"gain": {"family": "NLGP"}, "k": {"family": "Kur"}}


def _figure(calls):
    def figure(family, gain, k, scale=1.0):
        calls.append((family, gain, k, scale))
        fig, ax = plt.subplots(figsize=(2, 1.5))
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
    assert explorer.explore(_figure(calls), when=WHEN, scale=2.0, **_controls()) is None  # shown once, not returned
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


def test_batch_mode_draws_nothing_and_live_mode_hides_what_does_not_apply(monkeypatch):
    calls = []
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "1")
    assert explorer.explore(_figure(calls), when=WHEN, **_controls()) is None
    assert calls == []
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "")
    shown = _capture_display(monkeypatch)
    assert explorer.explore(_figure(calls), when=WHEN, **_controls()) is None
    box = next(obj for obj in shown if isinstance(obj, widgets.VBox))
    family, gain, k = box.children[:3]
    assert isinstance(gain, widgets.SelectionSlider) and gain.label == "3" and k.label == "8"
    assert calls == [("NLGP", 3.0, 8.0, 1.0)]
    assert k.layout.display == "none" and gain.layout.display is None
    family.value = "Kur"
    assert calls[-1] == ("Kur", 3.0, 8.0, 1.0)
    assert gain.layout.display == "none" and k.layout.display is None
    k.value = 4.5
    assert calls[-1] == ("Kur", 3.0, 4.5, 1.0)
    plt.close("all")


def test_bad_arguments_are_named(monkeypatch):
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "1")
    with pytest.raises(TypeError, match="figure must be callable"):
        explorer.explore(3, **_controls())
    with pytest.raises(TypeError, match="argument 'x' is an ipywidgets object"):
        explorer.explore(lambda x, g: None, x=widgets.FloatSlider(), g=explorer.Slider([1], value=1))
    with pytest.raises(ValueError, match="at least one control"):
        explorer.explore(lambda x: None, x=1)
    with pytest.raises(ValueError, match="when names control 'q'"):
        explorer.explore(_figure([]), when={"q": {"family": "NLGP"}}, **_controls())
    with pytest.raises(ValueError, match=r"\['Ising'\] are not options of 'family'"):
        explorer.explore(_figure([]), when={"gain": {"family": "Ising"}}, **_controls())
    with pytest.raises(ValueError, match="not another control"):
        explorer.explore(_figure([]), when={"gain": {"gain": 3.0}}, **_controls())
    with pytest.raises(ValueError, match=r"value 2 is not one of the stops \[1, 3\]"):
        explorer.Slider([1, 3], value=2)
    with pytest.raises(ValueError, match="non-empty list of stops"):
        explorer.Choice([], value=None)
    with pytest.raises(ValueError, match="two stops have the same label"):
        explorer.Slider([("a", 1), ("a", 2)], value=1)


def test_frames_must_be_figures_and_few(monkeypatch):
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "frames")
    monkeypatch.delenv(explorer.FRAMES_LOG_ENV, raising=False)
    with pytest.raises(TypeError, match="figure must return a Matplotlib figure"):
        explorer.explore(lambda family, gain, k: None, when=WHEN, **_controls())
    many = explorer.Slider(list(range(explorer.MAX_FRAMES + 1)), value=0)
    with pytest.raises(ValueError, match="more than MAX_FRAMES"):
        explorer.explore(lambda n: None, n=many)


@pytest.mark.slow
def test_the_build_log_is_summed(tmp_path, monkeypatch):
    log = tmp_path / "explorers.jsonl"
    monkeypatch.setenv(explorer.STATIC_WIDGETS_ENV, "frames")
    monkeypatch.setenv(explorer.FRAMES_LOG_ENV, str(log))
    explorer.explore(_figure([]), when=WHEN, **_controls())
    explorer.explore(_figure([]), when=WHEN, **_controls())
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
