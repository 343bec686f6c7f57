r"""The numbers behind each figure: ``python -m localization figures --out DIR --data``.

Beside each ``DIR/<name>.png``, :func:`write_data` writes

* what the builder computed, its ``Built.data`` (:func:`data_tables`): ``<name>.<part>.csv`` for
  curves, ``<name>.table.csv`` for scalar results, ``<name>.npz`` for fields and families of curves;
* what the figure draws, read back from its Matplotlib artists (:func:`plotted_tables`):
  ``<name>.plotted.csv`` (every line, marker, error bar, band and bar) and ``<name>.plotted.npz``
  (every image);

each with a header (the ``#`` lines of a CSV, the ``metadata`` JSON entry of an NPZ) naming the
figure, its chapter and builder, the scale, the book seed ``LOCALIZATION_SEED``, the package version
and commit, the settings, and what each column or array means. The reproducibility page shows how to
read them back.
"""

from __future__ import annotations

import inspect
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from localization import records
from localization.figures.registry import FIGURES, Built, check_scale, resolve_names

__all__ = ["UNITS", "data_tables", "plotted_tables", "write_data", "render"]


#: Units of common field names, appended to CSV column names as ``name [unit]``.
UNITS = {
    "times": "steps*lr",
    "time": "steps*lr",
    "t": "steps*lr",
    "steps": "steps",
    "step": "steps",
    "ipr": "1",
    "final_ipr": "1",
    "excess_kurtosis": "1",
}


class _Leaf(NamedTuple):
    """One value of a figure's data: its path, the value, and what it means."""

    path: tuple[str, ...]
    value: Any  # np.ndarray, a Python number, str or None
    meaning: str
    setting: bool  # inside a dataclass (a task, a model, a settings object): a setting, not a result


def _attribute_docs(cls: type) -> dict[str, str]:
    """Field name → text of the numpy-style ``Attributes`` section of ``cls`` (empty where none)."""
    doc = inspect.getdoc(cls) or ""
    section = re.split(r"\nAttributes\n-+\n", doc)
    if len(section) < 2:
        return {}
    text = re.split(r"\n\w[\w ]*\n-+\n", section[1])[0]
    fields = getattr(cls, "_fields", None) or list(getattr(cls, "__dataclass_fields__", {}))
    starts = sorted((m.start(), m.end(), m.group(1)) for m in re.finditer(r"\b(\w+) : ", text) if m.group(1) in fields)
    docs = {}
    for i, (_, end, field) in enumerate(starts):
        stop = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        docs[field] = " ".join(text[end:stop].split())
    return docs


def _slug(key: Any) -> str:
    """Return a dict key as a file- and column-safe name (letters, digits, ``_``, ``.``, ``-``, ``=``)."""
    text = "_".join(map(str, key)) if isinstance(key, tuple) else str(key)
    text = re.sub(r"\s*=\s*", "=", re.sub(r"[$\\{}]", "", text))
    text = re.sub(r"[^\w.=-]+", "_", text).strip("_")
    return text or "_"


