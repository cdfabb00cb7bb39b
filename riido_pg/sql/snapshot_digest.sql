-- snapshot_digest.sql: the content digest of a stored snapshot, recomputed from its
-- rows ({digest}: digest.sql over the documents it holds, snapshot_documents.sql's
-- {held}), and how many of those documents' texts are missing or do not hash to
-- their key.
--
-- A copy of a snapshot (snapshots move) is checked against the digest its load
-- stored, and every text against its key: the key is the first 16 bytes of sha256
-- over %(key_prefix)s (riido_pg.storage.texts.key_prefix: the splitter version and
-- the text configuration, as every load keys its texts) and the text's UTF-8, so the
-- check covers every text, not only which key each id holds.
-- Parameters: %(snapshot_id)s, %(key_prefix)s (bytea).
WITH {held}
SELECT (SELECT {digest} FROM (SELECT h.doc_id, h.text_key AS key FROM held AS h) AS x),
       (SELECT count(*) FROM held AS h
        LEFT JOIN riido.texts AS t ON t.key = h.text_key
        WHERE t.key IS NULL
           OR t.key <> encode(substring(sha256(
                  %(key_prefix)s::bytea || convert_to(t.body, 'UTF8')) from 1 for 16),
                  'hex')::uuid)
