"""A client for the HTTP service ``neardup serve`` (its OpenAPI document:
``GET /v1/openapi.json``), with the Python standard library only.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterable, List, Optional

from ._neardup import NeardupError

__all__ = ["Client", "ServiceError"]


class ServiceError(NeardupError):
    """An error answered by the service: ``status`` is the HTTP status, the message the
    service's ``{"error": ...}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class Client:
    """``Client("http://127.0.0.1:7070", token=None, timeout=30.0)``.

    - ``check(text=..., html=..., id=..., url=..., title=..., fetched_at=...)``: the verdict,
      never inserts (``verdict``: unique or duplicate; for a duplicate ``duplicate_of``,
      ``kind`` (exact or near), ``distance``, ``measure``, ``value``, ``threshold``; and
      ``matches``);
    - ``add(...)``: checks and inserts (``insert``: ``if_unique``, ``always`` or ``never``);
    - ``add_many(documents, insert=...)``: a batch of dicts, one result each;
    - ``get(id)``: a stored record (``None`` if absent); ``delete(id)``: whether it was
      stored;
    - ``stats()``: figures about the database and its policy.

    Errors from the service raise :class:`ServiceError` with its status and message.
    """

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                message = json.loads(raw)["error"]
            except (ValueError, KeyError, TypeError):
                message = raw.decode("utf-8", "replace") or e.reason
            raise ServiceError(e.code, message) from None

    @staticmethod
    def _document(**fields: Any) -> Dict[str, Any]:
        return {k: v for k, v in fields.items() if v is not None}

    def check(
        self,
        text: Optional[str] = None,
        *,
        html: Optional[str] = None,
        id: Optional[str] = None,
        url: Optional[str] = None,
        title: Optional[str] = None,
        fetched_at: Optional[str] = None,
    ) -> Dict[str, Any]:
        """The verdict for a document by the database's policy; nothing is inserted."""
        doc = self._document(text=text, html=html, id=id, url=url, title=title, fetched_at=fetched_at)
        return self._request("POST", "/v1/check", doc)

    def add(
        self,
        text: Optional[str] = None,
        *,
        html: Optional[str] = None,
        id: Optional[str] = None,
        url: Optional[str] = None,
        title: Optional[str] = None,
        fetched_at: Optional[str] = None,
        insert: str = "if_unique",
    ) -> Dict[str, Any]:
        """Checks a document and inserts it (by default only if unique); ``inserted`` says."""
        doc = self._document(text=text, html=html, id=id, url=url, title=title, fetched_at=fetched_at)
        return self._request("POST", "/v1/documents?" + urllib.parse.urlencode({"insert": insert}), doc)

    def add_many(self, documents: Iterable[Dict[str, Any]], insert: str = "if_unique") -> List[Dict[str, Any]]:
        """Checks (and inserts) documents in order: one outcome or ``{"error": ...}`` each."""
        query = urllib.parse.urlencode({"insert": insert})
        return self._request("POST", "/v1/documents/batch?" + query, list(documents))["results"]

    def get(self, id: str) -> Optional[Dict[str, Any]]:
        """The stored record of ``id``, or ``None``."""
        try:
            return self._request("GET", "/v1/documents/" + urllib.parse.quote(id, safe=""))
        except ServiceError as e:
            if e.status == 404:
                return None
            raise

    def delete(self, id: str) -> bool:
        """Deletes ``id``; whether it was stored."""
        try:
            self._request("DELETE", "/v1/documents/" + urllib.parse.quote(id, safe=""))
            return True
        except ServiceError as e:
            if e.status == 404:
                return False
            raise

    def stats(self) -> Dict[str, Any]:
        """Figures about the database: documents, the profile, k, bits."""
        return self._request("GET", "/v1/stats")

    def health(self) -> bool:
        """Whether the service answers ``/healthz``."""
        try:
            return self._request("GET", "/healthz").get("status") == "ok"
        except (OSError, NeardupError):
            return False
