"""An SD card's and an eMMC's registers, decoded from the text the kernel prints: pure, bounded, never raises.

Bit positions, from the SD Physical Layer Simplified Specification 9.10 (the SD Association's free edition):
  CID 5.2 (128 bits): MID 127:120, OID 119:104 (2 ASCII), PNM 103:64 (5 ASCII), PRV 63:56 (BCD n.m),
      PSN 55:24, MDT 19:8 (year 19:12 + 2000, month 11:8).
  CSD 5.3: CSD_STRUCTURE 127:126. Version 1.0 (SDSC): READ_BL_LEN 83:80, C_SIZE 73:62, C_SIZE_MULT 49:47,
      capacity (C_SIZE+1) x 2^(C_SIZE_MULT+2) x 2^READ_BL_LEN. Version 2.0 (SDHC/SDXC): C_SIZE 69:48;
      version 3.0 (SDUC): C_SIZE 75:48; both (C_SIZE+1) x 512 KiB.
  SCR 5.6 (64 bits): SD_SPEC 59:56, SD_BUS_WIDTHS 51:48 (bit 0: 1 bit, bit 2: 4 bits), SD_SPEC3 47,
      SD_SPEC4 42, SD_SPECX 41:38; the version from their combination (Table 5-19).
  SD Status 4.10.2 (512 bits): SPEED_CLASS 447:440 (Table 4-45: 0,1,2,3,4 = C0,C2,C4,C6,C10), AU_SIZE 431:428
      (Table 4-47), UHS_SPEED_GRADE 399:396 (Table 4-52: 0, 1 = U1, 3 = U3; reserved values are the highest
      grade defined), UHS_AU_SIZE 395:392 (Table 4-53), VIDEO_SPEED_CLASS 391:384 (Table 4-54: 0, 6, 10, 30,
      60, 90), APP_PERF_CLASS 339:336 (Table 4.10.2-1: 1 = A1, 2 = A2; a higher value includes the lower
      classes), PERFORMANCE_ENHANCE 335:328 (Table 4.10.2-2: command queue depth - 1 in 335:331, cache 330,
      host maintenance 329, card maintenance 328).
JEDEC JESD84-B51 (eMMC 5.1): CID MID 127:120, OID 111:104, PNM 103:56 (6 ASCII), PRV 55:48, PSN 47:16;
  EXT_CSD bytes EXT_CSD_REV 192, DEVICE_TYPE 196, SEC_COUNT 212-215, CACHE_SIZE 249-252 (KiB),
  PRE_EOL_INFO 267, DEVICE_LIFE_TIME_EST_TYP_A 268 and _TYP_B 269, CMDQ_DEPTH 307, CMDQ_SUPPORT 308.
The kernel prints a register as 32-bit words, most significant first, "%08x" each (drivers/mmc/core/sd.c,
mmc.c), so the text read as one hexadecimal number is the register with bit 0 at its end.
"""

from __future__ import annotations

from functools import lru_cache

from disksleuth.model.card import Card, CardRegisters

# Well-known manufacturer ids. SD: the SD Association assigns them but publishes no list; these are the
# ids the kernel names (drivers/mmc/core/card.h CID_MANFID_*) and that vendors' cards carry. eMMC: JEDEC.
SD_MANUFACTURERS = {
    0x01: "Panasonic",
    0x02: "Toshiba (Kioxia)",
    0x03: "SanDisk",
    0x1B: "Samsung",
    0x1D: "ADATA",
    0x27: "Phison",
    0x28: "Lexar",
    0x31: "Silicon Power",
    0x41: "Kingston",
    0x74: "Transcend",
    0x76: "Patriot",
    0x82: "Sony",
    0x9F: "Kingston",
}
MMC_MANUFACTURERS = {
    0x11: "Toshiba (Kioxia)",
    0x13: "Micron",
    0x15: "Samsung",
    0x45: "SanDisk",
    0x70: "Kingston",
    0x90: "SK hynix",
    0xFE: "Micron",
}

