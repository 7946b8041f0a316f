-- Named state documents that several replicas read, merge into and write
-- back (the ranker's learned statistics and preferences: "learned"). An
-- update locks its row (SELECT … FOR UPDATE), as the file backend takes an
-- exclusive flock: read, merge what this process learned, write, commit.
CREATE TABLE airs_state (
	name       text PRIMARY KEY,
	doc        jsonb,
	updated_at timestamptz NOT NULL DEFAULT now()
);
