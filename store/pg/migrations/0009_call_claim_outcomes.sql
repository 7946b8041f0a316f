-- Call claims record their first attempt's outcome (pipeline.CallClaims
-- Finish): a retry after it ended gets that outcome back, marked replayed,
-- instead of already_claimed. outcome is the pipeline.ClaimOutcome as JSON
-- text, its output base64 (not jsonb, nor a raw JSON value, which would be
-- normalised: the output is given back byte for byte); NULL while the
-- first attempt runs, or after its replica died mid-call. Claims older
-- than the retention are deleted (claimed_at, indexed).
ALTER TABLE airs_call_claims ADD COLUMN outcome text, ADD COLUMN finished_at timestamptz;
CREATE INDEX airs_call_claims_claimed_at ON airs_call_claims (claimed_at);
