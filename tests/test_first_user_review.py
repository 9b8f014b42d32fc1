"""Issue 40's first-user defects, reviewed as a new user meets them (REVIEW3): each test failed before its fix."""

from __future__ import annotations

from conftest import HERE

SMARTCTL_FILE = f"{HERE}/data/smartctl-selftest/linuxhw-ata-HD103SJ-91BBA7CDEF01.txt"


def test_health_does_not_say_the_store_is_empty_when_it_keeps_a_files_reading(cli, tmp_path):
    """Before: after `health --from-smartctl FILE` kept a reading (apart from this host's drives, defect 8), `health`
    said "no health readings in the store": false, and the user's reading seemed lost. Now it says that the store has
    none of this host's drives, and where a file's reading went."""
    db = str(tmp_path / "h.db")
    assert cli("health", "--from-smartctl", SMARTCTL_FILE, "--db", db).code in (0, 1)
    res = cli("health", "--db", db)
    assert "no health readings in the store" not in res.out, res.out
    if "No drive with SMART data here" in res.out:  # a machine with SMART drives lists them instead
        assert "--as-device" in res.out and "apart" in res.out, res.out
