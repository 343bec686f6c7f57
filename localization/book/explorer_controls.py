"""The explorers' controls, which of them apply to which choice, and the frames a static explorer needs.

:class:`Slider` and :class:`Choice`; ``when`` rules (:func:`check_when`, :func:`applies`);
:func:`frame_grid`.

:mod:`localization.book.explorer` re-exports the controls; a chapter uses them from there.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Control", "Slider", "Choice", "check_when", "applies", "frame_grid"]


def _stops(name: str, stops: Sequence[Any]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """Labels and values of a list of stops given as values or (label, value) pairs."""
    if isinstance(stops, (str, bytes)) or not isinstance(stops, Sequence) or len(stops) == 0:
        raise ValueError(f"{name} must be a non-empty list of stops (values or (label, value) pairs), got {stops!r}")
    pairs = [
        s if isinstance(s, tuple) and len(s) == 2 else (f"{s:g}" if isinstance(s, float) else str(s), s) for s in stops
    ]
    labels, values = tuple(str(label) for label, _ in pairs), tuple(value for _, value in pairs)
    if len(set(labels)) != len(labels):
        raise ValueError(f"{name}: two stops have the same label: {list(labels)}")
    return labels, values


@dataclass(frozen=True, init=False)
class Control:
    """One control: its stops (labels shown, values passed), its default stop and its description.

    Use :class:`Slider` (an ordered list of stops) or :class:`Choice` (a row of buttons).

    Parameters
    ----------
    stops : Sequence
        The values the control passes, in order, or ``(label, value)`` pairs (a float's label is
        its ``:g`` form, e.g. "0.01").
    value : Any
        The default stop (one of the values).
    description : str
        What the control is, in words with its symbol where it has one: "gain g", "kurtosis
        parameter k", "length-scale ξ₀", "data family". Shown beside the control and in the alt
        text of each frame.
    """

    value: Any
    description: str
    labels: tuple[str, ...]
    values: tuple[Any, ...]
    kind: str = "slider"

    def __init__(self, stops: Sequence[Any], value: Any, description: str):
        labels, values = _stops(type(self).__name__ + " stops", stops)
        if value not in values:
            raise ValueError(f"value {value!r} is not one of the stops {list(values)}")
        if not isinstance(description, str):
            raise TypeError(f"description must be a string, got {type(description).__name__}")
        description = " ".join(description.split())
        if not description:
            raise ValueError('description must name the control in words with its symbol, e.g. "gain g"; got ""')
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "description", description)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "values", values)

    @property
    def default(self) -> int:
        """Index of the default stop."""
        return self.values.index(self.value)

    @property
    def range_text(self) -> str:
        """The range of a slider's stops as shown beside it ("0.01 – 100"); "" for a choice."""
        return f"{self.labels[0]} – {self.labels[-1]}" if self.kind == "slider" else ""

    def widget(self) -> Any:
        """Return the live ipywidgets control (only built in a live notebook)."""
        import ipywidgets as widgets

        options = list(zip(self.labels, self.values, strict=True))
        style = {"description_width": "initial"}  # the whole description, not cut to a few letters
        if self.kind == "slider":
            return widgets.SelectionSlider(options=options, value=self.value, description=self.description, style=style)
        return widgets.ToggleButtons(options=options, value=self.value, description=self.description, style=style)


class Slider(Control):
    """A slider over an ordered list of stops, e.g. ``Slider([0.1, 1, 3, 10], value=3, description="gain g")``.

    A stop may be a ``(label, value)`` pair. The slider shows the label of the stop it passes and,
    beside it, the range of its stops (:attr:`Control.range_text`).
    """

    kind = "slider"


class Choice(Control):
    """A choice among a few options (a row of buttons).

    For example ``Choice(["NLGP", "Kur"], value="NLGP", description="data family")``.
    """

    kind = "buttons"


def check_when(when: Mapping[str, Mapping[str, Any]], controls: Mapping[str, Control]) -> dict:
    """``when`` as {control: {selector: set of selector values}}, validated against the controls."""
    if not isinstance(when, Mapping):
        raise TypeError(f"when must be a mapping {{control: {{selector: values}}}}, got {type(when).__name__}")
    checked = {}
    for name, conditions in when.items():
        if name not in controls:
            raise ValueError(f"when names control {name!r}, which is not one of {sorted(controls)}")
        if not isinstance(conditions, Mapping) or not conditions:
            raise TypeError(f"when[{name!r}] must be a non-empty mapping {{selector: values}}, got {conditions!r}")
        checked[name] = {}
        for selector, allowed in conditions.items():
            if selector not in controls or selector == name:
                raise ValueError(f"when[{name!r}] names selector {selector!r}, which is not another control")
            allowed = (allowed,) if isinstance(allowed, str) else tuple(allowed)
            unknown = [a for a in allowed if a not in controls[selector].values]
            if unknown:
                raise ValueError(
                    f"when[{name!r}][{selector!r}]: {unknown} are not options of {selector!r} "
                    f"({list(controls[selector].values)})"
                )
            checked[name][selector] = allowed
    return checked


def applies(name: str, values: Mapping[str, Any], when: Mapping[str, Mapping[str, tuple]]) -> bool:
    """Return whether control ``name`` applies at these control values (``when`` as from :func:`check_when`)."""
    return all(values[selector] in allowed for selector, allowed in when.get(name, {}).items())


def frame_grid(controls: Mapping[str, Control], when: Mapping[str, Mapping[str, tuple]]) -> Iterator[tuple[int, ...]]:
    """Yield the stop indices (one per control, in order) of every frame the static site needs.

    A combination is kept when every control that does not apply to it sits at its default stop, so
    each choice contributes the product of its own controls' stops only.

    Parameters
    ----------
    controls : Mapping[str, Control]
        The controls, by argument name.
    when : Mapping
        As in :func:`explore`.

    Yields
    ------
    tuple[int, ...]
        One stop index per control.
    """
    names = list(controls)
    for stops in itertools.product(*(range(len(c.values)) for c in controls.values())):
        values = {n: controls[n].values[i] for n, i in zip(names, stops, strict=True)}
        if all(applies(n, values, when) or i == controls[n].default for n, i in zip(names, stops, strict=True)):
            yield stops
