"""The library's layout rules, checked on the source.

* Where things live: ``data/`` distributions; ``theory/`` closed forms and flows only (no sampling, no
  fitting, no measuring of runs); ``experiments/`` the chapters' back-ends; ``figures/`` drawing; the
  root holds the core (networks, training, analysis of fields and runs, plumbing) and the book's
  infrastructure (:data:`BOOK_INFRA`).
* Dependencies point downward (:data:`ALLOWED`) and no module-level import forms a cycle.
* Every package exports every module it holds, and no class or function it exports shadows a module.
* Keys come first and positional, as in ``jax.random``.
* No module uses another module's private names, and no module grows past the size one reader can hold
  (~500 lines).
"""

import ast
import importlib
import inspect
import pathlib
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "localization"
LIBRARY = sorted(PACKAGE.rglob("*.py"))
#: A backstop, not a target (issue 34: modules are split by concept, never to meet a cap): a module
#: this long almost surely holds two concepts.
MAX_LINES = 1000
SUBPACKAGES = tuple(sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()))
#: The book's infrastructure: imported only by ``figures``, the command line and each other.
BOOK_INFRA = ("book", "plotting")
#: The plumbing every layer may use.
BASE = ("validation", "pytree", "prng")


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    rel = pathlib.Path(*name.split("."))
    return (ROOT / rel).with_suffix(".py").is_file() or (ROOT / rel / "__init__.py").is_file()


def _imports(tree: ast.AST, module: str, top_level_only: bool = False):
    """(imported module, imported name or None, alias) for every localization import of the module.

    With ``top_level_only``, imports inside functions and ``if TYPE_CHECKING:`` blocks are skipped.
    """
    package = module if module.count(".") == 0 else module.rsplit(".", 1)[0]
    if module in ("localization",) or (ROOT / pathlib.Path(*module.split(".")) / "__init__.py").is_file():
        package = module
    if top_level_only:
        nodes = []
        for node in tree.body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
                continue
            nodes.extend(ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [])
    else:
        nodes = ast.walk(tree)
    for node in nodes:
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


def _targets(path: pathlib.Path, top_level_only: bool = False) -> list[str]:
    """The localization modules (or packages) a module imports, each resolved to a module name."""
    module = _module_name(path)
    out = []
    for base, name, _ in _imports(ast.parse(path.read_text()), module, top_level_only):
        full = f"{base}.{name}" if name else base
        out.append(full if _is_module(full) else base)
    return out


def _layer(module: str) -> str:
    """The unit a dependency rule speaks of: a subpackage, a root module, or the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "localization"


def test_every_library_module_is_found():
    assert len(LIBRARY) >= 20 and any(p.name == "base.py" for p in LIBRARY)
    assert {"data", "theory", "experiments", "figures"} <= set(SUBPACKAGES)


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


# -------------------------------------------------------------------------------------------------
# dependencies point downward; no cycles
# -------------------------------------------------------------------------------------------------
#: What each layer may import besides itself and :data:`BASE` (root modules not listed here are core;
#: core may import core, ``data`` and ``BASE``).
ALLOWED = {
    "data": (),
    "theory": ("data", "trajectory"),
    "experiments": ("data", "theory", "core"),
    "figures": ("data", "theory", "core", "experiments", "book_infra"),
    "book_infra": ("data", "theory", "core", "book_infra"),
    "core": ("data", "core"),
}


def _role(layer: str) -> str:
    if layer in ("data", "theory", "experiments", "figures"):
        return layer
    if layer in BOOK_INFRA:
        return "book_infra"
    if layer in BASE or layer == "localization":  # the root package itself: version and float64 switch
        return "base"
    if layer == "__main__":
        return layer
    return "core"


def _allowed(src_layer: str, dst_layer: str) -> bool:
    src, dst = _role(src_layer), _role(dst_layer)
    if dst == "base" or src_layer == dst_layer or src == "__main__":
        return True
    if src == "base":
        return dst == "base"
    allowed = ALLOWED[src]
    if dst in allowed or dst_layer in allowed:
        return True
    return False


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_dependencies_point_downward(path):
    """data < core < theory < experiments < figures; the book's infrastructure sits beside figures.

    ``theory`` may use ``data``, ``trajectory`` and the plumbing only (no networks, training,
    measurements, back-ends or drawing); ``experiments`` may not import ``figures``, ``plotting`` or
    the book's infrastructure; only ``figures``, the command line and the book's infrastructure itself
    import the book's infrastructure (``book``, ``claims``, ``explorer``, ``plotting``, ...).
    """
    src = _layer(_module_name(path))
    bad = [t for t in _targets(path) if not _allowed(src, _layer(t))]
    assert not bad, f"{_module_name(path)} ({_role(src)}) imports {bad}: dependencies must point downward"


def test_no_import_cycles():
    """The graph of module-level imports between modules (packages' ``__init__`` excluded) is acyclic."""
    graph = {}
    for path in LIBRARY:
        if path.name == "__init__.py":
            continue
        graph[_module_name(path)] = {t for t in _targets(path, top_level_only=True) if t != _module_name(path)}
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(nxt) :] + [nxt]))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)


