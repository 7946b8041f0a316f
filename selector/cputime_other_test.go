//go:build !unix

package selector_test

func processCPU() float64 { return 0 }
