// otlp-tool: the OTLP/gRPC ends of test/collector.test.ts, on loopback only.
//
//	otlp-tool sink -listen 127.0.0.1:PORT [-delay 2s]
//	    An OTLP/gRPC backend (traces, metrics, logs). Every export request it receives is printed
//	    as one JSON line on stdout: {"signal":"traces","ms":<ms since start>,"data":<OTLP JSON>}.
//	    -delay makes it a slow backend: it answers each request after that long (or when the
//	    client gives up). It prints "listening" on stderr once it accepts connections.
//	otlp-tool send -endpoint 127.0.0.1:PORT -signal traces|metrics -name NAME
//	    Sends one span or one gauge data point (both named NAME) and exits 0 once accepted.
//
// Built by scripts/build-otelcol.sh beside otelcol, with pdata at the collector's release.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	// The collector's otlp exporter sends gzip by default (configgrpc `compression`).
	_ "google.golang.org/grpc/encoding/gzip"
)

var (
	start = time.Now()
	outMu sync.Mutex
)

func emit(signal string, data []byte) {
	line, _ := json.Marshal(map[string]any{"signal": signal, "ms": time.Since(start).Milliseconds(), "data": json.RawMessage(data)})
	outMu.Lock()
	defer outMu.Unlock()
	os.Stdout.Write(append(line, '\n'))
}

func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type traces struct {
	ptraceotlp.UnimplementedGRPCServer
	delay time.Duration
}

func (s *traces) Export(ctx context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	if err := wait(ctx, s.delay); err != nil {
		return ptraceotlp.NewExportResponse(), err
	}
	b, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(req.Traces())
	emit("traces", b)
	return ptraceotlp.NewExportResponse(), nil
}

type metrics struct {
	pmetricotlp.UnimplementedGRPCServer
	delay time.Duration
}

func (s *metrics) Export(ctx context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	if err := wait(ctx, s.delay); err != nil {
		return pmetricotlp.NewExportResponse(), err
	}
	b, _ := (&pmetric.JSONMarshaler{}).MarshalMetrics(req.Metrics())
	emit("metrics", b)
	return pmetricotlp.NewExportResponse(), nil
}

type logs struct {
	plogotlp.UnimplementedGRPCServer
	delay time.Duration
}

func (s *logs) Export(ctx context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	if err := wait(ctx, s.delay); err != nil {
		return plogotlp.NewExportResponse(), err
	}
	b, _ := (&plog.JSONMarshaler{}).MarshalLogs(req.Logs())
	emit("logs", b)
	return plogotlp.NewExportResponse(), nil
}

func sink(args []string) error {
	fs := flag.NewFlagSet("sink", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "loopback address to listen on")
	delay := fs.Duration("delay", 0, "answer every request after this long")
	fs.Parse(args)
	host, _, err := net.SplitHostPort(*listen)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("sink: -listen %q is not a loopback address", *listen)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	s := grpc.NewServer()
	ptraceotlp.RegisterGRPCServer(s, &traces{delay: *delay})
	pmetricotlp.RegisterGRPCServer(s, &metrics{delay: *delay})
	plogotlp.RegisterGRPCServer(s, &logs{delay: *delay})
	fmt.Fprintf(os.Stderr, "listening %s\n", l.Addr())
	return s.Serve(l)
}

func send(args []string) error {
	fs := flag.NewFlagSet("send", flag.ExitOnError)
	endpoint := fs.String("endpoint", "", "loopback host:port of the OTLP/gRPC receiver")
	signal := fs.String("signal", "traces", "traces or metrics")
	name := fs.String("name", "test", "span or metric name")
	fs.Parse(args)
	host, _, err := net.SplitHostPort(*endpoint)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("send: -endpoint %q is not a loopback address", *endpoint)
	}
	conn, err := grpc.NewClient(*endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	now := time.Now()
	switch *signal {
	case "traces":
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "bindings-test")
		span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		span.SetName(*name)
		span.SetTraceID([16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
		span.SetSpanID([8]byte{1, 2, 3, 4, 5, 6, 7, 8})
		span.SetStartTimestamp(pcommonTime(now.Add(-time.Millisecond)))
		span.SetEndTimestamp(pcommonTime(now))
		_, err = ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
	case "metrics":
		md := pmetric.NewMetrics()
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", "bindings-test")
		m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName(*name)
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetIntValue(42)
		dp.SetTimestamp(pcommonTime(now))
		_, err = pmetricotlp.NewGRPCClient(conn).Export(ctx, pmetricotlp.NewExportRequestFromMetrics(md))
	default:
		return fmt.Errorf("send: unknown -signal %q", *signal)
	}
	return err
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: otlp-tool sink|send [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "sink":
		err = sink(os.Args[2:])
	case "send":
		err = send(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "otlp-tool:", err)
		os.Exit(1)
	}
}
