package main

import (
	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/store/pg"
)

// callClaims are the replicas' shared call claims on db, kept for
// claims.retention.
func callClaims(db *pg.DB, c *config.Config) *pg.Claims {
	cl := db.Claims()
	cl.Retention = c.Claims.Retention
	return cl
}
