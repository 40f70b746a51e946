// How Go reads a host:port, for test/host-spellings.test.ts: the OpenTelemetry Collector (the
// tracer sidecar, a Go program built with CGO_ENABLED=0) splits its exporter endpoint with
// net.SplitHostPort and dials a host that netip.ParseAddr reads as an address, else looks the
// name up (grpc-go's dns resolver). One JSON line per input line:
//   {"in": "127.1:4317", "host": "127.1", "port": "4317", "addr": "", "loopback": false}
//   {"in": "::1:4317", "splitError": "address ::1:4317: too many colons in address"}
// "addr" is the address netip.ParseAddr reads in the host ("" when it is a name), "loopback"
// whether that address is this host's (IsLoopback, or IsUnspecified: a connect to 0.0.0.0 or ::
// reaches the local host on Linux). Standard library only.
package main

import (
	"bufio"
	"encoding/json"
	"net"
	"net/netip"
	"os"
)

type reading struct {
	In         string `json:"in"`
	SplitError string `json:"splitError,omitempty"`
	Host       string `json:"host"`
	Port       string `json:"port"`
	Addr       string `json:"addr"`
	Loopback   bool   `json:"loopback"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		r := reading{In: in.Text()}
		host, port, err := net.SplitHostPort(r.In)
		if err != nil {
			r.SplitError = err.Error()
		} else {
			r.Host, r.Port = host, port
			if a, err := netip.ParseAddr(host); err == nil {
				r.Addr = a.String()
				r.Loopback = a.IsLoopback() || a.IsUnspecified()
			}
		}
		if err := out.Encode(r); err != nil {
			panic(err)
		}
	}
}