@pytest.mark.parametrize("path", sorted((PACKAGE / "data").rglob("*.py")), ids=lambda p: p.name)
def test_data_knows_no_networks(path):
    allowed = ("localization.data", "localization.validation", "localization.prng", "localization.pytree")
    bad = [t for t in _targets(path) if not t.startswith(allowed)]
    assert not bad, f"{_module_name(path)} imports {bad}: the data package knows distributions only"


# -------------------------------------------------------------------------------------------------
# theory: closed forms and flows only
# -------------------------------------------------------------------------------------------------
#: scipy.optimize's fitters (root finders such as brentq evaluate a closed form and are allowed).
FITTERS = {
    "least_squares",
    "curve_fit",
    "leastsq",
    "lsq_linear",
    "nnls",
    "minimize",
    "minimize_scalar",
    "differential_evolution",
    "basinhopping",
    "dual_annealing",
    "shgo",
}
#: Methods that draw from a data model or a task.
DRAWS = {"sample", "sample_balanced", "sample_pairs"}


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _theory_violations(source: str) -> list[str]:
    """What makes a theory module sample, fit or measure (the rule of ``localization.theory``).

    * any use of ``jax.random`` or ``numpy.random`` (imports included): theory draws nothing, so it
      needs no key;
    * a call of a ``sample`` method (drawing from a data model or task);
    * scipy.optimize's fitters (:data:`FITTERS`) and scikit-learn.
    """
    tree = ast.parse(source)
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names]
            mod = (node.module or "") if isinstance(node, ast.ImportFrom) else ""
            full = [mod + "." + n if mod else n for n in names]
            for f in full:
                if f.startswith(("jax.random", "numpy.random", "sklearn")):
                    bad.append(f"imports {f} (line {node.lineno})")
                if f.startswith("scipy.optimize.") and f.rsplit(".", 1)[1] in FITTERS:
                    bad.append(f"imports the fitter {f} (line {node.lineno})")
        elif isinstance(node, ast.Attribute):
            d = _dotted(node)
            if d.startswith(("jax.random.", "np.random.", "numpy.random.")) and d.count(".") == 2:
                bad.append(f"uses {d} (line {node.lineno})")
            if d.count(".") >= 1 and d.rsplit(".", 1)[1] in FITTERS and ("optimize" in d.split(".")[:-1]):
                bad.append(f"uses the fitter {d} (line {node.lineno})")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DRAWS:
            bad.append(f"draws with .{node.func.attr}(...) (line {node.lineno})")
    return bad


@pytest.mark.parametrize("path", sorted((PACKAGE / "theory").rglob("*.py")), ids=lambda p: p.name)
def test_theory_holds_closed_forms_and_flows_only(path):
    bad = _theory_violations(path.read_text())
    assert not bad, f"{_module_name(path)}: " + "; ".join(bad) + " (sampling, fitting, measuring: experiments/)"


@pytest.mark.parametrize(
    "source, found",
    [
        ("import jax\nz = jax.random.normal(key, (3,))", "jax.random.normal"),
        ("from jax import random\n", "jax.random"),
        ("import numpy as np\nx = np.random.default_rng(0)", "np.random.default_rng"),
        ("x = model.sample(key, 10, 8)", ".sample("),
        ("import scipy.optimize\nr = scipy.optimize.least_squares(f, x0)", "least_squares"),
        ("from scipy.optimize import curve_fit", "curve_fit"),
        ("from sklearn.decomposition import FastICA", "sklearn"),
    ],
)
def test_the_theory_rule_catches_each_kind(source, found):
    assert any(found in b for b in _theory_violations(source))
    assert not _theory_violations("from scipy.optimize import brentq\nimport jax.numpy as jnp\nx = jnp.ones(3)")


