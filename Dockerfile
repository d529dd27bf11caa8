# syntax=docker/dockerfile:1
#
# Orkestra's container image: one static binary on distroless, running as
# the unprivileged user 65532. The image needs no writable root filesystem:
# the built-in certificate mode writes its serving certificate under /tmp,
# which `orkestra manifests` mounts as an emptyDir.
#
#   make image                                  # docker build --build-arg VERSION=… -t orkestra:VERSION .
#   docker buildx build --platform linux/amd64,linux/arm64 -t REGISTRY/orkestra:TAG --push .

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
# The module cache first: it changes less often than the sources.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
ARG TARGETOS=linux
ARG TARGETARCH
# Static (no cgo), reproducible paths, the version stamped in.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} GOFLAGS=-buildvcs=false \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/orkestra ./cmd/orkestra

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/orkestra /usr/local/bin/orkestra
# nonroot:nonroot; numeric, so that runAsNonRoot can verify it.
USER 65532:65532
# 8443: HTTPS /convert; 8080: /metrics, /healthz, /readyz, /katalog.
EXPOSE 8443 8080
ENTRYPOINT ["/usr/local/bin/orkestra"]
CMD ["--help"]
