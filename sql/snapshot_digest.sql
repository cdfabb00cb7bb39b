-- snapshot_digest.sql: the content digest of a stored snapshot, recomputed from its
-- rows, and how many of its texts do not hash to their key.
--
-- The digest is sql/content_digest.sql's ("riido-pg/2": sha256 over a header and, in
-- id byte order, each id, a NUL and its 16-byte text key), over riido.documents
-- instead of a load's staging table, so a copy of a snapshot (snapshots move) can be
-- checked against the digest its load stored. The keys are checked against the texts
-- themselves (riido_pg.storage.texts.text_key: sha256 over "riido-pg/text", the
-- splitter version, the text configuration and the text, NUL-separated), so the
-- check covers every text, not only which key each id holds.
-- Parameters: %(snapshot_id)s, %(splitter)s (the splitter version), %(text_config)s.
SELECT (SELECT encode(sha256('riido-pg/2'::bytea || '\x00'::bytea || coalesce(
            string_agg(convert_to(d.doc_id, 'UTF8') || '\x00'::bytea || uuid_send(d.text_key),
                       ''::bytea ORDER BY d.doc_id),
            ''::bytea)), 'hex')
        FROM riido.documents AS d WHERE d.snapshot_id = %(snapshot_id)s),
       (SELECT count(*) FROM riido.documents AS d
        LEFT JOIN riido.texts AS t ON t.key = d.text_key
        WHERE d.snapshot_id = %(snapshot_id)s
          AND (t.key IS NULL OR t.key <> encode(substring(sha256(
                'riido-pg/text'::bytea || '\x00'::bytea
                || convert_to(%(splitter)s, 'UTF8') || '\x00'::bytea
                || convert_to(%(text_config)s, 'UTF8') || '\x00'::bytea
                || convert_to(t.body, 'UTF8')) from 1 for 16), 'hex')::uuid))
