"""Regenerate the PCIe AER trees in this folder: `python tests/data/sysfs/make_aer_trees.py` (issue 36).

Each is `nvme_new_format` (an NVMe drive, 0000:01:00.0, on the CPU root port 0000:00:01.0, PCIe 3.0 x4) with the
AER files a kernel with PCIe AER statistics (4.19 and later) puts in both functions' directories
(Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats). Their text is prometheus/procfs's fixtures
(../procfs/sys-pci-aer.ttar): real files in the kernel's format. Only the counts of `aer_oculink_after` are ours.

- aer_clean: every counter zero (procfs's 0000:00:03.0 and 0000:03:00.0 as they are): a healthy machine.
- aer_oculink_before: the drive's aer_dev_correctable is procfs's 0000:00:1f.6 file (9 correctable errors since
  boot, a few of each kind); the root port received those 9. Counts that hold still: shown, never warned.
- aer_oculink_after: the same path after a test over a marginal OCuLink cable: the drive's RxErr grew by 1,200 and
  its BadDLLP by 40 (TOTAL_ERR_COR 9 -> 1,249), the root port's own RxErr by 12, and the root port received them all.
"""

from __future__ import annotations

import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
TTAR = os.path.join(HERE, "..", "procfs", "sys-pci-aer.ttar")
BASE = "nvme_new_format"
DRIVE = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
PORT = "sys/devices/pci0000:00/0000:00:01.0"
PROCFS_DRIVE = "fixtures/sys/devices/pci0000:00/0000:00:03.0/0000:03:00.0"
PROCFS_PORT = "fixtures/sys/devices/pci0000:00/0000:00:03.0"
PROCFS_COUNTED = "fixtures/sys/devices/pci0000:00/0000:00:1f.6"


def read_ttar(path: str) -> dict[str, str]:
    """The files of a ttar text archive (prometheus/procfs's format): path -> text."""
    with open(path) as fh:
        lines = fh.read().split("\n")
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        if lines[i].startswith("Path: ") and lines[i + 1].startswith("Lines: "):
            count = int(lines[i + 1][len("Lines: ") :])
            out[lines[i][len("Path: ") :]] = "".join(f"{line}\n" for line in lines[i + 2 : i + 2 + count])
            i += 2 + count
        i += 1
    return out


def with_counts(text: str, counts: dict[str, int]) -> str:
    """A counter file with some of its NAME COUNT lines set to new counts, in the kernel's order."""
    out = []
    for line in text.splitlines():
        name = line.split(" ")[0]
        out.append(f"{name} {counts[name]}" if name in counts else line)
    return "\n".join(out) + "\n"


def tree(name: str, files: dict[str, str]) -> None:
    root = os.path.join(HERE, name)
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(os.path.join(HERE, BASE), root, symlinks=True)
    for rel, text in files.items():
        with open(os.path.join(root, rel), "w") as fh:
            fh.write(text)


def main() -> None:
    ttar = read_ttar(TTAR)
    files = ("aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal")
    rootport = ("aer_rootport_total_err_cor", "aer_rootport_total_err_nonfatal", "aer_rootport_total_err_fatal")
    clean = {f"{DRIVE}/{f}": ttar[f"{PROCFS_DRIVE}/{f}"] for f in files}
    clean.update({f"{PORT}/{f}": ttar[f"{PROCFS_PORT}/{f}"] for f in files + rootport})
    tree("aer_clean", clean)

    counted = ttar[f"{PROCFS_COUNTED}/aer_dev_correctable"]  # RxErr 1 ... HeaderOF 8, TOTAL_ERR_COR 9
    before = dict(clean)
    before[f"{DRIVE}/aer_dev_correctable"] = counted
    before[f"{PORT}/aer_rootport_total_err_cor"] = "9\n"
    tree("aer_oculink_before", before)

    after = dict(before)
    after[f"{DRIVE}/aer_dev_correctable"] = with_counts(counted, {"RxErr": 1201, "BadDLLP": 43, "TOTAL_ERR_COR": 1249})
    port_own = ttar[f"{PROCFS_PORT}/aer_dev_correctable"]
    after[f"{PORT}/aer_dev_correctable"] = with_counts(port_own, {"RxErr": 12, "TOTAL_ERR_COR": 12})
    after[f"{PORT}/aer_rootport_total_err_cor"] = "1261\n"
    tree("aer_oculink_after", after)


if __name__ == "__main__":
    main()
