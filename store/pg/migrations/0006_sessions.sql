-- Recorded sessions (session/FORMAT.md), one row per record, every
-- replica appending: requests and the feedback that refers to them, as the
-- file log's lines. One table rather than sessions + records: the format
-- is a log of records (a feedback record names its request by ref, a
-- conversation is only the session field), and readers (replay, tune,
-- the recommender's training) want it in log order, as the file gives it.
--
-- line is the record exactly as the file log holds it, as text: jsonb
-- would reorder keys and rewrite numbers, and the format keeps 5 and 5.0
-- apart. The other columns are copies for indexes and filters.
--
-- seq is the log order. Appends take an advisory transaction lock
-- (airs_sessions_append), so seq order is commit order: a reader that has
-- seen seq N has seen every record before it, and a feedback record,
-- written after its request was acknowledged, always comes after it.
CREATE TABLE airs_sessions (
	seq     bigserial PRIMARY KEY,
	id      text NOT NULL,
	kind    text NOT NULL,
	ref     text,
	session text,
	channel text,
	caller  text,
	at      timestamptz NOT NULL,
	line    text NOT NULL
);
CREATE INDEX airs_sessions_session ON airs_sessions (session, seq) WHERE session IS NOT NULL;
CREATE INDEX airs_sessions_at ON airs_sessions (at);
