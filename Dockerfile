# One image for every Vancetope service. docker-compose.yml picks the command per service:
#   python -m session_service | process_service | tool_service | recipe_service | gateway
#   python -m engine_worker
# No store in the image: compose runs mongo:7 and sets MONGODB_URI (the embedded FerretDB of
# `make run` is for a checkout, not for containers).
# The web client, built from its lockfile; the gateway serves it from $VANCE_WEB_DIST.
# Base images pinned to a patch release: a rebuild gets the same toolchains (raise them on purpose).
FROM node:20.18.1-bookworm-slim AS web
WORKDIR /web
COPY web/package.json web/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY web/index.html web/vite.config.ts web/tsconfig.json ./
COPY web/src ./src
RUN npm run build

FROM python:3.11.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    GRPC_EXPERIMENTS=-event_engine_client,-event_engine_listener \
    VANCE_DATA_DIR=/var/lib/vance \
    VANCE_WEB_DIST=/opt/vance/web

WORKDIR /src

# Dependencies first, from pyproject.toml and the pins of requirements.lock (tools/lock.py) as
# constraints (the lock also pins the dev tools, which the image leaves out), so a code change
# does not reinstall them.
COPY pyproject.toml requirements.lock ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && pip install -c requirements.lock -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# The package itself (the generated vance/v1 stubs are checked in; protoc is not needed).
COPY vance ./vance
COPY session_service ./session_service
COPY process_service ./process_service
COPY tool_service ./tool_service
COPY recipe_service ./recipe_service
COPY gateway ./gateway
COPY engine_worker ./engine_worker
# The client package owns the `vance` command (`vance service-token`, docs/clients.md).
COPY clients/python ./clients/python
RUN pip install -c requirements.lock . ./clients/python \
    && rm -rf /src
WORKDIR /
COPY --from=web /web/dist /opt/vance/web
# The how_do_i tool searches these (process_service/tools/how_do_i.py).
COPY docs /opt/vance/docs
ENV VANCE_DOCS_DIR=/opt/vance/docs

# Non-root. VANCE_DATA_DIR only holds a generated JWT secret when VANCE_JWT_SECRET is unset.
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/vance vance \
    && mkdir -p /var/lib/vance \
    && chown vance:vance /var/lib/vance
USER vance
WORKDIR /home/vance

# gRPC services use VANCE_GRPC_PORT_BASE+0..3 (50051-50054); the gateway uses 8080; an engine
# worker serves its gRPC health on VANCE_WORKER_HEALTH_PORT (compose and deploy/k8s: 8081).
EXPOSE 50051 50052 50053 50054 8080 8081

CMD ["python", "-m", "gateway"]
