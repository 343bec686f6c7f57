"""Claims changed after a run under seeds meant to be held out (``book/data/claim_revisions.yaml``)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["REVISIONS", "read_revisions"]

#: Every claim whose bound, statistic or sentence changed after a held-out run: what failed, what changed.
REVISIONS = Path(__file__).resolve().parents[2] / "book" / "data" / "claim_revisions.yaml"
_REVISION_FIELDS = ("claim", "chapter", "seen", "failed", "changed")


def read_revisions(path: str | os.PathLike | None = None) -> list[dict]:
    """Return the claims changed after a held-out run (:data:`REVISIONS`), validated.

    Each entry names the claim and its chapter, the held-out seeds whose run was ``seen`` before the
    change, what ``failed`` (or was flagged) and what ``changed``; the failure is the finding and stays
    listed.

    Parameters
    ----------
    path : str or os.PathLike or None
        The YAML file (default :data:`REVISIONS`).

    Returns
    -------
    list of dict
        The entries, in the file's order.

    Raises
    ------
    ValueError
        A malformed file or entry (naming the entry and the field).
    """
    import yaml

    path = Path(REVISIONS if path is None else path)
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {"revisions": []}
    entries = data.get("revisions") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"{path} must hold a mapping with a list 'revisions', got {type(data).__name__}")
    for k, entry in enumerate(entries):
        missing = [f for f in _REVISION_FIELDS if not (isinstance(entry, dict) and entry.get(f) not in (None, ""))]
        if missing:
            raise ValueError(f"{path}: revision {k} lacks {', '.join(missing)}")
    return entries
