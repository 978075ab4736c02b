# syntax=docker/dockerfile:1
# ferrvault-operator image: a locked release build on Debian 12, run from distroless as non-root.
# The build stage runs exactly `cargo build --release --locked --package ferrvault-operator`, the
# command CI proves works.

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Cache mounts keep the registry and target dir between builds; the binary is copied out of the
# cached target dir because cache mounts are not part of the image.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --package ferrvault-operator \
    && cp target/release/ferrvault-operator /ferrvault-operator

# glibc, libgcc and CA certificates, no shell, no package manager; Debian 12 like the build stage.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /ferrvault-operator /ferrvault-operator
USER 65532:65532
ENTRYPOINT ["/ferrvault-operator", "run"]