def _flatten(value: Any, path: tuple[str, ...], meaning: str, setting: bool, name: str) -> list[_Leaf]:
    """Return the writable leaves of ``value`` (see :func:`data_tables`)."""
    import dataclasses

    import numpy as np

    where = "data" + "".join(f"[{p!r}]" for p in path)
    if value is None or isinstance(value, str):
        return [_Leaf(path, value, meaning, setting)]
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return [_Leaf(path, value.item() if isinstance(value, np.generic) else value, meaning, setting)]
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        docs = _attribute_docs(type(value))
        kind = type(value).__name__
        return [
            leaf
            for f in value._fields
            for leaf in _flatten(
                getattr(value, f), (*path, f), f"{kind}.{f}: {docs.get(f, '')}".rstrip(": "), setting, name
            )
        ]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        docs = _attribute_docs(type(value))
        kind = type(value).__name__
        leaves = [_Leaf((*path, "class"), kind, f"the {kind} object at {where}", True)]
        for f in dataclasses.fields(value):
            text = f"{kind}.{f.name}: {docs.get(f.name, '')}".rstrip(": ")
            leaves += _flatten(getattr(value, f.name), (*path, f.name), text, True, name)
        return leaves
    if isinstance(value, dict):
        slugs: list[str] = []
        for k in value:  # distinct keys stay distinct: a repeated slug gets its position appended
            slugs.append(_slug(k) if _slug(k) not in slugs else f"{_slug(k)}~{len(slugs)}")
        items = zip(slugs, value.values(), strict=True)
        return [leaf for s, v in items for leaf in _flatten(v, (*path, s), meaning, setting, name)]
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(x, (bool, int, float, np.bool_, np.integer, np.floating)) for x in value):
            return [_Leaf(path, np.asarray(value), meaning, setting)]
        if value and all(isinstance(x, str) for x in value):
            return [_Leaf(path, list(value), meaning, setting)]
        return [leaf for i, v in enumerate(value) for leaf in _flatten(v, (*path, str(i)), meaning, setting, name)]
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        import jax

        if jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
            value = jax.random.key_data(value)
            meaning = f"{meaning} (the raw uint32 data of a JAX PRNG key, jax.random.key_data)".strip()
        array = np.asarray(value)
        if array.dtype.kind in "biuf":
            return [_Leaf(path, array, meaning, setting)]
        if array.dtype.kind == "U":
            return [_Leaf(path, array.tolist(), meaning, setting)]
    raise TypeError(
        f"figure {name!r}: cannot write {where}, a {type(value).__module__}.{type(value).__qualname__}; the data "
        "writer takes numeric arrays (numpy or JAX), numbers, strings, None, and dicts, lists, tuples, named "
        "tuples and dataclasses of them"
    )


def _header(name: str, scale: str) -> dict[str, Any]:
    """Return the header of every data file of figure ``name``: figure, chapter, scale, seed, version, commit."""
    import localization
    from localization import book

    entry = FIGURES[name]
    return {
        "figure": name,
        "chapter": f"book/{entry.chapter}.md",
        "description": entry.description,
        "builder": f"{entry.build.__module__}.{entry.build.__name__}",
        "scale": scale,
        "seed": book.seed(),
        "seed_variable": "LOCALIZATION_SEED",
        "package": f"localization {localization.__version__}",
        "commit": records.commit(),
        "command": f"python -m localization figures --out DIR --only {name} --scale {scale} --data",
        "builder_constants": _constants(entry.build.__module__),
    }


def _constants(module_name: str) -> dict[str, Any]:
    """Return the settings constants of a builder's module (upper-case names), as JSON-ready values.

    The builder picks its settings from them by scale (its docstring says how); arrays of more than
    64 numbers are summarised by their shape, and a constant the writer cannot take is left out.
    """
    import numpy as np

    module = sys.modules.get(module_name)
    found: dict[str, Any] = {}
    for key, value in vars(module).items() if module else ():
        if not key.isupper() or key.startswith("_") or callable(value) and not hasattr(value, "__dataclass_fields__"):
            continue
        try:
            leaves = _flatten(value, (key,), "", True, module_name)
        except TypeError:
            continue
        for leaf in leaves:
            v = leaf.value
            if isinstance(v, np.ndarray):
                v = v.tolist() if v.size <= 64 else f"array of shape {list(v.shape)}"
            found[".".join(leaf.path)] = v
    return found


def _csv(header: dict, columns: list[str], meanings: list[str], rows: list[list[Any]], notes: list[str]) -> str:
    """Return CSV text: the column names, then ``#`` lines (header as JSON, each column's meaning, notes), then rows."""
    import json

    lines = [",".join(columns)]
    lines += [f"# {line}" for line in json.dumps(header, indent=1, ensure_ascii=False, default=str).splitlines()]
    lines += [f"# column {c}: {m}" for c, m in zip(columns, meanings, strict=True)]
    lines += [f"# {note}" for note in notes]
    lines += [
        ",".join(x if isinstance(x, str) else repr(x.item() if hasattr(x, "item") else x) for x in r) for r in rows
    ]
    return "\n".join(lines) + "\n"


def _column(leaf: _Leaf) -> str:
    unit = UNITS.get(leaf.path[-1]) if leaf.path else None
    return ".".join(leaf.path) + (f" [{unit}]" if unit else "")


