-- Append a batch in one statement: lock the head, link each body into the
-- chain exactly as audit.AppendLine does in Go ({"seq":N,"prev":"HEX",
-- then the body), insert, move the head. Running it server-side means the
-- head's row lock is held for the statement and its commit only, never
-- across a client round trip — which is what serialises replicas.
-- Verify recomputes every hash in Go, so the two encodings are checked
-- against each other on every verify.
CREATE FUNCTION airs_audit_append(bodies text[])
RETURNS TABLE (r_seq bigint, r_prev text)
LANGUAGE plpgsql AS $$
DECLARE
	s    bigint;
	h    bytea;
	line text;
BEGIN
	SELECT hd.seq, hd.hash INTO s, h FROM airs_audit_head hd FOR UPDATE;
	FOR i IN 1 .. coalesce(array_length(bodies, 1), 0) LOOP
		s := s + 1;
		r_seq := s;
		r_prev := encode(h, 'hex');
		line := '{"seq":' || s::text || ',"prev":"' || r_prev || '",' || bodies[i];
		INSERT INTO airs_audit (seq, line) VALUES (s, line);
		h := sha256(convert_to(line, 'UTF8'));
		RETURN NEXT;
	END LOOP;
	UPDATE airs_audit_head SET seq = s, hash = h;
END
$$;