SPEED_CLASS_CODES = {0: 0, 1: 2, 2: 4, 3: 6, 4: 10}  # SD 4.10.2.2, Table 4-45
VIDEO_CLASSES = frozenset({0, 6, 10, 30, 60, 90})  # Table 4-54: the value is the class (MB/s)
_KB = 1024
_MB = 1024 * 1024
AU_SIZES = {  # Table 4-47 (AU_SIZE) and 4-53 (UHS_AU_SIZE: 1h-6h not used)
    1: 16 * _KB, 2: 32 * _KB, 3: 64 * _KB, 4: 128 * _KB, 5: 256 * _KB, 6: 512 * _KB, 7: 1 * _MB, 8: 2 * _MB,
    9: 4 * _MB, 0xA: 8 * _MB, 0xB: 12 * _MB, 0xC: 16 * _MB, 0xD: 24 * _MB, 0xE: 32 * _MB, 0xF: 64 * _MB,
}  # fmt: skip
EXT_CSD_REVS = {0: "4.0", 1: "4.1", 2: "4.2", 3: "4.3", 4: "4.4", 5: "4.41", 6: "4.5", 7: "5.0", 8: "5.1"}
LIFE_EXCEEDED = 0x0B  # DEVICE_LIFE_TIME_EST: 0x01 = 0-10% used ... 0x0A = 90-100%, 0x0B = past its life
PRE_EOL_WORDS = {0: "not defined", 1: "normal", 2: "warning: 80% of the reserved blocks used",
                 3: "urgent: 90% of the reserved blocks used"}  # fmt: skip

# Bus modes by debugfs ios name, slowest first (drivers/mmc/core/debugfs.c; MB/s in analysis.ceilings).
SD_MODES = ("legacy", "sd high-speed", "sd uhs SDR12", "sd uhs SDR25", "sd uhs SDR50", "sd uhs DDR50",
            "sd uhs SDR104")  # fmt: skip
MMC_MODES = ("legacy", "mmc high-speed", "mmc DDR52", "mmc HS200", "mmc HS400", "mmc HS400 enhanced strobe")
# include/linux/mmc/host.h: host->caps and host->caps2 bits, as debugfs caps/caps2 print them.
CAP_MMC_HIGHSPEED, CAP_SD_HIGHSPEED = 1 << 1, 1 << 2
CAP_DDR = (1 << 11) | (1 << 12) | (1 << 13)
CAP_UHS_SDR50, CAP_UHS_SDR104, CAP_UHS_DDR50 = 1 << 18, 1 << 19, 1 << 20
CAP2_HS200 = (1 << 5) | (1 << 6)
CAP2_HS400 = (1 << 15) | (1 << 16)
# EXT_CSD DEVICE_TYPE (byte 196): bit 1 HS 52 MHz, 2-3 DDR52, 4-5 HS200, 6-7 HS400.
_DEVICE_TYPE_MODES = ((0xC0, "mmc HS400"), (0x30, "mmc HS200"), (0x0C, "mmc DDR52"), (0x02, "mmc high-speed"))
# Mainline Linux turns on an SD card's cache since 5.14 (Ulf Hansson's SD extension-register series of May 2021,
# "mmc: core: Add support for cache ctrl for SD cards"); it reads the card's command queue support but never
# runs it (only Raspberry Pi's 6.6+ kernels do, for an allow-list of cards on a Pi 5: there it is unknown),
# so A2's queued figures are out of reach of a mainline kernel. A 5.13 kernel is said not to use the cache:
# which release took the series is the one fact here not checked against the kernel's own history.
SD_CACHE_KERNEL = (5, 14)

MAX_TEXT = 4096  # the longest register text (ext_csd: 1,024 hex digits) with room to spare


def _hex_value(text: str | None, bits: int) -> int | None:
    """The register as a number, from exactly bits/4 hex digits (an optional 0x, white space between
    words allowed), else None."""
    if text is None or len(text) > MAX_TEXT:
        return None
    digits = "".join(text.split())
    digits = digits[2:] if digits[:2].lower() == "0x" else digits
    if len(digits) != bits // 4 or not digits.isascii():
        return None
    try:
        return int(digits, 16)
    except ValueError:
        return None


