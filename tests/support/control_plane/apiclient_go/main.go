// Command apiclient stands in for Bottlerocket's `apiclient raw` inside a container with no
// shell: it sends one HTTP request over the host API's unix socket and prints what the real
// client prints. The body goes to stdout (exit 0); an HTTP error or an unreachable socket is
// one "Failed <METHOD> request to '<uri>': ..." line on stderr (exit 1); bad arguments exit 2.
// A SIGTERM (the host shutting down) ends it by that signal, as it ends the real one.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"
)

const (
	defaultSocket = "/run/api.sock"
	bodyLimit     = 1 << 20
	timeout       = 5 * time.Minute
)

// spelled names each option as the real client's usage errors do.
var spelled = map[string]string{
	"-u": "-u | --uri", "--uri": "-u | --uri",
	"-m": "-m | --method", "-X": "-m | --method", "--method": "-m | --method",
	"-s": "-s | --socket-path", "--socket-path": "-s | --socket-path",
}

type request struct {
	method, uri, socket string
}

func main() {
	req, err := parse(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v\n\nUsage: apiclient [-s SOCKET] raw -u URI [-m METHOD]\n", err)
		os.Exit(2)
	}
	os.Exit(send(req))
}

// parse reads `[-s SOCKET] raw -u URI [-m METHOD]`, the options the agent uses; the socket
// option may also follow `raw`.
func parse(args []string) (request, error) {
	req := request{method: "GET", socket: defaultSocket}
	subcommand := false
	for i := 0; i < len(args); i++ {
		if args[i] == "raw" && !subcommand {
			subcommand = true
			continue
		}
		var target *string
		switch args[i] {
		case "-u", "--uri":
			target = &req.uri
		case "-m", "-X", "--method":
			target = &req.method
		case "-s", "--socket-path":
			target = &req.socket
		default:
			return req, fmt.Errorf("Unknown argument '%s'", args[i])
		}
		if i+1 >= len(args) {
			return req, fmt.Errorf("Did not give argument to %s", spelled[args[i]])
		}
		*target = args[i+1]
		i++
	}
	req.method = strings.ToUpper(req.method)
	if req.uri == "" {
		return req, fmt.Errorf("Missing required argument '--uri'")
	}
	return req, nil
}

// send makes the request and prints its outcome; it returns the exit code.
func send(req request) int {
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", req.socket)
	}
	client := http.Client{Transport: &http.Transport{DialContext: dial}, Timeout: timeout}
	failed := fmt.Sprintf("Failed %s request to '%s'", req.method, req.uri)
	built, err := http.NewRequest(req.method, "http://localhost"+req.uri, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", failed, err)
		return 1
	}
	answer, err := client.Do(built)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: Failed to send request: error trying to connect: %s\n",
			failed, osError(err))
		return 1
	}
	defer answer.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(answer.Body, bodyLimit))
	if answer.StatusCode >= 300 {
		fmt.Fprintf(os.Stderr, "%s: Status %d when %sing %s: %s\n",
			failed, answer.StatusCode, req.method, req.uri, body)
		return 1
	}
	if len(body) > 0 {
		os.Stdout.Write(append(body, '\n'))
	}
	return 0
}

// osError words a system error as the real client's runtime does: "No such file or
// directory (os error 2)".
func osError(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	text := errno.Error()
	return fmt.Sprintf("%s%s (os error %d)", strings.ToUpper(text[:1]), text[1:], int(errno))
}
