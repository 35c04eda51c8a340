# An app image whose entrypoint is readiness-proxy, which starts the app after its listener is open and stops it after the drain.
# Build:  docker build -f docs/deploy/app-entrypoint.Dockerfile -t registry.example/model-server:1.4.2 .
# The first stage is our image (make image, then podman load / docker load; or docs/deploy/Dockerfile);
# any app image with glibc works below.
FROM registry.example/readiness-proxy:0.1.0 AS readiness-proxy

FROM python:3.12-slim
COPY --from=readiness-proxy /tini /usr/local/bin/tini
COPY --from=readiness-proxy /readiness-proxy /usr/local/bin/readiness-proxy
USER 65532
EXPOSE 8080
# tini reaps orphans as PID 1 and signals readiness-proxy only. CMD is readiness-proxy's flags, then
# after `--` the app, started directly (no shell) with this environment, NODE_OPTIONS and all; a pod's
# `args` replace it whole (deployment-entrypoint.yaml).
ENTRYPOINT ["tini", "--", "readiness-proxy"]
CMD ["--upstream=http://127.0.0.1:8000", "--", "python3", "-m", "http.server", "8000", "--bind", "127.0.0.1"]
