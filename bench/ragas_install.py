"""How long `pip install 'ragloop[ragas]'` takes to resolve from an empty cache (target: < 1 min).

Each run makes a fresh virtual environment, brings its pip up to date (with a throwaway
cache, not timed), then times

    pip install --dry-run --ignore-installed --cache-dir EMPTY --report R '.[EXTRAS]'

(wall and CPU time of pip and its build subprocesses), counts the packages it would
install, and lists every project of which pip fetched more than one version: the versions
it fetched and then dropped (a backtrack, or a range narrowed by a later requirement), and
the projects pip itself says it is "looking at multiple versions of". pip is used as this
machine configures it (indexes, find-links); ``--isolated`` ignores that configuration and
asks the default index alone. ``--uv`` times ``uv pip install --dry-run`` instead (uv is
installed into the fresh venv first, not timed). Without a reachable index it says so,
measures nothing and exits 0.

    python bench/ragas_install.py                      # one run of .[ragas]
    python bench/ragas_install.py --runs 3 --extras dev,ragas
    python bench/ragas_install.py --uv
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)

ROOT = Path(__file__).resolve().parents[1]
LIMIT_S = 60.0
# a fetched distribution: "Downloading NAME-VER-...whl (1.2 MB)", "Processing /dir/NAME-VER.whl"
# (a local index or find-links) or "Using cached NAME-VER.whl"
_FETCH = re.compile(r"^\s*(?:Downloading|Processing|Using cached)\s+(\S+)")
_MULTIPLE = re.compile(r"pip is (?:still )?looking at multiple versions of (\S+) to determine")
_WOULD = re.compile(r"^Would install (.+)$", re.MULTILINE)
_UV_PLUS = re.compile(r"^\s*\+ ([A-Za-z0-9._-]+)(?:==(\S+)| @ \S+)", re.MULTILINE)
# what pip prints when it cannot reach an index at all
_OFFLINE = (
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "Connection refused",
    "No address associated with hostname",
    "Max retries exceeded",
    "dns error",  # uv
)


class ResolveFailed(Exception):
    """pip exited non-zero; ``output`` is everything it printed."""

    def __init__(self, output: str) -> None:
        super().__init__(output)
        self.output = output


@dataclass(frozen=True)
class Resolve:
    """One timed dry-run resolve."""

    wall_s: float
    cpu_s: float
    packages: int
    dropped: dict[str, list[str]]  # project -> versions fetched, then not chosen
    multiple: list[str]  # projects pip reported looking at several versions of
    chosen: dict[str, str]


def dist_name_version(token: str) -> tuple[str, str] | None:
    """(project, version) of a wheel or sdist file name, path or URL; None for anything else."""
    name = token.rstrip("/").rsplit("/", 1)[-1].split("#", 1)[0]
    try:
        if name.endswith(".whl"):
            project, version, _, _ = parse_wheel_filename(name)
        elif name.endswith((".tar.gz", ".zip")):
            project, version = parse_sdist_filename(name)
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return str(project), str(version)


def fetched_versions(output: str) -> dict[str, list[str]]:
    """Each project's distinct versions in the order pip fetched them, from its output."""
    seen: dict[str, list[str]] = {}
    for line in output.splitlines():
        match = _FETCH.match(line)
        found = dist_name_version(match.group(1)) if match else None
        if found:
            versions = seen.setdefault(found[0], [])
            if found[1] not in versions:
                versions.append(found[1])
    return seen


def dropped_versions(fetched: dict[str, list[str]], chosen: dict[str, str]) -> dict[str, list[str]]:
    """The versions pip fetched and did not choose, for the projects it chose a version of."""
    out: dict[str, list[str]] = {}
    for project, versions in fetched.items():
        final = chosen.get(project)
        extra = [v for v in versions if v != final]
        if final is not None and extra:
            out[project] = extra
    return out


def reported_multiple(output: str) -> list[str]:
    """Projects pip said it was looking at multiple versions of (its backtracking notice)."""
    names = [str(canonicalize_name(m)) for m in _MULTIPLE.findall(output)]
    return sorted(set(names))


def would_install(output: str) -> dict[str, str]:
    """{project: version} from pip's "Would install a-1.0 b-2.0" line (empty when absent)."""
    match = _WOULD.search(output)
    if not match:
        return {}
    chosen = {}
    for item in match.group(1).split():
        name, _, version = item.rpartition("-")
        chosen[str(canonicalize_name(name))] = version
    return chosen


def report_chosen(report: dict) -> dict[str, str]:
    """{project: version} from a ``pip install --report`` document."""
    return {
        str(canonicalize_name(item["metadata"]["name"])): item["metadata"]["version"]
        for item in report.get("install", [])
    }


def offline_reason(output: str) -> str | None:
    """The line that shows pip could not reach its index, or None."""
    for line in output.splitlines():
        if any(marker in line for marker in _OFFLINE):
            return line.strip()
    return None


def verdict(wall_s: Sequence[float], limit_s: float = LIMIT_S) -> str:
    """PASS when every run resolved within the limit, else FAIL naming the slowest."""
    worst = max(wall_s)
    state = "PASS" if worst < limit_s else "FAIL"
    return f"target resolve < {limit_s:.0f} s: {state} (slowest of {len(wall_s)}: {worst:.1f} s)"


def load_note(loads: Sequence[float], cores: int) -> str | None:
    """A warning when the load average passed the core count: wall time then waits for CPU."""
    worst = max(loads, default=0.0)
    if worst <= cores:
        return None
    return (
        f"note: the load average reached {worst:.1f} on {cores} cores, so the wall times "
        "include waiting for a CPU; compare the CPU times, or rerun on a quieter machine"
    )


