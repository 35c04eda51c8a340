module readiness-proxy.bench/go-reverse-proxy

go 1.19
