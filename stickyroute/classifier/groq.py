"""Groq-backed classifier: one chat completion per question, strict parsing, errors as values.

The only module that imports the `groq` SDK. Built once with our own `httpx.AsyncClient`,
`max_retries=0` and `timeout=classifier.timeout_s` (seconds), so a slow provider never holds a
webhook longer than that and respx sees every request in tests.

Request (POST {base_url}/openai/v1/chat/completions, OpenAI-compatible):
    model = classifier.model, temperature = 0, max_tokens = classifier.max_tokens,
    messages = [system: the candidate list `- name: description` plus `- none`, and "answer with
    one name only"; user: the current message text only]. With `classifier.context_messages = N`
    (> 0) the user content also carries the sender's last N messages, marked as context: each one
    costs its tokens again on every call, so N = 0 (the default) is the cheap, cacheable choice.

Base URL: the `base_url` argument, else `classifier.base_url`, else the SDK's own default
(`GROQ_BASE_URL` from the environment, else https://api.groq.com).

Every groq exception is translated at the boundary by `_translate` into the ClassifierError tree
(stickyroute/errors.py); `classify` never raises and reports failures as Outcome.ERROR with the kind.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import groq
import httpx

from stickyroute.classifier.base import (
    Candidate,
    Classification,
    ClassificationRequest,
    Outcome,
    parse_answer,
)
from stickyroute.config.model import ClassifierSettings
from stickyroute.errors import (
    ClassifierAuthError,
    ClassifierError,
    ClassifierRateLimited,
    ClassifierServerError,
    ClassifierTimeout,
    ClassifierUnparseable,
)

logger = logging.getLogger("stickyroute.classifier")

NONE_OPTION = "none"

_SYSTEM_HEAD = (
    "You route a chat message to the agent that should answer it.\n"
    "Agents:\n"
)
_SYSTEM_TAIL = (
    f"- {NONE_OPTION}: no agent above fits the message\n"
    "Answer with exactly one name from the list and nothing else."
)
_CONTEXT_HEAD = (
    "Earlier messages from the same sender, oldest first (context only, do not route):\n"
)
_MESSAGE_HEAD = "Message to route:\n"


def system_prompt(candidates: tuple[Candidate, ...]) -> str:
    """The system message: one `- name: description` line per candidate, then `- none`."""
    lines = "".join(
        f"- {c.name}: {c.description}\n" if c.description else f"- {c.name}\n" for c in candidates
    )
    return _SYSTEM_HEAD + lines + _SYSTEM_TAIL


def user_content(text: str, context: tuple[str, ...], context_messages: int) -> str:
    """The user message: only `text`, or with the last `context_messages` of `context` marked."""
    kept = context[-context_messages:] if context_messages > 0 else ()
    if not kept:
        return text
    earlier = "".join(f"{i}. {message}\n" for i, message in enumerate(kept, start=1))
    return f"{_CONTEXT_HEAD}{earlier}\n{_MESSAGE_HEAD}{text}"


def _translate(exc: BaseException) -> ClassifierError:
    """Map a groq SDK (or timeout) exception to the project's ClassifierError, chained.

    The one place that maps provider statuses: 429 -> rate_limit; 401 and 403 -> auth (the key
    is refused: see `auth_hint`); 5xx and every other error status (400, 404, 409, 422...) ->
    server_error; timeouts -> timeout; connection failures -> server_error; a response that does
    not fit the schema -> unparseable.
    """
    error: ClassifierError
    if isinstance(exc, ClassifierError):
        return exc
    if isinstance(exc, (groq.APITimeoutError, TimeoutError, httpx.TimeoutException)):
        error = ClassifierTimeout(f"no answer within the timeout: {exc}")
    elif isinstance(exc, groq.APIResponseValidationError):
        error = ClassifierUnparseable(f"response does not fit the schema: {exc}")
    elif isinstance(exc, groq.APIStatusError):
        if exc.status_code == 429:
            error = ClassifierRateLimited(f"provider said 429: {exc.message}")
        elif exc.status_code in AUTH_STATUSES:
            error = ClassifierAuthError(f"provider said {exc.status_code}: {exc.message}")
        else:
            error = ClassifierServerError(f"provider said {exc.status_code}: {exc.message}")
    elif isinstance(exc, (groq.APIConnectionError, httpx.TransportError)):
        error = ClassifierServerError(f"connection failed: {exc}")
    else:  # groq.APIError, groq.GroqError and anything unexpected from the SDK
        error = ClassifierServerError(f"{type(exc).__name__}: {exc}")
    error.__cause__ = exc
    return error


AUTH_STATUSES = (401, 403)
"""Provider statuses that mean the API key (or what it may do) is refused: kind `auth`."""


def auth_hint(api_key_env: str) -> str:
    """What to do when the provider refuses the key (logged with every `auth` failure)."""
    return (f"check the key in the environment variable {api_key_env} (classifier.api_key_env): the provider "
            "refused it; until it is fixed every switch that needs the classifier stays on the current route")


def _is_config_problem(exc: BaseException) -> bool:
    """A 4xx other than 429: the key, model or request is wrong, retrying will not help."""
    return (
        isinstance(exc, groq.APIStatusError)
        and 400 <= exc.status_code < 500
        and exc.status_code != 429
    )


def _read_usage(response: Any) -> tuple[int, int]:
    """(prompt tokens, completion tokens) from a completion's `usage`; 0 when absent."""
    usage = getattr(response, "usage", None)
    prompt_tokens = getattr(usage, "prompt_tokens", None)
    completion_tokens = getattr(usage, "completion_tokens", None)
    return (
        prompt_tokens if isinstance(prompt_tokens, int) else 0,
        completion_tokens if isinstance(completion_tokens, int) else 0,
    )


