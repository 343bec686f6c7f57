"""Explorers: a figure as a function of a few controls, live in a notebook and on the static site.

A chapter writes, once::

    explore(figure, alt="The field the neuron learns, drawn at every checkpoint of training.",
            family=Choice(["NLGP", "Kur"], value="NLGP", description="data family"),
            gain=Slider([0.1, 1, 3, 10], value=3, description="gain g"),
            k=Slider([4.5, 5, 8], value=5, description="kurtosis parameter k"),
            when={"gain": {"family": "NLGP"}, "k": {"family": "Kur"}})

Each control is named in words with its symbol (``description``) and a slider shows the range of
its stops beside it ("0.1 – 10"); ``alt`` describes the picture, and the current control values are
appended to it for each frame. Every frame is :data:`localization.plotting.COLUMN_WIDTH` wide, so
that all explorers have one width, and the static frames are drawn at :data:`FRAME_SCALE` times the
book's dpi and shown at the figure's size (crisp on high-density screens).

What the reader gets depends on where the chapter runs (environment variable
:data:`STATIC_WIDGETS_ENV`):

* ``""`` / ``"0"`` (a live notebook, ``make lab``): ipywidgets controls that redraw ``figure`` at
  once, with the controls that do not apply to the current choice hidden.
* ``"frames"`` (``make book``): every applicable combination of the controls' stops is drawn at
  build time by the same ``figure`` call and embedded in the page, with a few lines of JavaScript
  that swap the picture as the reader moves a control: no kernel, no network. Controls are lists
  of stops for that reason, and the label shown is the value used. The kernel makes each figure; a
  worker process draws it (:mod:`localization.book.rasterise`), so making and drawing overlap on two cores.
* anything else (``"1"``: nbval and the references): nothing is drawn and no widget is created
  (nbclient's emulation of the output widget can hang a batch execution, jupyter/nbclient#312, seen
  four times in this project; and a created widget would be saved into the notebook).

``when`` says which controls apply to which choice: a control that does not apply is hidden and
keeps its default stop, so the static grid holds one frame per *applicable* combination
(:func:`frame_grid`), not the full product.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from localization.book import explorer_page, rasterise
from localization.book.explorer_controls import Choice, Control, Slider, applies, check_when, frame_grid

__all__ = [
    "STATIC_WIDGETS_ENV",
    "FRAMES_LOG_ENV",
    "MAX_FRAMES",
    "FRAME_SCALE",
    "FRAME_COLORS",
    "MAX_ALT",
    "Control",
    "Slider",
    "Choice",
    "explore",
    "frame_grid",
    "render_frames",
    "summarize_log",
]

#: Environment variable choosing what :func:`explore` does (see the module docstring). The Makefile
#: sets "1" for every batch execution and "frames" for the book build; ``make lab`` clears it.
STATIC_WIDGETS_ENV = "LOCALIZATION_STATIC_WIDGETS"

#: Environment variable: a file to which each static explorer appends one JSON line (name, number of
#: frames, seconds, bytes) when it is built, so that the book build can report what explorers cost.
FRAMES_LOG_ENV = "LOCALIZATION_EXPLORER_LOG"

#: Most frames one explorer may embed: a page must stay light (each frame is a PNG of ~20–60 kB).
MAX_FRAMES = 64

#: Static frames are drawn at this multiple of the book's dpi (see :mod:`localization.book.explorer_page`).
FRAME_SCALE = explorer_page.FRAME_SCALE

#: Colours of a static frame's palette (:func:`localization.book.rasterise.png`: maximum coverage, so a
#: small marker keeps its colour). Fewer colours saved little at twice the dpi and shifted colours
#: (64 or 128 by median cut lost a red marker); a frame at twice the dpi weighs about 1.3-1.9 times
#: a 256-colour frame at the book's dpi (measured on a line plot and a covariance image).
FRAME_COLORS = 256

#: Longest alt text (characters) :func:`explore` accepts: a description, not a caption.
MAX_ALT = 300


def render_frames(
    figure: Callable[..., Any],
    controls: Mapping[str, Control],
    when: Mapping[str, Mapping[str, tuple]],
    fixed: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """Draw ``figure(**fixed, **values)`` for every stop combination of :func:`frame_grid`.

    ``figure`` must return a Matplotlib figure, which is closed after it is encoded.

    Parameters
    ----------
    figure : Callable
        As in :func:`explore`.
    controls : Mapping[str, Control]
        The controls, by argument name.
    when : Mapping
        As in :func:`explore`.
    fixed : Mapping or None
        The arguments that are not controls.

    Returns
    -------
    dict[str, str]
        Frame key (the stop indices joined by "-") → PNG data URI, drawn at :data:`FRAME_SCALE`
        times the book's dpi in a palette of :data:`FRAME_COLORS` colours.
    """
    return _render(figure, controls, when, fixed)[0]


def _check_width(fig: Any, values: Mapping[str, Any]) -> None:
    """Raise ValueError unless ``fig`` is the column's width (one width for every explorer)."""
    from localization import plotting

    if abs(fig.get_figwidth() - plotting.COLUMN_WIDTH) > 1e-3:
        raise ValueError(
            f"figure is {fig.get_figwidth():g} in wide for {dict(values)}: every explorer's figure is "
            f"plotting.COLUMN_WIDTH = {plotting.COLUMN_WIDTH:g} in wide, so that all explorers have one width"
        )