def _bits(value: int, high: int, low: int) -> int:
    return (value >> low) & ((1 << (high - low + 1)) - 1)


def _small_int(text: str | None, limit: int = 0xFFFFFFFF) -> int | None:
    """'0x0b', '0x000003', '11' -> int; None for anything else or above limit."""
    if text is None or len(text) > 32:
        return None
    t = text.strip().lower()
    base = 16 if t.startswith("0x") else 10
    t = t[2:] if base == 16 else t
    if not t or not t.isascii() or not t.isalnum():
        return None
    try:
        value = int(t, base)
    except ValueError:
        return None
    return value if 0 <= value <= limit else None


def _ascii(value: int, chars: int) -> str | None:
    raw = value.to_bytes(chars, "big")
    text = "".join(chr(b) for b in raw if 0x20 < b < 0x7F or b == 0x20).strip()
    return text or None


def parse_life_time(text: str | None) -> tuple[int | None, int | None]:
    """eMMC `life_time` ("0x01 0x02"): (type A, type B)."""
    if text is None or len(text) > 64:
        return None, None
    words = text.split()
    if len(words) != 2:
        return None, None
    return _small_int(words[0], 0xFF), _small_int(words[1], 0xFF)


def parse_kernel_release(text: str | None) -> tuple[int, int] | None:
    """'6.6.51-v8+' -> (6, 6)."""
    if not text or len(text) > 256:
        return None
    parts = text.strip().split(".", 2)
    if len(parts) < 2:
        return None
    minor = parts[1][: len(parts[1]) - len(parts[1].lstrip("0123456789"))]
    if not (parts[0].isascii() and parts[0].isdigit() and minor.isascii() and minor.isdigit()):
        return None
    if len(parts[0]) > 4 or len(minor) > 4:
        return None
    return int(parts[0]), int(minor)


def _date_from_kernel(text: str | None) -> str | None:
    """The kernel's `date` ("11/2017", drivers/mmc/core/bus.c "%02d/%04d") as "2017-11"."""
    if not text or len(text) > 16:
        return None
    month, _, year = text.strip().partition("/")
    if not (month.isascii() and month.isdigit() and year.isascii() and year.isdigit() and len(year) == 4):
        return None
    return f"{year}-{int(month):02d}" if 1 <= int(month) <= 12 else None


def sd_spec_version(scr: int) -> str | None:
    """SCR Table 5-19: SD_SPEC, SD_SPEC3, SD_SPEC4 and SD_SPECX in combination."""
    spec, spec3, spec4, specx = _bits(scr, 59, 56), _bits(scr, 47, 47), _bits(scr, 42, 42), _bits(scr, 41, 38)
    if spec == 0 and not (spec3 or spec4 or specx):
        return "1.0"
    if spec == 1 and not (spec3 or spec4 or specx):
        return "1.10"
    if spec != 2:
        return None
    if spec3 == 0:
        return "2.00" if not (spec4 or specx) else None
    if specx:
        return f"{specx + 4}.XX"  # 1 = 5.XX ... 5 = 9.XX; note (4) of Table 5-19 extends it so
    return "4.XX" if spec4 else "3.0X"


def _timing_name(text: str | None) -> str | None:
    return text if text in SD_MODES or text in MMC_MODES else None


def _rank(mode: str | None, modes: tuple[str, ...]) -> int:
    return modes.index(mode) if mode in modes else -1


def host_best_mode(caps: int | None, caps2: int | None, kind: str) -> str | None:
    """The fastest bus mode the host controller offers for this kind of card (debugfs caps, caps2)."""
    if caps is None:
        return None
    if kind == "sd":
        for bit, mode in ((CAP_UHS_SDR104, "sd uhs SDR104"), (CAP_UHS_DDR50, "sd uhs DDR50"),
                          (CAP_UHS_SDR50, "sd uhs SDR50"), (CAP_SD_HIGHSPEED, "sd high-speed")):  # fmt: skip
            if caps & bit:
                return mode
        return "legacy"
    if kind == "mmc":
        if caps2 is not None and caps2 & CAP2_HS400:
            return "mmc HS400"
        if caps2 is not None and caps2 & CAP2_HS200:
            return "mmc HS200"
        for bit, mode in ((CAP_DDR, "mmc DDR52"), (CAP_MMC_HIGHSPEED, "mmc high-speed")):
            if caps & bit:
                return mode
        return "legacy"
    return None


