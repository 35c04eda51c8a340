// A prober shaped like the kubelet's gRPC probe (k8s.io/kubernetes pkg/probe/grpc): grpc-go, insecure,
// user agent kube-probe/<version>, a blocking dial and one Health/Check within the timeout. It prints
// one line and exits 0 only on SERVING, as the kubelet passes only then.
//
// With -method, it makes one unary call of that method instead (a HealthCheckRequest as the
// message) and prints the gRPC status: how grpc-go sees a proxy-made error.
//
// Built by the tests with Debian's golang-google-grpc-dev: GO111MODULE=off GOPATH=/usr/share/gocode.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpchealth "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "host:port to dial")
	service := flag.String("service", "", "the HealthCheckRequest's service")
	timeout := flag.Duration("timeout", time.Second, "the probe's timeout (the kubelet's timeoutSeconds)")
	method := flag.String("method", "", "instead of a health check: one unary call of this method")
	version := flag.String("version", "1.31", "the kubelet version in the user agent")
	flag.Parse()

	// The kubelet's options, as pkg/probe/grpc/grpc.go sets them.
	opts := []grpc.DialOption{
		grpc.WithUserAgent(fmt.Sprintf("kube-probe/%s", *version)),
		grpc.WithBlock(),
		grpc.WithInsecure(),
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	conn, err := grpc.DialContext(ctx, *addr, opts...)
	if err != nil {
		if err == context.DeadlineExceeded {
			fmt.Printf("timeout: failed to connect service %q within %v: %+v\n", *addr, *timeout, err)
		} else {
			fmt.Printf("error: failed to connect service at %q: %+v\n", *addr, err)
		}
		os.Exit(2)
	}
	defer conn.Close()
	outgoing := metadata.NewOutgoingContext(ctx, make(metadata.MD))

	if *method != "" {
		reply := new(grpchealth.HealthCheckResponse)
		err := conn.Invoke(outgoing, *method, &grpchealth.HealthCheckRequest{Service: *service}, reply)
		stat, _ := status.FromError(err)
		fmt.Printf("code %d %s: %s\n", stat.Code(), stat.Code(), stat.Message())
		if err != nil {
			os.Exit(1)
		}
		return
	}

	resp, err := grpchealth.NewHealthClient(conn).Check(outgoing, &grpchealth.HealthCheckRequest{Service: *service})
	if err != nil {
		stat, ok := status.FromError(err)
		if ok && stat.Code() == codes.Unimplemented {
			fmt.Printf("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %s\n", stat.Message())
		} else if ok && stat.Code() == codes.DeadlineExceeded {
			fmt.Printf("timeout: health rpc did not complete within %v\n", *timeout)
		} else {
			fmt.Printf("error: health rpc probe failed: code %d %s: %s\n", stat.Code(), stat.Code(), stat.Message())
		}
		os.Exit(1)
	}
	fmt.Printf("status %s\n", resp.GetStatus())
	if resp.GetStatus() != grpchealth.HealthCheckResponse_SERVING {
		os.Exit(1)
	}
}