def _as_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _pip(python: Path, args: Sequence[str], isolated: bool) -> list[str]:
    return [str(python), "-m", "pip", *(["--isolated"] if isolated else []), *args]


def _fresh_venv(work: Path, isolated: bool, upgrade: bool, uv: bool) -> tuple[Path, str | None]:
    """A new venv's python, and None, or why pip could not reach the index."""
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    python = work / "venv" / "bin" / "python"
    probe = subprocess.run(
        _pip(python, ["index", "versions", "ragas", "--timeout", "15", "--retries", "1"], isolated)
        + ["--cache-dir", str(work / "probe-cache")],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        text = probe.stdout + probe.stderr
        return python, offline_reason(text) or (text.strip().splitlines() or ["no output"])[-1]
    setup = (["--upgrade", "pip"] if upgrade else []) + (["uv"] if uv else [])
    if setup:  # not timed, with a cache of its own; its warnings are not the bench's output
        subprocess.run(
            _pip(python, ["install", "-q", *setup], isolated)
            + ["--cache-dir", str(work / "pip-cache")],
            check=True,
            capture_output=True,
        )
    return python, None


def resolve_once(python: Path, project: Path, extras: str, work: Path, isolated: bool) -> Resolve:
    """Time one dry-run resolve of ``project[extras]`` with an empty cache."""
    cache, report_path = work / "empty-cache", work / "report.json"
    args = ["install", "--dry-run", "--ignore-installed", "--cache-dir", str(cache)]
    args += ["--report", str(report_path), f"{project}[{extras}]"]
    cpu0, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(
        _pip(python, args, isolated), capture_output=True, text=True, env=dict(os.environ)
    )
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu0
    output = done.stdout + "\n" + done.stderr
    if done.returncode != 0:
        raise ResolveFailed(output)
    chosen = report_chosen(json.loads(report_path.read_text(encoding="utf-8")))
    dropped = dropped_versions(fetched_versions(output), chosen)
    return Resolve(wall, cpu, len(chosen), dropped, reported_multiple(output), chosen)


def uv_chosen(output: str) -> dict[str, str]:
    """{project: version} from ``uv pip install --dry-run``'s "+ name==version" lines."""
    chosen = {}
    for name, version in _UV_PLUS.findall(output):
        chosen[str(canonicalize_name(name))] = version or "(local)"
    return chosen


def resolve_once_uv(python: Path, project: Path, extras: str, work: Path) -> Resolve:
    """Time one ``uv pip install --dry-run`` of ``project[extras]`` with an empty cache."""
    uv = python.with_name("uv")
    args = [str(uv), "pip", "install", "--dry-run", "--python", str(python)]
    args += ["--cache-dir", str(work / "empty-cache"), f"{project}[{extras}]"]
    cpu0, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu0
    output = done.stdout + "\n" + done.stderr
    if done.returncode != 0:
        raise ResolveFailed(output)
    chosen = uv_chosen(output)
    return Resolve(wall, cpu, len(chosen), {}, [], chosen)


def _load() -> str:
    """The 1-minute load average (Linux), or "?"."""
    path = Path("/proc/loadavg")
    return path.read_text().split(" ", 1)[0] if path.exists() else "?"


def _not_measured(why: str) -> int:
    print(f"not measured: pip could not reach its package index ({why}).")
    print("Run this bench where PyPI (or the index pip is configured with) answers.")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extras", default="ragas", help="comma-separated extras (default ragas)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--project", type=Path, default=ROOT, help="the checkout to resolve")
    parser.add_argument("--isolated", action="store_true", help="ignore pip's configuration")
    parser.add_argument("--bundled-pip", action="store_true", help="keep the venv's own pip")
    parser.add_argument("--uv", action="store_true", help="resolve with uv instead of pip")
    args = parser.parse_args(argv)
    project = args.project.resolve()
    walls: list[float] = []
    busy: list[float] = []
    for run in range(1, args.runs + 1):
        with tempfile.TemporaryDirectory(prefix="ragas-install-") as tmp:
            work = Path(tmp)
            python, offline = _fresh_venv(work, args.isolated, not args.bundled_pip, args.uv)
            if offline:
                return _not_measured(offline)
            tool = [str(python.with_name("uv"))] if args.uv else [str(python), "-m", "pip"]
            version = " ".join(
                subprocess.run([*tool, "--version"], capture_output=True, text=True).stdout.split()[
                    :2
                ]
            )
            load_before = _load()
            try:
                if args.uv:
                    result = resolve_once_uv(python, project, args.extras, work)
                else:
                    result = resolve_once(python, project, args.extras, work, args.isolated)
            except ResolveFailed as failed:
                reason = offline_reason(failed.output)
                if reason:
                    return _not_measured(reason)
                tail = "\n".join(failed.output.strip().splitlines()[-15:])
                print(f"could not resolve {project}[{args.extras}]:\n{tail}")
                return 1
        walls.append(result.wall_s)
        busy.append(max(_as_float(load_before), _as_float(_load())))
        print(
            f"run {run}: .[{args.extras}] resolved in {result.wall_s:.1f} s wall, "
            f"{result.cpu_s:.1f} s CPU, {result.packages} packages ({version}, "
            f"load {load_before} before, {_load()} after"
            f"{', isolated' if args.isolated else ''})"
        )
        if args.uv:
            continue  # uv prints the resolution, not the candidates it tried
        dropped = [f"{p} {' '.join(v)} -> {result.chosen[p]}" for p, v in result.dropped.items()]
        print(f"  fetched then dropped: {'; '.join(sorted(dropped)) or 'none'}")
        print(f"  pip looking at multiple versions of: {', '.join(result.multiple) or 'none'}")
    print(verdict(walls))
    note = load_note(busy, os.cpu_count() or 1)
    if note:
        print(note)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