def faster(a: str | None, b: str | None) -> bool:
    """Bus mode a is faster than b (both of one family)."""
    for modes in (SD_MODES, MMC_MODES):
        if a in modes and b in modes:
            return _rank(a, modes) > _rank(b, modes)
    return False


def _parse_ios(text: str | None) -> tuple[str | None, int | None, int | None]:
    """(timing, clock Hz, bus width bits) from debugfs ios; the same format probe.sysfs.parse_mmc_ios reads."""
    if not text or len(text) > MAX_TEXT:
        return None, None, None
    timing = clock = width = None
    for line in text.split("\n")[:64]:
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "timing spec":
            start, end = value.find("("), value.rfind(")")
            timing = value[start + 1 : end] if 0 <= start < end - 1 else None
        elif key == "clock":
            digits = len(value) - len(value.lstrip("0123456789"))
            clock = int(value[:digits]) if 0 < digits <= 12 else None
        elif key == "bus width":
            start, end = value.find("("), value.rfind(" bits)")
            number = value[start + 1 : end] if 0 <= start < end else ""
            width = int(number) if number.isascii() and number.isdigit() and len(number) <= 3 else None
    return timing, clock, width


def _kind(card_type: str | None) -> str:
    t = (card_type or "").strip()
    return {"SD": "sd", "SDcombo": "sd", "MMC": "mmc", "SDIO": "sdio"}.get(t, "unknown")


@lru_cache(maxsize=64)
def decode_card(regs: CardRegisters, block_size_bytes: int | None = None) -> Card:
    """Everything the registers say, with a note for each that is malformed. Never raises."""
    kind = _kind(regs.card_type)
    notes: list[str] = []
    fields: dict[str, object] = {}
    if kind == "mmc":
        _decode_mmc(regs, fields, notes, block_size_bytes)
    elif kind == "sd":
        _decode_sd(regs, fields, notes)
    _decode_identity_files(regs, kind, fields)
    timing, clock, width = _parse_ios(regs.ios)
    caps = _small_int(regs.host_caps)
    caps2 = _small_int(regs.host_caps2)
    # A name this version does not know (a newer kernel's "sd uhs2 ...") is kept, cut short and printable only.
    fields["timing"] = _timing_name(timing) or (timing[:64] if timing and timing[:64].isprintable() else None)
    fields["clock_hz"] = clock
    fields["bus_width_bits"] = width
    fields["host_max_timing"] = host_best_mode(caps, caps2, kind)
    if kind == "sd":
        _sd_card_modes(fields)
        _sd_host_use(regs, fields)
    running = fields["timing"]
    if running in SD_MODES or running in MMC_MODES:
        best = fields.get("card_max_timing")
        if best is None or faster(running, best):  # type: ignore[arg-type]
            # The card runs in it, so it takes it: the registers only give a floor (a U3 card read as SDR50 ran
            # SDR104, and list --json said both).
            fields["card_max_timing"] = running
    if fields.get("manufacturer_id") is not None:
        table = MMC_MANUFACTURERS if kind == "mmc" else SD_MANUFACTURERS
        mid = fields["manufacturer_id"]
        fields["manufacturer"] = table.get(mid) if isinstance(mid, int) else None
    return Card(kind=kind, notes=tuple(notes), **fields)  # type: ignore[arg-type]


