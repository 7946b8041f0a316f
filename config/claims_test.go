package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestClaimsRetention(t *testing.T) {
	home := isolate(t)
	c, err := Parse(filepath.Join(home, "airs.yaml"), []byte("spaces: {}\n"))
	if err != nil || c.Claims.Retention != DefaultClaimRetention {
		t.Fatalf("default: %+v %v", c.Claims, err)
	}
	c, err = Parse(filepath.Join(home, "airs.yaml"), []byte("claims: {retention: 36h}\n"))
	if err != nil || c.Claims.Retention != 36*time.Hour {
		t.Fatalf("36h: %+v %v", c.Claims, err)
	}
	_, err = Parse(filepath.Join(home, "airs.yaml"), []byte("claims:\n  retention: 10s\n"))
	if err == nil || !strings.Contains(err.Error(), "airs.yaml:2: claims.retention 10s: at least 1m") {
		t.Fatalf("10s: %v", err)
	}
}
