-- The audit log becomes one hash chain per writing process, merged by one
-- global sequence (docs/scaling.md, "The audit log"). Until now every
-- replica appended to one chain whose head row every append locked through
-- its commit's WAL flush, so the deployment committed one batch at a time.
-- Now each AuditLog links its records into a chain of its own (its own
-- head row, locked by nobody else), so replicas' commits overlap and the
-- server flushes them together.
--
--   airs_audit.seq    — the record's place in the merged order: one
--                       sequence (airs_audit_seq) every chain takes from
--                       at insert; it only increases along a chain. Not
--                       commit order across chains: readers read
--                       snapshots in seq order.
--   airs_audit.chain  — the chain the record is linked into.
--   airs_audit_chains — one head per chain: its last seq and hash.
--
-- A new chain's line names it: {"seq":S,"chain":C,"prev":"HEX",…}
-- (audit.AppendChainLine), prev the hash of the chain's previous line.
--
-- The records already here, one chain with seqs 1, 2, 3…, become chain 0
-- unchanged (their lines name no chain, and verify checks them by the one
-- chain's rules); airs_audit_head becomes chain 0's head; the sequence goes
-- on after their last seq. Chain 0 is closed: new processes start new
-- chains 1, 2, 3… (airs_audit_chains ids run without gaps, so a chain
-- deleted with its head shows).
--
-- NOT ADDITIVE for writers: an older airs still running appends with
-- airs_audit_append(text[]), which from here refuses (a clear error; its
-- calls are not acknowledged). Stop every replica, then start the new
-- binary; older binaries refuse to start on this schema anyway.
-- CACHE 1 on purpose: with a cache each connection would hand out numbers
-- from its own block, and a chain's next batch, sent on another pooled
-- connection, could get a smaller seq than its last.
CREATE SEQUENCE airs_audit_seq AS bigint CACHE 1;
SELECT setval('airs_audit_seq',
	greatest((SELECT seq FROM airs_audit_head), (SELECT coalesce(max(seq), 0) FROM airs_audit), 1),
	greatest((SELECT seq FROM airs_audit_head), (SELECT coalesce(max(seq), 0) FROM airs_audit)) > 0);

-- Existing rows get chain 0 without a rewrite (a constant default is
-- stored once); new rows must say their chain.
ALTER TABLE airs_audit ADD COLUMN chain bigint NOT NULL DEFAULT 0;
ALTER TABLE airs_audit ALTER COLUMN chain DROP DEFAULT;

CREATE TABLE airs_audit_chains (
	chain      bigint PRIMARY KEY CHECK (chain >= 0),
	seq        bigint NOT NULL,                          -- the chain's last record (0: none)
	hash       bytea NOT NULL CHECK (length(hash) = 32), -- that record's line's SHA-256 (zeros: none)
	origin     text NOT NULL DEFAULT '',                 -- who started it: host and pid
	started_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO airs_audit_chains (chain, seq, hash, origin)
	SELECT 0, seq, hash, 'the one chain before migration 10' FROM airs_audit_head;
DROP FUNCTION airs_audit_append(text[]);
DROP TABLE airs_audit_head;

-- An older airs's appends: refused, saying why.
CREATE FUNCTION airs_audit_append(bodies text[])
RETURNS TABLE (r_seq bigint, r_prev text)
LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'this airs is older than the database''s audit log (schema version 10 keeps one chain per process): stop it and run the airs that migrated the database';
END
$$;

-- Append a batch to chain c in one statement (so one transaction): lock the
-- chain's head, link each body as audit.AppendChainLine does in Go, insert,
-- move the head. c = 0 starts a new chain — the next id, under an advisory
-- lock held to the commit, so ids run 0, 1, 2… without gaps (a batch that
-- rolls back gives its id to the next) — recording origin. Only the
-- process that started a chain appends to it, so its head's lock is
-- uncontended; if two ever did, the lock would still keep the chain whole.
-- Verify recomputes every hash in Go, so the two encodings are checked
-- against each other on every verify.
CREATE FUNCTION airs_audit_append_chain(c bigint, origin text, bodies text[])
RETURNS TABLE (r_chain bigint, r_seq bigint, r_prev text)
LANGUAGE plpgsql AS $$
DECLARE
	s     bigint := 0;
	h     bytea := decode(repeat('00', 32), 'hex');
	line  text;
	fresh boolean := c = 0;
BEGIN
	IF fresh THEN
		-- "airc" in ASCII: the chain-id lock.
		PERFORM pg_advisory_xact_lock(1634300515);
		SELECT coalesce(max(ch.chain), -1) + 1 INTO c FROM airs_audit_chains ch;
	ELSE
		SELECT ch.seq, ch.hash INTO s, h FROM airs_audit_chains ch WHERE ch.chain = c FOR UPDATE;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'audit chain % has no head in airs_audit_chains (deleted?): run airs audit verify', c;
		END IF;
	END IF;
	r_chain := c;
	FOR i IN 1 .. coalesce(array_length(bodies, 1), 0) LOOP
		s := nextval('airs_audit_seq');
		r_seq := s;
		r_prev := encode(h, 'hex');
		line := '{"seq":' || s::text || ',"chain":' || c::text || ',"prev":"' || r_prev || '",' || bodies[i];
		INSERT INTO airs_audit (seq, chain, line) VALUES (s, c, line);
		h := sha256(convert_to(line, 'UTF8'));
		RETURN NEXT;
	END LOOP;
	IF fresh THEN
		INSERT INTO airs_audit_chains (chain, seq, hash, origin) VALUES (c, s, h, origin);
	ELSE
		UPDATE airs_audit_chains SET seq = s, hash = h WHERE chain = c;
	END IF;
END
$$;
