"""dmidecode's own first line, "# dmidecode 3.4", is its version banner, not a root prompt running dmidecode: it was
taken for a command hint, so the banner lines below it were reported as skipped (issue 21)."""

from __future__ import annotations

import os

from conftest import DATA

from disksleuth.probe.paste_text import read_paste

DMIDECODE = os.path.join(DATA, "smbios", "csit-grace-encoded.dmidecode-3.4.txt")


def test_the_dmidecode_version_line_starts_its_section_and_nothing_is_skipped() -> None:
    with open(DMIDECODE, encoding="utf-8") as f:
        paste = read_paste(f.read())
    (section,) = paste.sections
    assert (section.kind, section.first_line, section.command) == ("dmidecode", 1, None)
    assert paste.skipped == ()


def test_a_prompt_running_dmidecode_is_still_the_command_of_the_banner_below_it() -> None:
    with open(DMIDECODE, encoding="utf-8") as f:
        real = f.read()
    paste = read_paste("root@nas:~# dmidecode -t 9\n" + real)
    (section,) = paste.sections
    assert (section.first_line, section.command) == (2, "dmidecode -t 9") and paste.skipped == ()
