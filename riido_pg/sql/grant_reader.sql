-- grant_reader.sql: let {role} query snapshots and nothing else.
--
-- USAGE on the schema and SELECT on its tables, now and for tables later
-- migrations create (as the role that runs this). No INSERT, UPDATE, DELETE,
-- TRUNCATE or CREATE: such a role can run `riido-pg query` and `snapshots list`
-- but not load, drop, hints (which writes inside a rolled-back transaction) or DDL.
-- EXECUTE on riido's functions (riido.search and the functions it calls: all of
-- them read only, and run with the caller's own privileges).
-- riido-pg defines no SECURITY DEFINER functions. The role reads every source
-- text (riido.texts). riido_pg.server.privileges keeps it from the advisory locks
-- riido-pg's writers coordinate with (EXECUTE on them revoked from PUBLIC).
GRANT USAGE ON SCHEMA riido TO {role};
GRANT SELECT ON ALL TABLES IN SCHEMA riido TO {role};
ALTER DEFAULT PRIVILEGES IN SCHEMA riido GRANT SELECT ON TABLES TO {role};
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA riido TO {role};
ALTER DEFAULT PRIVILEGES IN SCHEMA riido GRANT EXECUTE ON FUNCTIONS TO {role};
