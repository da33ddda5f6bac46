"""Files a job reads, by path where it runs beside the run folder, else carried as bytes.

A job computed in this process (or in a process pool on this machine) reads the run folder and
the dialogue set in place: its :class:`Blob`\\ s hold paths. A job sent to another machine holds
the bytes instead (:meth:`Blob.shipped`), and the worker writes them into a scratch folder of its
own under the same file name (:meth:`Blob.local`), so that messages naming the file read the same
wherever the job ran. No shared filesystem is assumed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Blob:
    """One file: ``path`` (same machine) or ``data`` (shipped), named ``name`` either way."""

    name: str
    path: str | None = None
    data: bytes | None = None

    @staticmethod
    def of(path: Path | str) -> Blob:
        return Blob(Path(path).name, path=str(path))

    def shipped(self) -> Blob:
        """The same file as bytes; a file that is missing stays missing (the job reports it)."""
        if self.path is None:
            return self
        p = Path(self.path)
        return Blob(self.name, data=p.read_bytes() if p.is_file() else None)

    def local(self, folder: Path | str) -> Path:
        """A path the worker can open: the original, or the bytes written under ``folder``."""
        if self.path is not None:
            return Path(self.path)
        dest = Path(folder) / self.name
        if self.data is not None and not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(self.data)
        return dest