def _render(figure, controls, when, fixed=None) -> tuple[dict[str, str], float]:
    """Run :func:`render_frames`, drawn by :class:`localization.book.rasterise.FrameDrawer`.

    Drawing happens in a worker process where possible; also returns the CPU seconds the workers spent.
    """
    import matplotlib.pyplot as plt

    from localization import plotting

    grid = list(frame_grid(controls, when))
    if len(grid) > MAX_FRAMES:
        raise ValueError(
            f"the explorer needs {len(grid)} frames, more than MAX_FRAMES = {MAX_FRAMES}: use fewer stops "
            f"or restrict controls with `when`"
        )
    names = list(controls)
    drawer = rasterise.FrameDrawer(dpi=plotting.FIGURE_DPI * FRAME_SCALE, colors=FRAME_COLORS)
    for stops in grid:
        values = {n: controls[n].values[i] for n, i in zip(names, stops, strict=True)}
        fig = figure(**(fixed or {}), **values)
        if not hasattr(fig, "savefig"):
            raise TypeError(f"figure must return a Matplotlib figure, got {type(fig).__name__} for {values}")
        try:
            _check_width(fig, values)
        except ValueError:
            plt.close(fig)
            raise
        drawer.add(fig)
        plt.close(fig)
    keys = ["-".join(map(str, stops)) for stops in grid]
    pictures = drawer.finish()
    frames = {k: "data:image/png;base64," + base64.b64encode(p).decode() for k, p in zip(keys, pictures, strict=True)}
    return frames, drawer.worker_cpu_seconds


_counter = itertools.count()


def _check_alt(alt: Any) -> str:
    """``alt`` with its spaces collapsed and a final full stop; TypeError/ValueError when it is no description."""
    if not isinstance(alt, str):
        raise TypeError(f"alt must be a string describing what the figure shows, got {type(alt).__name__}")
    alt = " ".join(alt.split())
    if len(alt.split()) < 4:
        raise ValueError(
            f"alt must be a sentence describing what the figure shows (the control values are appended), got {alt!r}"
        )
    if len(alt) > MAX_ALT:
        raise ValueError(
            f"alt must be at most MAX_ALT = {MAX_ALT} characters (a description, not a caption), got {len(alt)}"
        )
    return alt if alt[-1] in ".!?" else alt + "."


