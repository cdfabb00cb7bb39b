-- content_digest.sql: the content digest of a load's staged documents.
--
-- "riido-pg/2": sha256 over a header and, in id byte order, each document's id
-- (UTF-8, then a NUL, which no id contains) and its 16-byte text key, which already
-- covers the text, the text search configuration and the splitter version. The order
-- of the input does not matter; any change of an id or a text does. Also counts the
-- documents and finds a duplicate id, if there is one.
-- Reads the temporary table riido_stage (the loader COPYs (doc_id, key) into it).
SELECT encode(sha256('riido-pg/2'::bytea || '\x00'::bytea || coalesce(
           string_agg(convert_to(s.doc_id, 'UTF8') || '\x00'::bytea || uuid_send(s.key),
                      ''::bytea ORDER BY s.doc_id),
           ''::bytea)), 'hex'),
       count(*),
       (SELECT d.doc_id FROM riido_stage AS d GROUP BY d.doc_id HAVING count(*) > 1
        ORDER BY d.doc_id LIMIT 1)
FROM riido_stage AS s