def data_tables(name: str, data: Any, scale: str = "chapter") -> dict[str, tuple[str, Any]]:
    r"""Convert a figure's ``Built.data`` into the files ``figures --data`` writes (nothing written).

    ``data`` is walked through dicts (keys become names), lists and tuples, named tuples and
    dataclasses (their fields; the meaning of each comes from the class's numpy ``Attributes``
    section). Its leaves are sorted into

    * ``<name>.<top>.csv`` — the 1-D numeric arrays of each top-level field, one file per field and
      length (``<name>.<top>.len<L>.csv`` when the lengths differ): the curves, one column each;
    * ``<name>.table.csv`` — the numeric scalars of the results, columns ``quantity,value``;
    * ``<name>.npz`` — the arrays of two or more dimensions (fields, families of curves), one key
      per array (the path joined by ``.``), and a ``metadata`` entry (a JSON string);
    * the header of every file (``#`` lines of each CSV, the ``metadata`` of the NPZ): the figure,
      its chapter, the scale, the book seed ``LOCALIZATION_SEED``, the package version and commit,
      the settings (every value held by a dataclass: tasks, models, settings objects, and strings;
      and the upper-case constants of the builder's module, from which it picks by scale),
      and the meaning and shape of every column or array.

    PRNG keys are written as their raw ``uint32`` data (``jax.random.key_data``).

    Parameters
    ----------
    name : str
        A registered figure (the file stem).
    data : Any
        Its ``Built.data`` (``None``: nothing to write).
    scale : {"chapter", "paper"}
        The scale it was built at (written in the header).

    Returns
    -------
    dict of str to (str, Any)
        File name → ``("csv", text)`` or ``("npz", dict of arrays, with "metadata")``.

    Raises
    ------
    ValueError
        If ``name`` is not registered or ``scale`` is not a scale.
    TypeError
        Naming the place in ``data`` of a value the writer cannot write (an object that is none of
        the types above).
    """
    import json

    import numpy as np

    if name not in FIGURES:
        raise ValueError(f"name must be a registered figure, got {name!r}; valid names: {', '.join(FIGURES)}")
    scale = check_scale(scale)
    leaves = [] if data is None else _flatten(data, (), "", False, name)
    settings = {}
    curves: dict[tuple[str, int], list[_Leaf]] = {}
    scalars, fields = [], []
    for leaf in leaves:
        v = leaf.value
        is_array = isinstance(v, np.ndarray)
        if v is None or isinstance(v, (str, list)) or (leaf.setting and (not is_array or v.ndim <= 1 and v.size <= 64)):
            settings[".".join(leaf.path)] = v.tolist() if is_array else v
        elif not is_array or v.ndim == 0:
            scalars.append(leaf._replace(value=v.item() if is_array else v))
        elif v.ndim == 1:
            curves.setdefault((leaf.path[0] if len(leaf.path) > 1 else "", len(v)), []).append(leaf)
        else:
            fields.append(leaf)
    header = {**_header(name, scale), "settings": settings}
    files: dict[str, tuple[str, Any]] = {}

    def csv(stem: str, columns: list[str], meanings: list[str], rows: list[list[Any]], what: str) -> None:
        files[f"{stem}.csv"] = ("csv", _csv({**header, "file": what}, columns, meanings, rows, []))

    for (top, length), group in curves.items():
        several = sum(t == top for t, _ in curves) > 1
        if len(group) == 1 and several:
            stem = f"{name}." + ".".join(group[0].path)
        else:
            stem = f"{name}.{top or 'curves'}" + (f".len{length}" if several else "")
        columns = [_column(leaf) for leaf in group]
        rows = [[leaf.value[i] for leaf in group] for i in range(length)]
        meanings = [f"{leaf.meaning} [{leaf.value.dtype}, length {length}]".strip() for leaf in group]
        csv(stem, columns, meanings, rows, f"curves: {len(group)} columns of length {length}, one per array")
    if scalars:
        rows = [[".".join(leaf.path), float(leaf.value)] for leaf in scalars]
        meanings = ["the quantity (path in Built.data)", "its value (booleans as 0/1)"]
        text = "; ".join(f"{'.'.join(leaf.path)}: {leaf.meaning}" for leaf in scalars if leaf.meaning)
        csv(f"{name}.table", ["quantity", "value"], meanings, rows, f"table of scalar results. {text}".strip())
    if fields:
        arrays = {".".join(leaf.path): leaf.value for leaf in fields}
        described = {
            ".".join(leaf.path): {
                "shape": list(leaf.value.shape),
                "dtype": str(leaf.value.dtype),
                "meaning": leaf.meaning,
            }
            for leaf in fields
        }
        metadata = json.dumps({**header, "file": "arrays of two or more dimensions", "arrays": described}, default=str)
        files[f"{name}.npz"] = ("npz", {**arrays, "metadata": np.asarray(metadata)})
    return files


