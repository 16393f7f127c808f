# syntax=docker/dockerfile:1
# The brupop images: `brupop-agent` (the DaemonSet) and `brupop-control` (controller and
# apiserver). Each is one root file system, assembled outside by `python3 -m scripts.release
# roots` in the distroless way: Debian 12 packages unpacked with `dpkg-deb -x` (no maintainer
# scripts, no shell, no package manager), brupop's venv for the architecture, bytecode for what
# the processes load, and the image's SBOM at /usr/share/brupop/sbom.cdx.json.
# Build: scripts/build-images (it passes ROOT, IMAGE and VERSION, and --platform).

FROM scratch
ARG ROOT
ARG IMAGE
ARG VERSION
COPY ${ROOT}/ /
LABEL org.opencontainers.image.title="brupop-${IMAGE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.description="Bottlerocket update operator (Python): ${IMAGE}" \
      org.opencontainers.image.licenses="Apache-2.0 OR MIT" \
      org.opencontainers.image.base.name="debian:12 packages, unpacked (no base image)" \
      io.brupop.sbom="/usr/share/brupop/sbom.cdx.json"
ENV PATH=/opt/brupop/bin:/usr/bin \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 10001:10001
ENTRYPOINT ["/opt/brupop/bin/brupop"]
CMD ["--help"]
