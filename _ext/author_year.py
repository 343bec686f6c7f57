"""The bibliography in the style the text cites in: author–year labels, sorted by author then year.

The chapters cite with ``{cite:p}`` and ``{cite:t}`` under ``bibtex_reference_style: author_year``
("Lufkin et al., 2024"), so the list on the bibliography page carries the same labels instead of
numbers. This module registers, through pybtex's plugin registry (``pybtex.plugin.register_plugin``,
the route sphinxcontrib-bibtex documents for custom styles):

* the label style ``author_year``: "Lufkin et al., 2024", "Ingrosso and Goldt, 2022", "Baxter,
  1982" (one, two, or three and more authors), with a, b, ... appended when two entries would
  share a label;
* the formatting style ``author_year``: pybtex's ``unsrt`` entries (which end with the entry's DOI,
  URL or arXiv identifier as a link), names written "Last, First", sorted by the authors' last
  names, then year, then title.

``_config.yml`` selects it with ``bibtex_default_style: author_year``.
"""

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle


def _last_name(person) -> str:
    """Return a person's last name as plain text, LaTeX accents resolved (Hyvärinen)."""
    return " ".join(part.render_as("text") for part in person.rich_prelast_names + person.rich_last_names)


def _authors(entry) -> str:
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [_last_name(p) for p in persons]
    if not names:
        return entry.fields.get("title", entry.key)
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


class AuthorYearLabelStyle(BaseLabelStyle):
    """Labels "Author, year", "A and B, year", "A et al., year"; clashes get a, b, ... after the year."""

    def format_labels(self, sorted_entries):
        """Yield one label per entry, in the order given."""
        entries = list(sorted_entries)
        plain = [f"{_authors(e)}, {e.fields.get('year', 'n.d.')}" for e in entries]
        labels = list(plain)
        for label in set(plain):
            clashes = [i for i, other in enumerate(plain) if other == label]
            if len(clashes) > 1:
                for suffix, i in zip("abcdefghijklmnopqrstuvwxyz", clashes, strict=False):
                    labels[i] = f"{label}{suffix}"
        yield from labels


class AuthorYearStyle(UnsrtStyle):
    """pybtex's ``unsrt`` entries with author–year labels, "Last, First" names, author–year order."""

    default_label_style = "author_year"
    default_name_style = "lastfirst"
    default_sorting_style = "author_year_title"


def setup(app):
    """Register the label and formatting styles with pybtex (Sphinx loads this as a local extension)."""
    register_plugin("pybtex.style.labels", "author_year", AuthorYearLabelStyle, force=True)
    register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle, force=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