def plotted_tables(name: str, figure: Any, scale: str = "chapter") -> dict[str, tuple[str, Any]]:
    """Read the numbers drawn on a figure's axes: every line, marker set, error bar and image.

    The complement of :func:`data_tables` (what the builder computed): this is what the figure
    shows, read back from its Matplotlib artists, so every figure has it. Files:

    * ``<name>.plotted.csv`` — columns ``panel,artist,segment,x,y`` (long format, numbers only):
      the points of every line (``Line2D``), scatter (``PathCollection``), error bar or other line
      segments (``LineCollection``; ``segment`` numbers the segments), filled band
      (``PolyCollection``, its outline) and histogram bar (centre, top) of every panel, in the
      data coordinates of that panel; the ``#`` header names each panel (title, axis labels
      with their units, scales) and each artist (kind, legend label, coordinates);
    * ``<name>.plotted.npz`` — every image (``AxesImage``) and mesh (``QuadMesh``), key
      ``panel<P>.image<K>``, with its extent in the ``metadata`` entry.

    Parameters
    ----------
    name : str
        The figure's name (file stem).
    figure : matplotlib.figure.Figure
        The drawn figure.
    scale : {"chapter", "paper"}
        The scale it was built at (written in the header).

    Returns
    -------
    dict of str to (str, Any)
        File name → ``("csv", text)`` or ``("npz", dict of arrays, with "metadata")``.
    """
    import json

    import numpy as np
    from matplotlib.collections import LineCollection, PathCollection, PolyCollection, QuadMesh

    rows: list[list[float]] = []
    described: list[str] = []
    images: dict[str, np.ndarray] = {}
    image_notes: dict[str, Any] = {}
    for p, ax in enumerate(figure.get_axes()):
        described.append(
            f"panel {p}: title {ax.get_title()!r}, x {ax.get_xlabel()!r} ({ax.get_xscale()}), "
            f"y {ax.get_ylabel()!r} ({ax.get_yscale()})"
        )
        artists = list(ax.get_lines()) + [c for c in ax.collections]
        for a, artist in enumerate(artists):
            label = artist.get_label() or ""
            label = "" if label.startswith("_") else label
            coords = "data" if artist.get_transform() == ax.transData else "not data (axes or blended coordinates)"
            segments: list[np.ndarray] = []
            if hasattr(artist, "get_xydata") and not isinstance(artist, (LineCollection, PolyCollection)):
                try:
                    segments = [np.asarray(artist.get_xydata(), dtype=float)]
                except (TypeError, ValueError):
                    segments = []
                kind = "line"
            elif isinstance(artist, PathCollection):
                segments = [np.asarray(artist.get_offsets(), dtype=float)]
                coords = "data" if artist.get_offset_transform() == ax.transData else coords
                kind = "scatter"
            elif isinstance(artist, (LineCollection, PolyCollection)) and not isinstance(artist, QuadMesh):
                segments = [np.asarray(path.vertices, dtype=float) for path in artist.get_paths()]
                kind = "segments" if isinstance(artist, LineCollection) else "band outline"
            elif isinstance(artist, QuadMesh):
                images[f"panel{p}.image{a}"] = np.asarray(artist.get_array())
                image_notes[f"panel{p}.image{a}"] = {"kind": "mesh", "label": label, "panel": described[-1]}
                continue
            else:
                continue
            count = 0
            for s, xy in enumerate(segments):
                xy = xy.reshape(-1, 2)
                rows += [[p, a, s, x, y] for x, y in xy]
                count += len(xy)
            described.append(f"  artist {p}.{a}: {kind} {label!r}, {count} points, coordinates {coords}")
        bars = [patch for patch in ax.patches if type(patch).__name__ == "Rectangle"]
        if bars:
            a = len(artists)
            rows += [[p, a, 0, bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height()] for bar in bars]
            described.append(f"  artist {p}.{a}: bars (x = centre, y = top), {len(bars)} bars, coordinates data")
        for k, image in enumerate(ax.get_images()):
            key = f"panel{p}.image{k}"
            images[key] = np.asarray(image.get_array())
            image_notes[key] = {"kind": "image", "extent": list(map(float, image.get_extent())), "panel": described[-1]}
    files: dict[str, tuple[str, Any]] = {}
    header = _header(name, scale)
    if rows:
        columns = ["panel", "artist", "segment", "x", "y"]
        meanings = [
            "panel index (below)",
            "artist index within its panel (below)",
            "segment of the artist (0 for a line or scatter)",
            "x in the panel's data coordinates (the panel's x label gives the quantity and unit)",
            "y in the panel's data coordinates (the panel's y label gives the quantity and unit)",
        ]
        what = "the points drawn on the figure, read back from its artists (panels and artists below)"
        files[f"{name}.plotted.csv"] = ("csv", _csv({**header, "file": what}, columns, meanings, rows, described))
    if images:
        metadata = json.dumps({**header, "file": "the images drawn on the figure", "arrays": image_notes})
        files[f"{name}.plotted.npz"] = ("npz", {**images, "metadata": np.asarray(metadata)})
    return files


