package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/durabox/durabox/host/server"
)

// tokenList is serve's --token, which may be given more than once.
type tokenList []string

func (l *tokenList) String() string { return "" }

func (l *tokenList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// serveTokens returns the tokens serve accepts: each --token, those of
// --token-file (else $DURABOX_TOKEN, when neither is given), the
// read-only one of --read-token-file and the worker's of
// --worker-token-file.
func (c *serveConfig) serveTokens() ([]server.Token, error) {
	var out []server.Token
	for _, v := range c.tokens {
		t, err := server.ParseToken(v)
		if err != nil {
			return nil, usagef("--token %s: %v", redact(v), strings.TrimPrefix(err.Error(), "host: "))
		}
		out = append(out, t)
	}
	switch {
	case c.tokenFile != "":
		ts, err := readTokenFile("--token-file", c.tokenFile)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	case len(c.tokens) == 0 && strings.TrimSpace(os.Getenv("DURABOX_TOKEN")) != "":
		t, err := server.ParseToken(os.Getenv("DURABOX_TOKEN"))
		if err != nil {
			return nil, usagef("$DURABOX_TOKEN: %v", strings.TrimPrefix(err.Error(), "host: "))
		}
		out = append(out, t)
	}
	for _, f := range []struct{ flag, file, role string }{{"--read-token-file", c.readTokenFile, server.RoleRead}, {"--worker-token-file", c.workerTokenFile, server.RoleWorker}} {
		if f.file == "" {
			continue
		}
		b, err := readPrivate(f.flag, f.file)
		if err != nil {
			return nil, err
		}
		secret := strings.TrimSpace(string(b))
		if secret == "" {
			return nil, usagef("%s: %s is empty; it holds the token", f.flag, f.file)
		}
		out = append(out, server.Token{Name: server.DefaultName(f.role, secret), Secret: secret, Role: f.role})
	}
	return out, nil
}

// reloadTokens reads serve's tokens again at each signal on hup (SIGHUP)
// and gives them to the server, until ctx is done: tokens it cannot read,
// or the server refuses, leave it those it had, and are logged at error.
func reloadTokens(ctx context.Context, c *serveConfig, hup <-chan os.Signal, setter server.TokenSetter, logger *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		ts, err := c.serveTokens()
		if err == nil {
			err = setter.SetTokens(ts)
		}
		if err != nil {
			logger.Error("tokens not reloaded; the host keeps those it had", "err", strings.TrimPrefix(err.Error(), "host: "))
			continue
		}
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = t.Name
		}
		logger.Info("tokens reloaded", "tokens", strings.Join(names, ","))
	}
}

// readTokenFile reads a token file of serve's: one token a line, as
// name=secret or name=secret:role (role admin, read or worker; admin
// when left out), or the admin token's secret alone; blank lines and
// lines beginning with '#' left out. A file others may read is refused.
func readTokenFile(flag, file string) ([]server.Token, error) {
	b, err := readPrivate(flag, file)
	if err != nil {
		return nil, err
	}
	ts, err := server.ParseTokens(file, string(b))
	if err != nil {
		return nil, usagef("%s: %v", flag, strings.TrimPrefix(err.Error(), "host: "))
	}
	return ts, nil
}

// readPrivate reads a file of secrets, refusing one that its group or
// others may read or write.
func readPrivate(flag, file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, usagef("%s: %v", flag, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, usagef("%s: %v", flag, err)
	}
	if mode := fi.Mode().Perm(); mode&0o077 != 0 {
		return nil, usagef("%s: %s holds secrets but others may read it (mode %04o); make it its owner's alone: chmod 600 %s", flag, file, mode, file)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, usagef("%s: %v", flag, err)
	}
	return b, nil
}

// redact shows a --token without its secret: its name alone, or nothing
// of a secret alone.
func redact(v string) string {
	if name, _, ok := strings.Cut(v, "="); ok {
		return fmt.Sprintf("%s=…", name)
	}
	return "…"
}
