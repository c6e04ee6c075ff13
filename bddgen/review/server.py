"""The review page's web server: the standard library's threading HTTP server, bound to 127.0.0.1 on
a free port. Every request must carry the session's token (in the URL, or the X-Review-Token header),
come from a loopback address and name this server as its Host; anything else is refused (403)."""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pydantic import ValidationError

from bddgen.errors import BddgenError, InputError
from bddgen.lm.store import CallStore
from bddgen.project_lock import ProjectLockedError
from bddgen.review.actions import Action, Reviewer, StaleVersion
from bddgen.review.render import page_html

TOKEN_HEADER = "X-Review-Token"
MAX_BODY = 1 << 20  # not a setting: protects the server's memory


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


class ReviewServer(ThreadingHTTPServer):
    """One review session: the reviewer, its token and its address."""

    daemon_threads = True

    def __init__(self, reviewer: Reviewer, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None:
        if not is_loopback(host):
            raise ValueError(f"the review page binds to a loopback address only, not {host}")
        self.reviewer = reviewer
        self.token = token or secrets.token_urlsafe(24)
        super().__init__((host, port), ReviewHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/?token={self.token}"


class ReviewHandler(BaseHTTPRequestHandler):
    server: ReviewServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: the page's requests are not the user's business."""

    # --- refusal -----------------------------------------------------------------------------------

    def _refusal(self) -> str:
        """Why this request is refused ('' when it may go on)."""
        if not is_loopback(str(self.client_address[0])):
            return "the review page answers this computer only"
        host, port = self.server.server_address[:2]
        if self.headers.get("Host", "") not in (f"{host}:{port}", f"localhost:{port}"):
            return "unexpected Host header"
        query = parse_qs(urlsplit(self.path).query)
        given = self.headers.get(TOKEN_HEADER) or (query.get("token") or [""])[0]
        if not hmac.compare_digest(given.encode(), self.server.token.encode()):
            return "missing or wrong token: open the address `bddgen review` printed"
        return ""

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: object) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

    def _error(self, status: int, message: str, **extra: object) -> None:
        self._json(status, {"error": message, **extra})

    # --- routes ------------------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        refused = self._refusal()
        if refused:
            return self._error(HTTPStatus.FORBIDDEN, refused)
        route = urlsplit(self.path).path
        try:
            if route == "/":
                return self._send(HTTPStatus.OK, page_html(None).encode("utf-8"), "text/html; charset=utf-8")
            if route == "/api/suite":
                return self._json(HTTPStatus.OK, self.server.reviewer.view().model_dump(mode="json"))
            if route.startswith("/api/call/"):
                return self._json(HTTPStatus.OK, {"calls": logged_calls(self.server.reviewer, route.rsplit("/", 1)[1])})
        except BddgenError as exc:
            return self._error(HTTPStatus.BAD_REQUEST, str(exc))
        self._error(HTTPStatus.NOT_FOUND, "no such page")

    def do_POST(self) -> None:  # noqa: N802
        refused = self._refusal() or ("" if self.headers.get(TOKEN_HEADER) else "actions carry the token in the X-Review-Token header")
        if refused:
            return self._error(HTTPStatus.FORBIDDEN, refused)
        if urlsplit(self.path).path != "/api/action":
            return self._error(HTTPStatus.NOT_FOUND, "no such action")
        given = self.headers.get("Content-Length", "").strip()
        if not given.isdigit() or not given.isascii():
            self.close_connection = True  # the body's end is unknown: nothing more is read from this connection
            return self._error(HTTPStatus.BAD_REQUEST, f"Content-Length {given[:40]!r} is not a number of bytes")
        length = int(given)
        if length > MAX_BODY:
            self.close_connection = True
            return self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "request too large")
        try:
            action = Action.model_validate_json(self.rfile.read(length))
            spec = self.server.reviewer.apply(action)
        except ValidationError as exc:
            return self._error(HTTPStatus.BAD_REQUEST, f"not an action: {exc.errors()[0]['msg']}")
        except StaleVersion as exc:
            return self._error(HTTPStatus.CONFLICT, str(exc), reload=True)
        except ProjectLockedError as exc:
            return self._error(HTTPStatus.LOCKED, str(exc))
        except InputError as exc:
            return self._error(HTTPStatus.UNPROCESSABLE_ENTITY, str(exc))
        self._json(HTTPStatus.OK, {"spec": spec.model_dump(mode="json"), "counts": self.server.reviewer.counts().model_dump()})


def logged_calls(reviewer: Reviewer, prompt_hash: str) -> list[dict[str, object]]:
    """The logged calls of one prompt (messages, reply), newest first; [] when nothing was logged."""
    database = reviewer.project.lm_db
    if not database.is_file():
        return []
    store = CallStore(database)
    try:
        return [call.model_dump(mode="json") for call in store.prompt_calls(store.resolve_prompt(prompt_hash))]
    except InputError:
        return []
    finally:
        store.close()