# -------------------------------------------------------------------------------------------------
# packages export every module; nothing exported shadows a module
# -------------------------------------------------------------------------------------------------
def _modules_of(package_dir: pathlib.Path) -> set[str]:
    mods = {p.stem for p in package_dir.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return mods | {p.name for p in package_dir.iterdir() if (p / "__init__.py").is_file()}


PACKAGES = ["localization"] + [f"localization.{name}" for name in SUBPACKAGES]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_exports_every_module(package):
    pkg = importlib.import_module(package)
    mods = _modules_of(ROOT / pathlib.Path(*package.split(".")))
    missing = sorted(mods - set(pkg.__all__))
    assert not missing, f"{package}.__all__ misses the modules {missing}"
    for name in mods:
        obj = getattr(pkg, name)
        assert isinstance(obj, types.ModuleType) and obj.__name__ == f"{package}.{name}", (
            f"{package}.{name} is {obj!r}, not the module {package}.{name}: a name shadows it"
        )


@pytest.mark.parametrize("package", PACKAGES)
def test_no_exported_class_or_function_shadows_a_module(package):
    """A class or function exported by a package must not be named (up to case) like a module of the
    same package or of the root (``experiments.Population`` read as the ``population`` module), except
    a class named after the module that defines it (``data.Ising`` of ``data.ising``)."""
    pkg = importlib.import_module(package)
    modules = _modules_of(ROOT / pathlib.Path(*package.split("."))) | _modules_of(PACKAGE)
    bad = []
    for name in pkg.__all__:
        obj = getattr(pkg, name)
        if isinstance(obj, types.ModuleType) or not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        own = getattr(obj, "__module__", "").rsplit(".", 1)[-1]
        if name.lower() in modules and name.lower() != own:
            bad.append(f"{name} (from {obj.__module__})")
    assert not bad, f"{package} exports names that read as modules: {bad}"


# -------------------------------------------------------------------------------------------------
# keys first, as in jax.random
# -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_keys_come_first_and_positional(path):
    """A public function's PRNG ``key`` is its first parameter (after ``self``/``cls``), positional.

    The one exception (the canonical names' rule): a key that only some inputs need (an exact branch
    needs none) is keyword-only with default ``None``.
    """
    bad = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name.startswith("_"):
            continue
        args = node.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        if positional and positional[0] in ("self", "cls"):
            positional = positional[1:]
        if "key" in positional and positional.index("key") != 0:
            bad.append(f"{node.name} (line {node.lineno}): key is parameter {positional.index('key') + 1}")
        kwonly = [a.arg for a in args.kwonlyargs]
        if "key" in kwonly:
            default = args.kw_defaults[kwonly.index("key")]
            if not (isinstance(default, ast.Constant) and default.value is None):
                bad.append(f"{node.name} (line {node.lineno}): keyword-only key without default None")
    assert not bad, f"{_module_name(path)}: " + "; ".join(bad)


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_length(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines (> {MAX_LINES}): split it by concept"


# -------------------------------------------------------------------------------------------------
# the README's layout table matches the tree
# -------------------------------------------------------------------------------------------------
def _readme_modules() -> set[str]:
    """Module names of the README's library table: a row's first name is absolute (``localization.x``)
    or, indented, relative to the last package row; further names (``.y``) share the first's parent."""
    text = (ROOT / "README.md").read_text()
    start = text.index("| module | what it holds |")
    names, package = set(), "localization"
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cell = line.split("|")[1]
        found = [t for t in cell.split("`")[1::2] if t.strip()]
        if not found:
            continue
        first = found[0].strip()
        if first.startswith("localization"):
            parent = first.rsplit(".", 1)[0]
            names.add(first)
            if (PACKAGE / first.split(".", 1)[-1] / "__init__.py").is_file() and first != "localization":
                package = first
        else:
            parent = package
            names.add(parent + first)
        names.update(parent + t.strip() for t in found[1:] if t.strip().startswith("."))
    return names


def test_readme_layout_table_lists_every_module():
    """Every root module and package, and every module of data/, theory/ and experiments/, has a row."""
    expected = {f"localization.{m}" for m in _modules_of(PACKAGE)} | {"localization.__main__"}
    for package in ("data", "theory", "experiments"):
        expected |= {f"localization.{package}.{m}" for m in _modules_of(PACKAGE / package)}
    listed = _readme_modules()
    assert not expected - listed, f"README's layout table misses {sorted(expected - listed)}"
    stale = {m for m in listed if not _is_module(m)}
    assert not stale, f"README's layout table lists modules that do not exist: {sorted(stale)}"
