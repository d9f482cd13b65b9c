package server

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
)

// The checks that keep a web page from driving a host through the browser
// of someone who can reach it (see RATIONALE.md, "Why does the host check
// Host, Origin and Content-Type, with or without a token?"). A page of
// another origin may make the browser send a POST without asking the
// host first (a "simple" request: a text/plain, url-encoded or
// multipart/form-data body), and a page whose name is made to resolve to
// the host's address (DNS rebinding) may read what the host answers.
// guard runs them on every route, whatever the token setting.

// defaultHosts are the names a handler answers to when
// Options.Hosts is empty: loopback's, on any port.
var defaultHosts = []string{"localhost", "127.0.0.1", "[::1]"}

// hostNames are the values of a request's Host header a handler serves.
type hostNames struct {
	// withPort are host:port, anyPort hosts alone, in lower case, an IPv6
	// address in brackets; shown are both, in the order given.
	withPort, anyPort, shown []string
}

// newHostNames reads Options.Hosts.
func newHostNames(hosts []string) (hostNames, error) {
	var n hostNames
	for _, h := range hosts {
		name, port := splitHost(strings.TrimSpace(h))
		if name == "" || name == "[]" || strings.ContainsAny(name, "/@ \t") || strings.Trim(port, "0123456789") != "" {
			return n, fmt.Errorf("host: the allowed host %q is not a host name or address, alone or with a port, such as durabox.example.com or durabox.example.com:8443", h)
		}
		if port == "" {
			n.anyPort = append(n.anyPort, name)
			n.shown = append(n.shown, name)
		} else {
			n.withPort = append(n.withPort, name+":"+port)
			n.shown = append(n.shown, name+":"+port)
		}
	}
	return n, nil
}

// splitHost splits a Host header's value, or an allowed host, into its
// name (in lower case, an IPv6 address in brackets) and its port ("" if
// none).
func splitHost(s string) (name, port string) {
	name, port, err := net.SplitHostPort(s)
	if err != nil {
		name, port = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), ""
	}
	name = strings.ToLower(name)
	if strings.Contains(name, ":") {
		name = "[" + name + "]"
	}
	return name, port
}

// serves reports whether a request with this Host header is for this host.
func (n hostNames) serves(host string) bool {
	name, port := splitHost(host)
	return slices.Contains(n.anyPort, name) || (port != "" && slices.Contains(n.withPort, name+":"+port))
}

// hostsShown is how many of its names a refusal lists.
const hostsShown = 10

func (n hostNames) String() string {
	if len(n.shown) > hostsShown {
		return strings.Join(n.shown[:hostsShown], ", ") + ", …"
	}
	return strings.Join(n.shown, ", ")
}

// anyHost reports whether a route answers whatever Host a request names:
// the health checks, which load balancers and orchestrators probe by an
// address of their own, and which tell nothing but whether the host is up.
func (rt route) anyHost() bool { return rt.path == "/healthz" || rt.path == "/readyz" }

// bodyTypes are the media types of the bodies a POST route takes.
func (rt route) bodyTypes() []string {
	if rt.path == "/v1/modules" {
		return []string{"application/wasm", "multipart/form-data"}
	}
	return []string{"application/json"}
}

// checkSource refuses a request for another host (421), and a request
// that changes something from a web page of another origin (403).
func (s *server) checkSource(rt route, r *http.Request) error {
	if !rt.anyHost() && !s.hosts.serves(r.Host) {
		return fmt.Errorf("%w: this host does not answer to %.100q; it answers to %s. "+
			"A web page whose name was made to resolve to this address sends its own name; "+
			"to reach the host by another name (through a proxy, say), add it with durabox serve --allowed-hosts NAME",
			errMisdirected, r.Host, s.hosts)
	}
	if s.crossOrigin.Check(r) != nil {
		from := fmt.Sprintf("Origin %.100q", r.Header.Get("Origin"))
		if r.Header.Get("Origin") == "" {
			from = fmt.Sprintf("Sec-Fetch-Site %.20q", r.Header.Get("Sec-Fetch-Site"))
		}
		return fmt.Errorf("%w: a web page of another origin (%s) may not change anything on this host; "+
			"its dashboard, at its own address, and clients that are not browsers (durabox, curl) may", errForbidden, from)
	}
	return nil
}

// checkBodyType refuses a POST whose body is not of a type its route
// takes (415): a page of another origin can send a text/plain,
// url-encoded or multipart/form-data body without asking the host first,
// and nothing else.
func checkBodyType(rt route, r *http.Request) error {
	if r.Method != http.MethodPost {
		return nil
	}
	types := rt.bodyTypes()
	given := r.Header.Get("Content-Type")
	if mediaType, _, err := mime.ParseMediaType(given); err == nil && slices.Contains(types, mediaType) {
		return nil
	}
	said := fmt.Sprintf("not %.100q", given)
	if given == "" {
		said = "and this one says none"
	}
	return fmt.Errorf("%w: %s %s takes a body of type %s, %s; send Content-Type: %s",
		errMediaType, rt.method, rt.path, strings.Join(types, " or "), said, types[0])
}
