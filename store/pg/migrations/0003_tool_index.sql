-- The tool index on pgvector (store/pg ToolIndex, embeddings.Store): one
-- row per tool with its normalised vector, the group centroids the dense
-- score mixes in, and the index's manifest with the fitted embedder's
-- state (the lexical basis) so every replica embeds queries with the same
-- basis. The vector columns have no fixed dimension: the index holds one
-- embedder's vectors at a time (a change of embedder replaces them all).
-- No ANN index (HNSW/IVFFlat): an exact scan is what keeps the ranking
-- equal to the embedded index's, and at registry sizes (≤ 10⁴ tools) it
-- takes milliseconds.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE airs_tool_index (
	one        boolean PRIMARY KEY DEFAULT true CHECK (one),
	embedder   text NOT NULL,
	dim        integer NOT NULL,
	fit_docs   integer NOT NULL,
	drift      integer NOT NULL,
	fit        bytea,
	generation bigint NOT NULL DEFAULT 1,
	updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE airs_tools (
	id        text PRIMARY KEY,
	grp       text NOT NULL DEFAULT '',
	doc       jsonb NOT NULL,
	embedding vector NOT NULL
);

-- pgvector's type is stored EXTERNAL (out of line, a TOAST lookup per row
-- read): the exact scan reads every vector, so keep them in the row.
ALTER TABLE airs_tools ALTER COLUMN embedding SET STORAGE MAIN;

CREATE INDEX airs_tools_grp ON airs_tools (grp) WHERE grp <> '';

-- centroid is the sum of the group's member vectors (float32, as pgvector
-- stores it), norm its length: the centroid's cosine with a unit query is
-- q·centroid / norm, as embeddings computes it from the members' dots.
CREATE TABLE airs_tool_groups (
	grp      text PRIMARY KEY,
	centroid vector NOT NULL,
	norm     double precision NOT NULL
);
ALTER TABLE airs_tool_groups ALTER COLUMN centroid SET STORAGE MAIN;