def explore(
    figure: Callable[..., Any],
    /,
    *,
    alt: str,
    when: Mapping[str, Mapping[str, Any]] | None = None,
    **arguments: Any,
) -> None:
    """Show ``figure(**values)`` under controls; see the module docstring for the three modes.

    Parameters
    ----------
    figure : Callable
        Returns a Matplotlib figure (not shown, not closed) for keyword values of its arguments,
        :data:`localization.plotting.COLUMN_WIDTH` wide (a figure of another width is refused:
        every explorer has one width).
    alt : str
        The alt text of the picture: a sentence (at least four words, at most :data:`MAX_ALT`
        characters) saying what the figure shows, e.g. "Weights of the learned field against
        position, one curve per checkpoint of training, lighter early and darker late." Each
        frame's alt text is this sentence followed by the values of the controls shown
        ("Settings: gain g = 3.").
    when : Mapping or None
        ``{control: {selector: allowed values}}``: show ``control`` only while each ``selector``
        holds one of its allowed values; otherwise it keeps its default.
    **arguments
        Keyword arguments of ``figure``: a :class:`Slider` or :class:`Choice` is a control; any
        other value is passed as it is.

    Returns
    -------
    None
        The explorer is displayed, never returned: a returned value would be shown a second time as
        the cell's value (the page's HTML printed as text under the explorer, or the widget twice).
    """
    from IPython.display import HTML, display

    if not callable(figure):
        raise TypeError(f"figure must be callable, got {figure!r}")
    alt = _check_alt(alt)
    controls = {n: c for n, c in arguments.items() if isinstance(c, Control)}
    fixed = {n: c for n, c in arguments.items() if not isinstance(c, Control)}
    if not controls:
        raise ValueError("explore needs at least one control (explorer.Slider or explorer.Choice)")
    for n, c in fixed.items():
        if type(c).__module__.startswith("ipywidgets"):
            raise TypeError(f"argument {n!r} is an ipywidgets object: use explorer.Slider or explorer.Choice")
    checked = check_when(when or {}, controls)
    mode = os.environ.get(STATIC_WIDGETS_ENV, "")
    name = getattr(figure, "__name__", "explorer")

    if mode == "frames":
        start, cpu = time.perf_counter(), time.process_time()
        frames, worker_cpu = _render(figure, controls, checked, fixed)
        ident = f"loc-explorer-{re.sub(r'[^A-Za-z0-9_-]', '', name)}-{next(_counter)}"
        page = explorer_page.static_html(ident, alt, controls, checked, frames)
        log = os.environ.get(FRAMES_LOG_ENV)
        if log:
            # CPU time too: on a shared machine the wall time measures the load as much as the work.
            record = {
                "name": name,
                "frames": len(frames),
                "seconds": time.perf_counter() - start,
                "cpu_seconds": time.process_time() - cpu + worker_cpu,
                "workers": rasterise.worker_count(),
                "bytes": len(page),
            }
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
        display(HTML(page))
        return None
    if mode not in ("", "0"):
        return None  # batch execution: no widget is created, so none is saved in the notebook

    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    live = {n: c.widget() for n, c in controls.items()}
    # A slider's row holds the slider and the range of its stops; a row is hidden as a whole.
    rows = {
        n: widgets.HBox([w, widgets.Label(controls[n].range_text)]) if controls[n].kind == "slider" else w
        for n, w in live.items()
    }
    out = widgets.Output()

    def redraw(_change=None):
        values = {n: w.value for n, w in live.items()}
        for n, row in rows.items():
            row.layout.display = None if applies(n, values, checked) else "none"
        with out:
            out.clear_output(wait=True)
            fig = figure(**fixed, **values)
            try:
                _check_width(fig, values)
                display(fig)
            finally:
                plt.close(fig)

    for w in live.values():
        w.observe(redraw, names="value")
    box = widgets.VBox([*rows.values(), out])
    display(box)
    redraw()
    return None


def summarize_log(path: str) -> str:
    """Return one line per explorer built (from the :data:`FRAMES_LOG_ENV` file) and their total.

    Parameters
    ----------
    path : str
        The log file.

    Returns
    -------
    str
        The summary.
    """
    try:
        with open(path, encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return "explorers: none built in this run (every chapter came from the execution cache)"
    lines = [
        f"  {r['name']:<24} {r['frames']:3d} frames {r['seconds']:6.1f} s (CPU {r.get('cpu_seconds', 0):6.1f} s) "
        f"{r['bytes'] / 1e6:5.2f} MB"
        for r in records
    ]
    total = sum(r["seconds"] for r in records)
    cpu = sum(r.get("cpu_seconds", 0) for r in records)
    frames = sum(r["frames"] for r in records)
    size = sum(r["bytes"] for r in records) / 1e6
    return "\n".join(
        [
            "explorers built in this run:",
            *lines,
            f"  total: {frames} frames in {total:.1f} s (CPU {cpu:.1f} s), {size:.2f} MB",
        ]
    )


if __name__ == "__main__":
    import sys

    print(summarize_log(sys.argv[1]))
