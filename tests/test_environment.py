"""The environment files agree with each other: one set of pins, named in three places."""

from pathlib import Path

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