def write_data(name: str, built: Built, out: str | Path, scale: str = "chapter") -> list[Path]:
    """Write the numbers of a built figure beside its PNG: its data and what it draws.

    The files of :func:`data_tables` (``Built.data``: ``<name>.<part>.csv``, ``<name>.table.csv``,
    ``<name>.npz``) and of :func:`plotted_tables` (the artists: ``<name>.plotted.csv``,
    ``<name>.plotted.npz``), each with the header naming figure, chapter, scale, seed and commit.

    Parameters
    ----------
    name : str
        A registered figure.
    built : Built
        What its builder returned.
    out : str or Path
        The directory (created).
    scale : {"chapter", "paper"}
        The scale it was built at.

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    ValueError
        As :func:`data_tables`.
    TypeError
        If ``built`` is not a :class:`Built`, or as :func:`data_tables`.
    """
    import numpy as np

    if not isinstance(built, Built):
        raise TypeError(f"built must be a Built (figure, data), got {type(built).__name__}")
    files = {**data_tables(name, built.data, scale), **plotted_tables(name, built.figure, scale)}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for file, (kind, content) in files.items():
        path = out / file
        if kind == "csv":
            path.write_text(content, encoding="utf-8")
        else:
            np.savez_compressed(path, **content)
        written.append(path)
    return written


def render(
    names: Sequence[str] | None,
    out: str | Path,
    scale: str = "chapter",
    *,
    progress: bool = True,
    data: bool = False,
) -> dict[str, tuple[Path, float]]:
    """Compute and write figures as ``<out>/<name>.png`` in the book's style, and their numbers if asked.

    The style is :data:`localization.plotting.BOOK_STYLE`; a progress bar (tqdm, on stderr) unless
    ``progress`` is false; one line per figure written (path, seconds, scale, data files) on stdout.
    With ``data``, each figure's numbers are written beside its PNG
    (:func:`localization.figures.export.write_data`).

    Parameters
    ----------
    names : sequence of str or None
        The figures (see :func:`resolve_names`); ``None`` for all.
    out : str or Path
        The directory (created).
    scale : {"chapter", "paper"}
        The settings the builders use.
    progress : bool
        Show the progress bar.
    data : bool
        Also write the numbers each figure plots beside its PNG (CSV and NPZ files,
        :func:`localization.figures.export.write_data`).

    Returns
    -------
    dict of str to (Path, float)
        Name → (PNG written, seconds taken, including the data files).

    Raises
    ------
    TypeError
        If a builder returns something other than a :class:`Built`.
    """
    import matplotlib as mpl
    from tqdm import tqdm

    from localization import plotting

    names = resolve_names(names)
    scale = check_scale(scale)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    with mpl.rc_context(plotting.BOOK_STYLE), tqdm(names, unit="figure", disable=not progress) as bar:
        for name in bar:
            bar.set_postfix_str(name)
            start = time.perf_counter()
            built = FIGURES[name].build(scale)
            if not isinstance(built, Built):
                raise TypeError(f"the builder of figure {name!r} must return a Built, got {type(built).__name__}")
            path = out / f"{name}.png"
            built.figure.savefig(path)
            extra = write_data(name, built, out, scale) if data else []
            written[name] = (path, time.perf_counter() - start)
            files = f", data: {', '.join(p.name for p in extra) or 'none'}" if data else ""
            bar.write(f"{path} ({written[name][1]:.1f} s, scale {scale}{files})", file=sys.stdout)
    return written
