// Command kube-cel evaluates Kubernetes CEL for the simulator (apiserver-sim) with Kubernetes' own
// code at the version pinned in go.mod: the CEL environment of k8s.io/apiserver/pkg/cel/environment
// (MustBaseEnvSet at the binary's compatibility version, as kube-apiserver builds it), the
// compiler and condition evaluator of k8s.io/apiserver/pkg/admission/plugin/cel, and the
// matchConditions types of k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions.
//
// It is a helper process, not a library linked into the simulator: the C++ process stays free of
// the Go runtime (its signal handlers and threads), a simulator built without Go still builds,
// and a crash or a runaway expression cannot take the simulator down with it.
//
// Protocol: one JSON object per line on stdin, one JSON object per line on stdout, in order.
// Every request may carry an "id", echoed in its response. See protocol.go.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// maxLineBytes bounds one request line. The apiserver refuses request bodies over 3 MiB
// (k8s.io/apiserver/pkg/server/config.go MaxRequestBodyBytes); a request carries an object and
// its old version, plus room for the conditions.
const maxLineBytes = 16 << 20

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "--version":
			fmt.Println(versionLine())
			return
		default:
			fmt.Fprintln(os.Stderr, "usage: kube-cel [--version]   (JSON lines on stdin and stdout; see kube/README.md)")
			os.Exit(2)
		}
	}
	os.Exit(serve(os.Stdin, os.Stdout))
}

// serve answers requests until stdin closes. It returns the process exit code.
func serve(in io.Reader, out io.Writer) int {
	reader := bufio.NewReaderSize(in, 64<<10)
	writer := bufio.NewWriter(out)
	encoder := json.NewEncoder(writer)
	encoder.SetEscapeHTML(false)
	s := newServer()
	for {
		line, tooLong, err := readLine(reader)
		if err == io.EOF && len(line) == 0 && !tooLong {
			return 0
		}
		if err != nil && err != io.EOF {
			fmt.Fprintf(os.Stderr, "kube-cel: reading stdin: %v\n", err)
			return 1
		}
		var response any
		if tooLong {
			response = errorResponse(nil, fmt.Sprintf("request line longer than %d bytes", maxLineBytes))
		} else if len(line) == 0 {
			continue
		} else {
			response = s.handle(line)
		}
		if encodeErr := encoder.Encode(response); encodeErr != nil {
			fmt.Fprintf(os.Stderr, "kube-cel: writing stdout: %v\n", encodeErr)
			return 1
		}
		if flushErr := writer.Flush(); flushErr != nil {
			return 1
		}
		if err == io.EOF {
			return 0
		}
	}
}

// readLine reads one line without its newline. A line over maxLineBytes is consumed and
// reported as tooLong, so one bad request cannot exhaust memory or desynchronise the stream.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxLineBytes+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		return line, tooLong, err
	}
}
