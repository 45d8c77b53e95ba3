# A small static image of rlcheck:
#   docker build --build-arg VERSION=v0.1.0 --build-arg REVISION=$(git rev-parse HEAD) -t rlcheck .
#   docker run --rm -v "$PWD:/work" rlcheck check --rules 10/s,500/min sends.csv
# The build stage compiles a static binary (no cgo); the final stage holds
# only that binary on distroless/static (CA certificates, tzdata, a nonroot
# user, no shell).

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Empty arguments leave what the Go toolchain stamps (see buildinfo).
ARG VERSION=""
ARG REVISION=""
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/rlcheck/rlcheck/buildinfo.version=${VERSION} -X github.com/rlcheck/rlcheck/buildinfo.revision=${REVISION}" \
      -o /out/rlcheck ./cmd/rlcheck \
 && /out/rlcheck version

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/rlcheck /usr/local/bin/rlcheck
WORKDIR /work
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/rlcheck"]
CMD ["--help"]
