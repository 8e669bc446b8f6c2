// Command tcplb is zoneproof's offline stand-in for the envoy image that kind runs in front of
// an HA control plane. kind starts it as `envoy -c /home/envoy/envoy.yaml` and later writes a
// listener file (lds.yaml: one socket_address with port_value) and a cluster file (cds.yaml:
// lb_endpoints with socket_address address/port_value) next to it. tcplb polls those two
// files, listens on the listener's port and forwards each TCP connection round-robin to the
// healthy endpoints.
//
// Health is checked as kind's envoy cluster does (pkg/cluster/internal/loadbalancer): an
// HTTPS GET /healthz (certificate not verified) every 2 s with a 3 s timeout, unhealthy after 2
// failed checks, healthy again after 1 good one. A kube-apiserver whose own etcd member is gone
// (kubeadm's stacked etcd: --etcd-servers=127.0.0.1 only) still accepts TCP but fails /healthz,
// so it gets no new connections, and the connections open through it are closed (envoy's
// close_connections_on_host_health_failure), so clients reconnect to a healthy API server
// instead of waiting on one that cannot answer. The envoy semantics followed, with their source:
//
//   - Each endpoint has its own check loop, started when the endpoint appears (initial_jitter
//     unset: "Envoy will start health checking after for a random time in ms between 0 and
//     initial_jitter"), its next check one interval after the previous one ended; one slow
//     endpoint does not delay another's checks.
//   - An endpoint not checked yet takes no traffic while another is healthy (arch overview,
//     health checking: a newly added host is unhealthy until its first check passes), and its
//     first good check makes it healthy at once.
//   - unhealthy_threshold: "Note that for http health checking if a host responds with a code
//     not in expected_statuses or retriable_statuses, this threshold is ignored and the host is
//     considered immediately unhealthy": an answer other than 200 fails it at once; only errors
//     and timeouts count towards the 2 in a row.
//   - close_connections_on_host_health_failure: "If an upstream host becomes unhealthy (as
//     determined by the configured health checks or outlier detection), immediately close all
//     connections to the failed host."
//   - Panic mode (arch overview, load balancing, panic threshold): with no healthy endpoint,
//     traffic goes to all of them.
//
// tcplb closes the connections through an endpoint when it turns unhealthy, and at each of its
// later failed checks while another endpoint is healthy: a connection made in panic mode (or
// before the endpoint's first check) through an endpoint that has failed all along is closed
// as soon as the balancer would no longer route it there. Only in panic mode are connections
// through failing endpoints kept, as they are all the traffic has.
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
	unhealthyThreshold = 2 // failed checks in a row without an answer (error, timeout)
	healthPath         = "/healthz"
)

var (
	addressRe = regexp.MustCompile(`(?m)^[ \t]*address:[ \t]*"?([^"\s]+)"?[ \t]*$`)
	portRe    = regexp.MustCompile(`(?m)^[ \t]*port_value:[ \t]*(\d+)[ \t]*$`)
)

type health int

const (
	unchecked health = iota
	healthy
	unhealthy
)

// check is one health check's outcome.
type check int

const (
	passed   check = iota // 200
	refused               // answered, not 200: unhealthy at once
	noAnswer              // error or timeout: unhealthy after unhealthyThreshold in a row
)

// endpoint is one backend's health and the connections open through it.
type endpoint struct {
	health   health
	failures int // checks without an answer in a row
	conns    map[net.Conn]struct{}
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

// anyHealthy is false in panic mode; b.mu must be held.
func (b *balancer) anyHealthy() bool {
	for _, be := range b.backends {
		if b.endpoints[be].health == healthy {
			return true
		}
	}
	return false
}

func (b *balancer) pick() (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	candidates := make([]string, 0, len(b.backends))
	for _, be := range b.backends {
		if b.endpoints[be].health == healthy {
			candidates = append(candidates, be)
		}
	}
	if len(candidates) == 0 { // panic mode: none healthy (or none checked yet), try them all
		candidates = b.backends
	}
	if len(candidates) == 0 {
		return "", false
	}
	return candidates[b.next.Add(1)%uint64(len(candidates))], true
}

// setBackends takes the cluster file's endpoints; each new one gets its check loop at once.
func (b *balancer) setBackends(backends []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends = backends
	current := map[string]*endpoint{}
	for _, be := range backends {
		ep := b.endpoints[be]
		if ep == nil {
			ep = &endpoint{conns: map[net.Conn]struct{}{}}
			go b.checkLoop(be, ep)
		}
		current[be] = ep
	}
	b.endpoints = current
}

// checkLoop checks ep now and then one interval after each check, until ep is removed.
func (b *balancer) checkLoop(backend string, ep *endpoint) {
	for b.current(backend, ep) {
		result, seen := b.probe(backend)
		for _, c := range b.record(backend, ep, result, seen) {
			_ = c.Close()
		}
		time.Sleep(checkInterval)
	}
}

func (b *balancer) current(backend string, ep *endpoint) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.endpoints[backend] == ep
}

// probe is one health check, GET /healthz within the timeout: its outcome and what was seen.
func (b *balancer) probe(backend string) (check, string) {
	resp, err := b.client.Get("https://" + backend + healthPath)
	if err != nil {
		return noAnswer, err.Error()
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return refused, resp.Status
	}
	return passed, resp.Status
}

// record applies one check's result; it returns the connections to close: all those through
// an endpoint that has just turned unhealthy, or that fails again while another is healthy.
func (b *balancer) record(backend string, ep *endpoint, result check, seen string) []net.Conn {
	b.mu.Lock()
	defer b.mu.Unlock()
	if result == passed {
		ep.failures = 0
		if ep.health != healthy {
			ep.health = healthy
			log.Printf("%s healthy (GET %s: %s)", backend, healthPath, seen)
		}
		return nil
	}
	ep.failures++
	turned := ep.health != unhealthy &&
		(result == refused || ep.health == unchecked || ep.failures >= unhealthyThreshold)
	if turned {
		ep.health = unhealthy
		log.Printf("%s unhealthy (GET %s: %s)", backend, healthPath, seen)
	}
	if ep.health != unhealthy || !turned && !b.anyHealthy() {
		return nil // one check short of the threshold, or panic mode: its connections stay
	}
	drained := make([]net.Conn, 0, len(ep.conns))
	for c := range ep.conns {
		drained = append(drained, c)
	}
	if len(drained) > 0 {
		log.Printf("%s unhealthy: closing its %d connections", backend, len(drained))
	}
	return drained
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
