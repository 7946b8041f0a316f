package embeddings

import (
	"bytes"
	"encoding/gob"
)

// MarshalBinary encodes the fitted basis (gob).
func (l *Lexical) MarshalBinary() ([]byte, error) {
	l.mu.RLock()
	m := l.m
	l.mu.RUnlock()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary restores a basis written by MarshalBinary.
func (l *Lexical) UnmarshalBinary(b []byte) error {
	var m lexModel
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&m); err != nil {
		return err
	}
	l.mu.Lock()
	l.m = &m
	l.opts = m.Opts
	l.mu.Unlock()
	return nil
}
