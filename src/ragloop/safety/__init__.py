"""Shared safety primitives: atomic writes, locks, owned folders, confined paths, safe printing.

Every module that writes a file another process may read, replaces a folder, takes a path from
a spec or dataset, or prints text from users, documents or models goes through these.
"""

from ragloop.safety.atomic import atomic_write_bytes, atomic_write_text, atomic_writer
from ragloop.safety.console import clean, plain, shown
from ragloop.safety.locks import folder_lock
from ragloop.safety.owned import (
    MARKER,
    claim_output_folder,
    is_owned,
    mark_folder,
    replace_folder,
)
from ragloop.safety.paths import confine, confined_name

__all__ = [
    "MARKER",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_writer",
    "clean",
    "claim_output_folder",
    "confine",
    "confined_name",
    "folder_lock",
    "is_owned",
    "mark_folder",
    "plain",
    "replace_folder",
    "shown",
]
