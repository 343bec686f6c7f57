"""No machine path in the API reference: a path constant shows its place in the repository.

A module constant that is a path reads ``<repository>/book/data/claims``, never its value on the
build machine.

Autodoc prints a module constant's value (``RECORD_DIR = PosixPath('/home/.../book/data/claims')``);
``autodoc_preserve_defaults`` covers only the defaults in signatures. The data and attribute
documenters are replaced by ones that write a path under the repository relative to it, and any
other path as ``<path>``. A value whose text runs past :data:`LONGEST_VALUE` characters (the figure
registry, a table of settings) is left out of the header: one unbreakable line of several thousand
characters is no use to a reader, and the constant's own description says what it holds.

A constant's description is prose (a ``#:`` comment), never napoleon's "type: text" form: napoleon
would cut a description at its first colon and show the head as the constant's type ("Type: The NLGP
gain of the task (excess kurtosis below 1e-3" above "the Gaussian task)."). The description as written
is kept (:func:`keep_prose`).
"""

from pathlib import Path, PurePath

from sphinx.ext.autodoc import AttributeDocumenter, DataDocumenter
from sphinx.util.inspect import object_description

REPOSITORY = Path(__file__).resolve().parents[1]
#: The longest value (in characters of its text) written after a constant's name.
LONGEST_VALUE = 80


def symbolic(path: PurePath) -> str:
    """Return how the reference shows a path: relative to the repository, never absolute."""
    try:
        return f"<repository>/{Path(path).resolve().relative_to(REPOSITORY).as_posix()}"
    except ValueError:
        return "<path>"


class _SymbolicPathValue:
    """Mix-in for a value documenter: a path is written by :func:`symbolic`, a long value not at all."""

    def should_suppress_value_header(self) -> bool:
        if isinstance(self.object, PurePath) or super().should_suppress_value_header():
            return True
        try:
            return len(object_description(self.object)) > LONGEST_VALUE
        except ValueError:
            return False

    def add_directive_header(self, sig: str) -> None:
        super().add_directive_header(sig)
        if isinstance(self.object, PurePath) and not self.options.get("no_value"):
            self.add_line(f"   :value: {symbolic(self.object)}", self.get_sourcename())


class PathDataDocumenter(_SymbolicPathValue, DataDocumenter):
    """Module constants, with paths written relative to the repository."""


class PathAttributeDocumenter(_SymbolicPathValue, AttributeDocumenter):
    """Class attributes, with paths written relative to the repository."""


#: The kinds of object whose docstring napoleon reads as "type: description".
_PROSE_KINDS = ("data", "attribute")


def _remember(app, what, name, obj, options, lines) -> None:
    """Before napoleon: keep a constant's description as written."""
    if what in _PROSE_KINDS:
        app.env.temp_data.setdefault("api_values_prose", {})[name] = list(lines)


def keep_prose(app, what, name, obj, options, lines) -> None:
    """After napoleon: where it read a constant's description as a type, put the description back."""
    written = app.env.temp_data.get("api_values_prose", {}).pop(name, None)
    if what in _PROSE_KINDS and written is not None and any(line.lstrip().startswith(":type:") for line in lines):
        lines[:] = written


def setup(app):
    """Register the extension with Sphinx: replace autodoc's data and attribute documenters."""
    app.setup_extension("sphinx.ext.autodoc")
    app.add_autodocumenter(PathDataDocumenter, override=True)
    app.add_autodocumenter(PathAttributeDocumenter, override=True)
    app.connect("autodoc-process-docstring", _remember, priority=400)  # napoleon's: 500
    app.connect("autodoc-process-docstring", keep_prose, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
