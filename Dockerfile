# syntax=docker/dockerfile:1
# One image for `brupop agent`, `brupop apiserver` and `brupop controller`.
# Build: docker build -t <registry>/brupop:0.1.0 .
#
# The builder installs brupop and its runtime dependencies (wheels only, no compiler) into a
# virtual environment; the final stage is the same slim Python with that venv copied in, no pip
# and no build tools, running as an unprivileged user. (The agent's DaemonSet runs the same
# image as root without capabilities, to reach the host's API socket.)

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/brupop
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN /opt/brupop/bin/pip install --only-binary=:all: . \
    && /opt/brupop/bin/python -m pip uninstall --yes pip setuptools

FROM ${PYTHON_IMAGE}
RUN groupadd --system --gid 10001 brupop \
    && useradd --system --uid 10001 --gid brupop --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin brupop
COPY --from=builder /opt/brupop /opt/brupop
ENV PATH=/opt/brupop/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 10001:10001
ENTRYPOINT ["brupop"]
CMD ["--help"]
