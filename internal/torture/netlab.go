package torture

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// Netlab is the network of a partition run (make partitiontest): each
// host in a network namespace of its own, linked to this one by a veth
// pair, host i at 10.213.i.2 and this side of its link at 10.213.i.1,
// where the database listens for it. Nothing leaves the machine. Cutting a
// host's link drops every packet between it and the rest, both ways: the
// database, the clients and the other hosts; healing it sets the link up
// again.
type Netlab struct {
	tag   string
	hosts int
}

// NewNetlab makes the namespaces and links of hosts hosts with the
// system's ip (iproute2), which needs root, or says why it cannot. It
// first removes what a run killed before its end left.
func NewNetlab(hosts int) (*Netlab, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("network namespaces need root; run it as root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("network namespaces need the ip command (apt-get install iproute2): %w", err)
	}
	removeLeftovers()
	var b [2]byte
	rand.Read(b[:])
	n := &Netlab{tag: hex.EncodeToString(b[:])}
	for i := range hosts {
		n.hosts = i + 1
		ns, outer, inner := n.NS(i), n.link(i, "o"), n.link(i, "i")
		for _, args := range [][]string{
			{"netns", "add", ns},
			{"link", "add", outer, "type", "veth", "peer", "name", inner},
			{"link", "set", inner, "netns", ns},
			{"addr", "add", n.OuterIP(i) + "/24", "dev", outer},
			{"link", "set", outer, "up"},
			{"-n", ns, "addr", "add", n.HostIP(i) + "/24", "dev", inner},
			{"-n", ns, "link", "set", inner, "up"},
			{"-n", ns, "link", "set", "lo", "up"},
		} {
			if err := ip(args...); err != nil {
				n.Close()
				return nil, fmt.Errorf("network namespaces are not permitted here: %w", err)
			}
		}
	}
	return n, nil
}

// NS is the network namespace of host i.
func (n *Netlab) NS(i int) string { return fmt.Sprintf("durabox-%s-%d", n.tag, i) }

// link is the name of one end of host i's link: "o" on this side, "i" in
// its namespace (15 bytes at most, as Linux wants).
func (n *Netlab) link(i int, end string) string { return fmt.Sprintf("dbx%s%d%s", n.tag, i, end) }

// HostIP is host i's address, and OuterIP the address of this side of its
// link.
func (n *Netlab) HostIP(i int) string  { return fmt.Sprintf("10.213.%d.2", i) }
func (n *Netlab) OuterIP(i int) string { return fmt.Sprintf("10.213.%d.1", i) }

// OuterIPs is every host's OuterIP, comma-separated: where the database
// listens.
func (n *Netlab) OuterIPs() string {
	ips := make([]string, n.hosts)
	for i := range ips {
		ips[i] = n.OuterIP(i)
	}
	return strings.Join(ips, ",")
}

// Network is the network of every link, in CIDR.
func (n *Netlab) Network() string { return "10.213.0.0/16" }

// Cut drops every packet to and from host i until Heal. It sets the
// link's end in the host's namespace down: this side keeps its address and
// route (its carrier is gone), so that what is sent to the host vanishes,
// as on a network cut, rather than going to the default route, as it would
// with no route at all.
func (n *Netlab) Cut(i int) error { return ip("-n", n.NS(i), "link", "set", n.link(i, "i"), "down") }

// Heal ends host i's cut.
func (n *Netlab) Heal(i int) error { return ip("-n", n.NS(i), "link", "set", n.link(i, "i"), "up") }

// Command is the command that runs bin with args in host i's namespace.
func (n *Netlab) Command(i int, bin string, args ...string) (string, []string) {
	return "ip", append([]string{"netns", "exec", n.NS(i), bin}, args...)
}

// Close removes the links and namespaces.
func (n *Netlab) Close() {
	for i := range n.hosts {
		ip("link", "del", n.link(i, "o")) // and its peer
		ip("netns", "del", n.NS(i))
	}
}

// removeLeftovers removes the namespaces and links of an earlier run that
// was killed before it could (its addresses would take this run's
// packets). Their names are this package's own: durabox-TAG-I, dbxTAGIo.
func removeLeftovers() {
	if out, err := exec.Command("ip", "-o", "link", "show").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) > 1 && leftoverLink.MatchString(f[1]) {
				ip("link", "del", leftoverLink.FindStringSubmatch(f[1])[1])
			}
		}
	}
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) > 0 && leftoverNS.MatchString(f[0]) {
				ip("netns", "del", f[0])
			}
		}
	}
}

var (
	leftoverLink = regexp.MustCompile(`^(dbx[0-9a-f]{4}[0-9]+o)(@.*)?:$`)
	leftoverNS   = regexp.MustCompile(`^durabox-[0-9a-f]{4}-[0-9]+$`)
)

func ip(args ...string) error {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
