// Command etcd is etcd built from the pinned go.etcd.io/etcd/server/v3 module
// (see go.mod), for controller-runtime envtest. `go install` of etcd itself is
// refused because etcd's own main module uses relative replace directives, so
// this module wraps the same entry point the upstream etcd binary uses.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
