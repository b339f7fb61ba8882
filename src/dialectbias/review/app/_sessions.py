"""Browser sessions of the review app: a random session id in an HttpOnly, SameSite=Strict cookie maps (in
memory, for the server's lifetime) to an annotator and a CSRF token. The personal token is only ever sent
once, in the login form's POST body; it is not kept in the cookie, the URL or any log."""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field

SESSION_COOKIE = "dbr_session"
LOGIN_CSRF_COOKIE = "dbr_login_csrf"
SESSION_SECONDS = 12 * 3600
MAX_IMAGES_PER_SESSION = 5000


@dataclass
class Session:
    annotator: str
    token_hash: str
    csrf: str
    expires: float
    #: images of targets this session was shown (the only ones it may fetch)
    images: set[str] = field(default_factory=set)


class Sessions:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: dict[str, Session] = {}

    def create(self, annotator: str, token_hash: str) -> tuple[str, Session]:
        sid = secrets.token_urlsafe(32)
        session = Session(annotator, token_hash, secrets.token_urlsafe(32), time.time() + SESSION_SECONDS)
        with self._lock:
            now = time.time()
            self._by_id = {k: s for k, s in self._by_id.items() if s.expires > now}
            self._by_id[sid] = session
        return sid, session

    def get(self, sid: str | None) -> Session | None:
        if not sid:
            return None
        with self._lock:
            session = self._by_id.get(sid)
            if session is not None and session.expires <= time.time():
                del self._by_id[sid]
                return None
            return session

    def drop(self, sid: str | None) -> None:
        with self._lock:
            self._by_id.pop(sid or "", None)

    def allow_image(self, session: Session, sha256: str) -> None:
        with self._lock:
            if len(session.images) < MAX_IMAGES_PER_SESSION:
                session.images.add(sha256)


def same(a: str | None, b: str | None) -> bool:
    """Constant-time comparison of two secrets (False when either is missing)."""
    return bool(a) and bool(b) and hmac.compare_digest(str(a), str(b))
