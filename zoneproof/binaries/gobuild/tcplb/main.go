// Command tcplb is zoneproof's offline stand-in for the envoy image that kind runs in front of
// an HA control plane. kind starts it as `envoy -c /home/envoy/envoy.yaml` and later writes a
// listener file (lds.yaml: one socket_address with port_value) and a cluster file (cds.yaml:
// lb_endpoints with socket_address address/port_value) next to it. tcplb polls those two
// files, listens on the listener's port and forwards each TCP connection round-robin to the
// endpoints that accepted a TCP connection at the last health check (every 2 s).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"time"
)

var (
	addressRe = regexp.MustCompile(`(?m)^[ \t]*address:[ \t]*"?([^"\s]+)"?[ \t]*$`)
	portRe    = regexp.MustCompile(`(?m)^[ \t]*port_value:[ \t]*(\d+)[ \t]*$`)
)

type balancer struct {
	mu       sync.Mutex
	backends []string
	healthy  map[string]bool
	next     atomic.Uint64
}

func (b *balancer) pick() (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	candidates := make([]string, 0, len(b.backends))
	for _, be := range b.backends {
		if b.healthy[be] {
			candidates = append(candidates, be)
		}
	}
	if len(candidates) == 0 {
		candidates = b.backends
	}
	if len(candidates) == 0 {
		return "", false
	}
	return candidates[b.next.Add(1)%uint64(len(candidates))], true
}

func (b *balancer) setBackends(backends []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends = backends
}

func (b *balancer) checkHealth() {
	b.mu.Lock()
	backends := append([]string(nil), b.backends...)
	b.mu.Unlock()
	result := make(map[string]bool, len(backends))
	for _, be := range backends {
		conn, err := net.DialTimeout("tcp", be, time.Second)
		if err == nil {
			_ = conn.Close()
		}
		result[be] = err == nil
	}
	b.mu.Lock()
	b.healthy = result
	b.mu.Unlock()
}

func (b *balancer) serve(client net.Conn) {
	defer client.Close()
	backend, ok := b.pick()
	if !ok {
		return
	}
	upstream, err := net.DialTimeout("tcp", backend, 3*time.Second)
	if err != nil {
		log.Printf("dial %s: %v", backend, err)
		return
	}
	defer upstream.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(upstream, client); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, upstream); done <- struct{}{} }()
	<-done
}

// endpoints reads host:port pairs from a cluster file, in order.
func endpoints(text string) []string {
	addrs := addressRe.FindAllStringSubmatch(text, -1)
	ports := portRe.FindAllStringSubmatch(text, -1)
	var out []string
	for i := 0; i < len(addrs) && i < len(ports); i++ {
		out = append(out, net.JoinHostPort(addrs[i][1], ports[i][1]))
	}
	return out
}

func listenPort(text string) string {
	if m := portRe.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

func main() {
	config := flag.String("c", "/home/envoy/envoy.yaml", "bootstrap file; lds.yaml and cds.yaml are read next to it")
	flag.Parse()
	dir := filepath.Dir(*config)
	lds, cds := filepath.Join(dir, "lds.yaml"), filepath.Join(dir, "cds.yaml")
	fmt.Printf("tcplb (zoneproof, stands in for envoy): watching %s and %s\n", lds, cds)
	b := &balancer{healthy: map[string]bool{}}
	var listener net.Listener
	var lastLDS, lastCDS string
	for {
		if text, err := os.ReadFile(cds); err == nil && string(text) != lastCDS {
			lastCDS = string(text)
			b.setBackends(endpoints(lastCDS))
			log.Printf("backends: %v", endpoints(lastCDS))
		}
		if text, err := os.ReadFile(lds); err == nil && string(text) != lastLDS {
			lastLDS = string(text)
			if port := listenPort(lastLDS); port != "" && listener == nil {
				l, err := net.Listen("tcp", ":"+port)
				if err != nil {
					log.Fatalf("listen :%s: %v", port, err)
				}
				listener = l
				log.Printf("listening on :%s", port)
				go func() {
					for {
						conn, err := l.Accept()
						if err != nil {
							log.Fatalf("accept: %v", err)
						}
						go b.serve(conn)
					}
				}()
			}
		}
		b.checkHealth()
		time.Sleep(2 * time.Second)
	}
}
