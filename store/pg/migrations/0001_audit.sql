-- The audit log: one row per record, the exact line the file log would
-- write (the chain is computed over it), and the chain's head, one row
-- that every append locks: the serialisation point of one chain shared by
-- all replicas.
CREATE TABLE airs_audit (
	seq       bigint PRIMARY KEY,
	line      text NOT NULL,
	logged_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE airs_audit_head (
	one  boolean PRIMARY KEY DEFAULT true CHECK (one),
	seq  bigint NOT NULL,
	hash bytea NOT NULL CHECK (length(hash) = 32)
);

INSERT INTO airs_audit_head (seq, hash) VALUES (0, decode(repeat('00', 32), 'hex'));
