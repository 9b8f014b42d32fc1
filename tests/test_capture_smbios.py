"""`capture` carries the raw SMBIOS table (slot names for offline diagnosis) with every serial number,
asset tag and UUID in it masked, and nothing else changed."""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path

import pytest
from conftest import SYSFS
from smbios_tables import tables as tables_built

from disksleuth.probe.smbios import mask_identifiers, parse_smbios, walk_structures

TABLE = "sys/firmware/dmi/tables/DMI"

# Real identifiers in the real structures (tests/data/smbios/SOURCES.md): the Surface Laptop 3's type 1
# serial number and UUID, in the real table and under its 32-bit entry point.
PAIRS = ["smbios-lib-real", "smbios-lib-real-32bit"]


def _identifiers(table: bytes) -> tuple[set[bytes], set[bytes]]:
    strings, uuids = set(), set()
    for s in walk_structures(table)[0]:
        fields = {1: (0x07,), 2: (0x07, 0x08), 3: (0x07, 0x08), 4: (0x20, 0x21), 17: (0x18, 0x19)}.get(s.type, ())
        for at in fields:
            index = s.byte(at)
            if index and index <= len(s.strings) and len(s.strings[index - 1]) >= 4:
                strings.add(s.strings[index - 1].encode("latin-1"))
        if s.type == 1 and len(s.data) >= 0x18:
            uuids.add(s.data[0x08:0x18])
    return strings, uuids


def _capture(cli, tmp_path: Path, pair: str, *extra: str) -> tuple[bytes, bytes, Path]:
    root = tmp_path / "root"
    shutil.copytree(os.path.join(SYSFS, "nvme_new_format"), root, symlinks=True)
    tables = root / "sys/firmware/dmi/tables"
    tables.mkdir(parents=True)
    (tables / "smbios_entry_point").write_bytes(tables_built()[pair].entry)
    (tables / "DMI").write_bytes(tables_built()[pair].table)
    bundle = tmp_path / "capture.tar.gz"
    res = cli("capture", "-o", str(bundle), "--sysfs-root", str(root), *extra)
    assert res.code == 0, res.err
    with tarfile.open(bundle) as tar:
        member = tar.extractfile(TABLE)
        assert member is not None
        captured = member.read()
        everything = b"".join(
            f.read() for m in tar.getmembers() if m.isfile() and (f := tar.extractfile(m)) is not None
        )
    return captured, everything, bundle


@pytest.mark.parametrize("pair", PAIRS)
def test_capture_masks_every_serial_asset_tag_and_uuid(cli, tmp_path, pair):
    original = tables_built()[pair].table
    strings, uuids = _identifiers(original)
    assert strings and uuids  # the real tables do carry them
    captured, everything, bundle = _capture(cli, tmp_path, pair)
    # A value the table holds only in identifying fields appears nowhere in the bundle ("Default string",
    # shared with harmless fields, is masked in the identifying ones: checked field by field below).
    unique = {v for v in strings | uuids if original.count(v) == 1}
    assert unique
    for value in unique:
        assert value not in everything, value
    assert _identifiers(captured)[0].isdisjoint(strings) and _identifiers(captured)[1].isdisjoint(uuids)
    assert len(captured) == len(original)
    before, after = parse_smbios(original), parse_smbios(captured)
    assert after.notes == before.notes == ()
    assert after.slots == before.slots and after.onboard == before.onboard
    # and the bundle, read back as a root, still names the slot
    res = cli("list", "--json", "--sysfs-root", str(bundle))
    assert res.code == 0, res.err
    (dev,) = [d for d in res.json()["devices"] if d["name"] == "nvme0n1"]
    assert dev["link"]["hops"][0]["slot"]["name"] == before.slots[0].designation  # J6B2, the drive's port


def test_keep_serials_keeps_the_table_whole(cli, tmp_path):
    captured, _, _ = _capture(cli, tmp_path, "smbios-lib-real", "--keep-serials")
    assert captured == tables_built()["smbios-lib-real"].table


def test_masking_a_damaged_table_masks_what_it_can_read():
    original = tables_built()["smbios-lib-real"].table
    for cut in (0, 3, 30, 100, 200, len(original) - 1):
        masked = mask_identifiers(original[:cut], lambda v: b"X" * len(v))
        assert len(masked) == cut
