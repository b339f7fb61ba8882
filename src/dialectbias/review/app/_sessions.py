"""Browser sessions of the review app: a random session id in an HttpOnly, SameSite=Strict cookie maps (in
memory, for the server's lifetime) to an annotator and a CSRF token. The personal token is only ever sent
once, in the login form's POST body; it is not kept in the cookie, the URL or any log."""

from __future__ import annotations

import hmac
import re
import secrets
import threading
import time
from dataclasses import dataclass, field

SESSION_COOKIE = "dbr_session"
LOGIN_CSRF_COOKIE = "dbr_login_csrf"
SESSION_SECONDS = 12 * 3600
MAX_IMAGES_PER_SESSION = 5000
#: a form kept through a log-in: field name -> its values (only form-like names, a bounded number)
Kept = dict[str, list[str]]
MAX_KEPT_FIELDS = 64
MAX_KEPT_CHARS = 200_000
_FIELD_NAME = re.compile(r"[A-Za-z0-9_.]{1,64}")
#: where a log-in may lead back to: a task page of this app, nothing else
_NEXT = re.compile(r"/task/[A-Za-z0-9_-]{1,128}")


@dataclass
class Session:
    annotator: str
    token_hash: str
    csrf: str
    expires: float
    #: images of targets this session was shown (the only ones it may fetch)
    images: set[str] = field(default_factory=set)
    #: a form posted after the previous session ended, to be shown filled in once: (task page, values)
    restored: tuple[str, Kept] | None = None


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

    def restore(self, session: Session, page: str, kept: Kept) -> None:
        """Keep `kept` for the session's next visit to `page` (one form at a time)."""
        with self._lock:
            session.restored = (page, kept) if page and kept else None

    def take_restored(self, session: Session, page: str) -> Kept | None:
        """The values kept for `page`, once (they are gone after this)."""
        with self._lock:
            if session.restored is None or session.restored[0] != page:
                return None
            kept, session.restored = session.restored[1], None
            return kept

    def allow_image(self, session: Session, sha256: str) -> None:
        with self._lock:
            if len(session.images) < MAX_IMAGES_PER_SESSION:
                session.images.add(sha256)


def keep_form(pairs: list[tuple[str, str]]) -> Kept:
    """The values of a posted form worth keeping through a log-in: every field but the CSRF token and the
    personal token, bounded in number and size (the body cap bounds them too)."""
    kept: Kept = {}
    size = 0
    for name, value in pairs:
        if name in ("csrf", "token", "next") or not _FIELD_NAME.fullmatch(name):
            continue
        if name not in kept and len(kept) >= MAX_KEPT_FIELDS:
            continue
        size += len(value)
        if size > MAX_KEPT_CHARS:
            break
        kept.setdefault(name, []).append(value)
    return kept


def safe_next(value: object) -> str:
    """A page to return to after a log-in: a task page of this app, else "" (never another site)."""
    text = str(value or "")
    return text if _NEXT.fullmatch(text) else ""


def same(a: str | None, b: str | None) -> bool:
    """Constant-time comparison of two secrets (False when either is missing)."""
    return bool(a) and bool(b) and hmac.compare_digest(str(a), str(b))
