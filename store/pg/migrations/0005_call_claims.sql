-- Call claims (pipeline.CallClaims): a non-idempotent call with a
-- client-given call_id is claimed here, in its own commit, before its tool
-- runs; the primary key makes a second claim of the id, from any replica,
-- conflict, so a client's retry on another replica never runs the tool
-- twice. Rows are small and never updated; old ones can be deleted once no
-- client would retry them (claimed_at).
CREATE TABLE airs_call_claims (
	call_id    text PRIMARY KEY,
	caller     text NOT NULL,
	tool       text NOT NULL,
	claimed_at timestamptz NOT NULL DEFAULT now()
);
