"""The long recorded runs of the simulation chapter, one command: ``python -m localization.experiments.runs``.

Each writes one record under ``book/data/`` (the commands are listed with the records,
:data:`localization.records.MANIFEST`): the large-N sweeps (:mod:`~localization.experiments.large_n`),
the final field's variance split into its data and initialisation parts
(:mod:`~localization.experiments.data_init`) and the paper's Fig. 5 just below zero
(:mod:`~localization.experiments.near_zero`). Kept apart from the experiments it runs, so that none of
them imports another back. Usage::

    python -m localization.experiments.runs NAME PATH [--seed S] [--resume]

with NAME one of ``large_n``, ``large_n_long``, ``large_n_batch``, ``data_init``, ``near_zero``,
``near_zero_positive``, ``near_zero_batch``, ``t3_protocol_long`` (the elliptical chapter's Student-t
protocols continued, :func:`~localization.experiments.elliptical.t3_protocol_record`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import jax

from localization.experiments import data_init, elliptical, large_n, near_zero

__all__ = ["RUNS", "main"]

#: The large-N settings by record name (the command's other names: ``data_init`` and the keys of
#: :data:`localization.experiments.near_zero.RECORDS`).
RUNS = {"large_n": large_n.LARGE_N, "large_n_long": large_n.LARGE_N_LONG, "large_n_batch": large_n.LARGE_N_BATCH}


def main(argv: Sequence[str] | None = None) -> dict:
    """Run one named record and write it to PATH; return the record.

    Parameters
    ----------
    argv : sequence of str or None
        The command's arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    dict
        The record written.
    """
    p = argparse.ArgumentParser(prog="python -m localization.experiments.runs")
    p.add_argument("name", choices=[*RUNS, "data_init", "t3_protocol_long", *near_zero.RECORDS])
    p.add_argument("path")
    p.add_argument("--seed", type=int, default=0, help="large_n*, data_init (near_zero*: the settings' seeds)")
    p.add_argument("--resume", action="store_true", help="large_n*, near_zero*, t3_protocol_long: keep what PATH holds")
    a = p.parse_args(argv)
    if a.name == "data_init":
        return data_init.data_init_record(a.seed, path=a.path)
    if a.name == "t3_protocol_long":  # elliptical chapter; its flow needs float64
        import localization

        localization.enable_float64()
        return elliptical.t3_protocol_record(a.path, resume=a.resume)
    if a.name in near_zero.RECORDS:
        return near_zero.write_named_record(a.name, path=a.path, resume=a.resume)
    command = f"nice -n 10 .venv/bin/python -m localization.experiments.runs {a.name} {a.path} --seed {a.seed}"
    key, provenance = jax.random.key(a.seed), dict(command=command, seed=a.seed)
    return large_n.large_n_sweep(key, RUNS[a.name], path=a.path, resume=a.resume, provenance=provenance)


if __name__ == "__main__":
    main()
