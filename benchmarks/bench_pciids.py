"""pci.ids look-up cost for `links`: the lazy look-up disksleuth uses against parsing every line.

    .venv/bin/python benchmarks/bench_pciids.py [PATH]   # default: the system's pci.ids

Target: naming a machine's PCI functions adds under 10 ms to `links` (lspci parses the whole file
into a hash table; we look up only the vendors present).
"""

from __future__ import annotations

import sys
import time

from disksleuth.probe.pci import list_pci_functions
from disksleuth.probe.pciids import find_pci_ids, lookup_pci_names, read_pci_ids


def full_parse(data: bytes) -> dict[tuple[str, str | None], str]:
    """Every vendor and device line into a dict: what a naive loader would do at every start."""
    names: dict[tuple[str, str | None], str] = {}
    vendor = None
    for raw in data.decode("utf-8", "replace").splitlines():
        if not raw or raw[0] == "#":
            continue
        if raw.startswith("C "):
            break
        if raw[0] != "\t":
            vendor = raw[:4]
            names[(vendor, None)] = raw[6:]
        elif raw[1] != "\t" and vendor:
            names[(vendor, raw[1:5])] = raw[7:]
    return names


def best_ms(fn, rounds: int = 20) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return min(times)  # the least-disturbed round: 2 vCPUs shared with other work


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else find_pci_ids()
    if not path:
        sys.exit("no pci.ids installed")
    data = read_pci_ids(path) or b""
    # A typical desktop: Intel root ports and chipset, an AMD GPU, Samsung and WD NVMe, a Realtek NIC.
    ids = [("8086", "a110"), ("8086", "a352"), ("8086", "a36d"), ("1002", "73bf"), ("144d", "a808"),
           ("15b7", "5011"), ("10ec", "8168"), ("1af4", "1042"), ("ffff", None)]
    read = best_ms(lambda: read_pci_ids(path))
    lazy = best_ms(lambda: lookup_pci_names(data, ids))
    full = best_ms(lambda: full_parse(data), rounds=5)
    named = best_ms(lambda: list_pci_functions("/"), rounds=10)
    print(f"{path}: {len(data):,} bytes")
    print(f"read file              {read:7.2f} ms")
    print(f"lazy look-up of {len(ids)} ids {lazy:7.2f} ms")
    print(f"full parse             {full:7.2f} ms")
    print(f"list_pci_functions('/') with names {named:7.2f} ms (this machine)")


if __name__ == "__main__":
    main()
