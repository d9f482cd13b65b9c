package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/durabox/durabox/host/client"
)

// A command is one of durabox's subcommands.
type command struct {
	name string
	// synopsis follows the name in the overview and the usage line.
	synopsis string
	// summary is the command's line in the overview; about, the paragraph
	// of its usage.
	summary, about string
	// args names the required positional arguments; optional, those that
	// may follow them.
	args, optional []string
	// client says the command talks to a host: it takes --addr and --json.
	client bool
	// define defines the command's flags and returns its body.
	define func(fs *flag.FlagSet) func(ctx context.Context, e *env) error
}

// env is what a command's body runs with.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// args are the positional arguments: as many as command.args names, and
	// up to as many more as command.optional names.
	args []string
	// client and json are set for client commands: a client of the host
	// at --addr, and whether to print JSON.
	client *client.Client
	json   bool
}

// defaultAddr is where client commands find the host when neither --addr
// nor $DURABOX_ADDR says.
const defaultAddr = "127.0.0.1:7070"

// usageError is an error in the command line: durabox prints it with the
// command's usage and exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitError ends durabox with code, printing msg, when set, to stderr: the
// end of a command that has told its outcome already (on stdout, or in its
// log).
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// run runs the command with its arguments and returns the exit code.
func (c *command) run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, body, opts := c.flags()
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	err := parse(fs, args, &e.args)
	if errors.Is(err, flag.ErrHelp) {
		c.usage(stdout)
		return 0
	}
	if err == nil {
		err = c.checkArgs(e.args)
	}
	if err == nil && opts != nil {
		e.client, err = opts.newClient()
		e.json = opts.json
	}
	if err == nil {
		err = body(context.Background(), e)
	}
	var (
		usage usageError
		exit  exitError
	)
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		if exit.msg != "" {
			fmt.Fprintln(stderr, exit.msg)
		}
		return exit.code
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "durabox %s: %s\n\n", c.name, usage.msg)
		c.usage(stderr)
		return 2
	default:
		fmt.Fprintln(stderr, err)
		return 1
	}
}

// clientOptions are the flags of every client command.
type clientOptions struct {
	addr, tokenFile, tlsCA string
	json                   bool
}

// newClient returns a client of the host at --addr, with the token of
// --token-file, else of $DURABOX_TOKEN, and the authorities of --tls-ca.
func (o *clientOptions) newClient() (*client.Client, error) {
	base, err := o.baseURL()
	if err != nil {
		return nil, err
	}
	token, err := readToken("--token-file", o.tokenFile, os.Getenv("DURABOX_TOKEN"))
	if err != nil {
		return nil, err
	}
	opts := &client.Options{Token: token}
	if o.tlsCA != "" {
		pem, err := os.ReadFile(o.tlsCA)
		if err != nil {
			return nil, usagef("--tls-ca: %v", err)
		}
		opts.RootCAs = x509.NewCertPool()
		if !opts.RootCAs.AppendCertsFromPEM(pem) {
			return nil, usagef("--tls-ca: %s holds no PEM certificate", o.tlsCA)
		}
	}
	return client.New(base, opts), nil
}

// readToken returns the token in the file flag names (file), else
// fromEnv. A file without a token is an error: the file was meant to hold
// one.
func readToken(flag, file, fromEnv string) (string, error) {
	if file == "" {
		return strings.TrimSpace(fromEnv), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", usagef("%s: %v", flag, err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", usagef("%s: %s is empty; it holds the token", flag, file)
	}
	return token, nil
}

// flags returns the command's flags (parse reports their errors) and its
// body, and for a client command, its clientOptions.
func (c *command) flags() (*flag.FlagSet, func(context.Context, *env) error, *clientOptions) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	body := c.define(fs)
	if !c.client {
		return fs, body, nil
	}
	opts := &clientOptions{}
	addr := os.Getenv("DURABOX_ADDR")
	if addr == "" {
		addr = defaultAddr
	}
	fs.StringVar(&opts.addr, "addr", addr, "the host's `ADDR`, as host:port or a URL such as https://host:port (default $DURABOX_ADDR, else "+defaultAddr+")")
	fs.BoolVar(&opts.json, "json", false, "print JSON, for scripts")
	fs.StringVar(&opts.tokenFile, "token-file", "", "send the token in `FILE` to the host (default $DURABOX_TOKEN, if set)")
	fs.StringVar(&opts.tlsCA, "tls-ca", "", "trust the certificate authorities in the PEM `FILE` for an https host, which an --addr without a scheme then is (default the system's)")
	return fs, body, opts
}

// baseURL turns --addr into the URL of the host: http://ADDR for a
// host:port, https://ADDR with --tls-ca, which refuses an http:// URL
// (the token would travel in clear).
func (o *clientOptions) baseURL() (string, error) {
	switch {
	case !strings.Contains(o.addr, "://") && o.tlsCA != "":
		return "https://" + o.addr, nil
	case !strings.Contains(o.addr, "://"):
		return "http://" + o.addr, nil
	case o.tlsCA != "" && strings.HasPrefix(strings.ToLower(o.addr), "http://"):
		return "", usagef("--tls-ca is for an https host, and --addr is %s, where the token and the data would travel in clear; "+
			"give its https:// address, or leave out the scheme", o.addr)
	}
	return o.addr, nil
}

// parse parses args into fs, flags and positional arguments mixed in any
// order (until "--", after which all are positional), and appends the
// positional arguments to pos.
func parse(fs *flag.FlagSet, args []string, pos *[]string) error {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			// The flag package names flags with one dash; durabox's usage
			// writes two.
			return usageError{singleDash.ReplaceAllString(err.Error(), "$1--$2")}
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			*pos = append(*pos, rest...)
			return nil
		}
		if len(rest) == 0 {
			return nil
		}
		*pos = append(*pos, rest[0])
		args = rest[1:]
	}
}

// singleDash finds the flag names in the flag package's errors.
var singleDash = regexp.MustCompile(`(: |flag )-(\w)`)

func (c *command) checkArgs(args []string) error {
	switch {
	case len(args) < len(c.args):
		return usagef("missing %s", strings.Join(c.args[len(args):], " "))
	case len(args) > len(c.args)+len(c.optional):
		return usagef("unexpected argument %q", args[len(c.args)+len(c.optional)])
	}
	return nil
}

// line is how the command is called: "durabox start NAME [--input JSON]".
func (c *command) line() string {
	return strings.TrimSpace("durabox " + c.name + " " + c.synopsis)
}

// usage prints the command's usage line, what it does, and its flags.
func (c *command) usage(w io.Writer) {
	line := c.line()
	if c.client {
		line += " [--addr ADDR] [--json]"
	}
	fmt.Fprintf(w, "usage: %s\n\n%s\n\n", line, c.about)
	fs, _, _ := c.flags()
	tw := newTable(w)
	fs.VisitAll(func(f *flag.Flag) {
		value, help := flag.UnquoteUsage(f)
		// A one-letter flag is written the way people type it: -o, not --o.
		dashes := "--"
		if len(f.Name) == 1 {
			dashes = "-"
		}
		if value == "" {
			fmt.Fprintf(tw, "  %s%s\t%s\n", dashes, f.Name, help)
		} else {
			fmt.Fprintf(tw, "  %s%s %s\t%s\n", dashes, f.Name, value, help)
		}
	})
	tw.Flush()
}
