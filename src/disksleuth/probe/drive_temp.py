"""A drive's temperature and its own limits from hwmon, for `top`.

hwmon_temp_input (probe/hwmon.py) finds the sensor; its siblings temp1_max and temp1_crit hold the limits the
drive reports: NVMe's warning and critical composite temperatures (WCTEMP, CCTEMP; drivers/nvme/host/hwmon.c),
a SATA drive's SCT limits (drivers/hwmon/drivetemp.c). Reading the sensor sends the drive a command (a log page,
an SCT or SMART read), and "may reset the spin down timer on some drives" (Documentation/hwmon/drivetemp.rst):
the caller reads only drives that are awake anyway (they did I/O during the sample)."""

from __future__ import annotations

import os

from disksleuth.model.top import DriveTemperature
from disksleuth.probe.hwmon import hwmon_temp_input, read_temp_c

# A limit the kernel prints when the drive gave none (drivetemp's and nvme's "not reported" are simply absent,
# but some bridges report 0 or an absurd 255 °C): outside this range a limit is no limit.
PLAUSIBLE_LIMIT_C = (30.0, 150.0)


def _limit(path: str) -> float | None:
    value = read_temp_c(path)
    low, high = PLAUSIBLE_LIMIT_C
    return value if value is not None and low <= value <= high else None


def read_drive_temperature(block_name: str, sysfs_root: str = "/") -> DriveTemperature | None:
    """The drive's temperature now with its warning and critical limits, or None (no sensor, unreadable)."""
    temp_input = hwmon_temp_input(block_name, sysfs_root)
    if temp_input is None:
        return None
    temp_c = read_temp_c(temp_input)
    if temp_c is None:
        return None
    home = os.path.dirname(temp_input)
    return DriveTemperature(
        device=block_name,
        temp_c=temp_c,
        warn_c=_limit(os.path.join(home, "temp1_max")),
        crit_c=_limit(os.path.join(home, "temp1_crit")),
    )
