package main

import (
	"go.etcd.io/etcd/server/v3/etcdmain"
)

func runEtcd(args []string) int {
	etcdmain.Main(args)
	return 0
}