def _decode_identity_files(regs: CardRegisters, kind: str, fields: dict[str, object]) -> None:
    """The kernel's own decoding of the CID (name, manfid, oemid, date): used where the CID is absent or
    masked (a capture replaces the whole `cid`, since it holds the serial)."""
    if fields.get("manufacturer_id") is None:
        fields["manufacturer_id"] = _small_int(regs.manfid, 0xFF)
    if fields.get("oem_id") is None and regs.oemid:
        oem = _small_int(regs.oemid, 0xFFFF)
        if oem is not None:
            text = _ascii(oem, 2) if kind == "sd" else None
            # eMMC 4+ has an 8-bit OID (the CID's 111:104), which the kernel prints as "0x%04x": one spelling for both
            fields["oem_id"] = text if text and len(text) == 2 else (f"0x{oem:02x}" if oem <= 0xFF else f"0x{oem:04x}")
    if fields.get("product") is None and regs.name and len(regs.name) <= 16 and regs.name.isprintable():
        fields["product"] = regs.name.strip() or None
    if fields.get("revision") is None and kind == "sd":  # the CID's PRV as the kernel splits it (hwrev.fwrev)
        hw, fw = _small_int(regs.hwrev, 0xF), _small_int(regs.fwrev, 0xF)
        if hw is not None and fw is not None:
            fields["revision"] = f"{hw}.{fw}"
    kernel_date = _date_from_kernel(regs.date)
    if kernel_date and (kind == "mmc" or fields.get("date") is None):
        fields["date"] = kernel_date  # eMMC: the kernel knows which year base EXT_CSD_REV implies


def _decode_sd(regs: CardRegisters, fields: dict[str, object], notes: list[str]) -> None:
    cid = _hex_value(regs.cid, 128)
    if cid is not None:
        fields["manufacturer_id"] = _bits(cid, 127, 120)
        fields["oem_id"] = _ascii(_bits(cid, 119, 104), 2)
        fields["product"] = _ascii(_bits(cid, 103, 64), 5)
        prv = _bits(cid, 63, 56)
        fields["revision"] = f"{prv >> 4}.{prv & 0xF}"
        month = _bits(cid, 11, 8)
        if 1 <= month <= 12:
            fields["date"] = f"{2000 + _bits(cid, 19, 12)}-{month:02d}"
    elif regs.cid is not None:
        notes.append("cid is not a 128-bit register (masked or malformed): the kernel's name, manfid and date used")
    csd = _hex_value(regs.csd, 128)
    if csd is not None:
        structure = _bits(csd, 127, 126)
        if structure == 0:
            c_size, mult, bl_len = _bits(csd, 73, 62), _bits(csd, 49, 47), _bits(csd, 83, 80)
            fields["capacity_bytes"] = (c_size + 1) << (mult + 2 + bl_len)
            fields["capacity_class"] = "SDSC"
        elif structure in (1, 2):
            c_size = _bits(csd, 69, 48) if structure == 1 else _bits(csd, 75, 48)
            capacity = (c_size + 1) * 512 * _KB
            fields["capacity_bytes"] = capacity
            # SD 5.3.3: SDHC up to 32 GB (C_SIZE below 0xFF5F), SDXC to 2 TB; CSD 3.0 is SDUC.
            fields["capacity_class"] = "SDUC" if structure == 2 else ("SDHC" if c_size < 0xFF5F else "SDXC")
        else:
            notes.append("csd has a reserved CSD_STRUCTURE (3): capacity not decoded")
    elif regs.csd is not None:
        notes.append("csd is not a 128-bit register: capacity not decoded")
    scr = _hex_value(regs.scr, 64)
    if scr is not None:
        fields["spec_version"] = sd_spec_version(scr)
        widths = _bits(scr, 51, 48)
        fields["bus_widths"] = tuple(w for bit, w in ((0, 1), (2, 4)) if widths & (1 << bit))
    elif regs.scr is not None:
        notes.append("scr is not a 64-bit register: specification version not decoded")
    _decode_ssr(regs.ssr, fields, notes)


