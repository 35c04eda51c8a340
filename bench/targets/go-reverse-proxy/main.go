// Peer: Go's httputil.ReverseProxy, stdlib only, the design of the Go readiness proxies this project replaces.
// Usage: go-reverse-proxy LISTEN_ADDR UPSTREAM_URL   (run with GOMAXPROCS=1 to match one nginx worker)
package main

import (
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		log.Fatalf("usage: %s LISTEN_ADDR UPSTREAM_URL", os.Args[0])
	}
	upstream, err := url.Parse(os.Args[2])
	if err != nil {
		log.Fatalf("upstream %q: %v", os.Args[2], err)
	}
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	// http.DefaultTransport keeps 2 idle connections per host: under 50 clients it would open and
	// close upstream connections on most requests. 64 idle, like the nginx peer's `keepalive 64`.
	proxy.Transport = &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
		// Bodies pass through as sent: no gzip negotiated on the client's behalf.
		DisableCompression: true,
	}
	server := &http.Server{Addr: os.Args[1], Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(server.ListenAndServe())
}
