package config

import (
	"strings"
	"testing"
)

// http.limits' flood and heavy-work keys reach the configuration; a
// negative one is refused, naming the key.
func TestHTTPLimitsFloodAndHeavyKeys(t *testing.T) {
	c, err := Parse("airs.yaml", []byte(`http:
  limits: {per_address_per_second: 50, per_address_burst: 80, heavy_text: 2048, heavy_call_body: 100000, heavy_per_agent: 2, heavy_total: 3}
`))
	if err != nil {
		t.Fatal(err)
	}
	l := c.HTTP.Limits
	if l.PerAddressPerSecond != 50 || l.PerAddressBurst != 80 || l.HeavyText != 2048 || l.HeavyCallBody != 100000 || l.HeavyPerAgent != 2 || l.HeavyTotal != 3 {
		t.Fatalf("limits %+v", l)
	}
	_, err = Parse("airs.yaml", []byte("http:\n  limits: {heavy_total: -1}\n"))
	if err == nil || !strings.Contains(err.Error(), "http.limits.heavy_total") {
		t.Fatalf("negative heavy_total: %v", err)
	}
}
