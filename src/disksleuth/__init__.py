"""disksleuth: how fast is this storage, how fast should it be, and why isn't it?"""

__version__ = "0.1.0"
SCHEMA = "disksleuth/1"
