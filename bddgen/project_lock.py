"""One lock per project, held by every command that writes the project's state.

A second command on the same project is refused at once (it does not wait): the message names
the process holding the lock, its command line and since when. The lock is an OS file lock
(`filelock`), so it disappears with its process, also after kill -9; the holder file beside it
only tells the next command who holds it.
"""

from __future__ import annotations

import atexit
import json
import os
import shlex
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import click
from filelock import FileLock, Timeout

from bddgen.errors import BddgenError
from bddgen.files import atomic_write
from bddgen.project import Project

LOCK_FILE = "project.lock"
HOLDER_FILE = "project.lock.json"
BEHAVE = "behave"
"""The one command that takes the lock and is not a bddgen subcommand: plain `behave` in a project."""

# Locks this process holds: lock file -> (lock, how many commands in this process took it).
_held: dict[Path, tuple[FileLock, int]] = {}


class ProjectLockedError(BddgenError):
    """Another bddgen process holds the project lock (exit code 2)."""


HOLDER_WAIT = 2.0  # seconds a refused command waits for a holder that has just taken the lock to record itself (timing only)
HOLDER_POLL = 0.05  # seconds between two reads of the holder file while it waits (timing only)


def _holder(state: Path) -> str:
    """Who holds the lock, from the holder file (which the holder writes just after taking the lock)."""
    deadline = time.monotonic() + HOLDER_WAIT
    while True:
        try:
            data = json.loads((state / HOLDER_FILE).read_text(encoding="utf-8"))
            return f"pid {data['pid']} (`{data['command']}`, since {data['since']})"
        except (OSError, ValueError, KeyError, TypeError):
            if time.monotonic() >= deadline:
                return "another process (it has not recorded its pid yet)"
            time.sleep(HOLDER_POLL)


def acquire_project_lock(project: Project, command: str) -> None:
    """Take the project lock for the rest of this command (released when the click command ends,
    or at exit outside one). Taking it again in the same process nests."""
    path = _acquire(project, command)
    context = click.get_current_context(silent=True)
    if context is not None:
        context.call_on_close(lambda: release_project_lock(path))
    else:
        atexit.register(release_project_lock, path)


@contextmanager
def project_lock(project: Project, command: str, again: str = "") -> Iterator[None]:
    """The project lock for one block of a long-running command that writes now and then
    (`bddgen review` takes it for each change, so other commands can run in between); `again`
    says how to retry when it is refused."""
    path = _acquire(project, command, again)
    try:
        yield
    finally:
        release_project_lock(path)


def _acquire(project: Project, command: str, again: str = "") -> Path:
    state = project.ensure_state()
    path = (state / LOCK_FILE).resolve()
    if path in _held:
        lock, depth = _held[path]
        _held[path] = (lock, depth + 1)
    else:
        lock = FileLock(path, thread_local=False)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise ProjectLockedError(
                f"the project {project.root} is busy: {_holder(state)} is writing its state. Wait until it "
                f"finishes, then {again or f'run `{_typed(command)}` again'} (two commands at once would overwrite each other's files)."
            ) from None
        _held[path] = (lock, 1)
        program = Path(sys.argv[0]).name
        record = {
            "pid": os.getpid(),
            "command": shlex.join([program, *sys.argv[1:]]) if program in ("bddgen", BEHAVE) else _typed(command),
            "since": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        atomic_write(state / HOLDER_FILE, json.dumps(record) + "\n")
    return path


def _typed(command: str) -> str:
    """The command line a person types for `command`: `behave`, else `bddgen <command>`."""
    return command if command == BEHAVE else f"bddgen {command}"


def release_project_lock(path: Path) -> None:
    """Undo one `acquire_project_lock` of the lock file `path`."""
    if path not in _held:
        return
    lock, depth = _held[path]
    if depth > 1:
        _held[path] = (lock, depth - 1)
        return
    del _held[path]
    (path.parent / HOLDER_FILE).unlink(missing_ok=True)
    lock.release()
