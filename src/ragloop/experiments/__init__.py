"""Offline experiments: a TOML spec expanded into a grid, run, scored, compared and reported.

Modules, each depending only on those listed before it: ``checks`` (spec validation), ``grid``
(configurations), ``objective``, ``spec``, ``stats``, ``result`` (ExperimentResult), ``tables``
(shared tables and sentences), ``report_html``, ``report`` (files written), ``runs`` (the grid
runner) and ``experiment`` (run_experiment).
"""
