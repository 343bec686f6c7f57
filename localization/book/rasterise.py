"""Matplotlib figures as small PNGs, drawn beside the caller in a worker process.

The explorers' frames (``localization.book.explorer``) are made by a chapter's kernel and drawn here.
Drawing a figure (layout, ticks, text, antialiasing) costs more than making it, so a
:class:`FrameDrawer` pickles each figure and hands it to a worker process, and the kernel goes on
to make the next one: on two cores making and drawing overlap. The worker draws under the caller's
rcParams (tick labels are made at draw time), so its bytes are those of drawing in the caller.
"""

from __future__ import annotations

import atexit
import io
import os
import pickle
import time
import warnings
from typing import Any

__all__ = ["WORKERS_ENV", "png", "worker_count", "FrameDrawer"]

#: Environment variable: how many processes draw frames beside the caller (default 1 on a machine
#: with at least 2 CPUs, else 0; "0" draws in the caller).
WORKERS_ENV = "LOCALIZATION_EXPLORER_WORKERS"


def _check_drawing(dpi: float | None, colors: int) -> None:
    """ValueError unless ``dpi`` is None or positive and ``colors`` an integer from 2 to 256."""
    if not isinstance(colors, int) or not 2 <= colors <= 256:
        raise ValueError(f"colors must be an integer from 2 to 256, got {colors!r}")
    if dpi is not None and not dpi > 0:
        raise ValueError(f"dpi must be positive, got {dpi!r}")


def png(fig: Any, dpi: float | None = None, colors: int = 256) -> bytes:
    """Return the figure as a PNG at its own size and dpi (or ``dpi``), in a palette (3–4x smaller than RGB).

    The palette is chosen by maximum coverage (no colour far from its own). One draw of the canvas
    (``savefig`` with the book's tight bounding box would lay the figure out twice); the figures use
    constrained layout, so nothing is cut.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (not closed).
    dpi : float or None
        Draw at this resolution (the figure keeps its size in inches, so text and lines keep their
        size relative to it); None: the figure's own dpi. A pickled figure forgets a dpi set on it,
        so a worker is told the dpi here.
    colors : int
        Colours of the palette (2–256).

    Returns
    -------
    bytes
        The PNG file.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    _check_drawing(dpi, colors)
    if dpi is not None:
        fig.set_dpi(dpi)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba()).convert("RGB")
    out = io.BytesIO()
    # Maximum coverage keeps every colour near its own (a small red marker stays red; median cut
    # gave it to a neighbouring purple at 64 and 128 colours, and turned the blue end of a colour
    # bar teal). zlib at its default level: the densest setting (optimize) saved about 5 % of the bytes
    # for six times the encoding time (60 ms against 10 ms for a frame of 1305 x 499 px).
    palette = image.quantize(colors=colors, method=Image.Quantize.MAXCOVERAGE, dither=Image.Dither.NONE)
    palette.save(out, format="png")
    return out.getvalue()


def worker_count() -> int:
    """Return the number of drawing processes (:data:`WORKERS_ENV`); raise ValueError for a bad value."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return 1 if (os.cpu_count() or 1) >= 2 else 0
    if not raw.isdigit():
        raise ValueError(f"{WORKERS_ENV} must be a non-negative integer, got {raw!r}")
    return int(raw)


_pools: dict[int, Any] = {}


def _pool(workers: int) -> Any:
    """Return the pool of ``workers`` drawing processes of this process (spawned once, shut down at exit)."""
    if workers not in _pools:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        _pools[workers] = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"), initializer=_ignore_interrupts
        )
        atexit.register(_pools[workers].shutdown)
    return _pools[workers]


def _ignore_interrupts() -> None:
    """Ignore SIGINT in a worker.

    A Jupyter kernel is stopped with an interrupt to its process group;
    the worker would print a KeyboardInterrupt traceback into the build log. It ends with its pool.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _draw_pickled(figure_pickle: bytes, rc: dict, dpi: float | None = None, colors: int = 256) -> tuple[bytes, float]:
    """In a worker: the pickled figure as :func:`png` bytes (``dpi``, ``colors``) under ``rc``; (PNG, CPU seconds)."""
    import matplotlib

    matplotlib.use("Agg")
    cpu = time.process_time()
    with matplotlib.rc_context(rc):
        picture = png(pickle.loads(figure_pickle), dpi, colors)
    return picture, time.process_time() - cpu


class FrameDrawer:
    """Collects figures (:meth:`add`) and returns their PNGs in order (:meth:`finish`).

    With workers (:func:`worker_count`), :meth:`add` pickles the figure and submits it; if the
    workers cannot start or fail (e.g. a script without a ``__main__`` guard), every figure not yet
    drawn is drawn in this process instead, with one warning. The caller may close a figure once it
    has been added.

    Parameters
    ----------
    dpi : float or None
        As in :func:`png`: every figure is drawn at this resolution (None: its own).
    colors : int
        As in :func:`png`.
    """

    def __init__(self, dpi: float | None = None, colors: int = 256) -> None:
        import matplotlib

        _check_drawing(dpi, colors)
        self.dpi, self.colors = dpi, colors
        self.workers = worker_count()
        self._rc = {k: v for k, v in matplotlib.rcParams.items() if k != "backend"}
        self._pending: list[tuple[bytes, Any]] = []
        self._failed = False
        self.worker_cpu_seconds = 0.0

    def _fall_back(self, error: Exception) -> None:
        if not self._failed:
            warnings.warn(f"explorer frames drawn in the kernel: the drawing worker failed ({error!r})", stacklevel=3)
        self._failed = True

    def add(self, fig: Any) -> None:
        """Queue ``fig`` for drawing (in a worker process when there are workers, else at :meth:`finish`)."""
        data, job = pickle.dumps(fig), None
        if self.workers and not self._failed:
            try:
                job = _pool(self.workers).submit(_draw_pickled, data, self._rc, self.dpi, self.colors)
            except Exception as error:
                self._fall_back(error)
        self._pending.append((data, job))

    def finish(self) -> list[bytes]:
        """Return the PNG of every added figure, in the order added."""
        pictures = []
        for data, job in self._pending:
            picture = None
            if job is not None and not self._failed:
                try:
                    picture, cpu = job.result()
                    self.worker_cpu_seconds += cpu
                except Exception as error:
                    self._fall_back(error)
            pictures.append(png(pickle.loads(data), self.dpi, self.colors) if picture is None else picture)
        self._pending = []
        return pictures
