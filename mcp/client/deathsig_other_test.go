//go:build unix && !linux

package client

func maybeParent() {}
