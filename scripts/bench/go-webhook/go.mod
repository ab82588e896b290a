module sidecar-harness/bench/go-webhook

go 1.26