def _decode_ssr(text: str | None, fields: dict[str, object], notes: list[str]) -> None:
    ssr = _hex_value(text, 512)
    if ssr is None:
        if text is not None:
            notes.append("ssr is not a 512-bit register: speed, video and application classes not decoded")
        return
    if ssr == 0:  # drivers/mmc/core/sd.c leaves raw_ssr zero when ACMD13 fails, and prints the zeros
        notes.append("ssr is all zeros: the kernel could not read the SD Status, so the card's classes are unknown")
        return
    speed = _bits(ssr, 447, 440)
    if speed in SPEED_CLASS_CODES:
        fields["speed_class"] = SPEED_CLASS_CODES[speed]
    else:  # 4.10.2.2 application note: a value above what the host knows means any class can be used
        fields["speed_class"] = 10
        notes.append(f"SPEED_CLASS 0x{speed:02x} is reserved: read as Class 10, the highest defined")
    uhs = _bits(ssr, 399, 396)
    if uhs in (0, 1, 3):
        fields["uhs_grade"] = uhs
    else:  # 4.10.2.8: reserved values are read as the highest grade defined
        fields["uhs_grade"] = 3
        notes.append(f"UHS_SPEED_GRADE 0x{uhs:x} is reserved: read as U3, the highest defined")
    video = _bits(ssr, 391, 384)
    if video in VIDEO_CLASSES:
        fields["video_class"] = video
    else:
        notes.append(f"VIDEO_SPEED_CLASS 0x{video:02x} is reserved: video class not decoded")
    app = _bits(ssr, 339, 336)
    fields["app_class"] = min(app, 2)  # 4.10.2.13: a higher value includes the lower classes
    if app > 2:
        notes.append(f"APP_PERF_CLASS 0x{app:x} is reserved: read as A2, the highest defined")
    fields["au_size_bytes"] = AU_SIZES.get(_bits(ssr, 431, 428))
    fields["uhs_au_size_bytes"] = AU_SIZES.get(_bits(ssr, 395, 392)) if _bits(ssr, 395, 392) >= 7 else None
    queue = _bits(ssr, 335, 331)
    fields["command_queue"] = queue + 1 if queue else 0  # Table 4.10.2-3: 1h = depth 2 ... 1Fh = depth 32
    fields["cache"] = bool(_bits(ssr, 330, 330))


def _sd_card_modes(fields: dict[str, object]) -> None:
    """The fastest mode the card is known to take. The SD Status names no bus mode; a UHS speed grade is
    defined only in UHS-I/UHS-II modes and every UHS-I card takes SDR50 (SD 3.0), and Class 10 is defined in
    High Speed mode (4.13.2). A card may take more (SDR104): the switch function status that says so is not
    in sysfs."""
    uhs, video = fields.get("uhs_grade"), fields.get("video_class")
    if (isinstance(uhs, int) and uhs >= 1) or (isinstance(video, int) and video >= 30):
        fields["card_max_timing"] = "sd uhs SDR50"
    elif fields.get("speed_class") == 10:
        fields["card_max_timing"] = "sd high-speed"


def _sd_host_use(regs: CardRegisters, fields: dict[str, object]) -> None:
    if fields.get("cache"):
        release = parse_kernel_release(regs.kernel_release)
        fields["cache_used"] = release >= SD_CACHE_KERNEL if release else None
    if fields.get("command_queue"):
        if regs.cmdq_en is not None:  # a kernel that says so (eMMC's attribute)
            fields["command_queue_used"] = regs.cmdq_en.strip() == "1"
        elif "rpi" in (regs.kernel_release or "") or (regs.kernel_release or "").endswith(("-v8+", "-v8-16k+")):
            fields["command_queue_used"] = None  # Raspberry Pi kernels run it for some cards, and do not say which
        else:
            fields["command_queue_used"] = False  # mainline reads the support and never runs it