def _read_answer(response: Any) -> str:
    """The first choice's message content.

    Raises ClassifierUnparseable when there is no first choice with string content (a body
    that is not a completion, `choices` missing or empty, `content` null).
    """
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError) as exc:
        raise ClassifierUnparseable(f"no completion choice in response: {exc}") from exc
    if not isinstance(content, str):
        raise ClassifierUnparseable(f"completion content is {type(content).__name__}, not text")
    return content


class GroqClassifier:
    """Classifier backed by Groq chat completions (or any OpenAI-compatible server).

    `api_key` is kept out of `repr`. When `http_client` is None the classifier builds and owns
    one (closed by `aclose`); a passed-in client stays the caller's. `clock` returns seconds
    (monotonic, from the owner: `stickyroute.clock.monotonic` in the server) and only measures
    `latency_s`.
    """

    name = "groq"

    def __init__(
        self,
        settings: ClassifierSettings,
        api_key: str,
        http_client: httpx.AsyncClient | None = None,
        base_url: str | None = None,
        *,
        clock: Callable[[], float],
    ) -> None:
        self._settings = settings
        self._clock = clock
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(
            timeout=httpx.Timeout(settings.timeout_s),
            limits=httpx.Limits(max_connections=20, max_keepalive_connections=10),
            follow_redirects=False,
        )
        self._client = groq.AsyncGroq(
            api_key=api_key,
            base_url=base_url or settings.base_url,
            max_retries=0,
            timeout=settings.timeout_s,
            http_client=self._http,
        )

    def __repr__(self) -> str:
        return f"GroqClassifier(model={self._settings.model!r}, base_url={self.base_url!r})"

    @property
    def base_url(self) -> str:
        """The API root requests go to (without `/openai/v1/...`)."""
        return str(self._client.base_url).rstrip("/")

    async def aclose(self) -> None:
        """Close the HTTP client if this classifier built it."""
        if self._owns_http:
            await self._http.aclose()

    async def classify(self, request: ClassificationRequest) -> Classification:
        """Ask the model to pick one of `request.candidates` or none; never raises.

        At most `timeout_s` seconds. An answer that is not a candidate name or alias is
        Outcome.NONE (`raw_answer` keeps it); failures are Outcome.ERROR with `error_kind`.
        """
        settings = self._settings
        messages = [
            {"role": "system", "content": system_prompt(request.candidates)},
            {
                "role": "user",
                "content": user_content(request.text, request.context, settings.context_messages),
            },
        ]
        start = self._clock()
        prompt_tokens = completion_tokens = 0
        try:
            async with asyncio.timeout(settings.timeout_s):
                response = await self._client.chat.completions.create(
                    model=settings.model,
                    messages=messages,  # type: ignore[arg-type]
                    temperature=0,
                    max_tokens=settings.max_tokens,
                )
            prompt_tokens, completion_tokens = _read_usage(response)
            answer = _read_answer(response)
        except (groq.GroqError, TimeoutError, ClassifierError) as exc:
            error = _translate(exc)
            if isinstance(error, ClassifierAuthError):
                logger.warning("groq refused the API key: %s; %s", error, auth_hint(settings.api_key_env))
            elif _is_config_problem(exc):
                logger.warning("groq refused the request (check the model and the request): %s", error)
            else:
                logger.debug("groq classifier failed: %s", error)
            return Classification(
                outcome=Outcome.ERROR,
                latency_s=self._clock() - start,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                error_kind=error.kind,
            )
        agent = parse_answer(answer, request.candidates)
        return Classification(
            outcome=Outcome.AGENT if agent is not None else Outcome.NONE,
            agent=agent,
            latency_s=self._clock() - start,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            raw_answer=answer,
        )
