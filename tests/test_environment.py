"""The environment files agree with each other: one set of pins, named in three places."""

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _pins(lines):
    pins = (line.strip().split("==") for line in lines if "==" in line and not line.startswith("#"))
    return {name.lower().replace("_", "-"): version for name, version in pins}


def _requirements():
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_every_direct_requirement_is_pinned_exactly():
    for line in _requirements():
        assert "==" in line, f"requirements.txt: {line!r} is not an exact pin"


def test_environment_yml_names_the_same_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert _pins(pip_section) == _pins(_requirements())


def test_lock_agrees_with_direct_pins():
    lock = _pins((ROOT / "constraints.txt").read_text().splitlines())
    for name, version in _pins(_requirements()).items():
        assert lock.get(name) == version, f"constraints.txt has {name}=={lock.get(name)}, requirements {version}"


def _project():
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _requirement(spec):
    """(name, floor or None) of a PEP 508 requirement such as ``"ipykernel>=6.31,<7"``."""
    import re

    name = re.match(r"[A-Za-z0-9_.-]+", spec).group(0).lower().replace("_", "-")
    floor = re.search(r">=\s*([0-9][^,;\s]*)", spec)
    return name, floor.group(1) if floor else None


def _version(text):
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def test_pyproject_dependencies_have_floors_the_lock_satisfies():
    """Every dependency of the package (and of its extras) has a floor, at or below its locked version."""
    lock = _pins((ROOT / "constraints.txt").read_text().splitlines())
    project = _project()
    specs = project["dependencies"] + [s for extra in project["optional-dependencies"].values() for s in extra]
    for spec in specs:
        name, floor = _requirement(spec)
        assert floor, f"pyproject.toml: {spec!r} has no floor (>=)"
        assert name in lock, f"pyproject.toml: {name} is not in the lock (constraints.txt)"
        assert _version(floor) <= _version(lock[name]), f"pyproject.toml: {spec!r} excludes the locked {lock[name]}"


@pytest.mark.slow
def test_pyproject_covers_every_third_party_import_of_the_library():
    """Each top-level module the library imports (outside the standard library) is a dependency."""
    import ast
    import sys

    distribution = {
        "sklearn": "scikit-learn",
        "PIL": "pillow",
        "IPython": "ipython",
        "myst_nb": "myst-nb",
        "yaml": "pyyaml",
    }
    declared = {_requirement(spec)[0] for spec in _project()["dependencies"]}
    missing = set()
    for path in (ROOT / "localization").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                tops = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                if top in sys.stdlib_module_names or top in ("localization", "__future__"):
                    continue
                if distribution.get(top, top).lower().replace("_", "-") not in declared:
                    missing.add(f"{top} ({path.relative_to(ROOT)})")
    assert not missing, f"imported by the library but not in pyproject.toml's dependencies: {sorted(missing)}"


def test_version_is_written_once():
    """pyproject.toml reads the version from localization.__version__ (no second copy)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in config["project"] and "version" in config["project"]["dynamic"]
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "localization.__version__"}


def test_make_env_installs_the_whole_lock_in_two_halves():
    """The Makefile's two side-by-side installs (LOCK_HALF 0 and 1) split the lock without pip's own packages:
    disjoint, together every other pin, sizes within one of each other."""
    import subprocess

    def half(i):
        done = subprocess.run(
            ["make", "-s", "--no-print-directory", "--eval", f"show-half: ; @$(call LOCK_HALF,{i})", "show-half"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    halves = [half(0), half(1)]
    lock = _pins((ROOT / "constraints.txt").read_text().splitlines())
    expected = {name for name in lock if name not in {"pip", "setuptools", "wheel"}}
    names = [_pins(h) for h in halves]
    assert not set(names[0]) & set(names[1])
    assert set(names[0]) | set(names[1]) == expected
    assert all(names[i][n] == lock[n] for i in (0, 1) for n in names[i])
    assert abs(len(halves[0]) - len(halves[1])) <= 1
