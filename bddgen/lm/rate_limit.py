"""One pace for every job that calls an endpoint: a most number of requests per minute, and a pause the server
asked for (Retry-After) that every caller waits out, not only the one that was told."""

from __future__ import annotations

import threading
import time


class RateLimit:
    """Spaces the starts of requests `60 / per_minute` seconds apart (0: no limit); `hold` delays every next start."""

    def __init__(self, per_minute: float = 0) -> None:
        self._interval = 60.0 / per_minute if per_minute > 0 else 0.0
        self._next = 0.0  # time.monotonic() before which no request starts
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Block until this caller's request may start."""
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self._interval
        if start > now:
            time.sleep(start - now)

    def hold(self, seconds: float) -> None:
        """No request starts for `seconds` from now (a server's Retry-After)."""
        with self._lock:
            self._next = max(self._next, time.monotonic() + seconds)
