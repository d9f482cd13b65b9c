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
// host in a network namespace of its own, with two veth links to this
// one: its clients' (host i at 10.213.i.2, this side at 10.213.i.1) and
// its database's (host i at 10.214.i.2, this side at 10.214.i.1, where the
// database listens for it). Nothing leaves the machine. A cut drops every
// packet on a link, both ways, or one way on the database's (Cut); a host
// cut off from its database still answers its clients (503), and one cut
// off from both is gone for everyone until healed.
type Netlab struct {
	tag   string
	hosts int
}

// The links of a host, by the second octet of their network.
const (
	clients  = 213
	database = 214
)

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
	if _, err := exec.LookPath("nft"); err != nil {
		return nil, fmt.Errorf("cutting a link one way needs the nft command (apt-get install nftables): %w", err)
	}
	removeLeftovers()
	var b [2]byte
	rand.Read(b[:])
	n := &Netlab{tag: hex.EncodeToString(b[:])}
	for i := range hosts {
		n.hosts = i + 1
		ns := n.NS(i)
		steps := [][]string{{"netns", "add", ns}, {"-n", ns, "link", "set", "lo", "up"}}
		for _, net := range []int{clients, database} {
			outer, inner := n.link(i, net, "o"), n.link(i, net, "i")
			steps = append(steps,
				[]string{"link", "add", outer, "type", "veth", "peer", "name", inner},
				[]string{"link", "set", inner, "netns", ns},
				[]string{"addr", "add", n.ip(net, i, 1) + "/24", "dev", outer},
				[]string{"link", "set", outer, "up"},
				[]string{"-n", ns, "addr", "add", n.ip(net, i, 2) + "/24", "dev", inner},
				[]string{"-n", ns, "link", "set", inner, "up"})
		}
		for _, args := range steps {
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

// link is the name of one end of host i's link to net: "o" on this side,
// "i" in its namespace (15 bytes at most, as Linux wants).
func (n *Netlab) link(i, net int, end string) string {
	return fmt.Sprintf("dbx%s%d%s%s", n.tag, i, map[int]string{clients: "c", database: "d"}[net], end)
}

// ip is the address of host i's link to net: this side's (1) or the
// host's (2).
func (n *Netlab) ip(net, i, end int) string { return fmt.Sprintf("10.%d.%d.%d", net, i, end) }

// HostIP is where host i's clients reach it, and DatabaseIP where it
// reaches its database.
func (n *Netlab) HostIP(i int) string     { return n.ip(clients, i, 2) }
func (n *Netlab) DatabaseIP(i int) string { return n.ip(database, i, 1) }

// DatabaseIPs is every host's DatabaseIP, comma-separated: where the
// database listens.
func (n *Netlab) DatabaseIPs() string {
	ips := make([]string, n.hosts)
	for i := range ips {
		ips[i] = n.DatabaseIP(i)
	}
	return strings.Join(ips, ",")
}

// Network is the network of the database links, in CIDR.
func (n *Netlab) Network() string { return fmt.Sprintf("10.%d.0.0/16", database) }

// How a host is cut off (Cut).
type cut int

const (
	// fromDatabase drops every packet between the host and its database,
	// both ways.
	fromDatabase cut = iota
	// fromEverything drops every packet between the host and anything:
	// its database, its clients, the other hosts.
	fromEverything
	// toDatabase drops the packets the host sends its database only: the
	// server's reach the host.
	toDatabase
	// fromDatabaseOnly drops the packets the database sends the host
	// only: the host's reach the server.
	fromDatabaseOnly
	// slowDatabase cuts nothing: what crosses the host's link to its
	// database is delayed (slowLink, not Cut).
	slowDatabase
)

// cuts are the ways a run cuts hosts off, in turn.
var cuts = []cut{fromDatabase, fromEverything, toDatabase, fromDatabaseOnly, slowDatabase}

func (c cut) String() string {
	return [...]string{"its database", "everything", "its database one way (what it sends is lost)", "its database one way (what it is sent is lost)", "a slow link to its database"}[c]
}

// Cut cuts host i off, as how says, until Heal. Both ways, it sets the
// links' ends in the host's namespace down: this side keeps its address
// and route (its carrier is gone), so that what is sent to the host
// vanishes, as on a network cut, rather than going to the default route,
// as it would with no route at all. One way, a packet filter (nftables) in
// the host's namespace drops what goes one way.
func (n *Netlab) Cut(i int, how cut) error {
	switch how {
	case fromDatabase, fromEverything:
		nets := []int{database}
		if how == fromEverything {
			nets = append(nets, clients)
		}
		for _, net := range nets {
			if err := ip("-n", n.NS(i), "link", "set", n.link(i, net, "i"), "down"); err != nil {
				return err
			}
		}
		return nil
	case slowDatabase:
		return errors.New("torture: a slow link is no cut: its slowLink delays it")
	}
	hook, match := "output", "daddr"
	if how == fromDatabaseOnly {
		hook, match = "input", "saddr"
	}
	rules := fmt.Sprintf("table inet durabox {\n chain cut { type filter hook %s priority 0; ip %s %s drop; }\n}\n", hook, match, n.DatabaseIP(i))
	cmd := exec.Command("ip", "netns", "exec", n.NS(i), "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft -f (%s): %v: %s", strings.TrimSpace(rules), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Heal ends host i's cut, however it was cut.
func (n *Netlab) Heal(i int) error {
	for _, net := range []int{database, clients} {
		if err := ip("-n", n.NS(i), "link", "set", n.link(i, net, "i"), "up"); err != nil {
			return err
		}
	}
	// The filter's table, if a one-way cut made it.
	exec.Command("ip", "netns", "exec", n.NS(i), "nft", "delete", "table", "inet", "durabox").Run()
	return nil
}

// Command is the command that runs bin with args in host i's namespace.
func (n *Netlab) Command(i int, bin string, args ...string) (string, []string) {
	return "ip", append([]string{"netns", "exec", n.NS(i), bin}, args...)
}

// Close removes the links and namespaces.
func (n *Netlab) Close() {
	for i := range n.hosts {
		for _, net := range []int{clients, database} {
			ip("link", "del", n.link(i, net, "o")) // and its peer
		}
		ip("netns", "del", n.NS(i))
	}
}

// removeLeftovers removes the namespaces and links of an earlier run that
// was killed before it could (its addresses would take this run's
// packets). Their names are this package's own: durabox-TAG-I, dbxTAGI[cd]o.
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
	leftoverLink = regexp.MustCompile(`^(dbx[0-9a-f]{4}[0-9]+[cd]?o)(@.*)?:$`)
	leftoverNS   = regexp.MustCompile(`^durabox-[0-9a-f]{4}-[0-9]+$`)
)

func ip(args ...string) error {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
