# syntax=docker/dockerfile:1
# Build: docker build -t huit .
# Run:   docker run -e DATABASE_URL='postgres://...?sslmode=verify-full' -p 8080:8080 huit
# Admin: docker run -i -e DATABASE_URL=... huit admin create NAME   (password on stdin)
# With its database: docker compose up (compose.yaml). The README's
# "Docker" section has the rest; scripts/deploy-check checks this file.

FROM rust:1-slim-bookworm AS builder
WORKDIR /src
# Queries are checked against the committed .sqlx/ data: no database needed.
ENV SQLX_OFFLINE=true CARGO_TERM_COLOR=never
COPY Cargo.toml Cargo.lock ./
COPY .sqlx ./.sqlx
COPY migrations ./migrations
COPY domain ./domain
COPY ledger ./ledger
COPY store ./store
COPY api ./api
COPY tests ./tests
# Every workspace member must be present for cargo to load the workspace.
COPY bench ./bench
# The workspace's release profile keeps line tables for profiling; the image
# does not need them.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    CARGO_PROFILE_RELEASE_DEBUG=0 cargo build --locked --release -p api --bin huit \
    && cp target/release/huit /usr/local/bin/huit

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 10001 huit \
    && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin huit
COPY --from=builder /usr/local/bin/huit /usr/local/bin/huit
# Numeric, so that an orchestrator's runAsNonRoot can check it.
USER 10001:10001
ENV BIND=0.0.0.0:8080 RUST_LOG=info,sqlx=warn
EXPOSE 8080
# Healthy once /healthz answers 200 (the database answers too).
HEALTHCHECK --interval=10s --timeout=6s --start-period=60s --retries=3 \
    CMD ["/usr/local/bin/huit", "health"]
# `huit serve` unless another command is given (admin, ratings, health).
ENTRYPOINT ["/usr/local/bin/huit"]
CMD ["serve"]
