"""The library's layout rules, checked on the source: no module uses another module's private names,
dependencies point downward (theory never imports simulation or the chapter back-ends), and no
module grows past the size one reader can hold (~500 lines)."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
LIBRARY = sorted((ROOT / "localization").rglob("*.py"))
MAX_LINES = 500


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.AST, module: str):
    """(imported module, imported name or None, alias) for every localization import of the module."""
    package = module if module.count(".") == 0 else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("localization"):
                    yield a.name, None, a.asname or a.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.startswith("localization"):
                for a in node.names:
                    yield base, a.name, a.asname or a.name


def test_every_library_module_is_found():
    assert len(LIBRARY) >= 20 and any(p.name == "base.py" for p in LIBRARY)


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_names_from_other_modules(path):
    module = _module_name(path)
    tree = ast.parse(path.read_text())
    module_aliases = {}
    bad = []
    for base, name, alias in _imports(tree, module):
        target = f"{base}.{name}" if name else base
        if any(part.startswith("_") and not part.startswith("__") for part in target.split(".")[1:]):
            if not (name and name.startswith("__")):
                bad.append(f"imports {target}")
        module_aliases[alias] = target
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in module_aliases
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            bad.append(f"uses {module_aliases[node.value.id]}.{node.attr} (line {node.lineno})")
    assert not bad, f"{module}: " + "; ".join(bad)


@pytest.mark.parametrize("path", sorted((ROOT / "localization" / "theory").rglob("*.py")), ids=lambda p: p.name)
def test_theory_depends_only_downward(path):
    module = _module_name(path)
    tree = ast.parse(path.read_text())
    upward = ("localization.experiments", "localization.train", "localization.plotting")
    targets = [f"{b}.{n}" if n else b for b, n, _ in _imports(tree, module)]
    bad = [t for t in targets if t.startswith(upward)]
    assert not bad, f"{module} imports {bad}: theory holds analytical objects only"


@pytest.mark.parametrize("path", sorted((ROOT / "localization" / "data").rglob("*.py")), ids=lambda p: p.name)
def test_data_knows_no_networks(path):
    module = _module_name(path)
    tree = ast.parse(path.read_text())
    allowed = ("localization.data", "localization.validation", "localization.prng", "localization.pytree")
    targets = [f"{b}.{n}" if n else b for b, n, _ in _imports(tree, module)]
    bad = [t for t in targets if not t.startswith(allowed)]
    assert not bad, f"{module} imports {bad}: the data package knows distributions only"


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_length(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines (> {MAX_LINES}): split it by concept"
