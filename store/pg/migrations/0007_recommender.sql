-- The recommender's learned state (recommender.Store), the tables of the
-- file store's HOME/recommender: every answer appended to
-- airs_rec_feedback (committed before the answer returns), the newest
-- snapshot of the models with the answer position it includes, and the
-- callers' task texts.
--
-- Appends take an advisory transaction lock (RecommenderStore), so seq
-- order is commit order and a replica catching up from its last seq never
-- skips an answer committed late. A snapshot is replaced only by one that
-- includes more answers (pos): a replica that lags cannot move it back.
CREATE TABLE airs_rec_feedback (
	seq  bigserial PRIMARY KEY,
	at   timestamptz NOT NULL DEFAULT now(),
	line text NOT NULL
);
CREATE TABLE airs_rec_snapshot (
	id       integer PRIMARY KEY CHECK (id = 1),
	pos      bigint NOT NULL,
	snap     text NOT NULL,
	saved_at timestamptz NOT NULL DEFAULT now()
);
-- rev grows on every set or clear (a cleared task stays, with text ''),
-- so max(rev) tells a replica whether to read the tasks again.
CREATE SEQUENCE airs_rec_task_rev;
CREATE TABLE airs_rec_tasks (
	caller text PRIMARY KEY,
	text   text NOT NULL,
	at     timestamptz NOT NULL,
	rev    bigint NOT NULL DEFAULT nextval('airs_rec_task_rev')
);
