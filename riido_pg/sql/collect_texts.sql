-- collect_texts.sql: remove the pending texts that no document references.
--
-- riido.text_pending lists texts that may have lost their last reference (a dropped
-- or replaced snapshot's, a failed or killed load's). One statement, one snapshot:
-- the pending rows it removes are exactly the ones it looked at, so a row a drop
-- commits meanwhile waits for the next collection instead of being lost. Runs only
-- under the texts lock held exclusively (riido_pg.storage.texts), so no running load
-- is about to reference what it removes.
WITH pending AS (
    DELETE FROM riido.text_pending RETURNING key
)
DELETE FROM riido.texts AS t
USING (SELECT DISTINCT key FROM pending) AS p
WHERE t.key = p.key
  AND NOT EXISTS (SELECT 1 FROM riido.documents AS d WHERE d.text_key = t.key)
