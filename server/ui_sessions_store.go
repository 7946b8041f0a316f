package server

// The attention UI's sessions kept on disk, so that restarting the server
// does not sign every page out. The file holds, per session, the SHA-256 of
// its id (never the id: the file alone signs nobody in), its agent, its
// CSRF token and its times; it is replaced atomically (a crash leaves the
// old table or the new), readable by its owner only, and bounded like the
// table in memory. Expired sessions are dropped on load and on save.

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/airs-dev/airs/internal/atomicfile"
)

// UIStateBackend is a UIBackend that has a folder to keep the page's
// sessions in across restarts (AIRS_HOME/ui). Without it, or with "",
// sessions live in memory only.
type UIStateBackend interface {
	UIStateDir() string
}

const (
	uiSessionsFile = "sessions.json"
	// uiTouchSave: a session's last use is written at most this often (an
	// idle expiry counted in hours needs no finer record, and a page's every
	// request must not cost a write).
	uiTouchSave = time.Minute
)

type storedSession struct {
	Hash     string    `json:"id_sha256"`
	Agent    string    `json:"agent"`
	CSRF     string    `json:"csrf"`
	Created  time.Time `json:"created"`
	LastSeen time.Time `json:"last_seen"`
}

// load reads the table from u.path (u.mu not needed: before serving).
// A missing file is an empty table; an unreadable one is said and
// replaced at the next save.
func (u *uiSessions) load() error {
	if u.path == "" {
		return nil
	}
	b, err := os.ReadFile(u.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var list []storedSession
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New(u.path + " is not a session table (" + err.Error() + "): everyone signs in again")
	}
	now := u.now()
	for _, ss := range list {
		raw, err := hex.DecodeString(ss.Hash)
		if err != nil || len(raw) != 32 || ss.Agent == "" || ss.CSRF == "" {
			continue
		}
		var k [32]byte
		copy(k[:], raw)
		s := &uiSession{agent: ss.Agent, csrf: ss.CSRF, created: ss.Created, lastSeen: ss.LastSeen, saved: ss.LastSeen}
		if u.expired(s, now) {
			continue
		}
		if len(u.byHash) >= u.max {
			u.evict(now)
		}
		u.byHash[k] = s
	}
	return nil
}

// snapshot is the live table as stored (u.mu held).
func (u *uiSessions) snapshot(now time.Time) []byte {
	list := make([]storedSession, 0, len(u.byHash))
	for k, s := range u.byHash {
		if u.expired(s, now) {
			continue
		}
		s.saved = s.lastSeen
		list = append(list, storedSession{Hash: hex.EncodeToString(k[:]), Agent: s.agent, CSRF: s.csrf, Created: s.created, LastSeen: s.lastSeen})
	}
	b, _ := json.Marshal(list)
	return b
}

// save writes the table when it has a file. Saves are serialized and the
// newest snapshot wins: a slow disk delays a sign-in's answer, never mixes
// two tables. A failure is logged: the session still works until the
// server restarts.
func (u *uiSessions) save() {
	if u.path == "" {
		return
	}
	u.saveMu.Lock()
	defer u.saveMu.Unlock()
	u.mu.Lock()
	b := u.snapshot(u.now())
	u.mu.Unlock()
	err := os.MkdirAll(filepath.Dir(u.path), 0o700)
	if err == nil {
		err = atomicfile.Write(u.path, b)
	}
	if err != nil {
		u.logErr(err)
	}
}

func (u *uiSessions) logErr(err error) {
	if u.log != nil {
		u.log.Warn("ui: the sessions could not be kept on disk: a restart signs their pages out", "path", u.path, "err", err)
	}
}
