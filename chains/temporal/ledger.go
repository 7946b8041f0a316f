package temporal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Ledger is the activity side's record of non-idempotent calls: one file
// per key, created with O_EXCL before the call starts (so two replicas
// cannot both start it) and marked done after. It lives in a directory the
// replicas share.
type Ledger struct{ Dir string }

// LedgerEntry is what a key's file holds.
type LedgerEntry struct {
	Key      string    `json:"key"`
	Worker   string    `json:"worker"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
}

// OpenLedger creates dir if needed.
func OpenLedger(dir string) (*Ledger, error) {
	if dir == "" {
		return nil, errors.New("ledger: no directory given (chains.ledger_dir)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("ledger: %v: make the directory writable or choose another chains.ledger_dir", err)
	}
	return &Ledger{Dir: dir}, nil
}

func (l *Ledger) path(key string) string {
	h := sha256.Sum256([]byte(key))
	return filepath.Join(l.Dir, hex.EncodeToString(h[:16])+".json")
}

// Start records key as started. When key was started before it returns
// that record and an error; on any other failure a nil record and the
// error.
func (l *Ledger) Start(key, worker string) (*LedgerEntry, error) {
	p := l.path(key)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		prev, rerr := l.Get(key)
		if rerr != nil {
			prev = &LedgerEntry{Key: key, Worker: "unknown"}
		}
		return prev, fmt.Errorf("call %s was started before", key)
	}
	if err != nil {
		return nil, err
	}
	e := LedgerEntry{Key: key, Worker: worker, Started: time.Now().UTC()}
	b, _ := json.Marshal(e)
	_, werr := f.Write(b)
	serr := f.Sync() // the record must be on disk before the call starts
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return nil, err
	}
	return nil, nil
}

// Finish marks key done.
func (l *Ledger) Finish(key string) error {
	e, err := l.Get(key)
	if err != nil {
		return err
	}
	e.Finished = time.Now().UTC()
	b, _ := json.Marshal(e)
	tmp := l.path(key) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, l.path(key))
}

// Get reads key's record.
func (l *Ledger) Get(key string) (*LedgerEntry, error) {
	b, err := os.ReadFile(l.path(key))
	if err != nil {
		return nil, err
	}
	var e LedgerEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("ledger %s: %v", l.path(key), err)
	}
	return &e, nil
}
