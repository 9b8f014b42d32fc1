"""How long disksleuth takes to start, as a multiple of a bare interpreter start (issue 37: `list --json` at most 6x
`python -c pass` from the same venv).

    .venv/bin/python benchmarks/startup.py [--runs N] [--before SRC] [--markdown]

Each command is started N times (default 31) as a new process, its output thrown away, and the median wall time
kept; the commands are interleaved round by round (one of each, then the next round), so a busy moment of this
shared machine falls on every command alike rather than on one. With --before SRC (the src/ directory of another
checkout, e.g. a worktree of an older commit) the same commands run from that tree too, in the same rounds: a
before-and-after measured side by side. Both trees are byte-compiled first, as an installed package is (pip
compiles at install time). The figures are each command's median divided by `python -c pass`'s median.

Exit code 1 when `list --json` takes more than 6x a bare start (the target), else 0."""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from typing import NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable
TARGET_RATIO = 6.0
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--version",),
    ("--help",),
    ("list", "--json"),
    ("links", "--json"),
    ("top", "--help"),
    ("check", "--help"),
)


class Sample(NamedTuple):
    wall_s: float
    cpu_s: float  # the process's user + system time
    code: int


def started(argv: list[str], env: dict[str, str]) -> Sample:
    """One start: wall seconds from fork to exit, the CPU seconds it used, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False).returncode
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Sample(wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, code)


def tree_env(src: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env["PYTHONPATH"] = src  # ahead of the venv's own (editable) install of the package
    return env


class Figure(NamedTuple):
    wall_s: float  # median
    wall_min_s: float  # the least disturbed start
    cpu_s: float  # median
    code: int

    def ratio(self, bare: Figure) -> str:
        least, cpu = self.wall_min_s / bare.wall_min_s, self.cpu_s / bare.cpu_s
        return f"{self.wall_s / bare.wall_s:.1f}x (least {least:.1f}x, CPU {cpu:.1f}x)"


def figure(samples: list[Sample]) -> Figure:
    return Figure(
        statistics.median(s.wall_s for s in samples),
        min(s.wall_s for s in samples),
        statistics.median(s.cpu_s for s in samples),
        samples[-1].code,
    )


def measure(trees: dict[str, str], runs: int) -> tuple[Figure, dict[tuple[str, tuple[str, ...]], Figure]]:
    """The bare start's figure, and each (tree, command)'s."""
    for src in trees.values():
        subprocess.run([PY, "-m", "compileall", "-q", os.path.join(src, "disksleuth")], check=True)
    bare_env = tree_env("")
    bare: list[Sample] = []
    samples: dict[tuple[str, tuple[str, ...]], list[Sample]] = {}
    for _ in range(runs):
        bare.append(started([PY, "-c", "pass"], bare_env))
        for name, src in trees.items():
            env = tree_env(src)
            for command in COMMANDS:
                samples.setdefault((name, command), []).append(started([PY, "-m", "disksleuth", *command], env))
    return figure(bare), {k: figure(v) for k, v in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--before", metavar="SRC", help="another checkout's src/ directory, measured alongside")
    args = parser.parse_args()
    trees = {"after": os.path.join(ROOT, "src")}
    if args.before:
        trees = {"before": os.path.abspath(args.before), **trees}
    load_before = os.getloadavg()[0]
    bare, figures = measure(trees, args.runs)
    print(
        f"{platform.python_implementation()} {platform.python_version()}, {args.runs} runs each, interleaved; "
        f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after; python -c pass: "
        f"{bare.wall_s * 1000:.1f} ms median, {bare.wall_min_s * 1000:.1f} ms least, {bare.cpu_s * 1000:.1f} ms CPU; "
        f"{len(os.listdir('/sys/block'))} block devices under /sys/block (list reads each)"
    )
    print()
    print("| command | " + " | ".join(f"{name}: median wall = x bare" for name in trees) + " |")
    print("|---|" + "---|" * len(trees))
    for command in COMMANDS:
        cells = []
        for name in trees:
            fig = figures[(name, command)]
            if fig.code != 0:  # a command the older tree lacks (top) is a usage error there
                cells.append(f"n/a (exit {fig.code})")
                continue
            cells.append(f"{fig.wall_s * 1000:.0f} ms = {fig.ratio(bare)}")
        print(f"| `{' '.join(command)}` | " + " | ".join(cells) + " |")
    listing = figures[("after", ("list", "--json"))]
    ok = listing.wall_s / bare.wall_s <= TARGET_RATIO
    print()
    print(
        f"list --json: {listing.wall_s / bare.wall_s:.1f}x a bare start, median wall (target <= {TARGET_RATIO:g}x): "
        f"{'holds' if ok else 'DOES NOT HOLD'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
