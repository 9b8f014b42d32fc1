"""Crafted pastes (issue 35, defect 4): each shape at 64 KiB and 1 MiB through `explain FILE`, in seconds per MiB.

    .venv/bin/python benchmarks/paste_shapes.py                 # every shape, 64 KiB and 1 MiB, both line lengths
    .venv/bin/python benchmarks/paste_shapes.py json_open 65536 # one shape, one size (bytes)
    PYTHONPATH=/tmp/old/src .venv/bin/python benchmarks/paste_shapes.py --reported   # an older tree, for comparison

The shapes are tests/hostile_pastes.py's, with crafted lines of 64 KiB (the report's; cut to 4,096 characters
before any parser) and of just under 4 KiB (so every parser meets the whole run on every line). Each runs in a
child process (so an old, quadratic reader is stopped at --timeout seconds instead of running for hours) that
writes the paste to a file and times run.paste.explain_paste on it: reading, normalising, splitting and every
parser, as `explain FILE` does, in CPU seconds (time.process_time: what a loaded machine does not inflate). The
bar: 2 s per MiB; exit 1 above it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from hostile_pastes import _PARTS, CUT, KIB, LONG, MIB, REPORTED, build  # noqa: E402

BAR_S_PER_MIB = 2.0


def one(name: str, size: int, line_chars: int) -> float:
    """CPU seconds `explain FILE` takes on this shape at this size."""
    from disksleuth.errors import DisksleuthError
    from disksleuth.run.paste import explain_paste

    text = build(name, size, line_chars)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write(text)
    try:
        start = time.process_time()
        with contextlib.suppress(DisksleuthError):  # most shapes hold no device: that one line is the answer
            explain_paste([f.name])
        return time.process_time() - start
    finally:
        os.unlink(f.name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", nargs="?", choices=sorted(_PARTS))
    parser.add_argument("size", nargs="?", type=int)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before a child is stopped")
    parser.add_argument("--reported", action="store_true", help="only the report's shapes, with its 64 KiB lines")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)  # the line length, in a child
    args = parser.parse_args()
    if args.child:
        print(f"{one(args.shape, args.size, args.child):.6f}")
        return 0
    names = [args.shape] if args.shape else list(REPORTED if args.reported else _PARTS)
    sizes = [args.size] if args.size else [64 * KIB, MIB]
    worst = 0.0
    print(f"{'shape':<22} {'line':>7} {'paste':>8} {'seconds':>9} {'s/MiB':>8}")
    for name, line_chars, size in [(n, c, s) for n in names for c in (LONG, CUT) for s in sizes]:
        if (args.reported or name == "json_open") and line_chars != LONG:
            continue  # json_open's lines are "{": one length
        line = f"{line_chars / KIB:.0f} KiB"
        paste = f"{size // KIB} KiB" if size < MIB else f"{size / MIB:g} MiB"
        row = f"{name:<22} {line:>7} {paste:>8}"
        cmd = [sys.executable, os.path.abspath(__file__), name, str(size), "--child", str(line_chars)]
        wall = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, check=False)
        except subprocess.TimeoutExpired:
            print(f"{row} {'>' + format(args.timeout, 'g'):>9} {'-':>8}  (stopped)")
            worst = float("inf")
            continue
        if done.returncode != 0:
            print(f"{row} failed: {done.stderr.strip().splitlines()[-1:]}")
            worst = float("inf")
            continue
        seconds = float(done.stdout.strip())
        per_mib = seconds / (size / MIB)
        worst = max(worst, per_mib)
        print(f"{row} {seconds:>9.3f} {per_mib:>8.3f}  (wall {time.perf_counter() - wall:.1f} s)")
    print(f"worst: {worst:.3f} s per MiB (bar {BAR_S_PER_MIB:g})")
    return 0 if worst <= BAR_S_PER_MIB else 1


if __name__ == "__main__":
    sys.exit(main())
