// grpc-bench: a gRPC health server, and a client of unary Check calls at a fixed concurrency on one channel (bench section 8). Built with Debian's golang-google-grpc-dev in GOPATH mode.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// The service the calls name: not one the proxy answers itself (CONTRACT §13), so every call reaches the app.
const service = "bench"

func serve(addr string) {
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server := grpc.NewServer()
	checks := health.NewServer()
	checks.SetServingStatus(service, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(server, checks)
	if err := server.Serve(listener); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type report struct {
	Calls      int64   `json:"calls"`
	Errors     int64   `json:"errors"`
	Seconds    float64 `json:"seconds"`
	P50Micros  float64 `json:"p50_us"`
	P99Micros  float64 `json:"p99_us"`
	FirstError string  `json:"first_error,omitempty"`
	// With -rate: the p99 of the calls due in each 1-s slice, each timed from when it was due.
	SliceP99Micros []float64 `json:"slice_p99_us,omitempty"`
}

func client(args []string) {
	flags := flag.NewFlagSet("client", flag.ExitOnError)
	addr := flags.String("addr", "127.0.0.1:19060", "server")
	concurrency := flags.Int("c", 10, "calls in flight on the one channel")
	seconds := flags.Float64("seconds", 5, "at most this long")
	maxCalls := flags.Int64("calls", 1_000_000, "at most this many calls")
	rate := flags.Float64("rate", 0, "open loop: calls due at this rate a second, each timed from when it was due (0: closed loop)")
	flags.Parse(args)

	dialContext, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	conn, err := grpc.DialContext(dialContext, *addr, grpc.WithInsecure(), grpc.WithBlock())
	if err != nil {
		json.NewEncoder(os.Stdout).Encode(report{Errors: 1, FirstError: "no HTTP/2 connection within 3 s (dial: " + err.Error() + ")"})
		return
	}
	defer conn.Close()
	stub := healthpb.NewHealthClient(conn)

	// SIGTERM or SIGINT ends the run early and still reports: a caller whose server died stops the
	// calls, which would otherwise fail as fast as they can be made until the deadline.
	var stopped int32
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-stop
		atomic.StoreInt32(&stopped, 1)
	}()

	var issued, errors int64
	var firstError atomic.Value
	latencies := make([][]time.Duration, *concurrency)
	deadline := time.Now().Add(time.Duration(*seconds * float64(time.Second)))
	started := time.Now()
	var wait sync.WaitGroup
	call := func() error {
		callContext, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		answer, err := stub.Check(callContext, &healthpb.HealthCheckRequest{Service: service})
		if err == nil && answer.Status != healthpb.HealthCheckResponse_SERVING {
			err = fmt.Errorf("status %v", answer.Status)
		}
		return err
	}
	var slices [][][]time.Duration
	if *rate > 0 {
		// Open loop: a dispatcher hands out due times; a call due while every worker is busy waits, and its wait counts.
		total := int64(*rate * *seconds)
		if total > *maxCalls {
			total = *maxCalls
		}
		sliceCount := int(*seconds + 0.999999)
		slices = make([][][]time.Duration, *concurrency)
		dues := make(chan time.Time, total)
		go func() {
			defer close(dues)
			for n := int64(0); n < total && atomic.LoadInt32(&stopped) == 0; n++ {
				due := started.Add(time.Duration(float64(n) / *rate * float64(time.Second)))
				if wait := time.Until(due); wait > 0 {
					time.Sleep(wait)
				}
				dues <- due
			}
		}()
		for worker := 0; worker < *concurrency; worker++ {
			slices[worker] = make([][]time.Duration, sliceCount)
			wait.Add(1)
			go func(worker int) {
				defer wait.Done()
				for due := range dues {
					err := call()
					took := time.Since(due)
					if err != nil {
						atomic.AddInt64(&errors, 1)
						firstError.CompareAndSwap(nil, err.Error())
						continue
					}
					latencies[worker] = append(latencies[worker], took)
					if slice := int(due.Sub(started) / time.Second); slice < sliceCount {
						slices[worker][slice] = append(slices[worker][slice], took)
					}
				}
			}(worker)
		}
	}
	for worker := 0; worker < *concurrency && *rate <= 0; worker++ {
		wait.Add(1)
		go func(worker int) {
			defer wait.Done()
			for atomic.LoadInt32(&stopped) == 0 && atomic.AddInt64(&issued, 1) <= *maxCalls && time.Now().Before(deadline) {
				callContext, done := context.WithTimeout(context.Background(), 5*time.Second)
				began := time.Now()
				answer, err := stub.Check(callContext, &healthpb.HealthCheckRequest{Service: service})
				took := time.Since(began)
				done()
				if err == nil && answer.Status != healthpb.HealthCheckResponse_SERVING {
					err = fmt.Errorf("status %v", answer.Status)
				}
				if err != nil {
					atomic.AddInt64(&errors, 1)
					firstError.CompareAndSwap(nil, err.Error())
					continue
				}
				latencies[worker] = append(latencies[worker], took)
			}
		}(worker)
	}
	wait.Wait()
	elapsed := time.Since(started).Seconds()
	var all []time.Duration
	for _, some := range latencies {
		all = append(all, some...)
	}
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	quantile := func(q float64) float64 {
		if len(all) == 0 {
			return 0
		}
		index := int(q*float64(len(all))+0.999999) - 1
		if index < 0 {
			index = 0
		}
		return float64(all[index].Nanoseconds()) / 1000
	}
	out := report{Calls: int64(len(all)), Errors: errors, Seconds: elapsed, P50Micros: quantile(0.5), P99Micros: quantile(0.99)}
	if slices != nil {
		for slice := range slices[0] {
			var some []time.Duration
			for worker := range slices {
				some = append(some, slices[worker][slice]...)
			}
			sort.Slice(some, func(a, b int) bool { return some[a] < some[b] })
			p99 := 0.0
			if len(some) > 0 {
				p99 = float64(some[(len(some)*99+99)/100-1].Nanoseconds()) / 1000
			}
			out.SliceP99Micros = append(out.SliceP99Micros, p99)
		}
	}
	if text, ok := firstError.Load().(string); ok {
		out.FirstError = text
	}
	json.NewEncoder(os.Stdout).Encode(out)
}

func main() {
	if len(os.Args) >= 3 && os.Args[1] == "server" {
		serve(os.Args[2])
		return
	}
	if len(os.Args) >= 2 && os.Args[1] == "client" {
		client(os.Args[2:])
		return
	}
	fmt.Fprintln(os.Stderr, "usage: grpc-bench server ADDR | grpc-bench client [-addr A] [-c N] [-seconds S] [-calls N] [-rate R]")
	os.Exit(2)
}
