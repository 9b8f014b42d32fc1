"""Every finding code disksleuth gives (the stable codes of DESIGN.md), so a command that filters by code can
tell a typo from a code that merely has no finding today. tests/test_fleet_summary.py checks that every code
the sources make is listed here."""

from __future__ import annotations

FINDING_CODES = frozenset(
    {
        "array_degraded",
        "array_resyncing",
        "behind_chipset",
        "buffered_loop",
        "cache_suspected",
        "device_saturated",
        "error_log_growth",
        "fake_capacity",
        "faster_than_usual",
        "foreign_io",
        "health_clock_skew",
        "health_counter_reset",
        "health_critical",
        "health_drive_changed",
        "health_serial_changed",
        "health_worn",
        "interface_crc_errors",
        "io_limit",
        "latency_high",
        "lba_format",
        "link_downgraded",
        "link_errors",
        "link_limited",
        "media_errors",
        "member_health",
        "member_link_downgraded",
        "member_slow",
        "memory_backed",
        "poor_random_write",
        "process_dominates",
        "raw_device_reads",
        "sata_link_downgraded",
        "sd_app_class",
        "shared_bottleneck",
        "slot_firmware_mismatch",
        "slot_limited",
        "slower_than_usual",
        "swapping",
        "thermal_throttling",
        "unlike_siblings",
        "usb2_link",
        "usb_bot",
        "write_cache_cliff",
        "writeback_stall",
    }
)
