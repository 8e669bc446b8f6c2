// webhook-ceiling: the fastest webhook this machine can serve, for `zoneproof bench webhook`.
//
// A TLS HTTP/1.1 keep-alive server that reads each POSTed body and answers every request
// with one fixed AdmissionReview: no decoding, no handler. Driven by the same load
// generator at the same concurrency as the webhook, it gives the bench its ceiling.
//
// Usage: webhook-ceiling CERT KEY ANSWER_FILE; prints its port (127.0.0.1, any free) and
// serves until killed.
package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: webhook-ceiling CERT KEY ANSWER_FILE")
		os.Exit(2)
	}
	cert, err := tls.LoadX509KeyPair(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook-ceiling:", err)
		os.Exit(1)
	}
	answer, err := os.ReadFile(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook-ceiling:", err)
		os.Exit(1)
	}
	length := strconv.Itoa(len(answer))
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook-ceiling:", err)
		os.Exit(1)
	}
	fmt.Println(listener.Addr().(*net.TCPAddr).Port)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", length)
		_, _ = w.Write(answer)
	})
	server := &http.Server{Handler: handler, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}}
	if err := server.ServeTLS(listener, "", ""); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-ceiling:", err)
		os.Exit(1)
	}
}
