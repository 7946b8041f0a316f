// Package audit is the Tool Manager's append-only audit log: one JSON object
// per line, each carrying the SHA-256 of the line before it, so deleting,
// reordering or editing a record breaks the chain at that point and Verify
// finds it.
//
// # Durability
//
// Append returns only after the record is on disk (written and fdatasync'd).
// Appends are group-committed in two stages: one writer goroutine (per Log) takes
// every record queued since its last write, extends the hash chain and
// writes them with one write(2); Syncers goroutines (each with its own file
// descriptor) call fdatasync, each sync covering every batch written before
// it started, and release those batches' waiters when it returns. The cost
// of a sync is shared by the batch, and overlapping syncs let the
// filesystem's journal commit several at once — which is how a disk whose
// fsync takes a millisecond serves far more durable appends a second than
// a thousand (BenchmarkAppend). A record
// whose Append returned nil survives kill -9 and power loss (to the extent
// the disk honours fsync). After any write or sync error the log stops
// acknowledging (every later Append fails): it never guesses what reached
// the disk.
//
// # Crashes and torn lines
//
// A crash can leave the last line incomplete (a write cut short, or — after
// a power loss — a tail of zeros). Such a tail was never acknowledged: its
// Append had not returned. Open therefore truncates everything after the
// last newline before appending, so the chain continues from the last
// complete record; Verify reports such a tail as TornTail rather than as a
// break. A complete last line that is not a valid record is not guessed at:
// Open refuses the file (ErrCorrupt) and leaves it for a person to inspect.
//
// # Several writers
//
// `airs serve` and CLI commands run in separate processes over one
// AIRS_HOME, so several Logs may append to one file. Each batch is chained
// and written under an exclusive flock on the file: the writer takes the
// lock, checks the file's size against what it last left (equal: the tail
// is its own; otherwise it re-reads the last record's seq and hash, cutting
// a torn tail that a crashed writer left), links and writes its batch, and
// unlocks before the fdatasync — a sync flushes the whole file, so it makes
// every writer's earlier batches durable too, and no lock is held across
// it. Seqs therefore run 1, 2, 3… across processes in file order, and a
// record is acknowledged only once a sync that started after its write
// returned. A torn tail is only ever left by a writer that died (or failed)
// in the middle of its write(2) while holding the lock, so it was never
// acknowledged, and whoever takes the lock next repairs it. flock is
// advisory and Unix-only: on other systems one process at a time must
// write a log.
//
// # What the chain does not prove
//
// Truncating the file after a complete record, or replacing it wholesale
// with a consistent forged chain, is not detectable from the file alone;
// anchor the last hash elsewhere (print it, ship it) when that matters.
//
// Params are never stored, only their SHA-256, so the log can be kept and
// shared without leaking what tools were given.
package audit
