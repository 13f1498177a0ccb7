# stickyroute in a container: a slim Python image, the package built from this source tree and
# installed as a wheel, run by a non-root user, listening on 0.0.0.0.
#
#   docker build -t stickyroute .
#   docker run -p 8080:8080 -e STICKYROUTE_ADMIN_TOKEN=... -e TELEGRAM_SECRET_TOKEN=... \
#     -v "$PWD/stickyroute.toml:/etc/stickyroute/stickyroute.toml:ro" stickyroute
#
# Without a mounted config it serves deploy/stickyroute.toml (Redis at ${REDIS_URL}, secrets from
# the environment): see deploy/docker-compose.yml. Logs: JSON lines on stderr.

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE NOTICE ./
COPY stickyroute ./stickyroute
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN groupadd --system --gid 10001 stickyroute \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin stickyroute
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
COPY deploy/stickyroute.toml /etc/stickyroute/stickyroute.toml
WORKDIR /etc/stickyroute
USER 10001:10001
EXPOSE 8080 9090
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:9090/healthz', timeout=2).status != 200)"]
CMD ["stickyroute", "serve", "--host", "0.0.0.0", "--log-format", "json"]