def _decode_mmc(regs: CardRegisters, fields: dict[str, object], notes: list[str], block_size: int | None) -> None:
    cid = _hex_value(regs.cid, 128)
    if cid is not None:
        fields["manufacturer_id"] = _bits(cid, 127, 120)
        fields["oem_id"] = f"0x{_bits(cid, 111, 104):02x}"
        fields["product"] = _ascii(_bits(cid, 103, 56), 6)
        prv = _bits(cid, 55, 48)
        fields["revision"] = f"{prv >> 4}.{prv & 0xF}"
    elif regs.cid is not None:
        notes.append("cid is not a 128-bit register (masked or malformed): the kernel's name, manfid and date used")
    rev = _small_int(regs.rev, 0xFF)
    ext = _ext_csd(regs.ext_csd)
    life_a: int | None
    life_b: int | None
    eol: int | None
    if ext is not None:
        rev = ext[192]
        sectors = int.from_bytes(ext[212:216], "little")
        fields["capacity_bytes"] = sectors * 512 if sectors else None
        cache_kib = int.from_bytes(ext[249:253], "little")
        fields["cache"] = cache_kib > 0
        if ext[308] & 1:
            fields["command_queue"] = (ext[307] & 0x1F) + 1
        else:
            fields["command_queue"] = 0
        fields["card_max_timing"] = next((m for mask, m in _DEVICE_TYPE_MODES if ext[196] & mask), None)
        life_a, life_b, eol = ext[268], ext[269], ext[267]
    else:
        life_a, life_b = parse_life_time(regs.life_time)
        eol = _small_int(regs.pre_eol_info, 0xFF)
        if regs.life_time is not None and life_a is None:
            notes.append(f"life_time {regs.life_time[:40]!r} is not two hex bytes: wear not decoded")
    if rev is not None:
        fields["spec_version"] = EXT_CSD_REVS.get(rev)
    if fields.get("capacity_bytes") is None:
        csd = _hex_value(regs.csd, 128)
        if csd is not None and _bits(csd, 73, 62) != 0xFFF:  # 0xFFF: over 2 GB, the size is in EXT_CSD
            c_size, mult, bl_len = _bits(csd, 73, 62), _bits(csd, 49, 47), _bits(csd, 83, 80)
            fields["capacity_bytes"] = (c_size + 1) << (mult + 2 + bl_len)
        elif block_size:
            fields["capacity_bytes"] = block_size  # the kernel sized the user area from EXT_CSD SEC_COUNT
    for key, value in (("life_time_a", life_a), ("life_time_b", life_b)):
        if value is not None and value > LIFE_EXCEEDED:
            notes.append(f"{key} 0x{value:02x} is reserved (JESD84-B51 defines 0x00-0x0B): not judged")
            value = None
        fields[key] = value
    if eol is not None and eol > 3:
        notes.append(f"pre_eol_info 0x{eol:02x} is reserved (0x00-0x03 defined): not judged")
        eol = None
    fields["pre_eol"] = eol
    if regs.cmdq_en is not None:
        fields["command_queue_used"] = regs.cmdq_en.strip() == "1"


def _ext_csd(text: str | None) -> bytes | None:
    """debugfs ext_csd: 512 bytes, "%02x" each, byte 0 first (drivers/mmc/core/debugfs.c)."""
    if text is None or len(text) > MAX_TEXT:
        return None
    digits = "".join(text.split())
    if len(digits) != 1024 or not digits.isascii():
        return None
    try:
        return bytes.fromhex(digits)
    except ValueError:
        return None


def class_labels(card: Card) -> list[str]:
    """The classes a card claims, as printed on its label: ["C10", "U3", "V30", "A2"]."""
    out = []
    if card.speed_class:
        out.append(f"C{card.speed_class}")
    if card.uhs_grade:
        out.append(f"U{card.uhs_grade}")
    if card.video_class:
        out.append(f"V{card.video_class}")
    if card.app_class:
        out.append(f"A{card.app_class}")
    return out


def card_summary(card: Card) -> str:
    """One line for tables: "Goodram SD 6.XX SDXC C10 U3 V30 A2, 2019-05"."""
    parts = [p for p in (card.manufacturer, card.product) if p]
    if card.kind == "mmc":
        parts.append(f"eMMC {card.spec_version}" if card.spec_version else "eMMC")
    elif card.spec_version:
        parts.append(f"SD {card.spec_version}")
    if card.capacity_class:
        parts.append(card.capacity_class)
    parts.extend(class_labels(card))
    text = " ".join(parts)
    if card.date:
        text += f", made {card.date}"
    return text
