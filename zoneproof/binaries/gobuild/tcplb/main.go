// Command tcplb is zoneproof's offline stand-in for the envoy image that kind runs in front of
// an HA control plane. kind starts it as `envoy -c /home/envoy/envoy.yaml` and later writes a
// listener file (lds.yaml: one socket_address with port_value) and a cluster file (cds.yaml:
// lb_endpoints with socket_address address/port_value) next to it. tcplb polls those two
// files, listens on the listener's port and forwards each TCP connection round-robin to the
// healthy endpoints.
//
// Health is checked as kind's envoy cluster does (pkg/cluster/internal/loadbalancer): an
// HTTPS GET /healthz (certificate not verified) every 2 s with a 3 s timeout; an endpoint is
// unhealthy after 2 failed checks in a row and healthy again after 1 good one. A kube-apiserver
// whose own etcd member is gone (kubeadm's stacked etcd: --etcd-servers=127.0.0.1 only) still
// accepts TCP but fails /healthz, so it gets no new connections. When an endpoint turns
// unhealthy, the connections open through it are closed (envoy's
// close_connections_on_host_health_failure), so clients reconnect to a healthy API server
// instead of waiting on one that cannot answer.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"time"
)

const (
	checkInterval      = 2 * time.Second
	checkTimeout       = 3 * time.Second
	unhealthyThreshold = 2
	healthyThreshold   = 1
	healthPath         = "/healthz"
)

var (
	addressRe = regexp.MustCompile(`(?m)^[ \t]*address:[ \t]*"?([^"\s]+)"?[ \t]*$`)
	portRe    = regexp.MustCompile(`(?m)^[ \t]*port_value:[ \t]*(\d+)[ \t]*$`)
)

// endpoint is one backend's health and the connections open through it.
type endpoint struct {
	healthy   bool
	failures  int
	successes int
	conns     map[net.Conn]struct{}
}

type balancer struct {
	mu        sync.Mutex
	backends  []string
	endpoints map[string]*endpoint
	next      atomic.Uint64
	client    *http.Client
}

func newBalancer() *balancer {
	return &balancer{
		endpoints: map[string]*endpoint{},
		client: &http.Client{
			Timeout: checkTimeout,
			Transport: &http.Transport{
				TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, // as envoy: ACCEPT_UNTRUSTED
				DisableKeepAlives: true,
			},
		},
	}
}

func (b *balancer) pick() (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	candidates := make([]string, 0, len(b.backends))
	for _, be := range b.backends {
		if b.endpoints[be].healthy {
			candidates = append(candidates, be)
		}
	}
	if len(candidates) == 0 { // none healthy (or not checked yet): try them all, as envoy's panic mode
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
	for _, be := range backends {
		if b.endpoints[be] == nil {
			b.endpoints[be] = &endpoint{conns: map[net.Conn]struct{}{}}
		}
	}
}

// probe is one health check: true if GET /healthz answers 200 within the timeout.
func (b *balancer) probe(backend string) bool {
	resp, err := b.client.Get("https://" + backend + healthPath)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// record applies one check's result; it returns the connections to close when the endpoint
// has just turned unhealthy.
func (b *balancer) record(backend string, ok bool) []net.Conn {
	b.mu.Lock()
	defer b.mu.Unlock()
	ep := b.endpoints[backend]
	if ep == nil {
		return nil
	}
	if ok {
		ep.failures, ep.successes = 0, ep.successes+1
		if !ep.healthy && ep.successes >= healthyThreshold {
			ep.healthy = true
			log.Printf("%s healthy (GET %s 200)", backend, healthPath)
		}
		return nil
	}
	ep.successes, ep.failures = 0, ep.failures+1
	if !ep.healthy || ep.failures < unhealthyThreshold {
		return nil
	}
	ep.healthy = false
	drained := make([]net.Conn, 0, len(ep.conns))
	for c := range ep.conns {
		drained = append(drained, c)
	}
	log.Printf("%s unhealthy (%d failed checks of %s): closing its %d connections",
		backend, ep.failures, healthPath, len(drained))
	return drained
}

func (b *balancer) checkHealth() {
	b.mu.Lock()
	backends := append([]string(nil), b.backends...)
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, be := range backends {
		wg.Add(1)
		go func(be string) {
			defer wg.Done()
			for _, c := range b.record(be, b.probe(be)) {
				_ = c.Close()
			}
		}(be)
	}
	wg.Wait()
}

func (b *balancer) track(backend string, conn net.Conn, open bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ep := b.endpoints[backend]
	if ep == nil {
		return
	}
	if open {
		ep.conns[conn] = struct{}{}
	} else {
		delete(ep.conns, conn)
	}
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
	b.track(backend, client, true)
	defer b.track(backend, client, false)
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
	b := newBalancer()
	go func() {
		for range time.Tick(checkInterval) {
			b.checkHealth()
		}
	}()
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
		time.Sleep(time.Second)
	}
}
