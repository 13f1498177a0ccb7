"""The admin API's answers for what went wrong: one exception, one JSON shape.

    raise ApiError(404, "not found", "no live route for conversation 29c533d71776")
    -> 404 {"error": "not found", "detail": "no live route for conversation 29c533d71776"}

422 always says which field is wrong and why (`detail`), so a client can show it as is.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

__all__ = ["ApiError", "error_response", "unprocessable"]


class ApiError(Exception):
    """An answer other than 2xx: `status`, a short `error`, a `detail` sentence, extra fields."""

    def __init__(self, status: int, error: str, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.error = error
        self.detail = detail
        self.extra = extra

    def response(self) -> JSONResponse:
        return error_response(self.status, self.error, self.detail, **self.extra)


def unprocessable(detail: str, **extra: Any) -> ApiError:
    """422 with the reason (`field: what is wrong`)."""
    return ApiError(422, "unprocessable", detail, **extra)


def error_response(status: int, error: str, detail: str, headers: dict[str, str] | None = None,
                   **extra: Any) -> JSONResponse:
    return JSONResponse({"error": error, "detail": detail, **extra}, status_code=status, headers=headers)
