-- The guard's state (guard.StateStore, guard.ModelStore).
--
-- airs_guard_state holds the review store's document — reviews.json's
-- bytes, as text: jsonb would reorder the keys of the params a reviewer
-- is shown — changed under its row lock (SELECT … FOR UPDATE) as the file
-- is under reviews.lock, so a confirmation approved on one replica is
-- what the call sent again to another finds.
CREATE TABLE airs_guard_state (
	name       text PRIMARY KEY,
	doc        text,
	updated_at timestamptz NOT NULL DEFAULT now()
);
-- The anomaly models by slot ('model': guard.anomaly.model's,
-- 'candidate': guard.anomaly.candidate's), as the model files hold them.
-- Replicas poll the version (a primary-key read every few seconds) and
-- reload on a change.
CREATE TABLE airs_anomaly_models (
	slot       text PRIMARY KEY,
	version    text NOT NULL,
	model      text NOT NULL,
	trained_at timestamptz NOT NULL DEFAULT now()
);
