package engine

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/mcp/client"
)

// PeerServer is the client's description of peer p: another AIRS's /mcp,
// reached like any streamable-HTTP MCP server, under the name and
// namespace peer.NAME, so its tools are peer.NAME.tool, its provider
// mcp:peer.NAME and every one of them requires MCP(peer.NAME) — which only
// the agents airs.yaml grants it hold. The bearer token is read from the
// environment now; an unset variable is an error naming it.
//
// Nothing here is peer-specific beyond the name and the header: a peer's
// calls take the seven stages here (the local grant, schema, timeout,
// breaker, audit) and again on the peer (its grant for our token, its
// audit), which is what makes the delegation explicit on both sides.
func PeerServer(p config.Peer, log *slog.Logger, version string) (client.Server, error) {
	ns := config.PeerNamespace(p.Name)
	s := client.Server{
		Name: ns, Namespace: ns, Requires: settings.Capabilities(p.Requires), URL: p.URL, Timeout: p.Timeout,
		MaxTools: config.DefaultMCPMaxTools, MaxMessageBytes: config.DefaultMCPMaxMessageBytes,
		MaxResponseBytes: config.DefaultMCPMaxResponseBytes, RestartsPerMinute: config.DefaultMCPRestartsPerMinute,
		Grace: config.DefaultMCPGrace, ClientVersion: version, Logger: log,
		// A peer's model is its own business: it never asks ours to sample.
		NoSampling: true,
	}
	tok := os.Getenv(p.TokenEnv)
	if tok == "" {
		return s, fmt.Errorf("peer %s: its token comes from $%s, which is not set: export the token the peer maps to an agent (http.tokens on %s) before starting airs", p.Name, p.TokenEnv, p.URL)
	}
	s.Headers = http.Header{}
	s.Headers.Set("Authorization", "Bearer "+tok)
	return s, nil
}

// peerHint is what to check when peer p does not connect.
func peerHint(p config.Peer) string {
	return fmt.Sprintf(": check that the peer runs `airs serve` at %s and that $%s holds a token its http.tokens map to an agent (Unauthorized means it does not)", p.URL, p.TokenEnv)
}
