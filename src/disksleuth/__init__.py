"""disksleuth: how fast is this storage, how fast should it be, and why isn't it?"""

__version__ = "0.1.0"

# Profile names for argument parsing, without importing the profile definitions (kept in step with
# disksleuth.profiles.PROFILES by a test).
PROFILE_NAMES = ("quick", "standard", "mixed", "homelab", "flash", "riscos", "sustained")
