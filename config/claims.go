package config

import (
	"time"
)

// Claims configures the call claims (pipeline's claim.go): how long a
// claimed call id — and its first attempt's outcome, which a retry gets
// back — is kept (claims: in airs.yaml). A retry after that runs the call
// again, so the retention must exceed how long clients keep retrying.
//
//	claims: {retention: 168h}
type Claims struct {
	Retention time.Duration
}

type fileClaims struct {
	Retention Duration `yaml:"retention"`
}

func (p *parser) buildClaims(fc *fileConfig, c *Config) {
	c.Claims = Claims{Retention: DefaultClaimRetention}
	if r := fc.Claims.Retention; r != 0 {
		if r < Duration(time.Minute) {
			p.add(p.line("claims", "retention"), "claims.retention %v: at least 1m (clients retry a call for longer than that; the default is %v)", time.Duration(r), DefaultClaimRetention)
		} else {
			c.Claims.Retention = time.Duration(r)
		}
	}
}
