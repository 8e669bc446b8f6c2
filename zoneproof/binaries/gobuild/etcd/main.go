// Thin wrapper: etcd's root module carries replace directives, so `go install` cannot
// build it; this main calls the upstream server entry point from go.etcd.io/etcd/server/v3.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
