"""Every command: its name, the cli/ module that declares its options and runs it, and its one-line help.

`disksleuth --help` lists the commands from this table alone; a command's module (its options, and through its
functions the run/ modules) is imported only when that command is chosen or its --help is asked for (issue 37:
`list --json` had imported every command family before it ran). The order is the order of `--help`."""

from __future__ import annotations

COMMANDS: dict[str, tuple[str, str]] = {
    "list": ("inventory", "block devices with their link chain and ceilings"),
    "links": ("inventory", "every PCIe function: negotiated vs capable link"),
    "capture": ("inventory", "bundle the sysfs files disksleuth reads, for bug reports"),
    "check": ("measure", "the main job: link chain, health, a short benchmark, then a verdict"),
    "runs": ("history", "list saved runs, newest first; delete or prune them"),
    "show": ("history", "one saved run (the newest when no RUN is given)"),
    "compare": ("history", "saved runs side by side, with ratios or % of a reference"),
    "report": ("history", "a self-contained HTML report with plots (of the newest run when no RUN is given)"),
    "export": ("history", "write saved runs to a JSON file (serials stay hashed)"),
    "import": ("history", "add runs from an export file (- reads standard input) to the results store"),
    "explain": (
        "explain",
        "explain a figure measured elsewhere against the device's link chain, or a machine from pasted output",
    ),
    "health": (
        "health",
        "drive health from smartctl, normalised, against the drive's own history (no DEVICE: every drive, worst first)",
    ),
    "bench": ("measure", "measure a directory, file or block device with fio"),
    "exporter": (
        "fleet",
        "Prometheus metrics: each disk with its link chain, ceilings, findings and latest stored benchmark",
    ),
    "fleet": (
        "fleet",
        "a shared store's devices from each one's newest run: counts by severity, finding and model, then the "
        "worst devices (exit 1 when any device kept by the filters is at warn or critical)",
    ),
    "top": (
        "top",
        "what the disks, the processes and memory are doing right now, judged: saturated or slow devices, "
        "swapping, writeback stalls, hot drives. Reads only /proc and sysfs; never writes, never wakes a sleeping "
        "disk. Ctrl-C quits the live view",
    ),
    "watch": (
        "watch",
        "one pass over every drive (health, self-tests, links, the last benchmark's baseline), kept in the store; "
        "notifies (Apprise URLs) only what changed since the pass before; --install writes systemd timers",
    ),
    "verify": (
        "verify",
        "does the device hold what it says? Writes tagged blocks across it and reads them back (fake_capacity "
        "when it holds less); needs --destructive: the data on it is destroyed",
    ),
    "completion": ("package", "a bash, zsh or fish completion script for disksleuth, generated from its parser"),
    "manpage": ("package", "the disksleuth(1) man page (roff), generated from its parser"),
}
