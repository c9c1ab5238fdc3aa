# syntax=docker/dockerfile:1
# sheetd as a container image. Built on Swift's Debian 12 (bookworm) image, the distribution whose
# libmicrohttpd the project is tested with, and run on debian:bookworm-slim: the Swift runtime is
# linked in (--static-swift-stdlib), so the image needs only libmicrohttpd12 and libhiredis0.14
# from Debian. The binary runs as an unprivileged user, listens on 0.0.0.0:8080, drains on SIGTERM
# (exec-form ENTRYPOINT: SIGTERM reaches sheetd itself), and answers its own HEALTHCHECK.
#
#   docker build -t sheetd .
#   docker run --rm -p 8080:8080 sheetd
#   docker run --rm -p 8080:8080 --stop-timeout 40 sheetd --drain-grace 30   # flags go after the image
#
# Every flag is also an environment variable (`sheetd --help`), e.g. -e SHEETD_SESSION_TTL=300.
# IntegrationTests/dockerfile-check lints this file (hadolint) and checks what it copies; docs/DEPLOYMENT.md
# says more.

FROM swift:6.3.1-bookworm AS build
# Packages from bookworm itself: its stable updates are security fixes, which the image should get,
# so the versions are not pinned.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd-dev libhiredis-dev zlib1g-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build
# The dependencies first, in a layer of their own that changes only with the manifest.
# Package.resolve[d]: the pins, when the checkout has them (the pattern lets the copy go on without).
COPY Package.swift Package.resolve[d] ./
RUN swift package resolve
# The manifest names the test targets too, so their folders must exist (only sheetd is built).
COPY Sources ./Sources
COPY Tests ./Tests
# The binary and the resource bundle Bundle.module looks for next to it (the demo page, the
# OpenAPI document, the client module).
RUN swift build -c release --product sheetd --static-swift-stdlib \
    && bin="$(swift build -c release --show-bin-path)" \
    && mkdir /out \
    && cp "$bin/sheetd" /out/sheetd \
    && strip /out/sheetd \
    && cp -R "$bin/sheetd_SheetService.resources" /out/

FROM debian:bookworm-slim
# Unpinned for the same reason as above: bookworm's updates are security fixes.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd12 libhiredis0.14 libstdc++6 \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 sheetd \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin sheetd
WORKDIR /app
COPY --from=build /out/ /app/
USER 10001:10001
ENV SHEETD_HOST=0.0.0.0 \
    SHEETD_PORT=8080
EXPOSE 8080
# Slim images have no curl: sheetd asks its own GET /readyz (exit 0 iff 200), on the port above.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["/app/sheetd", "healthcheck", "--host", "127.0.0.1", "--timeout", "2"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/app/sheetd"]
