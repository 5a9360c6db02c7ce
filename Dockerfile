# `tribunal serve` as a container image (docs/server.md, "Container image").
#
#   docker build -t tribunal .
#   docker run --rm -p 8080:8080 -v "$PWD/rules:/packs:ro" \
#     -v "$PWD/token:/run/secrets/tribunal-token:ro" tribunal
#
# Two stages: the engine built from this clone (its Cargo.lock, as `cargo build
# --release --locked` builds it), then a small runtime image holding the binary
# alone, run as an unprivileged user, with the packs mounted read-only at /packs
# and a health check on /healthz. Everything after the image name is given to
# `tribunal serve` in place of the default arguments (a bundle instead of /packs:
# `--bundle http://packs.internal/packs.tar.gz --trust /keys/team.pub`).

ARG RUST_VERSION=1.89

FROM rust:${RUST_VERSION}-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin tribunal \
 && strip target/release/tribunal \
 && install -D -m 0755 target/release/tribunal /out/tribunal

FROM debian:bookworm-slim AS runtime
# curl for the health check only; no compiler, no shell tools beyond the base.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin tribunal
COPY --from=build /out/tribunal /usr/local/bin/tribunal
USER 10001:10001
VOLUME ["/packs"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["curl", "-fsS", "-o", "/dev/null", "http://127.0.0.1:8080/healthz"]
# 0.0.0.0 inside the container is reachable from outside it: the service asks
# callers for the bearer token of --token-file (or give --insecure-no-auth when
# something in front checks callers).
ENTRYPOINT ["tribunal", "serve", "--listen", "0.0.0.0:8080"]
CMD ["--token-file", "/run/secrets/tribunal-token", "/packs"]
