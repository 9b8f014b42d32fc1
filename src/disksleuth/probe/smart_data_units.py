"""Data written and read over a drive's life, in bytes, from smartctl's JSON (pure; None when not reported).

Where each figure comes from, best first:
- NVMe: `nvme_smart_health_information_log.data_units_{written,read}`, units of 1000 x 512 bytes (NVMe base
  spec, SMART / Health Information log).
- ATA Device Statistics (smartctl 7.4+, ataprint.cpp set_json_globals_from_device_statistics): `host_writes` /
  `host_reads` {units, bytes_per_unit}, the standard "Logical Sectors Written/Read" of page 1; or that page's
  table row itself (`ata_device_statistics.pages[].table[]` {name, value}) times `logical_block_size`.
- ATA vendor attributes, named by smartctl's drivedb.h for the model, so the unit is in the name:
  Total_LBAs_Written (logical sectors), Host_Writes_32MiB, Host_Writes_GiB, Host_Writes_MiB, and the same for reads.
  NAND_* names count flash writes including write amplification, not host writes: left out.
- SCSI: `scsi_error_counter_log.{write,read}.gigabytes_processed` (a decimal string, 10^9 bytes).
"""

from __future__ import annotations

from typing import Any

NVME_DATA_UNIT_BYTES = 512_000
MAX_BYTES = 10**19  # 10 EB: beyond it a counter is garbage, not a drive's life
_MIB, _GIB = 2**20, 2**30


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def _get(d: Any, *path: str) -> Any:
    for key in path:
        d = d.get(key) if isinstance(d, dict) else None
    return d


def _bounded(v: int | float | None) -> int | None:
    return int(v) if v is not None and 0 <= v < MAX_BYTES else None


def _attr_unit_bytes(name: str, direction: str, sector_bytes: int) -> int | None:
    """Bytes per raw count of an ATA attribute named for host writes or reads, or None for any other name."""
    if name.startswith("NAND") or "Flash" in name:
        return None
    verb = "Written" if direction == "write" else "Read"
    if f"LBAs_{verb}" in name or name == f"Total_Host_Sector_{'Write' if direction == 'write' else 'Read'}":
        return sector_bytes
    word = "Writes" if direction == "write" else "Reads"
    if word not in name:
        return None
    for suffix, unit in (("_32MiB", 32 * _MIB), ("_GiB", _GIB), ("_MiB", _MIB)):
        if name.endswith(suffix):
            return unit
    return None


def _from_attributes(doc: dict[str, Any], direction: str, sector_bytes: int) -> int | None:
    table = _get(doc, "ata_smart_attributes", "table")
    for a in table if isinstance(table, list) else ():
        if not isinstance(a, dict) or not isinstance(a.get("name"), str):
            continue
        unit = _attr_unit_bytes(a["name"], direction, sector_bytes)
        raw = _int(_get(a, "raw", "value"))
        if unit is not None and raw is not None and raw >= 0:
            return _bounded(raw * unit)
    return None


def _from_device_statistics(doc: dict[str, Any], direction: str, sector_bytes: int) -> int | None:
    glob = doc.get("host_writes" if direction == "write" else "host_reads")
    units, per = _int(_get(glob, "units")), _int(_get(glob, "bytes_per_unit"))
    if units is not None and per:
        return _bounded(units * per)
    want = "Logical Sectors Written" if direction == "write" else "Logical Sectors Read"
    pages = _get(doc, "ata_device_statistics", "pages")
    for page in pages if isinstance(pages, list) else ():
        rows = _get(page, "table")
        for row in rows if isinstance(rows, list) else ():
            if isinstance(row, dict) and row.get("name") == want and _int(row.get("value")) is not None:
                return _bounded((_int(row.get("value")) or 0) * sector_bytes)
    return None


def _scsi(doc: dict[str, Any], direction: str) -> int | None:
    text = _get(doc, "scsi_error_counter_log", direction, "gigabytes_processed")
    if isinstance(text, str) and len(text) < 32:
        try:
            return _bounded(float(text) * 1e9)
        except ValueError:
            return None
    return None


def data_bytes(doc: dict[str, Any], direction: str) -> int | None:
    """Bytes the host wrote (`direction` "write") or read ("read") over the drive's life."""
    key = "data_units_written" if direction == "write" else "data_units_read"
    units = _int(_get(doc, "nvme_smart_health_information_log", key))
    if units is not None:
        return _bounded(units * NVME_DATA_UNIT_BYTES)
    sector = _int(doc.get("logical_block_size"))
    sector_bytes = sector if sector in (512, 520, 528, 4096, 4160, 4224) else 512
    for found in (
        _from_device_statistics(doc, direction, sector_bytes),
        _from_attributes(doc, direction, sector_bytes),
        _scsi(doc, direction),
    ):
        if found is not None:
            return found
    return None
