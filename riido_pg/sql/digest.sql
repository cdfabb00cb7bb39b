-- digest.sql: the content digest of a set of documents, an expression over the rows
-- of a relation aliased x (doc_id, key) — composed into content_digest.sql (a load's
-- staged documents) and snapshot_digest.sql (a stored snapshot's), so both compute
-- the same bytes.
--
-- "riido-pg/2": sha256 over a header and, in id byte order, each document's id
-- (UTF-8, then a NUL, which no id contains) and its 16-byte text key, which already
-- covers the text, the text search configuration and the splitter version. The order
-- of the input does not matter; any change of an id or a text does.
encode(sha256('riido-pg/2'::bytea || '\x00'::bytea || coalesce(
    string_agg(convert_to(x.doc_id, 'UTF8') || '\x00'::bytea || uuid_send(x.key),
               ''::bytea ORDER BY x.doc_id),
    ''::bytea)), 'hex')
